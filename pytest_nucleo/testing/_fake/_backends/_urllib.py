"""The standard library: ``http.client``'s connections get a socket the router answers.

The fake sits at the one place every stdlib call goes through: ``HTTPConnection.connect`` and
``HTTPSConnection.connect`` (urllib's handlers build those connections, and code that uses
http.client directly calls them too). The fake ``connect`` gives the connection a socket that
reads what http.client writes (h11, the HTTP/1.1 library under httpx, parses it), asks the
router when the request is complete, and hands http.client the answer as bytes, which its own
parser reads. So everything above the socket is the real code: ``urlopen`` and
``build_opener().open``, their handlers (redirects, ``HTTPError`` for a status outside 2xx,
with its readable body and headers), and a direct ``http.client`` call.

A failure is raised where a real one would be, as the socket raises it: a refused connection
(``ConnectionRefusedError``) or a connect timeout (``TimeoutError``) from a ``connect``, and a
write timeout while the request is sent, which urllib wraps in ``URLError`` as it does for a
real one; a read timeout (``TimeoutError``) or a reset while the answer is read, which urllib
lets out as it is; a server that closed without answering gives http.client's own
``RemoteDisconnected``. Subclasses that make their own connection (urllib3's, a unix socket's)
override ``connect`` and are left alone; httplib2's, which do too, get this same socket from
httplib2's own backend (``_httplib2``), through :class:`ConnectBackend`.
"""

from __future__ import annotations

import http.client
import io
import sys
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Literal, NoReturn

import h11
import httpx
import respx

from pytest_nucleo.testing._fake._hosts import bracketed

# The answer headers the fake writes itself, to fit the body it sends: that body is the
# decoded one (the route's response decoded it), so a Content-Encoding would misname it.
_FRAMING = frozenset({b"content-length", b"transfer-encoding", b"content-encoding"})
_NO_BODY = frozenset({204, 304})

_Connect = Callable[..., None]


def real_connects(
    module: Any, schemes: Mapping[str, str]
) -> dict[type[http.client.HTTPConnection], tuple[str, _Connect]]:
    """The connection classes of ``module`` named in ``schemes`` (class name -> scheme), each
    with its scheme and its own ``connect``, read before any fake replaces it."""
    found = {}
    for name, scheme in schemes.items():
        cls = getattr(module, name)
        found[cls] = (scheme, vars(cls)["connect"])
    return found


class ConnectBackend:
    """A fake that gives the connections of some ``http.client.HTTPConnection`` classes a
    socket the router answers, through their ``connect``: the standard library's here, and
    the classes of a client that subclasses them with a ``connect`` of its own (httplib2)."""

    client: ClassVar[str]
    connects: ClassVar[dict[type[http.client.HTTPConnection], tuple[str, _Connect]]]
    """Each class faked, with its scheme and its real ``connect`` (see :func:`real_connects`)."""

    def __init__(self) -> None:
        self._peer: Peer | None = None

    def refusal(self) -> str | None:
        for cls, (_, real) in self.connects.items():
            where = cls.__module__
            if getattr(sys.modules[where], cls.__name__, None) is not cls:
                return (
                    f"{where}.{cls.__name__} is replaced (by vcrpy's cassette, most likely): "
                    f"two fakes would both answer {self.client}'s requests. Use one per test."
                )
            if vars(cls)["connect"] is not real:
                return (
                    f"{where}.{cls.__name__}.connect is already patched (another "
                    "FakeUpstream, most likely): use one per test."
                )
        return None

    def start(self, router: respx.Router) -> None:
        self._peer = Peer(router)
        for cls, (scheme, _) in self.connects.items():
            cls.connect = connector(self._peer, scheme)  # type: ignore[method-assign,assignment]

    def stop(self) -> None:
        if self._peer is not None:
            for cls, (_, real) in self.connects.items():
                cls.connect = real  # type: ignore[method-assign]
            self._peer.gone = True
            self._peer = None


class ClientBackend(ConnectBackend):
    client = "urllib"
    connects = real_connects(http.client, {"HTTPConnection": "http", "HTTPSConnection": "https"})


class Peer:
    """What the sockets of one fake's run talk to: its router, until the fake stops.

    A connection kept open past that (an ``httplib2.Http`` or an ``HTTPConnection`` a module
    keeps from test to test) must not be answered by the routes of a test that is over: its
    socket then reads as one whose server closed it, and the client reconnects (httplib2 does
    by itself) to whatever answers now, the next test's fake or the network guard."""

    def __init__(self, router: respx.Router) -> None:
        self.router = router
        self.gone = False


def connector(peer: Peer, scheme: str) -> Callable[[http.client.HTTPConnection], None]:
    """A ``connect`` for ``scheme``'s connections that gives each a socket ``peer`` answers."""

    def connect(self: http.client.HTTPConnection) -> None:
        # Behind a proxy, the connection goes to the proxy and tunnels to the host: the host
        # is what the route names.
        tunnel: Any = self._tunnel_host  # type: ignore[attr-defined]
        if tunnel:
            host, port = tunnel, self._tunnel_port  # type: ignore[attr-defined]
        else:
            host, port = self.host, self.port
        self.sock = _Socket(peer, scheme, host, port)

    return connect


class _Socket:
    """A connected socket whose peer is the router: requests in, answers out."""

    def __init__(self, peer: Peer, scheme: str, host: str, port: int) -> None:
        self._peer = peer
        self._origin = origin(scheme, host, port)
        self._parser = h11.Connection(h11.SERVER)
        self._request: h11.Request | None = None
        self._body = bytearray()
        self._answer = bytearray()
        self._failure: BaseException | None = None  # raised when the answer is read
        self.timeout: float | None = None

    # -- what http.client writes -----------------------------------------------------------

    def sendall(self, data: Any) -> None:
        self._parser.receive_data(bytes(data))
        while True:
            try:
                event = self._parser.next_event()
            except h11.RemoteProtocolError as error:
                raise AssertionError(
                    f"fake_upstream could not read the request http.client sent to "
                    f"{self._origin} ({error}): send it with urlopen or "
                    "HTTPConnection.request, which write whole requests"
                ) from None
            if event is h11.NEED_DATA or event is h11.PAUSED:
                return
            if isinstance(event, h11.Request):
                self._request = event
            elif isinstance(event, h11.Data):
                self._body += event.data
            elif isinstance(event, h11.EndOfMessage):
                self._answer_request()
                return

    def send(self, data: Any) -> int:
        self.sendall(data)
        return len(data)

    def connect(self, failure: BaseException) -> NoReturn:
        """Fail as a connection does, from a function of this name (not a socket's
        ``connect(address)``: nothing calls that on this one). urllib raises the same
        ``URLError(TimeoutError)`` for a connect timeout and a write timeout, and which one it
        was is read from the traceback. The fake learns a route's outcome only once the request
        is written, so its connection fails then."""
        raise failure from None

    def _answer_request(self) -> None:
        sent = self._request
        assert sent is not None  # h11 gives the request before its end
        target = sent.target.decode("ascii", "replace")
        # A request through a proxy names the whole URL; one to the host only its path.
        url = target if target.startswith(("http://", "https://")) else self._origin + target
        request = httpx.Request(
            sent.method.decode("ascii"),
            url,
            headers=[(name, value) for name, value in sent.headers.raw_items()],
            content=bytes(self._body),
        )
        # The next request on this connection (http.client keeps it open) starts afresh.
        self._parser = h11.Connection(h11.SERVER)
        self._request, self._body = None, bytearray()
        if self._peer.gone:  # a server that closed the connection: nothing comes back
            return
        try:
            response = self._peer.router.handler(request)
        except httpx.TransportError as error:
            phase, make = next(_FAILURES[k] for k in type(error).__mro__ if k in _FAILURES)
            failure = None if make is None else make(error)
            if failure is not None and phase != "read":
                if phase == "connect":
                    self.connect(failure)
                raise failure from None
            self._failure = failure
            return
        self._answer += wire(response, head=request.method == "HEAD")

    # -- what http.client reads ------------------------------------------------------------

    def makefile(self, mode: str = "rb", *args: Any, **kwargs: Any) -> io.BufferedReader:
        return io.BufferedReader(_Reader(self))

    def recv_into(self, buffer: Any, nbytes: int = 0) -> int:
        if self._failure is not None:
            raise self._failure
        size = min(len(buffer), nbytes or len(buffer), len(self._answer))
        buffer[:size] = self._answer[:size]
        del self._answer[:size]
        return size  # 0 once the answer is all read: the peer closed, as a server would

    def recv(self, size: int) -> bytes:
        chunk = bytearray(size)
        got = self.recv_into(chunk)
        return bytes(chunk[:got])

    # -- the rest of a socket's API that http.client and its users touch -------------------

    def settimeout(self, value: float | None) -> None:
        self.timeout = value

    def gettimeout(self) -> float | None:
        return self.timeout

    def setsockopt(self, *args: Any) -> None:
        pass

    def shutdown(self, how: int) -> None:
        pass

    def close(self) -> None:
        pass

    def fileno(self) -> int:
        return -1


class _Reader(io.RawIOBase):
    def __init__(self, sock: _Socket) -> None:
        self._sock = sock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        return self._sock.recv_into(buffer)


def origin(scheme: str, host: str, port: int | None) -> str:
    """``scheme://host[:port]``, the port left out when it is the scheme's own."""
    shown = bracketed(host)
    default = 443 if scheme == "https" else 80
    return f"{scheme}://{shown}" + (f":{port}" if port and port != default else "")


def wire(response: httpx.Response, *, head: bool, encoded: bool = False) -> bytes:
    """``response`` as a server writes it: status line, headers, the body framed by length.

    The body is the decoded one; with ``encoded``, the bytes the route gave (when it gave
    them, as ``respond(content=...)`` does) with their ``Content-Encoding``, for a client that
    decodes them itself (urllib3, unless told not to)."""
    status = response.status_code
    framing = _FRAMING
    content = response.content
    if encoded and isinstance(response.stream, httpx.ByteStream):
        content = b"".join(response.stream)
        framing = _FRAMING - {b"content-encoding"}
    body = b"" if head or status in _NO_BODY or status < 200 else content
    reason = response.reason_phrase.encode("latin-1", "replace")
    lines = [b"HTTP/1.1 %d %s" % (status, reason)]
    lines += [
        name + b": " + value for name, value in response.headers.raw if name.lower() not in framing
    ]
    if status >= 200 and status not in _NO_BODY:
        lines.append(b"Content-Length: %d" % len(content))
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


# A neutral failure as the socket raises it, and when: while the connection is made or the
# request sent (urllib wraps it in URLError), or while the answer is read (urllib lets it out
# as it is). None: the server closed without a byte, which http.client reads as its own
# RemoteDisconnected, as for a real server.
_Make = Callable[[httpx.TransportError], Exception]
_Phase = Literal["connect", "send", "read"]
_FAILURES: dict[type[httpx.TransportError], tuple[_Phase, _Make | None]] = {
    httpx.ConnectError: ("connect", lambda e: ConnectionRefusedError(111, "Connection refused")),
    httpx.ConnectTimeout: ("connect", lambda e: TimeoutError("timed out")),
    # urllib has no pool: waiting for one is waiting for a connection.
    httpx.PoolTimeout: ("connect", lambda e: TimeoutError("timed out")),
    httpx.WriteTimeout: ("send", lambda e: TimeoutError("timed out")),
    httpx.ReadTimeout: ("read", lambda e: TimeoutError("timed out")),
    httpx.RemoteProtocolError: ("read", None),
    httpx.ReadError: ("read", lambda e: ConnectionResetError(104, "Connection reset by peer")),
    httpx.TransportError: ("send", lambda e: OSError(str(e))),
}
