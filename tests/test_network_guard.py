"""The plugin-wide network guard: a test never reaches a non-loopback address, through pytester.

Every outer test here puts a recording fake below the guard (the functions it wraps), so a
refusal is shown to come before any lookup or connection, and nothing ever leaves the machine,
whatever network the machine has.
"""

from __future__ import annotations

import importlib.util
import ipaddress
import socket
from typing import Any

import pytest

from pytest_nucleo.testing._fake import _guard as _network
from pytest_nucleo.testing._fake import _names, _refusal

# The clients the fake answers, as the messages list them.
_NAMES = _network._faked_clients()
CLIENTS = ", ".join(_NAMES[:-1]) + " and " + _NAMES[-1]
# The fake's addresses as fnmatch sees them: the first names looked up get the first addresses.
FAKE_ADDRESS = ".".join(str(_names.fake_network().network_address).split(".")[:3]) + ".*"


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
            if name.startswith(("getaddrinfo", "gethostbyname")):
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

    # Not create_connection: it reaches the network only through getaddrinfo and connect.
    for name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "connect", "connect_ex"):
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
    result = pytester.runpytest("-p", "no:cacheprovider", "--nucleo-guard=all")
    result.assert_outcomes(failed=7)
    see = (
        "or, if the test really needs the network, mark it "
        "@pytest.mark.nucleo(allow_network=True) or allow the host with --nucleo-allow-hosts. "
        'See pytest-nucleo\'s docs, "The network guard" '
        "(https://pytest-nucleo.github.io/pytest-nucleo/how-to/fake-upstream/#the-network-guard)."
    )
    module = "test_a_refused_connection_fails_the_test_even_when_the_tool_swallows_it.py"
    for what, by, route in (
        ("a DNS lookup of api.upstream.example:443", "requests (through urllib3)",
         "https://api.upstream.example/..."),
        ("a DNS lookup of api.upstream.example:443", "httpx (through httpcore)",
         "https://api.upstream.example/..."),
        ("a DNS lookup of api.upstream.example:8080", "httpx2 (through httpcore2)",
         "http://api.upstream.example:8080/..."),
        ("a DNS lookup of api.upstream.example:80", "urllib.request (through http.client)",
         "http://api.upstream.example/..."),
        ("a connection to 203.0.113.7:443", f"the code under test ({module}:29, in <lambda>)",
         "https://203.0.113.7/..."),
        ("a DNS lookup of api.upstream.example:25", f"the code under test ({module}:34, in <lambda>)",
         "http://api.upstream.example:25/..."),
        ("a connection to 203.0.113.9:443", f"the code under test ({module}:38, in main)",
         "https://203.0.113.9/..."),
    ):  # fmt: skip
        result.stdout.fnmatch_lines(
            [
                f"pytest-nucleo blocked {what} by {by}: tests do not reach the network. Fake the "
                f"upstream with the fake_upstream fixture, e.g. fake_upstream.get('{route}')"
                f".respond(200, json=...); {see}"
            ]
        )
    assert below_guard == []


def test_a_refused_lookup_does_not_read_like_a_dns_failure(below_guard: list[str]) -> None:
    guard = _network.install()
    try:
        guard.begin(allow_network=False)
        with pytest.raises(_network.NetworkBlockedError) as caught:
            socket.getaddrinfo("api.upstream.example", 443)
        assert isinstance(caught.value, ConnectionRefusedError)
        assert not isinstance(caught.value, socket.gaierror)
        assert str(caught.value).startswith(
            "pytest-nucleo blocked a DNS lookup of api.upstream.example:443 by the code under "
            "test (test_network_guard.py:"
        )
        assert [blocked.place for blocked in guard.take()] == ["api.upstream.example:443"]
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
    result = pytester.runpytest("-p", "no:cacheprovider", "--nucleo-guard=all")
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
    result = pytester.runpytest("-p", "no:cacheprovider", "--nucleo-guard=all")
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
    result = pytester.runpytest("-p", "no:cacheprovider", "--nucleo-guard=all")
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
    result = pytester.runpytest("-p", "no:cacheprovider", "--nucleo-guard=all")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "pytest-nucleo blocked a DNS lookup of cache.upstream.example:6379 by the code under "
            "test (test_a_connection_in_a_fixture_fails_that_phase.py:7, in warm_cache): *"
        ]
    )
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
    result = pytester.runpytest("-p", "no:cacheprovider", "--nucleo-guard=all")
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


def test_a_routed_host_resolves_to_an_address_only_the_fake_answers(
    pytester: pytest.Pytester, below_guard: list[str]
) -> None:
    pytester.makepyfile(
        """
        import ipaddress
        import socket

        import httpx
        import pytest

        from pytest_nucleo.testing._fake._names import fake_network

        def fetch(url):
            # As a fetch tool guarding against server-side request forgery does: resolve the
            # host first, and refuse a private address.
            host = httpx.URL(url).host
            for *_, sockaddr in socket.getaddrinfo(host, 443, type=socket.SOCK_STREAM):
                if ipaddress.ip_address(sockaddr[0]).is_private:
                    raise ValueError(f"{host} resolves to a private address")
            return httpx.get(url).text

        def test_the_tool_meets_the_fake(fake_upstream):
            fake_upstream.get("https://docs.example/page").respond(200, text="hello")
            assert fetch("https://docs.example/page") == "hello"
            address = socket.gethostbyname("docs.example")
            assert ipaddress.ip_address(address) in fake_network()
            assert socket.gethostbyname_ex("DOCS.example.") == ("docs.example", [], [address])
            [info] = socket.getaddrinfo("docs.example", "https", socket.AF_INET6)
            assert info[4] == (f"::ffff:{address}", 443, 0, 0)

        def test_a_client_the_fake_does_not_answer_is_refused_the_address(fake_upstream):
            fake_upstream.get("https://docs.example/page").respond(200)
            httpx.get("https://docs.example/page")
            with pytest.raises(ConnectionRefusedError):
                socket.create_connection(("docs.example", 443))

        @pytest.mark.nucleo(allow_network=True)
        def test_even_where_the_network_is_allowed(fake_upstream):
            fake_upstream.get("https://docs.example/page").respond(200)
            httpx.get("https://docs.example/page")
            with socket.socket() as sock:
                sock.connect_ex((socket.gethostbyname("docs.example"), 443))

        def test_the_name_does_not_resolve_once_the_fake_stopped():
            with pytest.raises(OSError, match="stand-in"):
                socket.getaddrinfo("docs.example", 443)
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=2, failed=2)
    for test in ("a_client_the_fake_does_not_answer", "even_where_the_network_is_allowed"):
        result.stdout.fnmatch_lines([f"*FAILED*test_{test}*"])
    module = "test_a_routed_host_resolves_to_an_address_only_the_fake_answers.py"
    for line, function in (
        (31, "test_a_client_the_fake_does_not_answer_is_refused_the_address"),
        (38, "test_even_where_the_network_is_allowed"),
    ):
        result.stdout.fnmatch_lines(
            [
                f"pytest-nucleo blocked a connection to {FAKE_ADDRESS}:443 by the code under "
                f"test ({module}:{line}, in {function}): tests do not reach the network. The "
                "fake upstream gave this address to docs.example, which its routes name (GET "
                "https://docs.example/page -> respond 200), and only the fake answers it: the "
                "code under test opened the connection itself, and the fake answers only "
                f"requests sent with {CLIENTS}: send HTTP with one of them, or, for another "
                "protocol on a raw socket, serve its peer on 127.0.0.1 (socketserver). See "
                'pytest-nucleo\'s docs, "The network guard" '
                "(https://pytest-nucleo.github.io/pytest-nucleo/how-to/fake-upstream/#the-network-guard)."
            ]
        )
    # The last test's lookup went on to the (stand-in) resolver, the fake having stopped.
    assert below_guard == ["getaddrinfo docs.example"]


def test_an_unrouted_host_s_lookup_is_refused_naming_the_routes(
    pytester: pytest.Pytester, below_guard: list[str]
) -> None:
    pytester.makepyfile(
        """
        import socket

        import httpx

        def test_it(fake_upstream):
            fake_upstream.get("https://docs.example/page").respond(200)
            httpx.get("https://docs.example/page")
            try:
                socket.getaddrinfo("cdn.example", 443)
            except OSError:
                pass
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "pytest-nucleo blocked a DNS lookup of cdn.example:443 by the code under test "
            "(test_an_unrouted_host_s_lookup_is_refused_naming_the_routes.py:9, in test_it): "
            "tests do not reach the network. The fake upstream has no route for cdn.example "
            "(its routes: GET https://docs.example/page -> respond 200). Add one, e.g. "
            "fake_upstream.get('https://cdn.example/...').respond(200, json=...); or, if the "
            "test really needs the network, mark it @pytest.mark.nucleo(allow_network=True) or "
            "allow the host with --nucleo-allow-hosts. See pytest-nucleo's docs, \"The network "
            'guard" (https://pytest-nucleo.github.io/pytest-nucleo/how-to/fake-upstream/#the-network-guard).'
        ]
    )
    assert below_guard == []


def test_a_route_for_an_address_is_named_not_advised(
    pytester: pytest.Pytester, below_guard: list[str]
) -> None:
    pytester.makepyfile(
        """
        import socket

        import httpx

        def test_it(fake_upstream):
            fake_upstream.get("http://203.0.113.5:8080/status").respond(200)
            httpx.get("http://203.0.113.5:8080/status")
            with socket.socket() as sock:
                sock.connect_ex(("203.0.113.5", 8080))
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "pytest-nucleo blocked a connection to 203.0.113.5:8080 by the code under test "
            "(test_a_route_for_an_address_is_named_not_advised.py:9, in test_it): tests do not "
            "reach the network. The fake upstream has a route for 203.0.113.5 (GET "
            "http://203.0.113.5:8080/status -> respond 200), but the code under test opened the "
            f"connection itself, and the fake answers only requests sent with {CLIENTS}: send "
            "HTTP with one of them, or, for another protocol on a raw socket, serve its peer on "
            "127.0.0.1 (socketserver). See *"
        ]
    )
    assert "Add one" not in result.stdout.str()
    assert below_guard == []


def test_addresses_and_local_names_resolve_as_themselves_even_when_routed(
    below_guard: list[str],
) -> None:
    from pytest_nucleo.testing import FakeUpstream

    guard = _network.install()
    try:
        guard.begin(allow_network=False)
        with FakeUpstream(assert_all_called=False) as upstream:
            upstream.get("http://127.0.0.1:9/x").respond(200)
            upstream.get("http://localhost:9/x").respond(200)
            upstream.get("http://docs.example/x").respond(200)
            assert socket.getaddrinfo("127.0.0.1", 9)[0][4][0] == "127.0.0.1"
            assert socket.gethostbyname("localhost") in ("127.0.0.1", "::1")
            address = socket.gethostbyname("docs.example")
            assert ipaddress.ip_address(address) in _names.fake_network()
        assert guard.take() == []
    finally:
        guard.end()
        _network.uninstall(guard)
    assert below_guard == []


def test_a_library_the_fake_does_not_reach_is_named_with_why_and_its_usual_fake(
    pytester: pytest.Pytester, below_guard: list[str]
) -> None:
    pytester.makepyfile(
        """
        import smtplib

        import httpx

        def test_it(fake_upstream):
            fake_upstream.get("https://docs.example/page").respond(200)
            httpx.get("https://docs.example/page")
            try:
                smtplib.SMTP("docs.example", 465, timeout=5)
            except OSError:
                pass
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            f"pytest-nucleo blocked a connection to {FAKE_ADDRESS}:465 by smtplib: tests do "
            "not reach the network. The fake upstream gave this address to docs.example, which "
            "its routes name (GET https://docs.example/page -> respond 200), and only the fake "
            f"answers it: smtplib is not a client the fake answers ({CLIENTS}): mail is not "
            "HTTP; serve SMTP on 127.0.0.1 (aiosmtpd), or mock smtplib.SMTP where the tool "
            "calls it. See *"
        ]
    )
    assert below_guard == []


def test_urllib3_and_httplib2_are_clients_the_fake_answers(
    pytester: pytest.Pytester, below_guard: list[str]
) -> None:
    # botocore calls urllib3's pools, google-api-python-client httplib2's connections: both
    # were refused by the guard once, which named them clients the fake does not answer.
    assert {"urllib3", "httplib2"} <= set(_NAMES)
    calls = [
        "import urllib3",
        "answer = urllib3.PoolManager().request('GET', 'https://docs.example/page')",
        "assert (answer.status, answer.data) == (200, b'hello')",
    ]
    if importlib.util.find_spec("httplib2") is not None:  # the google-api extra's
        calls += [
            "import httplib2",
            "response, content = httplib2.Http().request('https://docs.example/page')",
            "assert (response.status, content) == (200, b'hello')",
        ]
    pytester.makepyfile(
        "def test_it(fake_upstream):\n"
        "    fake_upstream.get('https://docs.example/page').respond(200, text='hello')\n"
        + "".join(f"    {line}\n" for line in calls)
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert below_guard == []


def test_an_async_lookup_of_a_routed_host_resolves_too(
    pytester: pytest.Pytester, below_guard: list[str]
) -> None:
    pytester.makepyfile(
        """
        import asyncio
        import ipaddress

        import aiohttp

        async def fetch(url):
            host = aiohttp.client.URL(url).host
            loop = asyncio.get_running_loop()
            for *_, sockaddr in await loop.getaddrinfo(host, 443):
                if ipaddress.ip_address(sockaddr[0]).is_private:
                    raise ValueError(f"{host} resolves to a private address")
            async with aiohttp.ClientSession() as session, session.get(url) as response:
                return await response.text()

        def test_it(fake_upstream):
            fake_upstream.get("https://docs.example/page").respond(200, text="hello")
            assert asyncio.run(fetch("https://docs.example/page")) == "hello"
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert below_guard == []


@pytest.mark.parametrize(
    ("caller", "reason"),
    [
        (
            _refusal.Caller("requests", "urllib3"),
            "requests is a client the fake answers, yet this request went past the fake",
        ),
        (
            _refusal.Caller("search_sdk", "requests"),
            "search_sdk sends through requests, a client the fake answers, yet this request",
        ),
        (
            _refusal.Caller("search_sdk"),
            "search_sdk is not a client the fake answers (httpx and requests): it opens its "
            "connections itself (its own connection pool, or its own connect()). If it takes a "
            "session or transport of one of these clients, give it one; else fake it where the "
            "tool calls it (unittest.mock), or serve the upstream on 127.0.0.1",
        ),
        (
            _refusal.Caller("grpc"),
            "grpc is not a client the fake answers (httpx and requests): gRPC speaks HTTP/2 "
            "through its own C core; fake the service in process with grpc's testing module",
        ),
        (
            _refusal.Caller("redis", "redis.asyncio"),
            "redis is not a client the fake answers (httpx and requests): it speaks Redis's "
            "protocol through its own connection pool, not HTTP; use fakeredis",
        ),
        (
            _refusal.Caller("urllib3"),
            "urllib3 is not a client the fake answers (httpx and requests): urllib3 1.x is "
            "installed, and the fake answers urllib3 from version 2 on (1.x builds its responses "
            "in urlopen, above where the fake answers); upgrade urllib3",
        ),
        (
            _refusal.Caller("botocore", "urllib3"),
            "botocore is not a client the fake answers (httpx and requests): urllib3 1.x is "
            "installed, and the fake answers urllib3 from version 2 on",
        ),
        (_refusal.Caller(), "the request did not go through a client the fake answers"),
    ],
)
def test_why_a_routed_request_missed_the_fake(caller: Any, reason: str) -> None:
    message = _refusal.refusal_message(
        _refusal.Tried("connect", "docs.example", 443),
        caller,
        routes=["GET https://docs.example/page -> respond 200"],
        fake_routes=["GET https://docs.example/page -> respond 200"],
        faked_clients=["httpx", "requests"],
    )
    assert (
        "The fake upstream has a route for docs.example (GET https://docs.example/page -> "
        f"respond 200), but {reason}"
    ) in message
    assert "Add one" not in message


@pytest.mark.parametrize(("version", "named"), [("1.26.20", False), ("2.2.3", True)])
def test_a_refusal_names_urllib3_among_the_faked_clients_from_version_2_on(
    monkeypatch: pytest.MonkeyPatch, version: str, named: bool
) -> None:
    # urllib3 1.x builds its responses in urlopen, where its fake does not reach: a refusal
    # that listed it would call it faked while explaining why it was not.
    import urllib3

    monkeypatch.setattr(urllib3, "__version__", version)
    clients = _network._faked_clients()
    assert ("urllib3" in clients) is named
    assert [c for c in clients if c != "urllib3"] == [c for c in _NAMES if c != "urllib3"]
    message = _network._refusal(
        "connect", "192.31.196.9", 443, by=_refusal.Caller("urllib3"), name="docs.example"
    ).message
    if named:
        assert "urllib3 is a client the fake answers, yet this request went past" in message
    else:
        listed = ", ".join(clients[:-1]) + " and " + clients[-1]
        assert (
            f"urllib3 is not a client the fake answers ({listed}): urllib3 1.x is installed"
        ) in message


def test_urllib3_s_version_is_read_from_its_distribution_before_it_is_imported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.metadata
    import sys

    monkeypatch.delitem(sys.modules, "urllib3")
    monkeypatch.setattr(importlib.metadata, "version", {"urllib3": "1.26.20"}.__getitem__)
    assert "urllib3" not in _network._faked_clients()
    assert "urllib3" not in sys.modules  # read, not imported
