"""The google-genai SDK's errors: Gemini, on the Gemini API or on Vertex AI.

Its ``errors.APIError`` (``ClientError`` for a 4xx, ``ServerError`` for a 5xx) holds the
status (``code``), the JSON error the service answered (``details``: Google's ``status`` such as
``RESOURCE_EXHAUSTED``, its ``message``, and typed details such as a ``RetryInfo``) and the
response. A call that got no answer raises the HTTP client's own error (httpx's or aiohttp's),
which the client mapping reads. ``str(exc)`` is never read: it quotes the whole body.

The registry finds this module for the exceptions of every ``google`` package (google.auth,
google.api_core...): only google-genai's are read, and google-genai is never imported here (it
is loaded when one of its errors exists, and may not be installed when another's does).
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from pytest_nucleo._http._clients import frames_of, read_response
from pytest_nucleo._http._clients._sent import values_sent
from pytest_nucleo._http._retry_after import RETRY_AFTER_CAP, parse_retry_after
from pytest_nucleo._text._values import text

from . import ProviderAnswer

# The model is in the request's path, not its body: .../models/gemini-2.5-flash:generateContent
# on the Gemini API, .../publishers/google/models/gemini-2.5-flash:generateContent on Vertex AI.
_MODEL = re.compile(r"/models/([^/:?#]+)")
# google.protobuf.Duration in JSON: seconds with up to 9 decimals and an "s" ("17s", "0.5s").
_DURATION = re.compile(r"([0-9]{1,12})(?:\.([0-9]{1,9}))?s")
_RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


def provider_answer(exc: BaseException) -> ProviderAnswer | None:
    errors = sys.modules.get("google.genai.errors")
    if errors is None or not isinstance(exc, errors.APIError):
        return None
    error: Any = exc
    if isinstance(error.code, bool) or not isinstance(error.code, int) or error.code > 599:
        # No HTTP status to sort by: an error built without one, or the Live API's WebSocket
        # close code (1006, 1011), which is no HTTP status.
        return None
    doc = error.details
    body = doc.get("error", doc) if isinstance(doc, dict) else None
    details = body.get("details") if isinstance(body, dict) else None
    typed = [d for d in details if isinstance(d, dict)] if isinstance(details, list) else []
    try:
        view = read_response(error.response)
    except ValueError:  # a response whose body was not read: the error holds what it said
        view = None
    url = view.endpoint if view is not None else ""
    found = _MODEL.search(url)
    model = found.group(1) if found else None
    retry_after = _retry_delay(typed)
    headers = getattr(error.response, "headers", None)
    header = headers.get("retry-after") if retry_after is None and headers is not None else None
    if isinstance(header, str):
        retry_after = parse_retry_after(header)
    sent = _sent(error)
    if view is not None:
        sent = (*view.known, *sent)
    return ProviderAnswer(
        "Google",
        error.code,
        code=text(next((d.get("reason") for d in typed if d.get("@type") == _ERROR_INFO), "")),
        type=text(error.status),
        message=text(error.message),
        retry_after=retry_after,
        model=model,
        # The model's name may show: the texts name it on purpose.
        known=tuple(value for value in dict.fromkeys(sent) if value != model),
    )


def _sent(exc: BaseException) -> tuple[str, ...]:
    """What the SDK's request carried (the key, the conversation), from the ``HttpRequest`` the
    frame that sent it holds: on aiohttp the response keeps no request body to read."""
    for frame in frames_of(exc):
        request: Any = frame.f_locals.get("http_request")
        data = getattr(request, "data", None)
        if data is None or not isinstance(getattr(request, "url", None), str):
            continue
        try:
            body = data if isinstance(data, bytes) else json.dumps(data, default=str)
        except (TypeError, ValueError):  # not JSON after all: the headers and URL still count
            body = None
        headers = getattr(request, "headers", None)
        pairs = headers.items() if isinstance(headers, dict) else ()
        return values_sent(str(getattr(request, "method", "POST")), request.url, pairs, body)
    return ()


def sdk_retries(exc: BaseException) -> int:
    """0: google-genai retries only when ``HttpOptions(retry_options=...)`` asks it to, and its
    error does not say how many times it did."""
    return 0


def _retry_delay(typed: list[dict[str, Any]]) -> float | None:
    """The wait a ``RetryInfo`` asks for, capped as a Retry-After is; None without one."""
    for detail in typed:
        if detail.get("@type") == _RETRY_INFO:
            found = _DURATION.fullmatch(text(detail.get("retryDelay")))
            if found:
                seconds = int(found.group(1)) + float(f"0.{found.group(2) or 0}")
                return min(seconds, RETRY_AFTER_CAP)
    return None
