"""httplib2 as a client, and google-api-python-client above it: httplib2's connections get the
route table's socket, so its redirects, its own retry and the errors it lets out are the real
ones; what the runtime reads of them (its errors, the socket's errors raised through it, its
responses), checked against real httplib2 on loopback servers too."""

from __future__ import annotations

import http.client
import sys
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo.strategies import _TRANSPORT_FAILURES
from pytest_nucleo.testing import FakeUpstream, Outcome, respond
from tests._frameworks import needs_frameworks
from tests._loopback import full_queue, large_body, loopback

# Without them the module is kept out of collection (tests/_frameworks.py says why: a test
# that skips leaves its snapshots unused, which fails the run).
needs_frameworks("httplib2", "googleapiclient")

import httplib2  # noqa: E402

URL = "https://api.upstream.example/items/42"
TRANSPORT = {outcome.description: outcome for outcome in _TRANSPORT_FAILURES}
# What httplib2 lets out for a call that got no answer: the socket's errors, or http.client's.
FAILURES = (OSError, http.client.HTTPException)


def _request(url: str = URL, method: str = "GET", **kwargs: Any) -> tuple[Any, bytes]:
    answer: tuple[Any, bytes] = httplib2.Http(timeout=10).request(url, method, **kwargs)
    return answer


# -- what httplib2 sees ----------------------------------------------------------------------


def test_an_answer_reaches_httplib2_as_its_response_and_content() -> None:
    with FakeUpstream() as upstream:
        upstream.get(URL).respond(404, json={"error": "no item"}, headers={"X-Trace": "t-1"})
        response, content = _request()
    assert isinstance(response, httplib2.Response)
    assert (response.status, response.reason) == (404, "Not Found")
    assert (response["x-trace"], response["content-type"]) == ("t-1", "application/json")
    assert content == b'{"error":"no item"}'


def test_httplib2_follows_redirects_and_gives_up_past_its_limit() -> None:
    other = "https://api.upstream.example/items/43"
    with FakeUpstream() as upstream:
        upstream.get(URL).respond(301, headers={"Location": other})
        upstream.get(other).respond(200, text="moved here")
        assert _request()[1] == b"moved here"
    with FakeUpstream() as upstream:
        upstream.get(URL).respond(302, headers={"Location": URL})
        with pytest.raises(httplib2.RedirectLimit):
            _request()


def test_a_post_is_recorded_with_its_body_and_headers() -> None:
    with FakeUpstream() as upstream:
        route = upstream.post("http://api.upstream.example/items").respond(201, text="made")
        response, content = _request(
            "http://api.upstream.example/items?draft=1",
            "POST",
            body='{"name": "lamp"}',
            headers={"Content-Type": "application/json", "X-Trace": "t-2"},
        )
    assert (response.status, content) == (201, b"made")
    (sent,) = route.calls
    assert (sent.content, sent.headers["x-trace"]) == (b'{"name": "lamp"}', "t-2")
    assert str(sent.url) == "http://api.upstream.example/items?draft=1"


# What httplib2 lets out for each failure, real or faked.
EXPECTED: dict[str, type[BaseException]] = {
    "read timeout": TimeoutError,
    "connection refused": ConnectionRefusedError,
    "connect timeout": TimeoutError,
    "write timeout": TimeoutError,
    "pool timeout": TimeoutError,  # httplib2 has no pool: a wait for a connection
    "server disconnected": http.client.RemoteDisconnected,
    "connection reset": ConnectionResetError,
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_transport_failure_raises_what_httplib2_lets_out(name: str) -> None:
    with FakeUpstream() as upstream:
        route = upstream.get(URL).always(TRANSPORT[name])
        with pytest.raises(FAILURES) as caught:
            _request()
    assert type(caught.value) is EXPECTED[name]
    # httplib2 sends once more a request whose connection closed without an answer.
    assert len(route.calls) == (2 if name == "server disconnected" else 1)


def test_httplib2s_own_retry_of_a_dropped_connection_meets_the_next_outcome() -> None:
    with FakeUpstream() as upstream:
        upstream.get(URL).sequence(TRANSPORT["server disconnected"], respond(200, text="again"))
        assert _request()[1] == b"again"


@pytest.mark.parametrize(
    ("mode", "name"), [("refused", "connection refused"), ("silent", "read timeout")]
)
def test_the_fake_raises_the_types_real_httplib2_raises_on_loopback(mode: str, name: str) -> None:
    with loopback(mode) as base, pytest.raises(FAILURES) as real:
        httplib2.Http(timeout=0.2).request(base + "/items/42")
    with FakeUpstream() as upstream:
        upstream.get(URL).always(TRANSPORT[name])
        with pytest.raises(FAILURES) as faked:
            _request()
    assert type(faked.value) is type(real.value)


def test_a_connection_kept_open_from_one_fake_to_the_next_meets_the_next() -> None:
    # A module-level Http (a service an SDK builds once) keeps its connection from test to
    # test: once its fake stops, the connection reads as closed by the server, and httplib2
    # reconnects to the fake that runs now, never to routes of a test that is over.
    assert httplib2 is not None
    kept = httplib2.Http(timeout=10)
    for text in ("first", "second"):
        with FakeUpstream() as upstream:
            route = upstream.get(URL).respond(200, text=text)
            assert kept.request(URL)[1] == text.encode()
        assert len(route.calls) == 1
    connection = http.client.HTTPConnection("api.upstream.example")
    with FakeUpstream() as upstream:
        upstream.get("http://api.upstream.example/items").respond(200, text="open")
        connection.request("GET", "/items")
        assert connection.getresponse().read() == b"open"
    with FakeUpstream(assert_all_called=False) as upstream:
        upstream.get("http://api.upstream.example/items").respond(200, text="not this one")
        connection.request("GET", "/items")
        with pytest.raises(http.client.RemoteDisconnected):
            connection.getresponse()
    assert not upstream.requests


def test_the_fake_is_gone_after_stop_and_refuses_to_start_twice() -> None:
    from pytest_nucleo.testing._fake._backends._httplib2 import ClientBackend

    assert httplib2 is not None
    connections = (httplib2.HTTPConnectionWithTimeout, httplib2.HTTPSConnectionWithTimeout)
    originals = [vars(cls)["connect"] for cls in connections]
    with FakeUpstream() as upstream:
        upstream.get(URL).respond(200)
        assert [vars(cls)["connect"] for cls in connections] != originals
        refusal = ClientBackend().refusal()
        assert refusal is not None
        assert "httplib2.HTTPConnectionWithTimeout.connect is already patched" in refusal
        _request()
    assert [vars(cls)["connect"] for cls in connections] == originals
    assert ClientBackend().refusal() is None


# -- what the runtime makes of them ----------------------------------------------------------

OUTCOMES: dict[str, Outcome] = {"status-404": respond(404, json={"error": "no item"}), **TRANSPORT}


@nucleo.llm_errors(service="Inventory")
def _fetch_item() -> Any:
    response, content = _request(URL + "?key=canary-k-1")
    nucleo.raise_for_response("Inventory", response)
    return content


def test_llm_errors_maps_every_httplib2_failure(llm_snapshot: SnapshotAssertion) -> None:
    texts = []
    for name, outcome in OUTCOMES.items():
        with FakeUpstream() as upstream:
            upstream.get(URL).always(outcome)
            with pytest.raises(nucleo.LLMReadableException) as caught:
                _fetch_item()
        error = caught.value
        assert not isinstance(error, nucleo.SystemException), name
        assert "canary" not in error.explain_to_llm()
        texts.append(f"{name}: {type(error).__name__}\n{error.explain_to_llm()}")
    assert "\n---\n".join(texts) == llm_snapshot


def test_an_httplib2_response_maps_by_its_status_its_body_unseen() -> None:
    with FakeUpstream() as upstream:
        upstream.get(URL).throttle(retry_after=30)
        response, _ = _request(URL + "?key=canary-k-2")
    failure = nucleo.exception_for_response("Inventory", response)
    assert isinstance(failure, nucleo.Http429Exception)
    assert failure.retry_after == 30
    assert str(failure).endswith("(body not seen)")  # httplib2 returns it beside the response
    # httplib2 notes the URI asked for on a response it may cache, a 200 (else: "/").
    assert failure.endpoint == "/"
    assert nucleo.exception_for_response("Inventory", httplib2.Response({"status": "200"})) is None


def test_httplib2s_own_errors_read_as_the_failures_they_are() -> None:
    with FakeUpstream() as upstream:
        upstream.get(URL).respond(302, headers={"Location": URL})
        with pytest.raises(httplib2.RedirectLimit) as looped:
            _request()
    texts = {
        "redirects": nucleo.unwrap(looped.value, component="items").llm_message,
        "no server": nucleo.unwrap(
            httplib2.ServerNotFoundError("Unable to find the server at api.upstream.example"),
            component="items",
        ).llm_message,
        "relative": nucleo.unwrap(
            httplib2.RelativeURIError("Only absolute URIs are allowed. uri = /x"), component="items"
        ).llm_message,
    }
    assert "GET /items/42: it redirected the request too many times" in texts["redirects"]
    assert "the connection was refused or could not be made. Nothing was sent" in texts["no server"]
    assert "the URL's protocol is not supported" in texts["relative"]
    # A timeout the tool raises itself is not httplib2's failure.
    assert type(nucleo.unwrap(TimeoutError("mine"), component="items")) is nucleo.SystemException


def test_real_httplib2_failures_on_loopback_map_like_the_fakes() -> None:
    expected = {
        "refused": "the connection was refused or could not be made. Nothing was sent",
        "silent": "it did not answer in time (the read timed out)",
        "garbage": "the connection broke before a complete answer",
    }
    for mode, what in expected.items():
        with loopback(mode) as base, pytest.raises(FAILURES) as caught:
            httplib2.Http(timeout=0.2).request(base + "/orders/7?key=canary-k-3")
        mapped = nucleo.unwrap(caught.value, component="orders")
        assert type(mapped) is nucleo.ExternalServiceException, mode
        assert mapped.service_name == "orders", mode  # a loopback host names no service
        assert what in mapped.llm_message, mode
        # http.client's own error (no status line) is read through httplib2's frames: the
        # call is known too.
        assert "GET /orders/7" in mapped.llm_message, mode
        assert "canary" not in mapped.explain_to_llm()


def test_real_httplib2_sending_that_times_out_says_part_of_the_request_was_sent() -> None:
    with loopback("silent") as base, pytest.raises(TimeoutError) as caught:
        httplib2.Http(timeout=0.2).request(base + "/orders", "POST", body=large_body())
    mapped = nucleo.unwrap(caught.value, component="orders")
    assert "POST /orders: sending the request timed out. Part of the request was sent" in (
        mapped.llm_message
    )


@pytest.mark.skipif(sys.platform != "linux", reason="a full queue drops connections on Linux")
def test_real_httplib2_connecting_that_times_out_says_nothing_was_sent() -> None:
    with full_queue() as base, pytest.raises(TimeoutError) as caught:
        httplib2.Http(timeout=0.2).request(base + "/orders/7")
    mapped = nucleo.unwrap(caught.value, component="orders")
    assert "GET /orders/7: the connection attempt timed out. Nothing was sent" in (
        mapped.llm_message
    )


# -- google-api-python-client ----------------------------------------------------------------

FILES = "https://www.googleapis.com/drive/v3/files"


def _google_error(code: int, status: str, message: str, reason: str) -> dict[str, Any]:
    """An error body as Google's APIs send it: https://cloud.google.com/apis/design/errors"""
    info = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason}
    return {
        "error": {
            "code": code,
            "message": message,
            "status": status,
            "details": [{**info, "domain": "googleapis.com"}],
        }
    }


@pytest.fixture
def drive() -> Any:
    discovery = pytest.importorskip(
        "googleapiclient.discovery",
        reason="google-api-python-client is not installed: pip install 'pytest-nucleo[google-api]'",
    )
    # The discovery document shipped in the package: building the service sends nothing.
    return discovery.build("drive", "v3", developerKey="canary-key-1", static_discovery=True)


def test_a_google_api_call_is_answered_by_the_fake(drive: Any) -> None:
    with FakeUpstream() as upstream:
        route = upstream.get(f"{FILES}/x").respond(200, json={"id": "x", "name": "notes.txt"})
        assert drive.files().get(fileId="x").execute() == {"id": "x", "name": "notes.txt"}
    (sent,) = route.calls
    assert sent.url.params["key"] == "canary-key-1"


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (404, _google_error(404, "NOT_FOUND", "File not found: x.", "notFound")),
        (
            429,
            _google_error(429, "RESOURCE_EXHAUSTED", "Quota exceeded.", "RATE_LIMIT_EXCEEDED"),
        ),
    ],
    ids=["404", "429"],
)
def test_a_google_error_is_the_http_error_of_its_json_body(
    drive: Any, status: int, body: dict[str, Any]
) -> None:
    from googleapiclient.errors import HttpError

    with FakeUpstream() as upstream:
        upstream.get(f"{FILES}/x").respond(status, json=body)
        with pytest.raises(HttpError) as caught:
            drive.files().get(fileId="x").execute()  # num_retries=0: no retry, no sleep
    assert caught.value.status_code == status
    assert caught.value.reason == body["error"]["message"]
    assert isinstance(caught.value.resp, httplib2.Response)


def test_a_google_api_call_that_times_out_reads_as_a_read_timeout(
    drive: Any, llm_snapshot: SnapshotAssertion
) -> None:
    with FakeUpstream() as upstream:
        upstream.get(f"{FILES}/x").timeout()
        with pytest.raises(TimeoutError) as caught:
            drive.files().get(fileId="x").execute()
    mapped = nucleo.unwrap(caught.value, service="Drive")
    assert "canary" not in mapped.explain_to_llm()
    assert mapped.explain_to_llm() == llm_snapshot
