"""aiohttp: its transport failures, and its responses once their body was read."""

from __future__ import annotations

from typing import Any

import aiohttp
from aiohttp import client_exceptions as a
from aiohttp.http_exceptions import HttpProcessingError

from pytest_nucleo._causes import iter_chain
from pytest_nucleo._http._unseen import UNSEEN_BODY, UNSEEN_HEADERS

from . import ResponseView, Seen, TransportSeen, frames_of, json_failure
from ._httpx_api import caused_by_tls
from ._kinds import Transport

# Most specific first: every connector error is a ClientOSError; the timeouts are
# ServerTimeoutErrors; TooManyRedirects and ContentTypeError are ClientResponseErrors.
_KINDS: tuple[tuple[type[BaseException], Transport], ...] = (
    (a.ClientConnectorCertificateError, Transport.TLS),
    (a.ClientConnectorSSLError, Transport.TLS),
    (a.ClientSSLError, Transport.TLS),
    (a.ServerFingerprintMismatch, Transport.TLS),
    (a.ClientProxyConnectionError, Transport.PROXY),
    (a.ClientHttpProxyError, Transport.PROXY),
    (a.ClientConnectorError, Transport.CONNECT),
    (a.ConnectionTimeoutError, Transport.CONNECT_TIMEOUT),
    (a.SocketTimeoutError, Transport.READ_TIMEOUT),
    (a.ServerTimeoutError, Transport.READ_TIMEOUT),
    (a.ServerDisconnectedError, Transport.PROTOCOL),
    (a.ClientPayloadError, Transport.PROTOCOL),
    (a.TooManyRedirects, Transport.TOO_MANY_REDIRECTS),
    (a.ContentTypeError, Transport.DECODING),
    (a.NonHttpUrlClientError, Transport.UNSUPPORTED_PROTOCOL),
    (a.InvalidURL, Transport.UNSUPPORTED_PROTOCOL),
    (a.ClientError, Transport.OTHER),
)


def transport_kind(exc: BaseException) -> Transport | None:
    if isinstance(exc, a.ClientResponseError) and _unparsable(exc):
        return Transport.PROTOCOL
    kind = next((k for cls, k in _KINDS if isinstance(exc, cls)), None)
    if kind in (Transport.CONNECT, Transport.OTHER) and caused_by_tls(exc):
        return Transport.TLS
    return kind


def _call_of(exc: BaseException) -> TransportSeen | None:
    """The call, as far as ``exc`` knows it (kind left to the caller)."""
    info: Any = getattr(exc, "request_info", None)
    if info is not None:
        return TransportSeen(Transport.OTHER, str(info.method), str(info.url))
    host = getattr(exc, "host", None)  # a connector error knows only the host and port
    if isinstance(host, str) and host:
        return TransportSeen(Transport.OTHER, host=host)
    url = getattr(exc, "url", None)  # InvalidURL
    return TransportSeen(Transport.OTHER, url=str(url)) if url is not None else None


def _redirected(exc: BaseException) -> bool:
    """Whether the session followed a redirect before ``exc`` ended the call: the request
    that was answered with it reached the service (``ClientSession._request`` keeps the
    answers it followed in ``history``)."""
    return any(
        frame.f_code.co_name == "_request"
        and isinstance(frame.f_locals.get("self"), aiohttp.ClientSession)
        and bool(frame.f_locals.get("history"))
        for frame in frames_of(exc)
    )


def _raised_by_the_timer(exc: BaseException) -> bool:
    """Whether ``exc`` (a bare TimeoutError) was raised by the timer of aiohttp's total
    timeout, not by another wait in aiohttp's code (a websocket's receive, say)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_globals.get("__name__") == "aiohttp.helpers"


def _timed_out(exc: BaseException) -> TransportSeen:
    """aiohttp's total timeout (``ClientTimeout.total``, 5 minutes by default), a bare
    ``TimeoutError`` raised where aiohttp's timer was left. It cancelled the call where it
    waited, and that cancellation, the error's context, says where: in the connector, the
    connection was being made and nothing was sent; anywhere else the request was sent (its
    body perhaps only in part, written while the answer is awaited) or the answer was read."""
    waited = exc.__context__
    connecting = waited is not None and any(
        frame.f_globals.get("__name__") == "aiohttp.connector" for frame in frames_of(waited)
    )
    kind = Transport.CONNECT_TIMEOUT if connecting else Transport.TIME_LIMIT
    for frame in frames_of(exc):  # the request the frames hold: the session's or the response's
        local: Any = frame.f_locals
        held = local.get("req") if "req" in local else local.get("self")
        if isinstance(held, aiohttp.ClientRequest | aiohttp.ClientResponse):
            info = held.request_info
            return TransportSeen(kind, str(info.method), str(info.url))
    return TransportSeen(kind)


def transport_failure(exc: BaseException) -> Seen | None:
    if type(exc) is TimeoutError and _raised_by_the_timer(exc):
        return _timed_out(exc)._replace(sent_before=_redirected(exc))
    if type(exc) is a.ClientResponseError and not _unparsable(exc):
        # raise_for_status(): a status was received. aiohttp raises before reading the body,
        # and the error keeps none: it is unseen, not empty.
        info: Any = exc.request_info
        headers = UNSEEN_HEADERS if exc.headers is None else tuple(exc.headers.items())
        return ResponseView(
            int(exc.status), str(info.url), headers, UNSEEN_BODY, _known(info), info.url.host
        )
    if isinstance(exc, a.ContentTypeError | ValueError):
        # Not JSON by its Content-Type, or by its body (json's error, or the text's decoding).
        # json() reads the body before it decodes it.
        answer = json_failure(exc, aiohttp.ClientResponse, _read_if_read)
        if answer is not None:
            return answer
    kind = transport_kind(exc)
    if kind is None:
        return None
    call = _call_of(exc)
    seen = TransportSeen(kind) if call is None else call._replace(kind=kind)
    return seen._replace(sent_before=_redirected(exc))


def _read_if_read(response: Any) -> ResponseView | None:
    return None if response._body is None else read_response(response)


def _unparsable(exc: BaseException) -> bool:
    """Whether aiohttp raised ``exc`` because the answer was not HTTP: its parser's error is
    then the cause, and the "status" is the parser's own 400, not one the server sent."""
    return any(isinstance(m, HttpProcessingError) for m in iter_chain(exc) if m is not exc)


def _known(info: Any) -> tuple[str, ...]:
    from ._sent import values_sent

    return values_sent(str(info.method), str(info.url), info.headers.items(), None)


def read_response(obj: object) -> ResponseView | None:
    if not isinstance(obj, aiohttp.ClientResponse):
        return None
    response: Any = obj
    body = response._body  # set by read(), text() and json(); None before
    if body is None:
        raise ValueError(
            "the aiohttp response's body was not read yet: call `await response.read()` "
            "(or text() or json()) first, then map the response"
        )
    info = response.request_info
    return ResponseView(
        int(response.status), str(response.url), tuple(response.headers.items()), bytes(body),
        _known(info), response.url.host,
    )  # fmt: skip
