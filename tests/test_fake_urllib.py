"""The standard library as a client: every outcome of the route table through the real
``urllib.request`` (and ``http.client`` below it), raising urllib's own exceptions as real urllib
does, and what the runtime makes of them (``llm_errors``, ``service_call``, the runner,
``raise_for_response``), checked against real urllib on loopback servers too."""

from __future__ import annotations

import http.client
import io
import json
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo import (
    ExternalServiceException,
    Http404Exception,
    Http429Exception,
    InvalidInputException,
    SystemException,
)
from pytest_nucleo.strategies import _TRANSPORT_FAILURES
from pytest_nucleo.testing import (
    FakeUpstream,
    Outcome,
    UnexpectedCallError,
    UnmatchedRequestError,
    respond,
    throttle,
    timeout,
)
from pytest_nucleo.testing._fake._backends._urllib import ClientBackend
from tests._loopback import answering, full_queue, large_body, loopback

URL = "https://api.upstream.example/items/42"
# What urllib raises for a call that got no answer: an OSError (URLError is one), or
# http.client's own for an answer it could not read.
FAILURES = (OSError, http.client.HTTPException)
TRANSPORT = {outcome.description: outcome for outcome in _TRANSPORT_FAILURES}


def _urlopen(url: str, timeout: float = 10) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        body: bytes = response.read()
    return body


def _opener(url: str) -> bytes:
    with urllib.request.build_opener().open(url, timeout=10) as response:
        body: bytes = response.read()
    return body


def _raised(outcome: Outcome, call: Callable[[str], Any] = _urlopen) -> BaseException:
    with FakeUpstream() as upstream:
        upstream.get(URL).always(outcome)
        with pytest.raises(FAILURES) as caught:
            call(URL)
    return caught.value


# -- what urllib and http.client see -------------------------------------------------------


@pytest.mark.parametrize("call", [_urlopen, _opener], ids=["urlopen", "build_opener"])
def test_an_answer_reaches_urllib_with_its_status_headers_and_body(call: Any) -> None:
    with FakeUpstream() as upstream:
        upstream.get(URL).respond(200, json={"id": 42}, headers={"X-Trace": "t-1"})
        assert json.loads(call(URL)) == {"id": 42}
        with urllib.request.urlopen(URL) as response:
            assert response.status == 200
            assert response.headers["X-Trace"] == "t-1"
            assert response.headers["Content-Type"] == "application/json"
            assert response.url == URL


def test_a_status_outside_2xx_is_urllibs_http_error_with_a_readable_body_and_headers() -> None:
    with FakeUpstream() as upstream:
        upstream.get(URL).respond(404, json={"error": "no item"}, headers={"X-Trace": "t-2"})
        with pytest.raises(urllib.error.HTTPError) as caught:
            _urlopen(URL)
    error = caught.value
    assert (error.code, error.reason, error.url) == (404, "Not Found", URL)
    assert error.headers["X-Trace"] == "t-2"
    assert isinstance(error.fp, http.client.HTTPResponse)
    assert json.loads(error.read()) == {"error": "no item"}


def test_a_throttle_is_a_429_http_error_with_its_retry_after() -> None:
    with FakeUpstream() as upstream:
        upstream.get(URL).throttle(retry_after=30)
        with pytest.raises(urllib.error.HTTPError) as caught:
            _urlopen(URL)
    assert caught.value.code == 429
    assert caught.value.headers["Retry-After"] == "30"
    assert b"Rate limit exceeded" in caught.value.read()


def test_urllib_follows_a_redirect_through_the_fake() -> None:
    with FakeUpstream() as upstream:
        upstream.get(URL).respond(302, headers={"Location": "/items/43"})
        upstream.get("https://api.upstream.example/items/43").respond(200, text="moved here")
        assert _urlopen(URL) == b"moved here"


# What real urllib raises for each failure: (the exception, the socket error it wraps).
EXPECTED: dict[str, tuple[type[BaseException], type[BaseException] | None]] = {
    "read timeout": (TimeoutError, None),  # from getresponse: urllib lets it out as it is
    "connection refused": (urllib.error.URLError, ConnectionRefusedError),
    "connect timeout": (urllib.error.URLError, TimeoutError),
    "write timeout": (urllib.error.URLError, TimeoutError),
    "pool timeout": (urllib.error.URLError, TimeoutError),
    "server disconnected": (http.client.RemoteDisconnected, None),
    "connection reset": (ConnectionResetError, None),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_transport_failure_raises_what_real_urllib_raises(name: str) -> None:
    error = _raised(TRANSPORT[name])
    kind, reason = EXPECTED[name]
    assert type(error) is kind
    if reason is not None:
        assert isinstance(error, urllib.error.URLError)
        assert type(error.reason) is reason


@pytest.mark.parametrize(
    ("mode", "name"),
    [("refused", "connection refused"), ("silent", "read timeout")],
)
def test_the_fake_raises_the_types_real_urllib_raises_on_loopback(mode: str, name: str) -> None:
    with loopback(mode) as base, pytest.raises(FAILURES) as real:
        _urlopen(base + "/items/42", timeout=0.2)
    faked = _raised(TRANSPORT[name])
    assert type(faked) is type(real.value)
    assert type(getattr(faked, "reason", None)) is type(getattr(real.value, "reason", None))


def test_a_sequence_gives_one_outcome_per_call_and_fails_past_its_end() -> None:
    upstream = FakeUpstream().start()
    try:
        upstream.get(URL).sequence(timeout(), respond(503), respond(200, json={"id": 42}))
        with pytest.raises(TimeoutError):
            _urlopen(URL)
        with pytest.raises(urllib.error.HTTPError) as caught:
            _urlopen(URL)
        assert caught.value.code == 503
        assert json.loads(_urlopen(URL)) == {"id": 42}
        with pytest.raises(UnexpectedCallError):
            _urlopen(URL)
    finally:
        upstream.stop()
    with pytest.raises(AssertionError, match="was called 4 times, but its sequence has 3"):
        upstream.verify()


def test_an_unmatched_request_fails_as_with_every_other_client() -> None:
    upstream = FakeUpstream(assert_all_called=False).start()
    try:
        upstream.get(URL).respond(200)
        # Not a URLError: urllib wraps only OSErrors, so a tool's `except URLError` passes it.
        with pytest.raises(UnmatchedRequestError):
            _urlopen("https://api.upstream.example/items/7?full=1")
    finally:
        upstream.stop()
    with pytest.raises(AssertionError) as caught:
        upstream.verify()
    assert str(caught.value).splitlines()[:3] == [
        "no fake route for GET https://api.upstream.example/items/7?full=1",
        "Add a route for it to the test, with the answer the tool should get:",
        '    fake_upstream.get("https://api.upstream.example/items/7").respond(200, json=...)',
    ]


def test_a_post_is_recorded_with_its_body_headers_and_query() -> None:
    with FakeUpstream() as upstream:
        route = upstream.post("https://api.upstream.example/items").respond(201)
        request = urllib.request.Request(
            "https://api.upstream.example/items?draft=1",
            data=json.dumps({"name": "lamp"}).encode(),
            headers={"X-Trace": "t-1", "Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request) as response:
            assert response.status == 201
    (sent,) = route.calls
    assert str(sent.url) == "https://api.upstream.example/items?draft=1"
    assert sent.headers["x-trace"] == "t-1"
    assert json.loads(sent.content) == {"name": "lamp"}


def test_direct_http_client_use_meets_the_fake_and_keeps_its_connection() -> None:
    with FakeUpstream() as upstream:
        route = upstream.post("http://api.upstream.example:8080/jobs").respond(202, text="queued")
        upstream.get("http://api.upstream.example:8080/gone").connect_error()
        connection = http.client.HTTPConnection("api.upstream.example", 8080, timeout=5)
        for body in (b"first", b"second"):  # the second request reuses the connection
            connection.request("POST", "/jobs", body=body)
            answer = connection.getresponse()
            assert (answer.status, answer.read()) == (202, b"queued")
        connection.close()
        with pytest.raises(ConnectionRefusedError):
            http.client.HTTPConnection("api.upstream.example", 8080).request("GET", "/gone")
    assert [call.content for call in route.calls] == [b"first", b"second"]


def test_an_https_connection_through_a_proxy_tunnel_names_the_host() -> None:
    with FakeUpstream() as upstream:
        upstream.get("https://api.upstream.example/items/42").respond(200, text="tunnelled")
        connection = http.client.HTTPSConnection("proxy.internal", 3128)
        connection.set_tunnel("api.upstream.example")
        connection.request("GET", "/items/42")
        assert connection.getresponse().read() == b"tunnelled"


def test_a_head_request_and_a_204_carry_no_body() -> None:
    with FakeUpstream() as upstream:
        upstream.route("HEAD", URL).respond(200, text="not sent")
        upstream.get("https://api.upstream.example/empty").respond(204)
        with urllib.request.urlopen(urllib.request.Request(URL, method="HEAD")) as response:
            assert response.read() == b""
        assert _urlopen("https://api.upstream.example/empty") == b""


def test_the_fake_is_gone_after_stop_and_refuses_to_start_twice() -> None:
    original = vars(http.client.HTTPConnection)["connect"]
    with FakeUpstream() as upstream:
        upstream.get(URL).respond(200)
        assert vars(http.client.HTTPConnection)["connect"] is not original
        refusal = ClientBackend().refusal()
        assert refusal is not None
        assert "HTTPConnection.connect is already patched" in refusal
        _urlopen(URL)
    assert vars(http.client.HTTPConnection)["connect"] is original
    assert ClientBackend().refusal() is None


# -- what the runtime makes of them --------------------------------------------------------

OUTCOMES: dict[str, Outcome] = {
    "status-404": respond(404, json={"error": "no item 42"}),
    "status-500": respond(500, text="upstream exploded"),
    "throttle-429": throttle(retry_after=30),
    **TRANSPORT,
}


@nucleo.llm_errors(service="Inventory")
def _fetch_item() -> Any:
    return json.loads(_urlopen(URL))


def test_llm_errors_maps_every_urllib_failure_and_names_the_service(
    llm_snapshot: SnapshotAssertion,
) -> None:
    texts = []
    for name, outcome in OUTCOMES.items():
        with FakeUpstream() as upstream:
            upstream.get(URL).always(outcome)
            with pytest.raises(nucleo.LLMReadableException) as caught:
                _fetch_item()
        error = caught.value
        # Never "a system error occurred": every one is the service's failure.
        assert not isinstance(error, SystemException), name
        assert "Inventory" in error.explain_to_llm()
        texts.append(f"{name}: {type(error).__name__}\n{error.explain_to_llm()}")
    assert "\n---\n".join(texts) == llm_snapshot


def test_a_redirect_loop_is_read_as_the_redirects_failure_not_as_an_answer(
    llm_snapshot: SnapshotAssertion,
) -> None:
    # urllib gives up on a loop (or past ten redirects) by raising the last redirect as an
    # HTTPError; it is read as httpx's and requests' TooManyRedirects are, not as a 302.
    other = "https://api.upstream.example/items/43"
    with FakeUpstream() as upstream:
        upstream.get(URL).respond(302, headers={"Location": other})
        upstream.get(other).respond(302, headers={"Location": URL})
        with pytest.raises(ExternalServiceException) as caught:
            _fetch_item()
    assert isinstance(caught.value.__cause__, urllib.error.HTTPError)
    assert "redirected the request too many times" in caught.value.llm_message
    assert caught.value.explain_to_llm() == llm_snapshot


class _SdkError(Exception):
    """What an SDK raises for a failed call, from urllib's error."""


@nucleo.llm_errors(service="Inventory")
def _fetch_item_as_an_sdk_does() -> Any:
    # An SDK's pattern: read the error's body for a message of its own, then raise its own
    # error from urllib's. The body is gone once read.
    try:
        return json.loads(_urlopen(URL))
    except urllib.error.HTTPError as error:
        raise _SdkError(f"request failed: {error.read()[:40]!r}") from error


def test_an_http_error_whose_body_was_read_before_says_nothing_of_its_body(
    llm_snapshot: SnapshotAssertion,
) -> None:
    with FakeUpstream() as upstream:
        upstream.get(URL).respond(404, json={"error": "no item"})
        with pytest.raises(Http404Exception) as caught:
            _fetch_item_as_an_sdk_does()
    assert isinstance(caught.value.__cause__, _SdkError)
    text = caught.value.explain_to_llm()
    assert "had no body" not in text  # it had one: the SDK read it first
    assert caught.value.response_body == ""
    assert str(caught.value).endswith("(body not seen)")
    assert text == llm_snapshot


@pytest.mark.parametrize(("method", "status"), [("HEAD", 404), ("GET", 404), ("GET", 304)])
def test_an_http_error_with_no_body_read_before_still_says_it_had_none(
    method: str, status: int, llm_snapshot: SnapshotAssertion
) -> None:
    # Read before mapping, a body that was never there (a HEAD's, a 304's, one of length 0)
    # is known to be empty all the same: the text says so rather than nothing.
    @nucleo.llm_errors(service="Inventory")
    def probe_item() -> None:
        try:
            urllib.request.urlopen(urllib.request.Request(URL, method=method), timeout=5)
        except urllib.error.HTTPError as error:
            raise _SdkError(f"request failed: {error.read()!r}") from error

    with FakeUpstream() as upstream:
        upstream.route(method, URL).respond(status)
        with pytest.raises(nucleo.LLMReadableException) as caught:
            probe_item()
    assert isinstance(caught.value, nucleo.HttpErrorResponse)
    assert caught.value.status_code == status
    text = caught.value.explain_to_llm()
    assert "Its answer had no body." in text
    assert not str(caught.value).endswith("(body not seen)")
    assert text == llm_snapshot


def test_a_chunked_body_read_before_is_not_said_to_be_empty_whatever_its_length_says() -> None:
    # http.client reads the chunks of a chunked answer, whatever its Content-Length says.
    answer = (
        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n"
        b'Connection: close\r\n\r\n11\r\n{"error":"no 42"}\r\n0\r\n\r\n'
    )

    @nucleo.llm_errors(service="Inventory")
    def fetch(base: str) -> None:
        try:
            urllib.request.urlopen(base + "/items/42", timeout=5)
        except urllib.error.HTTPError as error:
            raise _SdkError(f"request failed: {error.read()!r}") from error

    with answering(answer) as base, pytest.raises(Http404Exception) as caught:
        fetch(base)
    assert "no 42" in str(caught.value.__cause__)  # the SDK read the body
    assert "had no body" not in caught.value.explain_to_llm()
    assert str(caught.value).endswith("(body not seen)")


def test_an_http_error_is_read_as_its_status_with_retry_after_and_body() -> None:
    with FakeUpstream() as upstream:
        upstream.get(URL).throttle(retry_after=30)
        with pytest.raises(Http429Exception) as caught:
            _fetch_item()
    assert caught.value.retry_after == 30
    assert caught.value.endpoint == "/items/42"
    assert "Rate limit exceeded" in caught.value.response_body


def test_the_runner_reports_urllib_failures(llm_snapshot: SnapshotAssertion) -> None:
    texts = []
    for name in ("status-404", "read timeout", "connection refused"):
        with FakeUpstream() as upstream:
            upstream.get(URL).always(OUTCOMES[name])
            result = nucleo.run_tool(_fetch_item, clock=nucleo.FakeClock())
        assert result.is_error
        assert not isinstance(result.exception, SystemException)
        texts.append(f"{name}: {result.text}")
    assert "\n---\n".join(texts) == llm_snapshot


def test_service_call_and_wrap_with_context_readdress_urllib_failures() -> None:
    with FakeUpstream() as upstream:
        upstream.get(URL).sequence(respond(404, json={"error": "no item"}), timeout())
        with (
            pytest.raises(InvalidInputException) as missing,
            nucleo.service_call("Inventory", "item_id", 42, "item fetch"),
        ):
            _urlopen(URL)
        with pytest.raises(TimeoutError) as slow:
            _urlopen(URL)
    assert missing.value.parameter_name == "item_id"
    wrapped = nucleo.wrap_with_context(slow.value, "Inventory", "item_id", 42, "item fetch")
    assert type(wrapped) is ExternalServiceException
    assert "it did not answer in time (the read timed out)" in wrapped.llm_message


def test_raise_for_response_reads_an_http_error_and_leaves_its_body_readable() -> None:
    with FakeUpstream() as upstream:
        upstream.get(URL).respond(404, json={"error": "no item"})
        with pytest.raises(urllib.error.HTTPError) as caught:
            _urlopen(URL)
    error = caught.value
    with pytest.raises(Http404Exception) as mapped:
        nucleo.raise_for_response("Inventory", error)
    assert mapped.value.response_body == '{"error":"no item"}'
    # Mapped twice, read by the tool afterwards: the body is still there each time.
    assert nucleo.exception_for_response("Inventory", error) is not None
    assert json.loads(error.read()) == {"error": "no item"}


def test_raise_for_response_reads_an_http_client_response_only_outside_2xx() -> None:
    with FakeUpstream() as upstream:
        upstream.get("http://api.upstream.example/ok").respond(200, text="kept for the tool")
        upstream.get("http://api.upstream.example/no").respond(404, text="no such page")
        connection = http.client.HTTPConnection("api.upstream.example")
        connection.request("GET", "/ok")
        fine = connection.getresponse()
        nucleo.raise_for_response("Inventory", fine)  # a 2xx: its body is not touched
        assert fine.read() == b"kept for the tool"
        connection.request("GET", "/no")
        missing = connection.getresponse()
        with pytest.raises(Http404Exception) as mapped:
            nucleo.raise_for_response("Inventory", missing)
        assert mapped.value.response_body == "no such page"
        assert missing.read() == b"no such page"


def test_an_http_error_built_by_hand_is_read_too() -> None:
    error = urllib.error.HTTPError(
        "https://api.upstream.example/items/7?api_key=canary-q-1", 503, "Busy", None, None
    )
    mapped = nucleo.exception_for_response("Inventory", error)
    assert mapped is not None
    assert mapped.endpoint == "/items/7"
    body = urllib.error.HTTPError(URL, 500, "Oops", {}, io.BytesIO(b"the body"))  # type: ignore[arg-type]
    assert nucleo.exception_for_response("Inventory", body).response_body == "the body"  # type: ignore[union-attr]
    assert body.read() == b"the body"


def test_a_timeout_or_refusal_the_tool_raises_itself_is_still_a_system_error() -> None:
    # Only the socket errors raised inside urllib or http.client are urllib's failures.
    for error in (TimeoutError("my own deadline"), ConnectionRefusedError("mine")):
        assert type(nucleo.unwrap(error, component="tool")) is SystemException


def test_real_urllib_sending_that_times_out_says_part_of_the_request_was_sent() -> None:
    # A server that never reads: the body fills the sockets' buffers and sending times out.
    # urllib raises the URLError(TimeoutError) of a connect timeout; only the traceback tells
    # that the connection was made and part of the request sent.
    with loopback("silent") as base:
        request = urllib.request.Request(base + "/orders", data=large_body(), method="POST")
        with pytest.raises(urllib.error.URLError) as caught:
            urllib.request.urlopen(request, timeout=0.2)
    assert type(caught.value.reason) is TimeoutError
    mapped = nucleo.unwrap(caught.value, component="orders")
    assert "POST /orders: sending the request timed out. Part of the request was sent" in (
        mapped.llm_message
    )
    assert "Nothing was sent" not in mapped.llm_message


def test_a_tools_own_function_named_connect_does_not_make_a_write_timeout_a_connect_timeout() -> (
    None
):
    # Direct http.client use lets the socket's TimeoutError out with the tool's frames above
    # http.client's: only http.client's and those below it say where it was raised.
    def connect(base: str) -> None:  # the tool's own name, as any may be
        connection = http.client.HTTPConnection(base.removeprefix("http://"), timeout=0.2)
        try:
            connection.request("POST", "/orders", body=large_body())
        finally:
            connection.close()

    with loopback("silent") as base, pytest.raises(TimeoutError) as caught:
        connect(base)
    mapped = nucleo.unwrap(caught.value, component="orders")
    assert "sending the request timed out. Part of the request was sent" in mapped.llm_message


@pytest.mark.skipif(sys.platform != "linux", reason="a full queue drops connections on Linux")
def test_real_urllib_connecting_that_times_out_says_nothing_was_sent() -> None:
    with full_queue() as base, pytest.raises(urllib.error.URLError) as caught:
        _urlopen(base + "/orders/7", timeout=0.2)
    assert type(caught.value.reason) is TimeoutError
    mapped = nucleo.unwrap(caught.value, component="orders")
    assert "GET /orders/7: the connection attempt timed out. Nothing was sent" in (
        mapped.llm_message
    )


def test_a_urllib_timeout_built_by_hand_reads_as_a_connect_timeout() -> None:
    # No traceback says where it was raised: the connection, by far the more common.
    mapped = nucleo.unwrap(urllib.error.URLError(TimeoutError("timed out")), component="orders")
    assert "the connection attempt timed out. Nothing was sent" in mapped.llm_message


def test_real_urllib_failures_on_loopback_map_like_the_fakes() -> None:
    expected = {
        "refused": "the connection was refused or could not be made",
        "silent": "it did not answer in time (the read timed out)",
        "garbage": "the connection broke before a complete answer",
        "truncated": "the connection broke before a complete answer",
        "plaintext": "the secure (TLS) connection could not be set up",
    }
    for mode, what in expected.items():
        with loopback(mode) as base, pytest.raises(FAILURES) as caught:
            _urlopen(base + "/orders/7?api_key=canary-q-2", timeout=0.2)
        mapped = nucleo.unwrap(caught.value, component="orders")
        assert type(mapped) is ExternalServiceException, mode
        # A loopback host names no service: the component does. The call itself is read
        # from the frames that raised it (urllib's exceptions do not carry it).
        assert mapped.service_name == "orders", mode
        assert "GET /orders/7" in mapped.llm_message, mode
        assert what in mapped.llm_message, mode
        assert "canary" not in mapped.explain_to_llm()
    answer = b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nno order."
    with answering(answer) as base, pytest.raises(urllib.error.HTTPError) as caught:
        _urlopen(base + "/orders/7")
    status = nucleo.unwrap(caught.value, component="orders")
    assert type(status) is Http404Exception
    assert (status.service, status.endpoint, status.response_body) == (
        "called by orders",
        "/orders/7",
        "no order.",
    )
