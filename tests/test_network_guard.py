"""The plugin-wide network guard: a test never reaches a non-loopback address, through pytester.

Every outer test here puts a recording fake below the guard (the functions it wraps), so a
refusal is shown to come before any lookup or connection, and nothing ever leaves the machine,
whatever network the machine has.
"""

from __future__ import annotations

import socket
from typing import Any

import pytest

from pytest_nucleo.testing import _network


@pytest.fixture
def below_guard(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What reached the real socket functions beneath the guard, as (name, host) lines; a
    non-loopback host gets an OSError there instead of the network."""
    reached: list[str] = []
    originals = dict(_network._originals)

    def stand_in(name: str) -> Any:
        real = originals[name]

        def call(*args: Any, **kwargs: Any) -> Any:
            address = args[1] if name in ("connect", "connect_ex") else args[0]
            if name == "getaddrinfo":
                host = address
            elif isinstance(address, tuple):
                host = address[0]
            else:
                return real(*args, **kwargs)  # a unix socket's path
            if not _network._is_local(host):
                reached.append(f"{name} {host}")
                raise OSError(f"stand-in: {name} {host} would have left the machine")
            return real(*args, **kwargs)

        return call

    for name in ("getaddrinfo", "create_connection", "connect", "connect_ex"):
        monkeypatch.setitem(_network._originals, name, stand_in(name))
    return reached


def test_a_refused_connection_fails_the_test_even_when_the_tool_swallows_it(
    pytester: pytest.Pytester, below_guard: list[str]
) -> None:
    pytester.makepyfile(
        """
        import asyncio
        import socket
        import urllib.request

        import httpx
        import httpx2
        import requests

        def swallow(call):
            try:
                call()
            except Exception as exc:
                return exc

        def test_requests():
            swallow(lambda: requests.get("https://api.upstream.example/items/1", timeout=5))

        def test_httpx():
            swallow(lambda: httpx.get("https://api.upstream.example/items/1"))

        def test_httpx2():
            swallow(lambda: httpx2.get("http://api.upstream.example:8080/items/1"))

        def test_urllib():
            swallow(lambda: urllib.request.urlopen("http://api.upstream.example/x", timeout=5))

        def test_raw_socket_to_an_address():
            with socket.socket() as sock:
                swallow(lambda: sock.connect_ex(("203.0.113.7", 443)))
            with socket.socket() as sock:
                swallow(lambda: sock.connect(("203.0.113.7", 443)))

        def test_create_connection():
            swallow(lambda: socket.create_connection(("api.upstream.example", 25)))

        def test_asyncio():
            async def main():
                await asyncio.open_connection("203.0.113.9", 443)
            swallow(lambda: asyncio.run(main()))
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=7)
    result.stdout.fnmatch_lines(
        [
            "*pytest-nucleo blocked a network connection to api.upstream.example:443: tests do "
            "not reach the network. Fake the upstream with the fake_upstream fixture, e.g. "
            "fake_upstream.get('https://api.upstream.example/...').respond(200, json=...); or, "
            "if the test really needs the network, mark it "
            "@pytest.mark.nucleo(allow_network=True). See pytest-nucleo's docs, "
            '"The network guard" (https://pytest-nucleo.github.io/pytest-nucleo/how-to/fake-upstream/#the-network-guard).',
        ]
    )
    for place in (
        "api.upstream.example:8080",
        "api.upstream.example:80",
        "203.0.113.7:443",
        "api.upstream.example:25",
        "203.0.113.9:443",
    ):
        result.stdout.fnmatch_lines([f"*blocked a network connection to {place}:*"])
    assert below_guard == []


def test_a_refused_lookup_does_not_read_like_a_dns_failure(below_guard: list[str]) -> None:
    guard = _network.install()
    try:
        guard.begin(allow_network=False)
        with pytest.raises(_network.NetworkBlockedError) as caught:
            socket.getaddrinfo("api.upstream.example", 443)
        assert isinstance(caught.value, ConnectionRefusedError)
        assert not isinstance(caught.value, socket.gaierror)
        assert "blocked a network connection to api.upstream.example:443" in str(caught.value)
        assert guard.take() == ["api.upstream.example:443"]
        assert guard.take() == []
    finally:
        guard.end()
        _network.uninstall(guard)
    assert below_guard == []


def test_loopback_and_unix_sockets_stay_allowed(
    pytester: pytest.Pytester, below_guard: list[str]
) -> None:
    pytester.makepyfile(
        """
        import http.server
        import socket
        import threading

        import requests

        class Hello(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = b"hello"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        def test_a_local_server():
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
            port = server.server_address[1]
            thread = threading.Thread(target=server.serve_forever, daemon=True)
            thread.start()
            try:
                assert requests.get(f"http://127.0.0.1:{port}/", timeout=5).text == "hello"
                assert requests.get(f"http://localhost:{port}/", timeout=5).text == "hello"
            finally:
                server.shutdown()
                server.server_close()

        def test_a_unix_socket(tmp_path):
            path = str(tmp_path / "s")
            with socket.socket(socket.AF_UNIX) as listener:
                listener.bind(path)
                listener.listen()
                with socket.socket(socket.AF_UNIX) as client:
                    client.connect(path)

        def test_loopback_names_and_addresses():
            for host in ("localhost", "127.0.0.1", "127.8.9.10", "::1", None):
                socket.getaddrinfo(host, 80)
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    assert below_guard == []


def test_the_opt_out_lets_a_test_through(pytester: pytest.Pytester, below_guard: list[str]) -> None:
    pytester.makepyfile(
        """
        import socket
        import pytest

        def lookup():
            try:
                socket.getaddrinfo("api.upstream.example", 443)
            except OSError as exc:
                return str(exc)

        @pytest.mark.nucleo(allow_network=True)
        def test_allowed():
            assert "stand-in" in lookup()

        pytestmark_cls = pytest.mark.nucleo(allow_network=True)

        @pytestmark_cls
        class TestAllowedClass:
            def test_inherits(self):
                assert "stand-in" in lookup()

            @pytest.mark.nucleo(allow_network=False)
            def test_closest_wins(self):
                lookup()

        def test_guarded_again_after():
            lookup()
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        ["*FAILED*test_closest_wins*", "*FAILED*test_guarded_again_after*"], consecutive=False
    )
    assert below_guard == ["getaddrinfo api.upstream.example"] * 2


def test_allow_network_takes_a_bool(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.nucleo(allow_network="yes")
        def test_it():
            pass
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*nucleo(allow_network=...) takes True or False, got 'yes'*"])


def test_a_connection_in_a_fixture_fails_that_phase(
    pytester: pytest.Pytester, below_guard: list[str]
) -> None:
    pytester.makepyfile(
        """
        import socket
        import pytest

        @pytest.fixture
        def warm_cache():
            try:
                socket.create_connection(("cache.upstream.example", 6379))
            except OSError:
                pass
            yield

        def test_it(warm_cache):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*blocked a network connection to cache.upstream.example:6379*"])
    assert below_guard == []


def test_a_test_that_failed_anyway_keeps_its_own_message(
    pytester: pytest.Pytester, below_guard: list[str]
) -> None:
    pytester.makepyfile(
        """
        import socket

        def test_it():
            try:
                socket.getaddrinfo("api.upstream.example", 443)
            except OSError:
                pass
            assert 1 == 2, "the test's own failure"
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*the test's own failure*", "*pytest-nucleo network guard*", "*api.upstream.example:443*"]
    )
    assert below_guard == []


def test_the_socket_functions_are_restored_when_the_last_session_ends() -> None:
    before = (socket.getaddrinfo, socket.create_connection, vars(socket.socket).get("connect"))
    guard = _network.install()
    _network.uninstall(guard)
    assert (
        socket.getaddrinfo,
        socket.create_connection,
        vars(socket.socket).get("connect"),
    ) == before
