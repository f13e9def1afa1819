"""urllib3 (alone, or under requests): its transport failures and responses."""

from __future__ import annotations

import re
from typing import Any

import urllib3
from urllib3 import exceptions as u

from pytest_nucleo._http._unseen import UNSEEN_BODY, UNSEEN_HEADERS

from . import ResponseView, Seen, TransportSeen, frames_of, json_failure
from ._httpx_api import caused_by_tls
from ._kinds import Transport, host_of

# Most specific first. A NewConnectionError is a ConnectTimeoutError in urllib3's hierarchy, so
# it comes before it; a NameResolutionError is a NewConnectionError.
_KINDS: tuple[tuple[type[BaseException], Transport], ...] = (
    (u.NewConnectionError, Transport.CONNECT),
    (u.ConnectTimeoutError, Transport.CONNECT_TIMEOUT),
    (u.EmptyPoolError, Transport.POOL_TIMEOUT),
    (u.ClosedPoolError, Transport.POOL_TIMEOUT),
    (u.LocationValueError, Transport.UNSUPPORTED_PROTOCOL),
    (u.ProxyError, Transport.PROXY),
    (u.SSLError, Transport.TLS),
    (u.ReadTimeoutError, Transport.READ_TIMEOUT),
    (u.ProtocolError, Transport.PROTOCOL),
    (u.IncompleteRead, Transport.PROTOCOL),
    (u.InvalidChunkLength, Transport.PROTOCOL),
    (u.DecodeError, Transport.DECODING),
    (u.ResponseError, Transport.OTHER),  # "too many error responses"; redirects below
    (u.HTTPError, Transport.OTHER),
)


# What urllib3's Retry gives as the reason it stopped: after redirects, or after a status of
# its status_forcelist on every try (ResponseError.SPECIFIC_ERROR).
_REDIRECTS = "too many redirects"
_ERROR_RESPONSES = re.compile(r"too many ([1-5][0-9][0-9]) error responses")
_WHOLE_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")


def transport_kind(exc: BaseException) -> Transport | None:
    """The kind of ``exc``; a MaxRetryError is the kind of its last reason."""
    if isinstance(exc, u.MaxRetryError) and exc.reason is not None:
        return transport_kind(exc.reason) or Transport.OTHER
    kind = next((k for cls, k in _KINDS if isinstance(exc, cls)), None)
    if isinstance(exc, u.ResponseError) and str(exc) == _REDIRECTS:
        return Transport.TOO_MANY_REDIRECTS
    if kind is Transport.PROXY and isinstance(exc, u.ProxyError):
        # A proxy that could not be reached says so through its original error.
        inner = getattr(exc, "original_error", None)
        if isinstance(inner, u.SSLError):
            return Transport.TLS
    if kind in (Transport.CONNECT, Transport.OTHER, Transport.PROTOCOL) and caused_by_tls(exc):
        return Transport.TLS
    if isinstance(exc, u.ProtocolError) and exc.args and isinstance(exc.args[-1], TimeoutError):
        # The socket's timeout while the request was sent, which urllib3 calls "Connection
        # aborted." (one while connecting or reading is a timeout error of its own).
        return Transport.WRITE_TIMEOUT
    return kind


def _call_of(exc: BaseException, kind: Transport) -> TransportSeen:
    """The call, as far as urllib3 knows it: a pool's host and scheme, and a path."""
    # A NewConnectionError knows its connection: as ``conn`` in urllib3 2 (where ``pool`` is a
    # deprecated alias of it), as ``pool`` in 1.x. A RequestError knows its pool and path.
    holder: Any = getattr(exc, "conn", None) if isinstance(exc, u.NewConnectionError) else None
    if holder is None:
        holder = getattr(exc, "pool", None)
    path = getattr(exc, "url", None)
    host = getattr(holder, "host", None)
    host = host if isinstance(host, str) and host else None
    if isinstance(path, str) and path:
        if _WHOLE_URL.match(path) and getattr(holder, "proxy", None) is not None:
            # A whole URL sent through a proxy's pool (a ProxyManager's, for http:// URLs):
            # the service called is the URL's host, not the proxy's.
            return TransportSeen(kind, url=path)
        if host is not None and path.startswith("/"):
            scheme = getattr(holder, "scheme", None) or "http"
            return TransportSeen(kind, url=f"{scheme}://{host}{path}")
        return TransportSeen(kind, url=path, host=host)
    return TransportSeen(kind, host=host)


def transport_failure(exc: BaseException) -> Seen | None:
    if isinstance(exc, ValueError):  # json's error, let through by HTTPResponse.json()
        return json_failure(exc, _RESPONSE, read_response)
    if isinstance(exc, u.MaxRetryError):
        answer = last_answer(exc)
        if answer is not None:
            return answer
    kind = transport_kind(exc)
    if kind is None:
        return None
    return _call_of(exc, kind)._replace(sent_before=an_earlier_try_was_sent(exc))


def an_earlier_try_was_sent(exc: BaseException) -> bool:
    """Whether a try before the last of a call urllib3 retried got past connecting: it got an
    answer (a status it retried, a redirect), or failed after the request left (a read
    timeout). ``Retry.increment``, which gave up, holds the tries in its new ``history``."""
    if not isinstance(exc, u.MaxRetryError):
        return False
    for frame in frames_of(exc):
        retry = frame.f_locals.get("new_retry")
        if isinstance(retry, urllib3.Retry) and frame.f_code.co_name == "increment":
            return any(
                tried.status is not None
                or tried.redirect_location is not None
                or (tried.error is not None and _sent_by(tried.error))
                for tried in retry.history[:-1]  # the last is the failure itself
            )
    return False


def _sent_by(error: BaseException) -> bool:
    kind = transport_kind(error)
    return kind is not None and not kind.sent_nothing


def last_answer(exc: u.MaxRetryError) -> ResponseView | None:
    """The answer urllib3's retries gave up on, when it was a status (``Retry`` with a
    ``status_forcelist``): the service answered every try with it. urllib3 keeps only the
    status, in the reason's message: not the body nor the headers (a Retry-After is lost), so
    both are unseen (``UNSEEN_BODY``, ``UNSEEN_HEADERS``)."""
    reason = exc.reason
    found = _ERROR_RESPONSES.fullmatch(str(reason)) if isinstance(reason, u.ResponseError) else None
    if found is None:
        return None
    from pytest_nucleo._http._clients._sent import values_sent

    call = _call_of(exc, Transport.OTHER)
    url = call.url or "/"
    known = values_sent("GET", url, (), None)
    return ResponseView(
        int(found[1]), url, UNSEEN_HEADERS, UNSEEN_BODY, known, call.host or host_of(url)
    )


# urllib3 1.x (which requests still allows) has one response class, without ``url``.
_RESPONSE: type = getattr(urllib3, "BaseHTTPResponse", urllib3.HTTPResponse)
_RESPONSE_HAS_URL = hasattr(_RESPONSE, "url")


def read_response(obj: object) -> ResponseView | None:
    if not isinstance(obj, _RESPONSE):
        return None
    from pytest_nucleo._http._clients._sent import values_sent

    response: Any = obj
    url = str((response.url if _RESPONSE_HAS_URL else response.geturl()) or "/")
    # The response knows its URL (userinfo and query values are masked) but not the headers
    # it was requested with: exception_for_response(..., known=...) takes those.
    return ResponseView(
        int(response.status), url, tuple(response.headers.items()), response.data or b"",
        values_sent("GET", url, (), None), host_of(url),
    )  # fmt: skip
