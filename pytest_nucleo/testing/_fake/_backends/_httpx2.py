"""httpx2: respx driven beneath httpx2, on httpcore2's connection and pool classes.

A neutral failure is raised as httpcore2's error of the same name, which httpx2's transport
turns into its own (``httpx2.ReadTimeout``, ``httpx2.ConnectError``, ...) with the request
attached, as a real failure would be.
"""

from __future__ import annotations

from typing import Any, ClassVar

import httpcore2
import httpx
import respx
from respx.mocks import HTTPCoreMocker, Mocker

from . import start_mocker
from ._tls import SharedDefaultContext

_TLS = SharedDefaultContext("httpx2._transports.default")

# pytest-httpx2 registers its own respx mocker under this name.
_PYTEST_HTTPX2 = "httpcore2"


class _Mocker(HTTPCoreMocker):
    name = "pytest-nucleo-httpcore2"  # unique, so pytest-httpx2 can be installed beside us
    targets: ClassVar[list[str]] = [
        "httpcore2._sync.connection.HTTPConnection",
        "httpcore2._sync.connection_pool.ConnectionPool",
        "httpcore2._sync.http_proxy.HTTPProxy",
        "httpcore2._async.connection.AsyncHTTPConnection",
        "httpcore2._async.connection_pool.AsyncConnectionPool",
        "httpcore2._async.http_proxy.AsyncHTTPProxy",
    ]

    @classmethod
    def _send_sync_request(cls, httpx_request: httpx.Request, **kwargs: Any) -> Any:
        try:
            return super()._send_sync_request(httpx_request, **kwargs)  # type: ignore[no-untyped-call]
        except httpx.TransportError as error:
            raise _failure(error) from None

    @classmethod
    async def _send_async_request(cls, httpx_request: httpx.Request, **kwargs: Any) -> Any:
        try:
            return await super()._send_async_request(httpx_request, **kwargs)  # type: ignore[no-untyped-call]
        except httpx.TransportError as error:
            raise _failure(error) from None

    @classmethod
    def from_sync_httpx_response(
        cls, httpx_response: httpx.Response, target: Any, **kwargs: Any
    ) -> httpcore2.Response:
        return httpcore2.Response(
            status=httpx_response.status_code,
            headers=httpx_response.headers.raw,
            content=httpx_response.stream,
            extensions=httpx_response.extensions,
        )


def _failure(error: httpx.TransportError) -> Exception:
    for kind in type(error).__mro__:
        twin = getattr(httpcore2, kind.__name__, None)
        if isinstance(twin, type) and issubclass(twin, Exception):
            return twin(str(error))
    return httpcore2.NetworkError(str(error))


class ClientBackend:
    client = "httpx2"

    def __init__(self) -> None:
        self._router: respx.Router | None = None

    def refusal(self) -> str | None:
        other = Mocker.registry.get(_PYTEST_HTTPX2)
        if other is not None and other.routers:
            return (
                "pytest-httpx2's httpx2_mock (or another respx router on httpcore2) is already "
                "active: two mocks would both answer httpx2's requests. Use one of them per test."
            )
        if _Mocker.routers:
            return "another FakeUpstream is already active: use one per test."
        return None

    def start(self, router: respx.Router) -> None:
        _Mocker.register(router)
        start_mocker(_Mocker)
        _TLS.start()
        self._router = router

    def stop(self) -> None:
        if self._router is not None:
            _Mocker.unregister(self._router)
            _Mocker.stop()
            _TLS.stop()
            self._router = None
