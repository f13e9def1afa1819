"""While a FakeUpstream runs, httpx and httpx2 clients built on the default TLS settings share
one context (loading certifi's bundle for each cost a test tens of milliseconds); any other
settings are built as the library builds them, and nothing stays patched after the fake."""

from __future__ import annotations

import ssl
from types import ModuleType
from typing import Any

import certifi
import httpx
import httpx2
import pytest

from pytest_nucleo.testing import FakeUpstream, respond

LIBRARIES = {"httpx": httpx, "httpx2": httpx2}


def _context(client: Any) -> ssl.SSLContext:
    """The TLS context a client's transport would connect with."""
    context: ssl.SSLContext = client._transport._pool._ssl_context
    return context


@pytest.fixture(params=sorted(LIBRARIES))
def library(request: pytest.FixtureRequest) -> ModuleType:
    return LIBRARIES[request.param]


def test_clients_built_while_faked_share_one_context_like_the_librarys_own(
    library: ModuleType,
) -> None:
    own = library.create_ssl_context()
    with FakeUpstream() as upstream:
        upstream.get("https://shop.example/orders/1").respond(200, json={"number": "1"})
        first, second = library.Client(), library.AsyncClient()
        assert _context(first) is _context(second)
        assert first.get("https://shop.example/orders/1").json() == {"number": "1"}
    shared = _context(first)
    assert shared is not own
    assert shared.verify_mode == own.verify_mode == ssl.CERT_REQUIRED
    assert shared.check_hostname
    assert own.check_hostname
    assert shared.cert_store_stats() == own.cert_store_stats()
    assert shared.cert_store_stats()["x509_ca"] > 0


def test_the_context_is_shared_across_fakes_and_not_after_them(library: ModuleType) -> None:
    with FakeUpstream():
        during = _context(library.Client())
    with FakeUpstream():
        assert _context(library.Client()) is during
    after = (_context(library.Client()), _context(library.Client()))
    assert during not in after
    assert after[0] is not after[1]
    assert library._transports.default.create_ssl_context is library._config.create_ssl_context


def test_other_settings_are_built_as_the_library_builds_them(
    library: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    mine = ssl.create_default_context()
    with FakeUpstream():
        shared = _context(library.Client())
        unverified = _context(library.Client(verify=False))
        assert unverified is not shared
        assert unverified.verify_mode == ssl.CERT_NONE
        assert _context(library.Client(verify=mine)) is mine
        ignoring = _context(library.Client(trust_env=False))
        assert _context(library.AsyncClient(trust_env=False)) is ignoring
        # The environment names the certificates: read at each client, as the library does.
        monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
        for _ in range(2):  # a failure is not kept: the next client fails too
            with pytest.raises(FileNotFoundError):
                library.Client()
        assert _context(library.Client(trust_env=False)) is ignoring
        monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
        monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path))
        named = _context(library.Client())
        assert named is not shared
        assert _context(library.Client()) is named


def test_a_faked_call_through_a_client_per_call_tool_still_fails_as_faked() -> None:
    async def get_order(number: str) -> Any:
        async with httpx.AsyncClient() as client:
            response = await client.get(f"https://shop.example/orders/{number}")
            response.raise_for_status()
            return response.json()

    import asyncio

    with FakeUpstream() as upstream:
        upstream.get("https://shop.example/orders/7").sequence(
            respond(503, text="down"), respond(200, json={"number": "7"})
        )
        with pytest.raises(httpx.HTTPStatusError) as failure:
            asyncio.run(get_order("7"))
        assert failure.value.response.status_code == 503
        assert asyncio.run(get_order("7")) == {"number": "7"}


def test_a_patch_put_back_after_the_fake_stopped_shares_nothing(library: ModuleType) -> None:
    # monkeypatch set up before the fake and patching the same function during the test puts
    # the fake's patch back when it undoes its own, after the fake stopped.
    transports = library._transports.default
    with FakeUpstream():
        during = transports.create_ssl_context
    transports.create_ssl_context = during
    try:
        assert _context(library.Client()) is not _context(library.Client())
        with FakeUpstream():
            assert _context(library.Client()) is _context(library.Client())
            assert transports.create_ssl_context is during  # not wrapped twice
    finally:
        transports.create_ssl_context = library._config.create_ssl_context
