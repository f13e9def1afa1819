"""aiohttp: its transport failures, and its responses once their body was read."""

from __future__ import annotations

from typing import Any

import aiohttp
from aiohttp import client_exceptions as a

from . import ResponseView, TransportSeen
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
    kind = next((k for cls, k in _KINDS if isinstance(exc, cls)), None)
    if kind in (Transport.CONNECT, Transport.OTHER) and caused_by_tls(exc):
        return Transport.TLS
    return kind


def _url_of(exc: BaseException) -> tuple[str | None, str | None]:
    info: Any = getattr(exc, "request_info", None)
    if info is not None:
        return str(info.method), str(info.url)
    host = getattr(exc, "host", None)
    if isinstance(host, str) and host:
        return None, f"http://{host}"
    url = getattr(exc, "url", None)  # InvalidURL
    return None, str(url) if url is not None else None


def transport_failure(exc: BaseException) -> TransportSeen | ResponseView | None:
    if type(exc) is a.ClientResponseError:  # raise_for_status(): a status was received
        info: Any = exc.request_info
        return ResponseView(
            int(exc.status), str(info.url), tuple((exc.headers or {}).items()), b"",
            _known(info), info.url.host,
        )  # fmt: skip
    kind = transport_kind(exc)
    if kind is None:
        return None
    method, url = _url_of(exc)
    return TransportSeen(kind, method, url)


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
