"""httpx: respx's own mocker beneath httpx answers from the router, failures pass as they are."""

from __future__ import annotations

import httpx
import respx
from respx.mocks import DEFAULT_MOCKER, Mocker

from . import start_mocker
from ._tls import SharedDefaultContext

_TLS = SharedDefaultContext("httpx._transports.default")


class ClientBackend:
    client = "httpx"

    def __init__(self) -> None:
        self._router: respx.Router | None = None

    def refusal(self) -> str | None:
        if Mocker.registry[DEFAULT_MOCKER].routers:
            return (
                "another respx router is already active (the respx_mock fixture, @respx.mock, or "
                "another FakeUpstream). Two mocks would both answer requests. Use fake_upstream "
                "alone, or its router (fake_upstream.router) for raw respx routes."
            )
        for handler in (
            httpx.HTTPTransport.handle_request,
            httpx.AsyncHTTPTransport.handle_async_request,
        ):
            owner = getattr(handler, "__module__", None) or "httpx"
            if owner.split(".")[0] != "httpx":
                return (
                    f"httpx's transport is already patched by {owner} (pytest-httpx's "
                    "httpx_mock, most likely), which would answer every request before respx "
                    "sees it. Use one HTTP mock per test."
                )
        return None

    def start(self, router: respx.Router) -> None:
        # What router.start() does, less the snapshot (the routes are never rolled back) and
        # with a cheaper patching. The router keeps its calls after stop, for verify().
        mocker = Mocker.registry[DEFAULT_MOCKER]
        mocker.register(router)
        start_mocker(mocker)
        _TLS.start()
        self._router = router

    def stop(self) -> None:
        if self._router is not None:
            mocker = Mocker.registry[DEFAULT_MOCKER]
            mocker.unregister(self._router)
            mocker.stop()
            _TLS.stop()
            self._router = None
