"""requests: a ``responses`` mock whose one catch-all callback asks the router.

A neutral failure is raised as the exception requests raises for it, with the message urllib3
and requests write (``ReadTimeout``, ``ConnectTimeout``, ``ConnectionError``).

``responses`` answers at ``HTTPAdapter.send``, so a request never reaches the urllib3 pool
beneath, which urllib3's own fake answers: no request is answered twice. It is imported only
when this fake runs; without it, requests' requests are refused (``_missing``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import httpx
import requests
import requests.adapters
import respx

from . import translate

if TYPE_CHECKING:
    import responses

_ANY_URL = re.compile(r".*")
_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")


class ClientBackend:
    client = "requests"
    mock = "responses"

    @staticmethod
    def entry() -> tuple[type, str]:
        return requests.adapters.HTTPAdapter, "send"

    def __init__(self) -> None:
        self._router: respx.Router | None = None

    def refusal(self) -> str | None:
        import responses

        send = requests.adapters.HTTPAdapter.send
        if send is not responses._real_send:
            owner = getattr(send, "__module__", None) or type(send).__name__
            return (
                f"requests' HTTPAdapter.send is already patched (by {owner}: an active "
                "`responses` mock, @responses.activate, most likely). Two mocks would both "
                "answer requests. Use one HTTP mock per test: fake_upstream fakes requests too."
            )
        return None

    def start(self, router: respx.Router) -> None:
        _routers.append(router)
        # What the mock's start() patches, set directly: its unittest.mock patcher costs a
        # scenario of the contract matrix more than the rest of starting every fake together.
        requests.adapters.HTTPAdapter.send = _send()  # type: ignore[method-assign]
        self._router = router

    def stop(self) -> None:
        if self._router is not None:
            import responses

            # The refusal made sure the real send was in place before the start.
            requests.adapters.HTTPAdapter.send = responses._real_send  # type: ignore[method-assign]
            _mock().calls.reset()
            _routers.remove(self._router)
            self._router = None


# One mock for every start: its catch-all callbacks ask the router of the running fake (only
# one runs at a time: the httpx backend refuses a second), so a start is one attribute set,
# not a mock and seven compiled callbacks.
_routers: list[respx.Router] = []
_shared: list[responses.RequestsMock] = []
_sends: list[Callable[..., requests.Response]] = []


def _mock() -> responses.RequestsMock:
    if not _shared:
        import responses

        mock = responses.RequestsMock(assert_all_requests_are_fired=False)
        answer: Callable[[requests.PreparedRequest], Any] = _answer  # headers as a list: kept
        for method in _METHODS:
            mock.add_callback(method, _ANY_URL, callback=answer, content_type=None)
        _shared.append(mock)
    return _shared[0]


def _send() -> Callable[..., requests.Response]:
    """The shared mock's replacement of ``HTTPAdapter.send``, built once."""
    if not _sends:
        _sends.append(_mock().unbound_on_send())
    return _sends[0]


def _answer(prepared: requests.PreparedRequest) -> tuple[int, list[tuple[str, str]], bytes]:
    request = httpx.Request(
        prepared.method or "GET",
        prepared.url or "",
        headers={
            k: v if isinstance(v, str) else v.decode("latin-1") for k, v in prepared.headers.items()
        },
        content=_body(prepared.body),
    )
    try:
        response = _routers[-1].handler(request)
    except httpx.TransportError as error:
        raise _failure(error, prepared) from None
    return response.status_code, list(response.headers.multi_items()), response.content


def _body(body: object) -> bytes:
    if body is None:
        return b""
    if isinstance(body, str):
        return body.encode()
    if isinstance(body, bytes | bytearray):
        return bytes(body)
    return b"".join(c.encode() if isinstance(c, str) else bytes(c) for c in body)  # type: ignore[attr-defined]


def _failure(error: httpx.TransportError, prepared: requests.PreparedRequest) -> Exception:
    """The exception requests raises for ``error``, wrapping the urllib3 exception it really
    wraps (a refused connection is a ConnectionError of a MaxRetryError of a
    NewConnectionError), so code that inspects the cause sees what production would."""
    from http.client import RemoteDisconnected

    from urllib3 import exceptions as u
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    url = httpx.URL(prepared.url or "")
    secure = url.scheme == "https"
    host, port = url.host, url.port or (443 if secure else 80)
    pool = (HTTPSConnectionPool if secure else HTTPConnectionPool)(host, port)
    path = url.raw_path.decode("ascii", "replace")
    timeout = getattr(prepared, "req_kwargs", {}).get("timeout")
    read = timeout[1] if isinstance(timeout, tuple) else timeout
    connect = timeout[0] if isinstance(timeout, tuple) else timeout
    read_note = f" (read timeout={read})" if read is not None else ""
    connect_note = f" (connect timeout={connect})" if connect is not None else ""

    def connection() -> HTTPConnection:  # built, never connected
        return (HTTPSConnection if secure else HTTPConnection)(host, port)

    # urllib3 puts the connection object in a ConnectTimeoutError too, whose repr holds a
    # memory address; the fake leaves it out, so failure messages stay the same run to run.
    def retried(reason: Exception) -> u.MaxRetryError:
        return u.MaxRetryError(pool, path, reason)

    def aborted(cause: BaseException) -> u.ProtocolError:
        return u.ProtocolError("Connection aborted.", cause)

    def failed(kind: type[requests.RequestException], wrapped: Exception) -> Exception:
        return kind(wrapped, request=prepared)

    table: dict[type[httpx.TransportError], Callable[[httpx.TransportError], Exception]] = {
        httpx.ReadTimeout: lambda e: failed(
            requests.ReadTimeout, u.ReadTimeoutError(pool, path, f"Read timed out.{read_note}")
        ),
        httpx.ConnectTimeout: lambda e: failed(
            requests.ConnectTimeout,
            retried(u.ConnectTimeoutError(f"Connection to {host} timed out.{connect_note}")),
        ),
        httpx.WriteTimeout: lambda e: failed(
            requests.ConnectionError, aborted(TimeoutError("The write operation timed out"))
        ),
        httpx.PoolTimeout: lambda e: failed(
            requests.ConnectionError,
            u.EmptyPoolError(
                pool, "Pool reached maximum size and no more connections are allowed."
            ),
        ),
        httpx.ConnectError: lambda e: failed(
            requests.ConnectionError,
            retried(
                u.NewConnectionError(connection(), f"Failed to establish a new connection: {e}")
            ),
        ),
        httpx.RemoteProtocolError: lambda e: failed(
            requests.ConnectionError,
            aborted(RemoteDisconnected("Remote end closed connection without response")),
        ),
        httpx.ReadError: lambda e: failed(
            requests.ConnectionError, aborted(ConnectionResetError(104, "Connection reset by peer"))
        ),
        httpx.TransportError: lambda e: requests.ConnectionError(str(e), request=prepared),
    }
    return translate(error, table)
