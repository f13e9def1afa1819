"""slack_sdk: ``SlackApiError`` for an answer of the Web API that is not ``"ok": true``.

Its ``response`` (a ``SlackResponse``, or the async client's ``AsyncSlackResponse``) keeps the
status (``status_code``), the headers, the parsed body (``data``: ``{"ok": false, "error":
"channel_not_found"}``), the URL called (``api_url``, ending in the method's name) and what
the request carried (``req_args``: its headers, with the token, and its arguments), masked
wherever they show. A failure that came as a 200 is read by the ``slack`` profile, which names
the error; one under another status (a rate limit is a 429 ``ratelimited`` with
``Retry-After``) by the generic rules, which name the status.
https://docs.slack.dev/apis/web-api/#responses
https://docs.slack.dev/apis/web-api/rate-limits
https://docs.slack.dev/tools/python-slack-sdk/web#handling-errors

A call that got no answer raises urllib's (or aiohttp's) own error, read by the client seam.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from pytest_nucleo._http._clients import ResponseView
from pytest_nucleo._http._clients._kinds import host_of
from pytest_nucleo._http._clients._sent import values_sent
from pytest_nucleo._text._values import text

from . import SdkReading
from ._values import body_of, headers_of


def read(exc: BaseException) -> SdkReading | None:
    errors = sys.modules.get("slack_sdk.errors")
    api_error = getattr(errors, "SlackApiError", None)
    if not isinstance(api_error, type) or not isinstance(exc, api_error):
        return None
    response: Any = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    if not isinstance(status, int):
        return None
    url = text(response.api_url)
    view = ResponseView(
        status,
        url,
        headers_of(response.headers),
        body_of(response.data),  # the JSON the SDK decoded, written back as Slack sent it
        _sent(url, response.req_args),
        host_of(url),
    )
    # The profile reads Slack's own convention, a failure sent as a 200 with "ok": false.
    # Under any other status (a 429 ratelimited, a 503) the status says what failed, as for
    # any service, and the failure carries it (a limiter reads it).
    return SdkReading(view, "slack" if 200 <= status <= 299 else None, "Slack")


def _sent(url: str, args: object) -> tuple[str, ...]:
    """What the request carried: the token in its Authorization header (or among its
    arguments), and the values of its arguments, form or JSON."""
    if not isinstance(args, dict):
        return values_sent("POST", url, (), None)
    headers = args.get("headers")
    pairs = [(str(k), str(v)) for k, v in headers.items()] if isinstance(headers, dict) else []
    pairs = [(k, v) for k, v in pairs if k.lower() != "content-type"]
    form = {**_dict(args.get("params")), **_dict(args.get("data"))}
    document = args.get("json")
    body = json.dumps(document, default=str) if isinstance(document, dict) else None
    if body is not None:
        pairs.append(("content-type", "application/json"))
    return values_sent("POST", url, pairs, body, params=form)


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
