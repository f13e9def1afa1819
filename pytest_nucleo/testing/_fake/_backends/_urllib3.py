"""urllib3 (and botocore, boto3, the kubernetes and Elasticsearch clients above it): each
request a connection pool sends is answered by the router.

The fake sits at ``HTTPConnectionPool._make_request``, the one call of ``urlopen`` that sends a
request on a connection and reads the answer's head. Everything around it is urllib3's own
code: ``urlopen`` with its ``Retry`` (the tries it repeats, the redirects it follows, the
statuses it retries, ``MaxRetryError`` when it gives up) and the wrapping of what the socket
raised (``ProtocolError("Connection aborted.", ...)``, a ``ProxyError`` for a proxy never
reached), ``PoolManager`` across hosts, and ``HTTPResponse``, built as urllib3's connection
builds it, over http.client's response to the answer's bytes: ``preload_content=False``,
``stream()``, ``decode_content`` (the route's bytes come with their ``Content-Encoding``) and
``release_conn`` work as with a server. botocore's ``URLLib3Session.send`` calls ``urlopen``
with ``Retry(False)``, so it gets the very exceptions below, which it turns into its own.

A failure is raised where urllib3 raises a real one, so ``urlopen`` wraps and retries it as it
does: ``NewConnectionError`` (from ``ConnectionRefusedError``) for a refused connection and
``ConnectTimeoutError`` for a connect timeout, as the connection's ``_new_conn`` raises them;
``ReadTimeoutError`` (from the socket's timeout) for a read timeout, as ``_make_request`` does;
the socket's ``TimeoutError`` while sending, http.client's ``RemoteDisconnected`` for a server
that closed without answering and ``ConnectionResetError`` for a reset, which ``urlopen``
wraps in ``ProtocolError``; ``EmptyPoolError`` for a pool timeout, as ``_get_conn`` raises it
from a blocking pool. A proxy's tunnel (``_prepare_proxy``) is set up but never opened.

Pools whose connections connect their own way (a unix socket's, Docker's) are left alone, as
the standard library's fake leaves such ``http.client`` subclasses. requests never gets here
while a fake runs: its ``HTTPAdapter.send``, which would call the pool, is answered before it
(``_requests``), so no request is answered twice. urllib3 1.x builds its responses in
``urlopen`` and is not faked: its requests meet the network guard.

Why no mocking library: ``responses`` patches requests' adapter only; vcrpy replays
cassettes; ``urllib3-mock`` was last released in 2015, for urllib3 1.x; ``pook`` (kept) patches
``urlopen`` itself, so urllib3's retries, redirects and exception wrapping never run and
transport failures cannot be faked, and it answers requests too; httpretty and mocket replace
the socket module, which the network guard wraps. The seam here keeps all of urllib3 real.
"""

from __future__ import annotations

import http.client
import inspect
import io
from collections.abc import Callable, Mapping
from typing import Any, Literal

import httpx
import respx
import urllib3
from urllib3 import connectionpool
from urllib3 import exceptions as u
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.util.timeout import Timeout

from ._urllib import origin, wire

_POOL = connectionpool.HTTPConnectionPool
_TLS_POOL = connectionpool.HTTPSConnectionPool
_FAKED = {
    (_POOL, "_make_request"): vars(_POOL)["_make_request"],
    (_TLS_POOL, "_prepare_proxy"): vars(_TLS_POOL)["_prepare_proxy"],
}
# urllib3 1.x's _make_request returns http.client's response, and urlopen builds its own: it is
# not faked, and what only urllib3 2 has is imported where the fake runs.
_VERSION_2 = int(urllib3.__version__.partition(".")[0]) >= 2  # type: ignore[attr-defined]
# The connect of urllib3's own connections: a pool whose connections connect otherwise
# (through a unix socket) is not calling an HTTP upstream the routes could name.
_OWN_CONNECT = (vars(HTTPConnection)["connect"], vars(HTTPSConnection)["connect"])
# The version string urllib3's connection gives its responses (older urllib3 2 releases take
# none).
_VERSION_STRING: dict[str, Any] = (
    {"version_string": "HTTP/1.1"}
    if "version_string" in inspect.signature(urllib3.HTTPResponse).parameters
    else {}
)


class ClientBackend:
    client = "urllib3"

    def __init__(self) -> None:
        self._started = False

    def refusal(self) -> str | None:
        for (owner, name), real in _FAKED.items():
            if vars(owner)[name] is not real:
                return (
                    f"urllib3's {owner.__name__}.{name} is already patched (another "
                    "FakeUpstream, most likely): use one per test."
                )
        for pool, cls in ((_POOL, HTTPConnection), (_TLS_POOL, HTTPSConnection)):
            if not issubclass(pool.ConnectionCls, cls):
                return (
                    f"urllib3's {pool.__name__}.ConnectionCls is replaced (by vcrpy's "
                    "cassette, most likely): two fakes would both answer urllib3's requests. "
                    "Use one per test."
                )
        return None

    def start(self, router: respx.Router) -> None:
        if not _VERSION_2:
            return
        _POOL._make_request = _answering(router)  # type: ignore[method-assign]
        _TLS_POOL._prepare_proxy = _tunnel_unopened  # type: ignore[method-assign,assignment]
        self._started = True

    def stop(self) -> None:
        if self._started:
            for (owner, name), real in _FAKED.items():
                setattr(owner, name, real)
            self._started = False


def _ours(conn: Any) -> bool:
    return getattr(type(conn), "connect", None) in _OWN_CONNECT


def _tunnel_unopened(pool: Any, conn: Any) -> None:
    """What ``HTTPSConnectionPool._prepare_proxy`` does but the connection to the proxy: the
    tunnel's target is set, and the answer comes from the router."""
    if not _ours(conn):
        _FAKED[(_TLS_POOL, "_prepare_proxy")](pool, conn)
        return
    scheme = "https" if pool.proxy is not None and pool.proxy.scheme == "https" else "http"
    conn.set_tunnel(
        scheme=scheme, host=pool._tunnel_host, port=pool.port, headers=pool.proxy_headers
    )


def _answering(router: respx.Router) -> Callable[..., Any]:
    from urllib3.util.timeout import _DEFAULT_TIMEOUT

    real = _FAKED[(_POOL, "_make_request")]

    def _make_request(
        pool: Any,
        conn: Any,
        method: str,
        url: str,
        body: Any = None,
        headers: Mapping[str, Any] | None = None,
        retries: Any = None,
        timeout: Any = _DEFAULT_TIMEOUT,
        chunked: bool = False,
        response_conn: Any = None,
        preload_content: bool = True,
        decode_content: bool = True,
        enforce_content_length: bool = True,
    ) -> Any:
        if not _ours(conn):
            return real(
                pool, conn, method, url, body=body, headers=headers, retries=retries,
                timeout=timeout, chunked=chunked, response_conn=response_conn,
                preload_content=preload_content, decode_content=decode_content,
                enforce_content_length=enforce_content_length,
            )  # fmt: skip
        pool.num_requests += 1
        limits = pool._get_timeout(timeout)
        limits.start_connect()
        conn.timeout = Timeout.resolve_default_timeout(limits.connect_timeout)
        request = _request(pool, conn, method, url, body, headers, chunked)
        try:
            answer = router.handler(request)
        except httpx.TransportError as error:
            phase, failure, cause = _failure(error, _Call(pool, conn, url, limits))
        else:
            _connected(conn)
            raw = _parsed(wire(answer, head=method == "HEAD", encoded=True), method)
            response = urllib3.HTTPResponse(
                body=raw,
                headers=urllib3.HTTPHeaderDict(raw.msg.items()),
                status=raw.status,
                version=raw.version,
                reason=raw.reason,
                preload_content=preload_content,
                decode_content=decode_content,
                original_response=raw,
                enforce_content_length=enforce_content_length,
                request_method=method,
                request_url=url,
                **_VERSION_STRING,
            )
            # What urllib3's _make_request sets, for the pooling layer.
            response.retries = retries
            response._connection = response_conn
            response._pool = pool
            return response
        if phase != "connect":
            _connected(conn)
        if phase == "pool":  # raised by _get_conn, before a connection was taken: give it back
            pool._put_conn(conn)
        raise failure from cause

    return _make_request


def _connected(conn: Any) -> None:
    """The connection got past connecting: through a proxy, urllib3 then no longer reads a
    failure as the proxy's."""
    if hasattr(conn, "_has_connected_to_proxy"):
        conn._has_connected_to_proxy = bool(getattr(conn, "proxy", None))


class _Wire:
    """The socket http.client's response reads the answer's bytes from."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def makefile(self, mode: str = "rb", *args: Any, **kwargs: Any) -> io.BufferedReader:
        return io.BufferedReader(io.BytesIO(self._data))


def _parsed(answer: bytes, method: str) -> http.client.HTTPResponse:
    """http.client's response to ``answer``, its head read, as urllib3's connection gets it
    (the answer to a HEAD has no body, whatever its length says)."""
    raw = http.client.HTTPResponse(_Wire(answer), method=method)  # type: ignore[arg-type]
    raw.begin()
    return raw


def _request(
    pool: Any,
    conn: Any,
    method: str,
    url: str,
    body: Any,
    headers: Mapping[str, Any] | None,
    chunked: bool,
) -> httpx.Request:
    """The request as urllib3's connection would write it: its body read (a file-like body is
    consumed, an iterable's chunks joined), its framing and default headers added."""
    from urllib3.util.request import body_to_chunks

    given = [(_bytes(name), _bytes(value)) for name, value in (headers or {}).items()]
    names = {name.lower() for name, _ in given}
    found = body_to_chunks(body, method=method, blocksize=getattr(conn, "blocksize", 16384))
    content = b"".join(
        chunk.encode("utf-8") if isinstance(chunk, str) else bytes(chunk)
        for chunk in found.chunks or ()
    )
    framing: list[tuple[bytes, bytes]] = []
    if chunked or (
        found.content_length is None
        and found.chunks is not None
        and not names & {b"content-length", b"transfer-encoding"}
    ):
        chunked = True
        if b"transfer-encoding" not in names:
            framing.append((b"Transfer-Encoding", b"chunked"))
    elif found.content_length is not None and not names & {b"content-length", b"transfer-encoding"}:
        framing.append((b"Content-Length", b"%d" % found.content_length))
    # http.client's putrequest asks for no encoding unless told otherwise; urllib3 names itself.
    if b"accept-encoding" not in names:
        framing.append((b"Accept-Encoding", b"identity"))
    if b"user-agent" not in names:
        framing.append((b"User-Agent", _USER_AGENT.encode()))
    target = url if url.startswith(("http://", "https://")) else _origin_of(pool) + url
    request = httpx.Request(method, target, headers=framing + given, content=content)
    if chunked:  # httpx gives every body a length; urllib3 sends this one in chunks
        request.headers.pop("content-length", None)
    return request


def _origin_of(pool: Any) -> str:
    return origin(pool.scheme, pool.host, pool.port)


def _bytes(value: object) -> bytes:
    """A header name or value as http.client sends it: str as latin-1, an int as its digits."""
    if isinstance(value, bytes):
        return value
    return str(value).encode("latin-1", "replace")


def _user_agent() -> str:
    from urllib3 import connection

    default = getattr(connection, "_get_default_user_agent", None)
    return default() if callable(default) else "python-urllib3"


_USER_AGENT = _user_agent()

# A neutral failure as urllib3 meets it, and when: while the connection is made, while it waits
# for a pooled connection, while the request is sent, or while the answer is read.
_Phase = Literal["connect", "pool", "send", "read"]
_Failure = tuple[_Phase, BaseException, BaseException | None]


class _Call:
    """What a failure's message names: the pool, the connection, the URL and the timeouts."""

    def __init__(self, pool: Any, conn: Any, url: str, limits: Timeout) -> None:
        self.pool, self.conn, self.url, self.limits = pool, conn, url, limits


def _failure(error: httpx.TransportError, call: _Call) -> _Failure:
    """The exception urllib3's own code raises for ``error``, its cause, and the phase."""
    build = next(_FAILURES[kind] for kind in type(error).__mro__ if kind in _FAILURES)
    return build(error, call)


def _refused(error: httpx.TransportError, call: _Call) -> _Failure:
    cause = ConnectionRefusedError(111, "Connection refused")
    message = f"Failed to establish a new connection: {cause}"
    return "connect", u.NewConnectionError(call.conn, message), cause


def _connect_timeout(error: httpx.TransportError, call: _Call) -> _Failure:
    conn = call.conn
    message = f"Connection to {conn.host} timed out. (connect timeout={conn.timeout})"
    return "connect", u.ConnectTimeoutError(conn, message), TimeoutError("timed out")


def _read_timeout(error: httpx.TransportError, call: _Call) -> _Failure:
    message = f"Read timed out. (read timeout={call.limits.read_timeout})"
    return "read", u.ReadTimeoutError(call.pool, call.url, message), TimeoutError("timed out")


def _pool_timeout(error: httpx.TransportError, call: _Call) -> _Failure:
    message = "Pool is empty and a new connection can't be opened due to blocking mode."
    return "pool", u.EmptyPoolError(call.pool, message), None


def _write_timeout(error: httpx.TransportError, call: _Call) -> _Failure:
    return "send", TimeoutError("timed out"), None


def _disconnected(error: httpx.TransportError, call: _Call) -> _Failure:
    closed = http.client.RemoteDisconnected("Remote end closed connection without response")
    return "read", closed, None


def _reset(error: httpx.TransportError, call: _Call) -> _Failure:
    return "read", ConnectionResetError(104, "Connection reset by peer"), None


def _other(error: httpx.TransportError, call: _Call) -> _Failure:
    return "send", OSError(str(error)), None


_FAILURES: dict[type[httpx.TransportError], Callable[[httpx.TransportError, _Call], _Failure]] = {
    httpx.ConnectError: _refused,
    httpx.ConnectTimeout: _connect_timeout,
    httpx.PoolTimeout: _pool_timeout,
    httpx.WriteTimeout: _write_timeout,
    httpx.ReadTimeout: _read_timeout,
    httpx.RemoteProtocolError: _disconnected,
    httpx.ReadError: _reset,
    httpx.TransportError: _other,
}
