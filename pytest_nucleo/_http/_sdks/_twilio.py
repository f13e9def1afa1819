"""twilio: ``TwilioRestException`` (and ``TwilioServiceException``, for the APIs that answer
with RFC 9457 problem details) for an answer.

The exception keeps the status, the ``uri`` called (relative to the API version: it names the
account), Twilio's error ``code`` and message (``msg``, prefixed by the SDK's own words:
"Unable to fetch record: ...") and ``details``; the body as sent and the headers (a
``Retry-After`` among them) are in the frame of the SDK's ``Version`` that raised it, with the
client's credentials. Without that frame the error is written back as Twilio sends it (``{"code",
"message", "more_info", "status"}``, or the problem details). The account SID (the Basic
credential's user) and the auth token are masked wherever they show.
https://www.twilio.com/docs/usage/twilios-response#response-formats-exceptions
https://www.twilio.com/docs/api/errors
https://www.twilio.com/docs/usage/rest-api-best-practices#handle-rate-limits-with-retries

A call that got no answer raises requests' own error, read by the client seam.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from pytest_nucleo._http._clients import ResponseView
from pytest_nucleo._http._clients._kinds import host_of
from pytest_nucleo._text._values import text

from . import SdkReading
from ._frames import innermost_locals, plain
from ._values import body_of, headers_of

_SID = re.compile(r"\b(?:AC|SK)[0-9a-fA-F]{32}\b")
_PROBLEM_FIELDS = ("type", "title", "status", "code", "detail", "instance", "errors")


def read(exc: BaseException) -> SdkReading | None:
    errors = sys.modules.get("twilio.base.exceptions")
    kinds = tuple(
        found
        for name in ("TwilioRestException", "TwilioServiceException")
        if isinstance(found := getattr(errors, name, None), type)
    )
    if not kinds or not isinstance(exc, kinds):
        return None
    error: Any = exc
    status = error.status
    if not isinstance(status, int):
        return None
    uri = text(error.uri)
    call = innermost_locals(exc, "twilio.base.version", holding="response") or {}
    response: Any = call.get("response")
    answered = getattr(response, "status_code", None) == status
    version = plain(call.get("self"), "version")
    path = f"/{text(version).strip('/')}/{uri.lstrip('/')}" if version else uri
    client = plain(plain(call.get("self"), "domain"), "twilio")
    secrets = [text(plain(client, name)) for name in ("username", "password", "account_sid")]
    view = ResponseView(
        status,
        path,
        headers_of(response.headers) if answered else {"content-type": "application/json"},
        body_of(response.text if answered else _written_back(error)),
        tuple(dict.fromkeys(s for s in (*secrets, *_SID.findall(uri)) if len(s) >= 4)),
        host_of(text(plain(plain(call.get("self"), "domain"), "base_url"))),
    )
    return SdkReading(view, None, "Twilio")


def _written_back(error: Any) -> dict[str, object]:
    """The error as Twilio sends it, from what the exception kept."""
    if hasattr(error, "title"):  # TwilioServiceException: RFC 9457 problem details
        return {name: getattr(error, name, None) for name in _PROBLEM_FIELDS}
    code = error.code
    said = {"code": code, "message": text(error.msg), "status": error.status}
    if isinstance(code, int):
        said["more_info"] = f"https://www.twilio.com/docs/errors/{code}"
    if error.details:
        said["details"] = error.details
    return said
