"""One route table, every client: each outcome of FakeUpstream through httpx, httpx2, requests,
aiohttp, the standard library's urllib, urllib3 and httplib2 (sync and async where the client
has both), each raising its own exceptions (each client's own cases: tests/test_fake_urllib.py,
tests/test_fake_urllib3.py, tests/test_fake_httplib2.py)."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import pickle
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from http.client import RemoteDisconnected
from typing import Any

import aiohttp
import httpx
import httpx2
import pytest
import requests
import urllib3
from _tls import TLS
from syrupy.assertion import SnapshotAssertion

from pytest_nucleo.strategies import _TRANSPORT_FAILURES
from pytest_nucleo.testing import (
    FakeUpstream,
    UnexpectedCallError,
    UnmatchedRequestError,
    connect_error,
    respond,
    timeout,
)
from pytest_nucleo.testing._fake._json_body import json_body
from tests._nested_runs import UNUSED_PLUGINS

URL = "https://api.upstream.example/items/42"


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    text: str


Send = Callable[..., Answer]


def _httpx_sync(module: Any) -> Send:
    def send(method: str, url: str, **kwargs: Any) -> Answer:
        with module.Client(verify=TLS) as client:
            r = client.request(method, url, **kwargs)
        return Answer(r.status_code, {k.lower(): v for k, v in r.headers.items()}, r.text)

    return send


def _httpx_async(module: Any) -> Send:
    def send(method: str, url: str, **kwargs: Any) -> Answer:
        async def go() -> Answer:
            async with module.AsyncClient(verify=TLS) as client:
                r = await client.request(method, url, **kwargs)
            return Answer(r.status_code, {k.lower(): v for k, v in r.headers.items()}, r.text)

        return asyncio.run(go())

    return send


def _requests(method: str, url: str, **kwargs: Any) -> Answer:
    r = requests.request(method, url, timeout=10, **kwargs)
    return Answer(r.status_code, {k.lower(): v for k, v in r.headers.items()}, r.text)


def _aiohttp(method: str, url: str, **kwargs: Any) -> Answer:
    async def go() -> Answer:
        async with aiohttp.ClientSession() as session, session.request(method, url, **kwargs) as r:
            text = await r.text()
            return Answer(r.status, {k.lower(): v for k, v in r.headers.items()}, text)

    return asyncio.run(go())


def _urllib(method: str, url: str, **kwargs: Any) -> Answer:
    body = json.dumps(kwargs["json"]).encode() if "json" in kwargs else None
    headers = {"Content-Type": "application/json"} if body is not None else {}
    request = urllib.request.Request(
        url, data=body, headers={**headers, **kwargs.get("headers", {})}, method=method
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            text = r.read().decode()
            return Answer(r.status, {k.lower(): v for k, v in r.headers.items()}, text)
    except urllib.error.HTTPError as error:  # a status outside 2xx: an answer all the same
        text = error.read().decode()
        return Answer(error.code, {k.lower(): v for k, v in error.headers.items()}, text)


def _urllib3(method: str, url: str, **kwargs: Any) -> Answer:
    body = json.dumps(kwargs["json"]).encode() if "json" in kwargs else None
    headers = {"Content-Type": "application/json"} if body is not None else {}
    # No retries: each failure is urllib3's own, not the MaxRetryError its retries end in.
    r = urllib3.PoolManager().request(
        method, url, body=body, headers={**headers, **kwargs.get("headers", {})}, retries=False
    )
    return Answer(r.status, {k.lower(): v for k, v in r.headers.items()}, r.data.decode())


def _httplib2(method: str, url: str, **kwargs: Any) -> Answer:
    import httplib2

    body = json.dumps(kwargs["json"]) if "json" in kwargs else None
    headers = {"Content-Type": "application/json"} if body is not None else {}
    r, content = httplib2.Http().request(
        url, method, body=body, headers={**headers, **kwargs.get("headers", {})}
    )
    return Answer(r.status, dict(r), content.decode())


CLIENTS: dict[str, Send] = {
    "httpx": _httpx_sync(httpx),
    "httpx-async": _httpx_async(httpx),
    "httpx2": _httpx_sync(httpx2),
    "httpx2-async": _httpx_async(httpx2),
    "requests": _requests,
    "aiohttp": _aiohttp,
    "urllib": _urllib,
    "urllib3": _urllib3,
}
# httplib2 comes with the google-api extra; without it, its own module's tests skip saying so.
if importlib.util.find_spec("httplib2") is not None:
    CLIENTS["httplib2"] = _httplib2
FAMILY = {
    "httpx": "httpx",
    "httpx-async": "httpx",
    "httpx2": "httpx2",
    "httpx2-async": "httpx2",
    "requests": "requests",
    "aiohttp": "aiohttp",
    "urllib": "urllib",
    "urllib3": "urllib3",
    "httplib2": "httplib2",
}

# The exception each client raises for each transport failure, by the outcome's description.
EXPECTED: dict[str, dict[str, type[BaseException]]] = {
    "read timeout": {
        "httpx": httpx.ReadTimeout,
        "httpx2": httpx2.ReadTimeout,
        "requests": requests.ReadTimeout,
        "aiohttp": aiohttp.SocketTimeoutError,
        "urllib": TimeoutError,
        "urllib3": urllib3.exceptions.ReadTimeoutError,
        "httplib2": TimeoutError,
    },
    "connection refused": {
        "httpx": httpx.ConnectError,
        "httpx2": httpx2.ConnectError,
        "requests": requests.ConnectionError,
        "aiohttp": aiohttp.ClientConnectorError,
        "urllib": urllib.error.URLError,
        "urllib3": urllib3.exceptions.NewConnectionError,
        "httplib2": ConnectionRefusedError,
    },
    "connect timeout": {
        "httpx": httpx.ConnectTimeout,
        "httpx2": httpx2.ConnectTimeout,
        "requests": requests.ConnectTimeout,
        "aiohttp": aiohttp.ConnectionTimeoutError,
        "urllib": urllib.error.URLError,
        "urllib3": urllib3.exceptions.ConnectTimeoutError,
        "httplib2": TimeoutError,
    },
    "write timeout": {
        "httpx": httpx.WriteTimeout,
        "httpx2": httpx2.WriteTimeout,
        "requests": requests.ConnectionError,
        "aiohttp": aiohttp.SocketTimeoutError,
        "urllib": urllib.error.URLError,
        "urllib3": urllib3.exceptions.ProtocolError,
        "httplib2": TimeoutError,
    },
    "pool timeout": {
        "httpx": httpx.PoolTimeout,
        "httpx2": httpx2.PoolTimeout,
        "requests": requests.ConnectionError,
        "aiohttp": aiohttp.ConnectionTimeoutError,
        "urllib": urllib.error.URLError,
        "urllib3": urllib3.exceptions.EmptyPoolError,
        "httplib2": TimeoutError,
    },
    "server disconnected": {
        "httpx": httpx.RemoteProtocolError,
        "httpx2": httpx2.RemoteProtocolError,
        "requests": requests.ConnectionError,
        "aiohttp": aiohttp.ServerDisconnectedError,
        "urllib": RemoteDisconnected,
        "urllib3": urllib3.exceptions.ProtocolError,
        "httplib2": RemoteDisconnected,
    },
    "connection reset": {
        "httpx": httpx.ReadError,
        "httpx2": httpx2.ReadError,
        "requests": requests.ConnectionError,
        "aiohttp": aiohttp.ClientOSError,
        "urllib": ConnectionResetError,
        "urllib3": urllib3.exceptions.ProtocolError,
        "httplib2": ConnectionResetError,
    },
}

clients = pytest.mark.parametrize("client", list(CLIENTS))


@clients
def test_an_answer_reaches_every_client_alike(client: str) -> None:
    send = CLIENTS[client]
    with FakeUpstream() as upstream:
        upstream.get(URL).respond(503, json={"error": "down"}, headers={"Retry-After": "3"})
        answer = send("GET", URL)
    assert answer.status == 503
    assert answer.headers["retry-after"] == "3"
    assert answer.headers["content-type"] == "application/json"
    assert json.loads(answer.text) == {"error": "down"}


# What respond(json=...) sends, byte for byte, whatever client and httpx version: compact, as
# httpx 0.28 writes it (0.27 wrote spaces and \u escapes), so that snapshots quoting a body stay.
JSON_BODY = {"error": "Bestellung fällig", "retry": [1, 2.5], "detail": None, "ok": False}
JSON_BYTES = '{"error":"Bestellung fällig","retry":[1,2.5],"detail":null,"ok":false}'.encode()


def test_a_json_body_is_encoded_by_the_fake_itself() -> None:
    assert json_body(JSON_BODY) == JSON_BYTES
    with pytest.raises(
        ValueError, match=r"respond\(json=\.\.\.\) takes what JSON can carry.*Out of range float"
    ):
        respond(200, json={"price": float("nan")})
    with pytest.raises(ValueError, match="pass content=bytes"):
        respond(200, json={"when": object()})


@clients
def test_a_json_body_reaches_every_client_as_the_same_bytes(client: str) -> None:
    with FakeUpstream() as upstream:
        upstream.get(URL).respond(409, json=JSON_BODY)
        upstream.get(URL + "/typed").respond(
            200, json=[], headers={"Content-Type": "application/problem+json"}
        )
        answer = CLIENTS[client]("GET", URL)
        typed = CLIENTS[client]("GET", URL + "/typed")
    assert answer.text.encode() == JSON_BYTES
    assert answer.headers["content-length"] == str(len(JSON_BYTES))
    assert answer.headers["content-type"] == "application/json"
    assert typed.text == "[]"
    assert typed.headers["content-type"] == "application/problem+json"  # the route's own wins


@clients
def test_text_throttle_html_and_not_json_bodies(client: str) -> None:
    send = CLIENTS[client]
    base = "https://api.upstream.example"
    with FakeUpstream() as upstream:
        upstream.get(f"{base}/text").respond(404, text="no such item")
        upstream.get(f"{base}/slow").throttle(retry_after=7)
        upstream.get(f"{base}/html").html_error(502, size=5_000)
        upstream.get(f"{base}/login").not_json()
        text = send("GET", f"{base}/text")
        slow = send("GET", f"{base}/slow")
        html = send("GET", f"{base}/html")
        login = send("GET", f"{base}/login")
    assert (text.status, text.text) == (404, "no such item")
    assert (slow.status, slow.headers["retry-after"]) == (429, "7")
    assert "Rate limit exceeded" in slow.text
    assert html.status == 502
    assert html.headers["content-type"].startswith("text/html")
    assert html.text.startswith("<html>\r\n<head><title>502 Bad Gateway</title>")
    assert len(html.text) == 5_000
    assert login.status == 200
    assert "Please sign in" in login.text


@clients
@pytest.mark.parametrize(
    "outcome", [timeout(), connect_error(), *_TRANSPORT_FAILURES[2:]], ids=lambda o: o.description
)
def test_a_transport_failure_raises_the_clients_own_exception(client: str, outcome: Any) -> None:
    send = CLIENTS[client]
    expected = EXPECTED[outcome.description][FAMILY[client]]
    with FakeUpstream() as upstream:
        upstream.get(URL).always(outcome)
        with pytest.raises(expected) as caught:
            send("GET", URL)
    # The exact class, not a look-alike: a tool's `except` clause keys on it.
    assert type(caught.value) is expected
    assert not isinstance(caught.value, httpx.HTTPError) or FAMILY[client] == "httpx"


def test_the_failure_messages_read_as_each_client_writes_them(
    llm_snapshot: SnapshotAssertion,
) -> None:
    lines = []
    for outcome in (timeout(), connect_error(), *_TRANSPORT_FAILURES[2:]):
        for client in ("httpx", "httpx2", "requests", "aiohttp"):
            with FakeUpstream() as upstream:
                upstream.get(URL).always(outcome)
                try:
                    CLIENTS[client]("GET", URL)
                except Exception as exc:
                    lines.append(f"{outcome.description} / {client}: {type(exc).__name__}: {exc}")
    assert len(lines) == 28
    assert "\n".join(lines) == llm_snapshot


@clients
def test_a_sequence_gives_one_outcome_per_call_and_fails_past_its_end(client: str) -> None:
    send = CLIENTS[client]
    family = FAMILY[client]
    upstream = FakeUpstream().start()
    try:
        upstream.get(URL).sequence(timeout(), respond(503), respond(200, json={"id": 42}))
        with pytest.raises(EXPECTED["read timeout"][family]):
            send("GET", URL)
        assert send("GET", URL).status == 503
        assert json.loads(send("GET", URL).text) == {"id": 42}
        with pytest.raises(UnexpectedCallError):
            send("GET", URL)
    finally:
        upstream.stop()
    assert [type(p) for p in upstream.problems] == [UnexpectedCallError]
    with pytest.raises(AssertionError, match="was called 4 times, but its sequence has 3"):
        upstream.verify()


@clients
def test_every_clients_request_is_recorded_as_an_httpx_request(client: str) -> None:
    send = CLIENTS[client]
    with FakeUpstream() as upstream:
        route = upstream.post("https://api.upstream.example/items").respond(201)
        send(
            "POST",
            "https://api.upstream.example/items?draft=1",
            json={"name": "lamp"},
            headers={"X-Trace": "t-1"},
        )
    (request,) = route.calls
    assert upstream.requests == [request]
    assert isinstance(request, httpx.Request)
    assert request.method == "POST"
    assert str(request.url) == "https://api.upstream.example/items?draft=1"
    assert request.headers["x-trace"] == "t-1"
    assert json.loads(request.content) == {"name": "lamp"}


@clients
def test_an_unmatched_request_fails_even_when_the_tool_swallows_it(client: str) -> None:
    send = CLIENTS[client]
    upstream = FakeUpstream(assert_all_called=False).start()
    try:
        upstream.get(URL).respond(200)
        # A tool's broad except: the fake must not be fooled by it.
        with contextlib.suppress(BaseException):
            send("GET", "https://api.upstream.example/items/7?full=1")
    finally:
        upstream.stop()
    (problem,) = upstream.problems
    assert isinstance(problem, UnmatchedRequestError)
    assert str(problem) == "no fake route for GET https://api.upstream.example/items/7?full=1"
    copy = pickle.loads(pickle.dumps(problem))
    assert (str(copy), copy.route_line, copy.routes) == (
        str(problem),
        problem.route_line,
        problem.routes,
    )
    with pytest.raises(AssertionError) as caught:
        upstream.verify()
    assert str(caught.value).splitlines() == [
        "no fake route for GET https://api.upstream.example/items/7?full=1",
        "Add a route for it to the test, with the answer the tool should get:",
        '    fake_upstream.get("https://api.upstream.example/items/7").respond(200, json=...)',
        "The test's routes:",
        "    GET https://api.upstream.example/items/42 -> respond 200",
        'See pytest-nucleo\'s docs, "Fake upstream failures" (https://pytest-nucleo.github.io/pytest-nucleo/how-to/fake-upstream/).',
    ]


def test_an_unmatched_request_s_message_masks_secrets_and_its_route_line_is_python() -> None:
    # A test may send a real key read from the environment: CI logs keep the failure.
    upstream = FakeUpstream(assert_all_called=False).start()
    try:
        with contextlib.suppress(BaseException):
            httpx.get(
                "https://api.upstream.example/files\\x1/new?token=sk-abcdefghijklmnopqrstuvwx&page=2"
            )
    finally:
        upstream.stop()
    (problem,) = upstream.problems
    assert isinstance(problem, UnmatchedRequestError)
    assert str(problem) == (
        "no fake route for GET https://api.upstream.example/files\\x1/new?token=[REDACTED]&page=2"
    )
    assert "sk-abcdefghijklmnopqrstuvwx" not in (upstream.failure_message() or "")
    # The line to add is Python as it stands: the backslash is escaped, not an escape.
    route = compile(problem.route_line, "<route line>", "eval").co_consts
    assert "https://api.upstream.example/files\\x1/new" in route


@clients
def test_an_unused_route_is_reported(client: str) -> None:
    send = CLIENTS[client]
    upstream = FakeUpstream().start()
    upstream.get(URL).respond(200)
    upstream.get("https://api.upstream.example/other").respond(200)
    send("GET", URL)
    upstream.stop()
    with pytest.raises(AssertionError, match=r"1 route\(s\) were never called:\n  GET .*/other"):
        upstream.verify()


def test_one_route_answers_every_client_and_counts_them_all() -> None:
    with FakeUpstream() as upstream:
        route = upstream.get(URL).respond(200, text="ok")
        answers = [send("GET", URL).text for send in CLIENTS.values()]
    assert answers == ["ok"] * len(CLIENTS)
    assert len(route.calls) == len(CLIENTS)


def test_the_fakes_are_gone_after_stop() -> None:
    original_send = requests.adapters.HTTPAdapter.send
    original_request = aiohttp.ClientSession._request
    with FakeUpstream() as upstream:
        upstream.get(URL).respond(200)
        assert requests.adapters.HTTPAdapter.send is not original_send
        assert aiohttp.ClientSession._request is not original_request
        CLIENTS["requests"]("GET", URL)
    assert requests.adapters.HTTPAdapter.send is original_send
    assert aiohttp.ClientSession._request is original_request


def test_refuses_to_start_beside_an_active_responses_mock() -> None:
    import responses

    with (
        responses.RequestsMock(),
        pytest.raises(RuntimeError, match=r"requests' HTTPAdapter\.send is already patched"),
    ):
        FakeUpstream().start()
    # Nothing was left half-started: a FakeUpstream starts cleanly afterwards.
    with FakeUpstream() as upstream:
        upstream.get(URL).respond(204)
        assert CLIENTS["httpx"]("GET", URL).status == 204


def test_refuses_to_start_beside_an_active_aioresponses_mock() -> None:
    from aioresponses import aioresponses

    with (
        aioresponses(),
        pytest.raises(RuntimeError, match=r"aiohttp's ClientSession\._request is already"),
    ):
        FakeUpstream().start()


def test_refuses_to_start_beside_pytest_httpx2(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import respx
        from pytest_nucleo.testing import FakeUpstream

        def test_both_fixtures(fake_upstream, httpx2_mock):
            pass

        def test_live_router(httpx2_mock):
            FakeUpstream().start()
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*fake_upstream and httpx2_mock both patch httpx2*",
            "*fake_upstream cannot start: pytest-httpx2's httpx2_mock*",
        ]
    )


def test_the_fixture_fails_a_test_whose_tool_swallowed_an_unmatched_request(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        import asyncio
        import aiohttp
        import requests

        def test_requests(fake_upstream):
            try:
                requests.get("https://api.upstream.example/missing", timeout=5)
            except BaseException:
                pass

        def test_aiohttp(fake_upstream):
            async def go():
                async with aiohttp.ClientSession() as session:
                    try:
                        await session.get("https://api.upstream.example/missing")
                    except BaseException:
                        pass
            asyncio.run(go())
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    for test in ("test_requests", "test_aiohttp"):
        result.stdout.fnmatch_lines(
            [
                f"*_ {test} _*",
                "no fake route for GET https://api.upstream.example/missing",
                "Add a route for it to the test, with the answer the tool should get:",
                '    fake_upstream.get("https://api.upstream.example/missing")'
                ".respond(200, json=...)",
            ],
            consecutive=True,
        )


@clients
def test_a_large_body_arrives_whole(client: str) -> None:
    # aiohttp's fake once failed on bodies past its reader's 128 KiB high-water mark.
    with FakeUpstream() as upstream:
        upstream.get(URL).html_error(500, size=200_000)
        answer = CLIENTS[client]("GET", URL)
    assert answer.status == 500
    assert len(answer.text) == 200_000
    assert answer.text.rstrip().endswith("-->")


def test_a_fake_upstream_loads_only_the_clients_already_imported() -> None:
    code = (
        "import sys\n"
        "from pytest_nucleo.testing import FakeUpstream\n"
        "heavy = ('aiohttp', 'aioresponses', 'requests', 'responses', 'httpx2', 'httpcore2')\n"
        "with FakeUpstream(assert_all_called=False):\n"
        "    pass\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "import requests\n"
        "with FakeUpstream() as upstream:\n"
        "    upstream.get('https://api.upstream.example/x').respond(204)\n"
        "    print(requests.get('https://api.upstream.example/x').status_code)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.stdout.splitlines() == ["[]", "204"], result.stderr


@pytest.mark.slow
def test_a_client_whose_mocking_library_is_missing_breaks_no_other_test(
    pytester: pytest.Pytester,
) -> None:
    # As with only pytest-nucleo[pytest,langchain] installed: langchain brings requests, not
    # responses. The other clients' fakes start; requests' and aiohttp's requests are refused
    # with the extra to install, even when the tool swallows the error.
    pytester.makeconftest(
        """
        import sys

        sys.modules["responses"] = None  # imports of them fail, as when not installed
        sys.modules["aioresponses"] = None
        """
    )
    pytester.makepyfile(
        """
        import asyncio

        import aiohttp
        import httpx
        import pytest
        import requests

        URL = "https://api.upstream.example/items/1"

        def test_httpx(fake_upstream):
            fake_upstream.get(URL).respond(200, text="faked")
            assert httpx.get(URL).text == "faked"

        def test_requests(fake_upstream):
            with pytest.raises(AssertionError, match="pytest-nucleo\\\\[requests\\\\]"):
                requests.get(URL, timeout=5)

        def test_aiohttp_swallowed(fake_upstream):
            async def go():
                async with aiohttp.ClientSession() as session:
                    try:
                        await session.get(URL)
                    except Exception:
                        pass

            asyncio.run(go())
        """
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", *UNUSED_PLUGINS, "-p", "no:xdist"
    )
    result.assert_outcomes(passed=1, failed=2)
    for client, mock in (("requests", "responses"), ("aiohttp", "aioresponses")):
        result.stdout.fnmatch_lines(
            [
                f"fake_upstream cannot fake {client}: {mock}, the library that fakes it, is not "
                f"installed, so this request was not sent. pip install 'pytest-nucleo[{client}]' "
                f"brings it; tests that do not call through {client} run as they are."
            ]
        )


@pytest.mark.slow
def test_a_mocking_library_that_does_not_import_refuses_only_its_client(
    pytester: pytest.Pytester,
) -> None:
    # responses installed, but without PyYAML, which it imports first thing: its client is
    # refused with the import's error, and every other fake works on.
    pytester.makeconftest(
        """
        import sys

        sys.modules["yaml"] = None  # imports of it fail, as when not installed
        """
    )
    pytester.makepyfile(
        """
        import httpx
        import pytest
        import requests

        URL = "https://api.upstream.example/items/1"

        def test_httpx(fake_upstream):
            fake_upstream.get(URL).respond(200, text="faked")
            assert httpx.get(URL).text == "faked"

        def test_requests(fake_upstream):
            with pytest.raises(AssertionError) as caught:
                requests.get(URL, timeout=5)
            print("refused:", caught.value)
            fake_upstream.problems.clear()  # checked below; left, it would fail the test
        """
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-s", *UNUSED_PLUGINS, "-p", "no:xdist"
    )
    result.assert_outcomes(passed=2)
    assert (
        "refused: fake_upstream cannot fake requests: responses, the library that fakes it, is "
        "installed but does not import (ModuleNotFoundError: import of yaml halted; None in "
        "sys.modules), so this request was not sent. pip install 'pytest-nucleo[requests]' "
        "brings it with what it needs; tests that do not call through requests run as they are."
    ) in result.stdout.str()


@pytest.mark.parametrize("client", ["requests", "aiohttp"])
def test_a_missing_mock_does_not_start_over_another_fakes_refusal(client: str) -> None:
    # Two stand-ins stopped out of order would leave the second's "original", the first's
    # refusal, in place for the rest of the process.
    from pytest_nucleo.testing._fake._backends import _aiohttp, _requests
    from pytest_nucleo.testing._fake._backends._missing import MissingMock

    faked = {"requests": _requests, "aiohttp": _aiohttp}[client].ClientBackend
    owner, name = faked.entry()
    real = vars(owner)[name]
    first, second = MissingMock(faked), MissingMock(faked)
    first.start(FakeUpstream().router)
    try:
        where = f"{owner.__module__}.{owner.__qualname__}.{name}"
        assert second.refusal() == (
            f"{where} is already patched by another FakeUpstream, which refuses what {client} "
            "sends (the library that fakes it is missing): use one per test."
        )
    finally:
        first.stop()
    assert vars(owner)[name] is real
    assert second.refusal() is None
