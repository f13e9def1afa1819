"""httplib2 (and google-api-python-client above it): its transport failures and responses.

httplib2 raises its own errors for what it noticed itself: ``ServerNotFoundError`` for a name
that does not resolve, ``RedirectLimit`` past its redirect limit, ``RelativeURIError`` for a
URI with no scheme and host, ``FailedToDecompressContent``, ``MalformedHeader`` for an
authentication header it cannot parse. The socket's own errors it lets out as they are: a
connect, write or read timeout is a bare ``TimeoutError``, a refusal a bare
``ConnectionRefusedError``, a reset a ``ConnectionResetError`` (a closed connection is
http.client's ``RemoteDisconnected``, which ``_urllib`` reads). Those say nothing of HTTP by
their class; the registry hands them here when their traceback runs through httplib2, and
where they were raised tells the kind: while connecting (a ``connect`` at or below httplib2's
first frame: its own, or a socket's), while the answer was read (http.client's response), or
while the request was sent. The rest of a socket error's reading is ``_urllib``'s.

The call is read from the frames too: httplib2's errors do not carry it, but each
``Http.request`` frame holds the URI and method; more than one means a redirect was followed.

Its response, an ``httplib2.Response``, is a dict of the answer's headers, lowercased, with a
``status``; ``Http.request`` returns the body beside it, so the body is unseen here. Its URL is
its ``content-location``: the service's own, or the URI asked for, which httplib2 adds only to
a 200 or 203 answer to a safe method (GET, HEAD; an answer it may cache) and to the redirects
it followed. A failing answer has one only when the service sent it, so its URL mostly reads
"/": the response does not hold the request.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import httplib2

from pytest_nucleo._http._unseen import UNSEEN_BODY

from . import ResponseView, Seen, TransportSeen, frames_of
from ._kinds import Transport, host_of
from ._urllib import protocol_errors, reading_answer, reason_kind

# httplib2's modules: a ``connect`` from the first of their frames on is the connection's.
_OWN_MODULES = frozenset({"httplib2"})

# Most specific first. ProxiesUnavailableError (a proxy asked for without PySocks installed)
# and the Unimplemented*DigestAuthOption errors are the setup's or the client's limits, not
# the service's failure: read as any other error of the tool.
_KINDS: tuple[tuple[type[BaseException], Transport], ...] = (
    (httplib2.ServerNotFoundError, Transport.CONNECT),
    (httplib2.RedirectLimit, Transport.TOO_MANY_REDIRECTS),
    (httplib2.RelativeURIError, Transport.UNSUPPORTED_PROTOCOL),
    (httplib2.FailedToDecompressContent, Transport.DECODING),
    (httplib2.MalformedHeader, Transport.PROTOCOL),
)


class _Call(NamedTuple):
    method: str | None
    url: str | None
    host: str | None
    redirected: bool
    """Whether the request that failed followed a redirect: the one answered with it reached
    the service."""


def _call_of(exc: BaseException) -> _Call | None:
    """The call ``exc`` was raised in, from the ``Http.request`` frames of its traceback (the
    innermost is the request that failed); None when none is there."""
    requests = [
        frame.f_locals
        for frame in frames_of(exc)
        if frame.f_code.co_name == "request"
        and isinstance(frame.f_locals.get("self"), httplib2.Http)
    ]
    if not requests:
        return None
    local = requests[-1]
    url = local.get("uri")
    url = url if isinstance(url, str) else None
    method = local.get("method")
    conn: Any = local.get("conn")
    host = getattr(conn, "host", None)
    return _Call(
        method if isinstance(method, str) else None,
        url,
        host_of(url) or (host if isinstance(host, str) else None),
        len(requests) > 1,
    )


def transport_failure(exc: BaseException) -> Seen | None:
    call = _call_of(exc)
    if isinstance(exc, httplib2.RedirectMissingLocation):
        # A redirect without a Location: the service's answer, as it gave it.
        return _view(exc.response, exc.content, call.url if call is not None else None)
    kind = next((k for cls, k in _KINDS if isinstance(exc, cls)), None)
    if kind is None and call is not None:
        # http.client's errors come here only when the registry hands them over; by their class
        # alone, they are _urllib's, which reads their kind the same way.
        if isinstance(exc, protocol_errors()):
            kind = Transport.PROTOCOL
        elif isinstance(exc, OSError):
            reading = any(reading_answer(frame) for frame in frames_of(exc))
            kind = reason_kind(exc, reading, _OWN_MODULES)
    if kind is None:
        return None
    if call is None:
        return TransportSeen(kind)
    return TransportSeen(kind, call.method, call.url, call.host, sent_before=call.redirected)


def read_response(obj: object) -> ResponseView | None:
    """An ``httplib2.Response``: its status and headers; its body is not in it (see the
    module's docstring), so the text says nothing of it."""
    if not isinstance(obj, httplib2.Response):
        return None
    return _view(obj, UNSEEN_BODY)


def _view(response: Any, body: object, asked: str | None = None) -> ResponseView | None:
    if not isinstance(response, httplib2.Response):
        return None
    from ._sent import values_sent

    # httplib2 adds the status as a header of its own; the rest are the answer's.
    headers = tuple((str(k), str(v)) for k, v in response.items() if k != "status")
    url = str(response.get("content-location") or asked or "/")
    return ResponseView(
        int(response.status), url, headers, body if isinstance(body, bytes) else b"",
        values_sent("GET", url, (), None), host_of(url),
    )  # fmt: skip
