"""The standard library's client: ``urllib.request`` and ``http.client`` below it.

urllib raises its own types for what it noticed itself (``HTTPError`` for a status outside 2xx,
which is a response as well as an exception; ``URLError`` wrapping the socket's error while
the connection was made or the request sent), but lets the socket's own errors out as they are
once the request is on its way: a read timeout is a bare ``TimeoutError``, a reset a bare
``ConnectionResetError``. Those say nothing of HTTP by their class, so one counts only when its
traceback runs through ``http.client`` or ``urllib.request``: a ``TimeoutError`` the tool raised
itself stays what it was. Where it was raised tells the kind too: while the answer was read (a
read timeout), while the connection was made (nothing was sent), or while the request was
sent (part of it was).

The call is read from the traceback as well: urllib's exceptions do not carry the request, but
the frames that raised them hold it (``urllib.request``'s ``req``, an ``http.client``
connection or response).

httplib2 lets http.client's and the socket's errors out as they are: ``_httplib2`` reads them
with the same functions (``protocol_errors``, ``reading_answer``, ``reason_kind``), naming its
own modules where urllib names ``http.client`` and ``urllib.request``.

This module is found for the builtin exceptions too (a ``ValueError`` of any tool): it imports
none of urllib, which costs tens of milliseconds, and reads its classes only once they are
loaded; an object of a module not loaded cannot be one of its.
"""

from __future__ import annotations

import io
import itertools
import socket
import sys
from types import FrameType, ModuleType
from typing import Any, NamedTuple

from pytest_nucleo._http._unseen import UNSEEN_BODY

from . import ResponseView, TransportSeen, frames_of
from ._kinds import Transport, host_of

_OWN_MODULES = frozenset({"http.client", "urllib.request"})
"""The modules whose frames make an error urllib's (``while_connecting`` reads below them)."""


def _loaded(name: str) -> Any:
    module: ModuleType | None = sys.modules.get(name)
    return module


def protocol_errors() -> tuple[type[BaseException], ...]:
    """What http.client raises for an answer it could not read (RemoteDisconnected, a closed
    connection before any status line, is a BadStatusLine). Its other exceptions (a
    CannotSendRequest, a ResponseNotReady) are a tool's misuse of a connection: a bug, not the
    service's failure."""
    client, error = _loaded("http.client"), _loaded("urllib.error")
    found: tuple[type[BaseException], ...] = ()
    if client is not None:
        found += (client.IncompleteRead, client.BadStatusLine, client.LineTooLong)
        found += (client.UnknownProtocol,)
    if error is not None:
        found += (error.ContentTooShortError,)
    return found


def _is(obj: object, module: str, name: str) -> bool:
    """Whether ``obj`` is an instance of ``module.name``, without importing ``module``."""
    loaded = _loaded(module)
    return loaded is not None and isinstance(obj, getattr(loaded, name))


class _Call(NamedTuple):
    method: str | None
    url: str | None
    host: str | None
    reading: bool
    """Whether the exception was raised while the answer was read (else before it)."""
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes | None = None


def _call_of(exc: BaseException) -> _Call | None:
    """The call ``exc`` was raised in, from its traceback; None when no frame of urllib or
    http.client is in it (then it was not raised by them)."""
    method = url = host = None
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes | None = None
    reading = ours = False
    for frame in frames_of(exc):
        if frame.f_globals.get("__name__") not in _OWN_MODULES:
            continue
        ours = True
        reading = reading or reading_answer(frame)
        local: Any = frame.f_locals
        req = local.get("req")
        own = local.get("self")
        if _is(req, "urllib.request", "Request"):
            method, url = req.get_method(), req.full_url
            headers = tuple(req.header_items())
            body = req.data if isinstance(req.data, bytes) else None
        elif _is(own, "http.client", "HTTPResponse"):
            url = url or getattr(own, "url", None)  # urllib sets it on the responses it returns
            method = method or getattr(own, "_method", None)
        elif _is(own, "http.client", "HTTPConnection"):
            host = host or own._tunnel_host or own.host
            method = method or getattr(own, "_method", None)
    if not ours:
        return None
    return _Call(method, url, host or host_of(url), reading, headers, body)


def reading_answer(frame: FrameType) -> bool:
    """Whether ``frame`` is http.client reading an answer (its response, or the connection's
    ``getresponse``): an error raised below it came after the request was sent."""
    if frame.f_globals.get("__name__") != "http.client":
        return False
    qualname = frame.f_code.co_qualname
    return qualname.startswith("HTTPResponse.") or qualname == "HTTPConnection.getresponse"


def reason_kind(reason: object, reading: bool, own: frozenset[str]) -> Transport:
    """The kind of the socket error ``reason``; ``reading`` says whether the answer was being
    read when it was raised, ``own`` names the client's modules (see ``while_connecting``)."""
    if _is(reason, "ssl", "SSLError") or _is(reason, "ssl", "CertificateError"):
        return Transport.TLS
    if isinstance(reason, TimeoutError):
        if reading:
            return Transport.READ_TIMEOUT
        return (
            Transport.CONNECT_TIMEOUT if while_connecting(reason, own) else Transport.WRITE_TIMEOUT
        )
    if isinstance(reason, ConnectionRefusedError | socket.gaierror):
        return Transport.CONNECT
    if isinstance(reason, str) and reason.startswith(("unknown url type", "no host given")):
        return Transport.UNSUPPORTED_PROTOCOL
    if reading and isinstance(reason, ConnectionError):
        return Transport.PROTOCOL  # the connection broke while the answer came
    return Transport.OTHER


def while_connecting(error: BaseException, own: frozenset[str]) -> bool:
    """Whether ``error`` was raised while the connection was made, before any byte of the
    request was sent. urllib raises the same ``URLError(TimeoutError)`` for a connection that
    timed out and for a request whose sending did, and httplib2 the same bare ``TimeoutError``:
    only the traceback tells them apart, by a frame named ``connect`` from the first frame of
    the client's modules (``own``, with their submodules) on: the client's own connect, or a
    socket's below it (the tool's frames above the client may have any name). fake_upstream
    fails a connection from a ``connect`` of its own, so its texts are those of a real one.
    An error whose traceback is gone (built by hand, or pickled across processes) is taken
    for the connection's, by far the more common of the two."""

    def outside(frame: FrameType) -> bool:
        module = str(frame.f_globals.get("__name__", ""))
        return module not in own and not any(module.startswith(f"{m}.") for m in own)

    frames = list(frames_of(error))
    below = itertools.dropwhile(outside, frames)
    return not frames or any(frame.f_code.co_name == "connect" for frame in below)


def _kind(exc: BaseException, call: _Call | None) -> Transport | None:
    reading = call is not None and call.reading
    if isinstance(exc, protocol_errors()):
        return Transport.PROTOCOL
    if _is(exc, "http.client", "InvalidURL"):
        return Transport.UNSUPPORTED_PROTOCOL
    if _is(exc, "urllib.error", "URLError"):
        # urllib wraps only what failed while the request was sent: the connection, mostly.
        return reason_kind(getattr(exc, "reason", None), False, _OWN_MODULES)
    if isinstance(exc, OSError) and call is not None:
        return reason_kind(exc, reading, _OWN_MODULES)
    return None


def transport_failure(exc: BaseException) -> TransportSeen | ResponseView | None:
    if _is(exc, "urllib.error", "HTTPError"):
        if not _redirected_too_often(exc):
            return read_response(exc)
        call = _call_of(exc)
        url = call.url if call is not None else None
        url = url or getattr(exc, "url", None) or getattr(exc, "filename", None)
        method = call.method if call is not None else None
        return TransportSeen(Transport.TOO_MANY_REDIRECTS, method, url, host_of(url))
    if not (isinstance(exc, OSError) or _is(exc, "http.client", "HTTPException")):
        return None
    call = _call_of(exc)
    kind = _kind(exc, call)
    if kind is None:
        return None
    # Raised while a redirect was followed: the request answered with it reached the service.
    redirected = any(
        frame.f_code.co_qualname.startswith("HTTPRedirectHandler.") for frame in frames_of(exc)
    )
    if call is None:
        return TransportSeen(kind, sent_before=redirected)
    return TransportSeen(kind, call.method, call.url, call.host, sent_before=redirected)


def _redirected_too_often(exc: BaseException) -> bool:
    """Whether urllib's redirect handler gave up, on a loop or after too many redirects: it
    raises the last redirect as an ``HTTPError`` (a 3xx) whose message starts with its own
    ``inf_msg``. That is no answer of the service's to map, but the redirects' failure, as
    httpx's and requests' ``TooManyRedirects``."""
    request = _loaded("urllib.request")
    if request is None or not 300 <= int(getattr(exc, "code", 0) or 0) <= 399:
        return False
    return str(getattr(exc, "msg", "")).startswith(request.HTTPRedirectHandler.inf_msg)


def read_response(obj: object) -> ResponseView | None:
    """An ``HTTPError`` (urllib's answer outside 2xx) or an ``http.client.HTTPResponse``.

    The body is read only for a status outside 2xx: nothing maps a success, and the tool may
    still be reading it. Once read, the body is put back, so ``read()`` gives it again to the
    tool and to a second mapping.
    """
    response: Any = obj
    if _is(obj, "urllib.error", "HTTPError"):
        url = str(response.url or response.filename or "/")
        call = _call_of(response)
        status, headers, fp = int(response.code), response.headers, response.fp
    elif _is(obj, "http.client", "HTTPResponse"):
        url = str(getattr(obj, "url", None) or "/")
        call = None
        status, headers, fp = int(response.status), response.headers, response
    else:
        return None
    body = _body_kept(fp) if not 200 <= status <= 299 else b""
    from ._sent import values_sent

    if call is not None and call.url:
        known = values_sent(call.method or "GET", call.url, call.headers, call.body)
    else:
        known = values_sent("GET", url, (), None)
    pairs = tuple(headers.items()) if headers is not None else ()
    return ResponseView(status, url, pairs, body, known, host_of(url))


def _had_no_body(response: Any) -> bool:
    """Whether an ``http.client.HTTPResponse`` had no body, whoever read it: the answer to a
    HEAD, a 304 (which never has one), or one of ``Content-Length: 0`` not sent in chunks
    (http.client reads the chunks then, whatever the length says)."""
    return (
        response.status == 304
        or getattr(response, "_method", None) == "HEAD"
        or (not response.chunked and response.getheader("Content-Length", "").strip() == "0")
    )


def _body_kept(fp: Any) -> bytes:
    """The body ``fp`` holds (what is left of it, unless it can seek), left readable again as
    it was; ``UNSEEN_BODY`` when it was read already (a tool that read ``e.read()`` before
    raising its own error) or broke off: the answer may have had one, so the text must not say
    it had none (unless the answer itself says so)."""
    if fp is None:
        return b""
    try:
        if _is(fp, "http.client", "HTTPResponse"):
            if fp.fp is None:  # read and closed already: empty, if the answer says so
                return b"" if _had_no_body(fp) else UNSEEN_BODY
            body = fp.read()
            # What HTTPResponse.read() reads from: a whole body of known length, not chunked.
            fp.fp, fp.length, fp.chunked = io.BytesIO(body), len(body), False
            return bytes(body)
        if fp.seekable():  # a file or BytesIO body (a mock's, an SDK's re-raise): all of it
            start = fp.tell()
            fp.seek(0)
            body = fp.read()
            fp.seek(start)
            return bytes(body)
        return bytes(fp.read())
    except Exception:  # OSError, http.client's IncompleteRead, ValueError on a closed file
        return UNSEEN_BODY  # the body broke off (or was closed): the status still says enough
