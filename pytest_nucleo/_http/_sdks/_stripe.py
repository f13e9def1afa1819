"""stripe: ``StripeError`` and its subclasses for an answer, ``APIConnectionError`` for a call
that got none.

An answer's error keeps the status (``http_status``), the body as Stripe sent it
(``http_body``: ``{"error": {"type", "code", "decline_code", "message", "param"}}``) and the
headers; the subclass (``CardError``, ``RateLimitError``...) is the SDK's own reading of them,
not needed here. The path called and the API key are in the frame of the SDK's
``_APIRequestor.request`` that raised it, read when there. Read by the ``stripe`` profile (a
declined card quotes its decline code), then the generic rules.
https://docs.stripe.com/api/errors
https://docs.stripe.com/error-handling?lang=python

``APIConnectionError`` is raised from the HTTP client's own error (requests', httpx's...),
which says what kind of failure it was: it is read through that cause.
"""

from __future__ import annotations

import sys
from typing import Any

from pytest_nucleo._http._clients import ResponseView, TransportSeen, transport_failure
from pytest_nucleo._http._clients._kinds import Transport, host_of
from pytest_nucleo._http._clients._sent import values_sent
from pytest_nucleo._text._values import text

from . import SdkReading
from ._frames import innermost_locals, plain
from ._values import body_of, headers_of

_SERVICE = "Stripe"


def _class(name: str) -> type | None:
    # stripe 8 moved its errors from stripe.error to stripe._error (stripe.error re-exports).
    for module in ("stripe._error", "stripe.error"):
        found = getattr(sys.modules.get(module), name, None)
        if isinstance(found, type):
            return found
    return None


def read(exc: BaseException) -> SdkReading | None:
    connection_error = _class("APIConnectionError")
    if connection_error is not None and isinstance(exc, connection_error):
        return _transport(exc)
    stripe_error = _class("StripeError")
    if stripe_error is None or not isinstance(exc, stripe_error):
        return None
    error: Any = exc
    status = error.http_status
    if not isinstance(status, int):
        return None  # raised with no answer (no API key set, a webhook's bad signature)
    body = error.http_body
    # As Stripe sent it; else the JSON the SDK decoded, written back.
    raw = body_of(body if isinstance(body, str | bytes) else error.json_body)
    call = innermost_locals(exc, "stripe._api_requestor", holding="requestor") or {}
    view = ResponseView(
        status,
        text(call.get("url")),
        headers_of(error.headers),
        raw,
        _known(call),
    )
    return SdkReading(view, "stripe", _SERVICE)


def _transport(exc: BaseException) -> SdkReading:
    cause = exc.__cause__
    seen = transport_failure(cause) if cause is not None else None
    if not isinstance(seen, TransportSeen):
        call = innermost_locals(exc, "stripe._http_client", holding="url") or {}
        url = text(call.get("url"))
        seen = TransportSeen(Transport.OTHER, text(call.get("method")) or None, url or None)
    return SdkReading(seen._replace(host=seen.host or host_of(seen.url)), "stripe", _SERVICE)


def _known(call: Any) -> tuple[str, ...]:
    """The API key and the connected account the call was made with, and the values of its
    parameters: masked wherever they show."""
    options = plain(call.get("requestor"), "_options")
    stripe = sys.modules.get("stripe")
    secrets = [
        text(plain(options, "api_key")) or text(getattr(stripe, "api_key", None)),
        text(plain(options, "stripe_account")),
    ]
    params = call.get("params")
    sent = values_sent("GET", "", (), None, params=params) if isinstance(params, dict) else ()
    return tuple(dict.fromkeys(v for v in (*secrets, *sent) if len(v) >= 4))
