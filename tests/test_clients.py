"""Every HTTP client's failures and responses, as real clients raise and return them.

Transport failures come from the real clients (httpx2 sync and async, requests, urllib3,
aiohttp) calling the loopback servers of ``_loopback``; responses are the clients' own objects.
"""

from __future__ import annotations

import asyncio
import gc
import io
import json
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import aiohttp
import httpx
import httpx2
import pytest
import requests
import urllib3
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo import (
    ExternalServiceException,
    Http404Exception,
    Http429Exception,
    Http503Exception,
    HttpErrorResponse,
    RateLimiter,
    ServiceClient,
)
from pytest_nucleo.strategies import _TRANSPORT_FAILURES
from tests._loopback import answering, full_queue, large_body, loopback, silent_once

TIMEOUT = 0.2  # seconds a client waits for the silent server to answer
# Connecting to loopback takes no time, but on a loaded machine it took longer than TIMEOUT
# once (an async client resolves the host in a thread): only the read is meant to time out.
CONNECT_TIMEOUT = 10.0
HTTPX2_TIMEOUT = httpx2.Timeout(TIMEOUT, connect=CONNECT_TIMEOUT)
URLLIB3_TIMEOUT = urllib3.Timeout(connect=CONNECT_TIMEOUT, read=TIMEOUT)
SECRET_QUERY = "?api_key=canary-query-5150"


def _httpx2_sync(url: str) -> None:
    with httpx2.Client(timeout=HTTPX2_TIMEOUT) as client:
        client.get(url + "/orders/7" + SECRET_QUERY)


def _httpx2_async(url: str) -> None:
    async def call() -> None:
        async with httpx2.AsyncClient(timeout=HTTPX2_TIMEOUT) as client:
            await client.get(url + "/orders/7" + SECRET_QUERY)

    asyncio.run(call())


def _requests(url: str) -> None:
    timeout = (CONNECT_TIMEOUT, TIMEOUT)  # requests' (connect, read)
    requests.get(url + "/orders/7" + SECRET_QUERY, timeout=timeout).raise_for_status()


def _urllib3(url: str) -> None:
    with urllib3.PoolManager() as pool:
        pool.request(
            "GET", url + "/orders/7" + SECRET_QUERY, retries=False, timeout=URLLIB3_TIMEOUT
        )


def _urllib3_retrying(url: str) -> None:
    # With retries, urllib3 raises a MaxRetryError whose reason is the failure itself.
    with urllib3.PoolManager() as pool:
        pool.request("GET", url + "/orders/7", retries=urllib3.Retry(0), timeout=URLLIB3_TIMEOUT)


def _aiohttp(url: str) -> None:
    async def call() -> None:
        timeout = aiohttp.ClientTimeout(sock_read=TIMEOUT, sock_connect=CONNECT_TIMEOUT)
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.get(url + "/orders/7" + SECRET_QUERY) as response,
        ):
            await response.read()

    asyncio.run(call())


CLIENTS: dict[str, Callable[[str], None]] = {
    "httpx2": _httpx2_sync,
    "httpx2-async": _httpx2_async,
    "requests": _requests,
    "urllib3": _urllib3,
    "urllib3-retrying": _urllib3_retrying,
    "aiohttp": _aiohttp,
}

# Loopback mode -> what the model must read, and whether the request may have been acted on.
WHAT = {
    "refused": ("the connection was refused or could not be made", False),
    "silent": ("it did not answer in time (the read timed out)", True),
    "garbage": ("the connection broke before a complete answer", True),
    "truncated": ("the connection broke before a complete answer", True),
    "plaintext": ("the secure (TLS) connection could not be set up", False),
}
NOTHING_SENT = "Nothing was sent, so the service did not act on the request."
MAYBE_SENT = "The request was sent, so the service may have acted on it."
PART_SENT = "sending the request timed out. Part of the request was sent, so the service"
SENT_BEFORE = "An earlier request of this call reached the service, so it may have acted on it."


# Exceptions that carry neither the request nor the host: a read in progress failed.
KNOWS_NO_CALL = {
    ("aiohttp", "silent"),
    ("aiohttp", "truncated"),
    ("requests", "truncated"),
    ("urllib3", "garbage"),
    ("urllib3", "plaintext"),
    ("urllib3", "truncated"),
}


def raised_by(client: str, mode: str) -> Exception:
    with loopback(mode) as url:
        try:
            CLIENTS[client](url)
        except Exception as exc:
            return exc
    raise AssertionError(f"{client} raised nothing against a {mode} server")


@pytest.mark.parametrize("mode", sorted(WHAT))
@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_every_clients_transport_failure_is_an_external_failure_that_says_what_happened(
    client: str, mode: str
) -> None:
    error = raised_by(client, mode)
    exc = nucleo.unwrap(error, component="orders")
    assert type(exc) is ExternalServiceException
    assert not isinstance(exc, HttpErrorResponse)
    assert exc.__cause__ is error
    what, maybe_sent = WHAT[mode]
    text = exc.explain_to_llm()
    assert f"{what}." in text
    assert (MAYBE_SENT if maybe_sent else NOTHING_SENT) in text
    # The host would name the service, but a loopback address names nothing the model can act
    # on: the text names the component that made the call instead.
    assert exc.service_name == "orders"
    assert "127.0.0.1" not in text
    for shown in (text, str(exc), repr(exc)):
        assert "canary" not in shown


# A body larger than the sockets' buffers, sent to a server that never reads: sending times
# out. requests and urllib3 send within their connect timeout, made
# short here (connecting to loopback takes no time): each of these tests waits SEND_TIMEOUT.
# aiohttp has no timeout for sending but its total (``sock_read`` starts after it).
SEND_TIMEOUT = 1.0


UPLOADS: dict[str, Callable[[str, bytes], object]] = {
    "httpx2": lambda url, body: httpx2.post(url + "/orders", content=body, timeout=HTTPX2_TIMEOUT),
    "requests": lambda url, body: requests.post(
        url + "/orders", data=body, timeout=(SEND_TIMEOUT, TIMEOUT)
    ),
    "urllib3": lambda url, body: urllib3.request(
        "POST",
        url + "/orders",
        body=body,
        timeout=urllib3.Timeout(connect=SEND_TIMEOUT, read=TIMEOUT),
        retries=False,
    ),
}
SEND_FAILURES = (httpx2.WriteTimeout, requests.ConnectionError, urllib3.exceptions.ProtocolError)
RETRY_FAILURES = (urllib3.exceptions.MaxRetryError, requests.ConnectionError)


@pytest.mark.parametrize("client", sorted(UPLOADS))
def test_a_request_whose_sending_timed_out_says_part_of_it_was_sent(client: str) -> None:
    with loopback("silent") as url, pytest.raises(SEND_FAILURES) as caught:
        UPLOADS[client](url, large_body())
    text = nucleo.unwrap(caught.value, component="orders").explain_to_llm()
    assert PART_SENT in text


# Retries of every method and phase, at once: urllib3 retries no POST by default.
RETRY_ALL = urllib3.Retry(total=2, connect=2, read=2, allowed_methods=None, backoff_factor=0)
RETRYING: dict[str, Callable[[str], object]] = {
    "urllib3": lambda url: urllib3.PoolManager(retries=RETRY_ALL).request(
        "POST", url + "/orders", body=b"{}", timeout=URLLIB3_TIMEOUT
    ),
    "requests": lambda url: _retrying_session().post(
        url + "/orders", data=b"{}", timeout=(CONNECT_TIMEOUT, TIMEOUT)
    ),
}


def _retrying_session() -> requests.Session:
    session = requests.Session()
    session.mount("http://", requests.adapters.HTTPAdapter(max_retries=RETRY_ALL))
    return session


@pytest.mark.parametrize("client", sorted(RETRYING))
def test_a_retried_call_refused_at_last_says_an_earlier_try_was_sent(
    client: str, llm_snapshot: SnapshotAssertion
) -> None:
    # The first try timed out reading (the server had the request), the next were refused:
    # the last failure alone says nothing was sent, which would let a write be repeated.
    with silent_once() as url, pytest.raises(RETRY_FAILURES) as raised:
        RETRYING[client](url)
    text = nucleo.unwrap(raised.value, component="orders").explain_to_llm()
    assert f"the connection was refused or could not be made. {SENT_BEFORE}" in text
    assert NOTHING_SENT not in text
    assert text == llm_snapshot
    with loopback("refused") as url, pytest.raises(RETRY_FAILURES) as raised:
        RETRYING[client](url)  # refused every time: nothing was ever sent
    assert NOTHING_SENT in nucleo.unwrap(raised.value, component="orders").explain_to_llm()


def _aiohttp_post(url: str) -> None:
    async def call() -> None:
        async with aiohttp.ClientSession() as session, session.post(url, data=b"{}"):
            pass

    asyncio.run(call())


POSTS_FOLLOWING_REDIRECTS: dict[str, Callable[[str], object]] = {
    "httpx": lambda url: httpx.post(url, content=b"{}", follow_redirects=True),
    "httpx2": lambda url: httpx2.post(url, content=b"{}", follow_redirects=True),
    "requests": lambda url: requests.post(url, data=b"{}", timeout=5),
    "urllib3": lambda url: urllib3.PoolManager().request("POST", url, body=b"{}"),
    "urllib": lambda url: urllib.request.urlopen(urllib.request.Request(url, data=b"{}")),
    "aiohttp": _aiohttp_post,
}


@pytest.mark.parametrize("client", sorted(POSTS_FOLLOWING_REDIRECTS))
def test_a_redirect_to_a_refusing_host_says_the_first_request_reached_the_service(
    client: str,
) -> None:
    # The POST was answered with a redirect, so the service had it; only the redirect's
    # target refused the connection.
    with loopback("refused") as dead:
        redirect = f"HTTP/1.1 303 See Other\r\nLocation: {dead}/orders/7\r\n"
        answer = f"{redirect}Content-Length: 0\r\n\r\n".encode()
        # Each client raises its own class.
        with answering(answer) as url, pytest.raises(Exception) as raised:  # noqa: PT011
            POSTS_FOLLOWING_REDIRECTS[client](url + "/orders")
    text = nucleo.unwrap(raised.value, component="orders").explain_to_llm()
    assert f"the connection was refused or could not be made. {SENT_BEFORE}" in text


@pytest.mark.parametrize("client", ["httpx2", "requests"])  # the fake answers no bare urllib3
def test_a_faked_write_timeout_reads_as_the_real_one(client: str, fake_upstream: Any) -> None:
    (write_timeout,) = (o for o in _TRANSPORT_FAILURES if o.description == "write timeout")
    fake_upstream.post("https://shop.example/orders").always(write_timeout)
    with pytest.raises(SEND_FAILURES) as caught:
        UPLOADS[client]("https://shop.example", b"a small body")
    text = nucleo.unwrap(caught.value, component="orders").explain_to_llm()
    assert PART_SENT in text


# aiohttp's total timeout (on by default, 5 minutes) raises a bare TimeoutError in whichever
# phase the call is: connecting, sending, awaiting the answer or reading its body.
AIOHTTP_TOTAL = aiohttp.ClientTimeout(total=TIMEOUT)
TIME_LIMIT = (
    "the call's time limit ran out before a complete answer. The request, or part of it, was "
    "sent, so the service may have acted on it."
)


def _aiohttp_total(url: str, *, upload: bool = False) -> None:
    async def call() -> None:
        async with (
            aiohttp.ClientSession(timeout=AIOHTTP_TOTAL) as session,
            session.request(
                "POST" if upload else "GET",
                url + "/orders/7" + SECRET_QUERY,
                # A file-like body: aiohttp warns that a large bytes one blocks the loop.
                data=io.BytesIO(large_body()) if upload else None,
            ) as response,
        ):
            await response.read()

    asyncio.run(call())


# The upload's connection still holds unsent bytes when the loop closes, and asyncio warns
# that its transport was never closed (a peer that never reads keeps it closing): the test
# collects it at once, so the warning is this test's, and ignores it.
_UNSENT_LEFT = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@pytest.mark.parametrize(
    ("mode", "upload"),
    [
        pytest.param("silent", False, id="awaiting-the-answer"),
        pytest.param("silent", True, id="sending", marks=_UNSENT_LEFT),
        pytest.param("stalled", False, id="reading-the-body"),
    ],
)
def test_aiohttps_total_timeout_says_the_time_limit_ran_out_and_the_request_may_have_acted(
    mode: str, upload: bool, llm_snapshot: SnapshotAssertion
) -> None:
    with loopback(mode) as url, pytest.raises(TimeoutError) as caught:
        _aiohttp_total(url, upload=upload)
    if upload:
        gc.collect()
    assert type(caught.value) is TimeoutError  # bare: no class of aiohttp's names the client
    exc = nucleo.unwrap(caught.value, component="orders")
    assert type(exc) is ExternalServiceException
    assert exc.__cause__ is caught.value
    text = exc.explain_to_llm()
    assert f"{'POST' if upload else 'GET'} /orders/7: {TIME_LIMIT}" in text
    for shown in (text, str(exc), repr(exc)):
        assert "canary" not in shown
    assert text == llm_snapshot


@pytest.mark.skipif(sys.platform != "linux", reason="a full queue drops connections on Linux")
def test_aiohttps_total_timeout_while_connecting_says_nothing_was_sent() -> None:
    with full_queue() as url, pytest.raises(TimeoutError) as caught:
        _aiohttp_total(url)
    text = nucleo.unwrap(caught.value, component="orders").explain_to_llm()
    assert f"GET /orders/7: the connection attempt timed out. {NOTHING_SENT}" in text


def test_a_timeout_the_tool_sets_around_aiohttp_stays_the_tools_own() -> None:
    # Only a TimeoutError aiohttp raised is the service's: one from the tool's own
    # asyncio.timeout is the tool's, as any exception the tool raises itself.
    async def call(url: str) -> None:
        async with aiohttp.ClientSession() as session, asyncio.timeout(TIMEOUT):
            await session.get(url + "/orders/7")

    with loopback("silent") as url, pytest.raises(TimeoutError) as caught:
        asyncio.run(call(url))
    assert not isinstance(nucleo.unwrap(caught.value), ExternalServiceException)


@pytest.mark.parametrize("package", ["httpx", "httpx2", "requests", "urllib3", "aiohttp"])
@pytest.mark.parametrize("error_class", [ValueError, ConnectionResetError, TimeoutError])
def test_a_builtin_exception_a_clients_code_raised_is_the_services_only_when_the_client_says_so(
    package: str, error_class: type[Exception]
) -> None:
    # A builtin exception is asked of the client whose code raised it, by its frames: only
    # aiohttp's bare TimeoutError, raised by its timer (aiohttp.helpers: the total timeout),
    # means the service did not answer.
    scope: dict[str, Any] = {"__name__": f"{package}.helpers", "error_class": error_class}
    exec("def raising():\n    raise error_class()\n", scope)  # a function of the client's
    with pytest.raises(error_class) as caught:
        scope["raising"]()
    mapped = nucleo.unwrap(caught.value, component="orders")
    means_the_service = package == "aiohttp" and error_class is TimeoutError
    assert isinstance(mapped, ExternalServiceException) is means_the_service


@pytest.mark.parametrize("mode", ["refused", "silent", "garbage", "plaintext"])
def test_transport_texts_snapshot(mode: str, llm_snapshot: SnapshotAssertion) -> None:
    texts = {client: nucleo.unwrap(raised_by(client, mode)).explain_to_llm() for client in CLIENTS}
    # The port is random: keep the texts comparable.
    assert "\n---\n".join(f"{name}: {text}" for name, text in sorted(texts.items())) == llm_snapshot


def test_an_exception_without_the_call_names_the_component() -> None:
    exc = nucleo.unwrap(httpx2.ReadTimeout("timed out"), component="search_orders")
    assert type(exc) is ExternalServiceException
    assert exc.service_name == "search_orders"
    assert exc.llm_message.startswith(
        "The external service called by search_orders gave no answer: it did not answer in time"
    )


def test_the_host_carries_no_userinfo_port_or_query() -> None:
    request = httpx2.Request("GET", "https://bob:canary-pw@api.shop.example:8443/v1/x?key=canary")
    exc = nucleo.unwrap(httpx2.ConnectError("refused", request=request))
    assert exc.service_name == "api.shop.example"
    assert "GET /v1/x" in exc.llm_message
    assert "canary" not in f"{exc} {exc!r} {exc.explain_to_llm()}"


def test_wrap_with_context_and_service_call_readdress_a_bare_client_failure() -> None:
    error = raised_by("requests", "refused")
    wrapped = nucleo.wrap_with_context(error, "Shop API", "order_id", 7, "order fetch")
    assert type(wrapped) is ExternalServiceException
    assert wrapped.service_name == "Shop API"
    assert "order fetch" in wrapped.llm_message
    assert "the connection was refused or could not be made" in wrapped.llm_message
    with (
        pytest.raises(ExternalServiceException) as caught,
        nucleo.service_call("Shop API", "order_id", 7, "order fetch"),
    ):
        raise error
    assert "the connection was refused" in caught.value.llm_message


def test_llm_errors_turns_a_bare_client_failure_into_its_external_failure() -> None:
    error = raised_by("aiohttp", "truncated")

    @nucleo.llm_errors
    def fetch() -> None:
        raise error

    with pytest.raises(ExternalServiceException) as caught:
        fetch()
    assert "the connection broke before a complete answer" in caught.value.llm_message


def test_the_runner_reports_a_client_failure_and_tells_the_limiter() -> None:
    error = raised_by("urllib3", "refused")
    limiter = RateLimiter("shop", max_requests=10, window_seconds=1.0, clock=nucleo.FakeClock())

    @nucleo.tool(limiters=[limiter])
    def fetch() -> None:
        raise error

    result = nucleo.run_tool(fetch)
    assert result.is_error
    assert type(result.exception) is ExternalServiceException
    assert "the connection was refused or could not be made" in result.text
    assert limiter.stats().failures == 1


def test_arun_tool_reports_a_client_failure() -> None:
    error = raised_by("httpx2-async", "silent")

    async def fetch() -> None:
        raise error

    result = asyncio.run(nucleo.arun_tool(fetch))
    assert type(result.exception) is ExternalServiceException
    assert "the read timed out" in result.text


def test_a_status_error_raised_by_a_client_maps_by_its_response() -> None:
    # requests' raise_for_status() and httpx2's both carry the received response.
    with answering(b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nno order.") as url:
        with pytest.raises(requests.HTTPError) as plain:
            requests.get(url + "/orders/7", timeout=5).raise_for_status()
        with httpx2.Client() as client, pytest.raises(httpx2.HTTPStatusError) as forked:
            client.get(url + "/orders/7").raise_for_status()
    for error in (plain.value, forked.value):
        exc = nucleo.unwrap(error)
        assert type(exc) is Http404Exception
        assert exc.service == "called by the tool"  # a loopback host names nothing
        assert exc.endpoint == "/orders/7"
        assert exc.response_body == "no order."


def _stream_and_raise(lib: Any, url: str) -> None:
    with lib.Client() as client, client.stream("GET", url + "/files/7" + SECRET_QUERY) as response:
        response.raise_for_status()


def _astream_and_raise(lib: Any, url: str) -> None:
    async def call() -> None:
        async with (
            lib.AsyncClient() as client,
            client.stream("GET", url + "/files/7" + SECRET_QUERY) as response,
        ):
            response.raise_for_status()

    asyncio.run(call())


def _requests_stream_and_raise(url: str) -> None:
    with requests.get(url + "/files/7" + SECRET_QUERY, stream=True, timeout=5) as response:
        response.raise_for_status()


STREAMED: dict[str, Callable[[str], None]] = {
    "httpx": lambda url: _stream_and_raise(httpx, url),
    "httpx-async": lambda url: _astream_and_raise(httpx, url),
    "httpx2": lambda url: _stream_and_raise(httpx2, url),
    "httpx2-async": lambda url: _astream_and_raise(httpx2, url),
    "requests": _requests_stream_and_raise,
}
STATUS_ERRORS = (httpx.HTTPStatusError, httpx2.HTTPStatusError, requests.HTTPError)
UNAVAILABLE = (
    b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 30\r\nContent-Length: 23\r\n\r\n"
    b"down for maintenance..."
)


def test_a_streamed_answer_whose_body_breaks_off_while_mapped_still_maps_by_its_status() -> None:
    # Not closed, the stream is read by the mapping; its body stalls, and the read timeout
    # the tool set ends the reading. That error must not escape the mapping.
    with answering(UNAVAILABLE[:-5], hold=True) as url:  # 5 bytes short of its length
        response = requests.get(url + "/files/7", stream=True, timeout=(5, TIMEOUT))
        with pytest.raises(requests.HTTPError) as raised:
            response.raise_for_status()
        exc = nucleo.unwrap(raised.value, component="downloads")
    assert type(exc) is Http503Exception
    assert "no body" not in exc.explain_to_llm()


def test_a_streamed_answer_the_client_raised_for_maps_by_its_status_and_says_nothing_of_its_body(
    llm_snapshot: SnapshotAssertion,
) -> None:
    # Streamed, the body is not read when raise_for_status() raises, and the stream is closed
    # by the time the error is mapped: the status and headers say enough, and the text must
    # not claim the answer had no body.
    texts = {}
    for client, call in STREAMED.items():
        with answering(UNAVAILABLE) as url, pytest.raises(STATUS_ERRORS) as caught:
            call(url)
        exc = nucleo.unwrap(caught.value, component="downloads")
        assert type(exc) is Http503Exception, client
        assert (exc.endpoint, exc.retry_after) == ("/files/7", 30), client
        texts[client] = exc.explain_to_llm()
        assert "no body" not in texts[client], client
    assert len(set(texts.values())) == 1, texts
    assert texts["httpx"] == llm_snapshot


def _aiohttp_json(url: str, **options: Any) -> object:
    async def call() -> object:
        async with aiohttp.ClientSession() as session, session.get(url) as response:
            return await response.json(**options)

    return asyncio.run(call())


JSON_OF_EVERY_CLIENT: dict[str, Callable[[str], object]] = {
    "httpx": lambda url: httpx.get(url).json(),
    "httpx2": lambda url: httpx2.get(url).json(),
    "requests": lambda url: requests.get(url, timeout=5).json(),
    "aiohttp": _aiohttp_json,
    "aiohttp-any-type": lambda url: _aiohttp_json(url, content_type=None),
}
if hasattr(urllib3.HTTPResponse, "json"):  # urllib3 2's, which requests does not need
    JSON_OF_EVERY_CLIENT["urllib3"] = lambda url: urllib3.request("GET", url).json()


# What each client's .json() raises: json's own error (requests' subclasses it), or aiohttp's
# for a Content-Type that is not JSON's.
NOT_JSON = (json.JSONDecodeError, aiohttp.ContentTypeError)


def _answer(status: str, content_type: str, body: bytes) -> bytes:
    head = f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}"
    return head.encode() + b"\r\n\r\n" + body


@pytest.mark.parametrize(
    ("answer", "expected", "said"),
    [
        (_answer("502 Bad Gateway", "text/html", b"<html><body>Bad gateway</body></html>"),
         nucleo.Http502Exception, '(HTTP 502 Bad Gateway): the gateway got no valid answer'),
        (_answer("200 OK", "text/html", b"<html><body>Please sign in</body></html>"),
         ExternalServiceException, "with HTTP 200, but its answer (text/html) was not the JSON"),
        (_answer("200 OK", "application/json", b'{"orders": [1, 2'),
         ExternalServiceException, "but its answer (application/json) was not the JSON expected."),
    ],
    ids=["502-page", "200-page", "200-cut-json"],
)  # fmt: skip
def test_json_of_an_answer_that_is_not_json_maps_by_its_status_for_every_client(
    answer: bytes, expected: type[Exception], said: str
) -> None:
    # Without raise_for_status(), .json() is what fails: a 5xx maps by its status, a 2xx is
    # an answer of something else (httpx lets json's own error through, which read as a bug).
    texts = {}
    for client, call in JSON_OF_EVERY_CLIENT.items():
        with answering(answer) as url, pytest.raises(NOT_JSON) as raised:
            call(url + "/orders")
        mapped = nucleo.unwrap(raised.value, component="orders")
        assert type(mapped) is expected, client
        texts[client] = mapped.explain_to_llm()
        assert said in texts[client], client
    assert len(set(texts.values())) == 1, texts


def test_json_of_an_answer_with_no_content_by_design_is_the_tools_bug() -> None:
    # A 204 or 205 says there is no body: reading one as JSON is the tool's mistake, not an
    # answer of something else, and "come back later" would send the model away for nothing.
    for status in ("204 No Content", "205 Reset Content"):
        for client, call in JSON_OF_EVERY_CLIENT.items():
            if client == "aiohttp-any-type":
                continue  # aiohttp gives None for an empty body when any type is accepted
            answer = _answer(status, "text/plain", b"")
            with answering(answer) as url, pytest.raises(NOT_JSON) as raised:
                call(url + "/orders")
            mapped = nucleo.unwrap(raised.value, component="orders")
            assert type(mapped) is nucleo.SystemException, (status, client)


def test_aiohttps_json_of_bytes_that_are_not_its_charset_is_not_the_json_expected() -> None:
    bad_bytes = _answer("200 OK", "application/json; charset=utf-8", b'{"name": "\xff"}')
    with answering(bad_bytes) as url, pytest.raises(UnicodeDecodeError) as raised:
        _aiohttp_json(url + "/orders")
    text = nucleo.unwrap(raised.value, component="orders").explain_to_llm()
    assert "with HTTP 200, but its answer (application/json; charset=utf-8) was not the" in text


def test_a_request_the_client_could_not_build_is_the_tools_bug_not_a_sent_request() -> None:
    # A header value with a newline, a body json cannot encode: nothing reached the service,
    # so the text must not say the request was sent (it said the connection failed).
    with answering(UNAVAILABLE) as url:
        calls = [
            lambda: requests.get(url, headers={"Authorization": "Bearer k\n"}, timeout=5),
            lambda: requests.post(url, json={"amount": float("nan")}, timeout=5),
            lambda: httpx.get(url, headers={"Authorization": "Bearer k\n"}),
            lambda: httpx2.get(url, headers={"Authorization": "Bearer k\n"}),
        ]
        for call in calls:
            with pytest.raises(Exception) as raised:  # noqa: PT011 - each client's own class
                call()
            mapped = nucleo.unwrap(raised.value, component="orders")
            assert type(mapped) is nucleo.SystemException, raised.value
            assert "sent" not in mapped.explain_to_llm()


# --- responses --------------------------------------------------------------------------------

THROTTLED_BODY = b'{"error": "slow down", "echo": "canary-token-7 canary-q-8"}'
THROTTLED = (
    b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 30\r\nContent-Type: application/json\r\n"
    b"Content-Length: %d\r\n\r\n%s" % (len(THROTTLED_BODY), THROTTLED_BODY)
)
AUTH = {"Authorization": "Bearer canary-token-7"}
QUERY = "?api_key=canary-q-8"


def _responses_of_every_client(url: str) -> Iterator[tuple[str, object]]:
    with httpx.Client() as plain:
        yield "httpx", plain.get(url + "/v1/items" + QUERY, headers=AUTH)
    with httpx2.Client() as forked:
        yield "httpx2", forked.get(url + "/v1/items" + QUERY, headers=AUTH)
    yield "requests", requests.get(url + "/v1/items" + QUERY, headers=AUTH, timeout=5)

    async def aiohttp_response() -> aiohttp.ClientResponse:
        async with (
            aiohttp.ClientSession() as session,
            session.get(url + "/v1/items" + QUERY, headers=AUTH) as response,
        ):
            await response.read()
            return response

    yield "aiohttp", asyncio.run(aiohttp_response())


def test_raise_for_response_maps_every_clients_response_the_same_way(
    llm_snapshot: SnapshotAssertion,
) -> None:
    with answering(THROTTLED) as url:
        responses = dict(_responses_of_every_client(url))
    texts = set()
    for name, response in responses.items():
        with pytest.raises(Http429Exception) as caught:
            nucleo.raise_for_response("Shop API", response)
        exc = caught.value
        assert exc.retry_after == 30.0, name
        assert exc.endpoint == "/v1/items", name
        shown = f"{exc} {exc!r} {exc.explain_to_llm()}"
        assert "canary" not in shown, name  # the echoed credential and query value are masked
        texts.add(exc.explain_to_llm())
        again = nucleo.exception_for_response("Shop API", response)
        assert type(again) is Http429Exception
        assert again.explain_to_llm() == exc.explain_to_llm()
    assert len(texts) == 1  # one mapping, whatever the client
    assert texts.pop() == llm_snapshot


def test_a_success_is_no_failure_for_every_client() -> None:
    with answering(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}") as url:
        responses = dict(_responses_of_every_client(url))
    for response in responses.values():
        assert nucleo.exception_for_response("Shop API", response) is None
        assert nucleo.raise_for_response("Shop API", response) is None


def test_a_urllib3_response_maps_too() -> None:
    response = urllib3.HTTPResponse(
        body=b"down for maintenance", status=503, headers={"Retry-After": "120"},
        request_url="http://shop.example/v1/items",
    )  # fmt: skip
    exc = nucleo.exception_for_response("Shop API", response)
    assert type(exc) is Http503Exception
    assert exc.retry_after == 120.0
    assert exc.endpoint == "/v1/items"


def test_an_unread_aiohttp_response_asks_to_read_it_first() -> None:
    async def unread() -> None:
        with answering(b"HTTP/1.1 500 Oops\r\nContent-Length: 4\r\n\r\noops") as url:
            async with aiohttp.ClientSession() as session, session.get(url) as response:
                nucleo.raise_for_response("Shop API", response)

    with pytest.raises(ValueError, match=r"await response\.read\(\)"):
        asyncio.run(unread())


@pytest.mark.parametrize("bad", [object(), b"HTTP/1.1 404", {"status": 404}])
def test_something_that_is_no_response_is_a_clear_type_error(bad: object) -> None:
    with pytest.raises(
        TypeError,
        match=r"raise_for_response\(\) takes a response of one of the clients httpx, httpx2, "
        r"requests, urllib3, aiohttp, httplib2, urllib .*got a value of type",
    ):
        nucleo.raise_for_response("Shop API", bad)


def test_the_service_name_must_be_given() -> None:
    response = httpx2.Response(404)
    with pytest.raises(TypeError, match="needs the service's name"):
        nucleo.exception_for_response(response, "Shop API")  # type: ignore[arg-type]


# --- ServiceClient on httpx2 ------------------------------------------------------------------


class Shop(ServiceClient):
    service_name = "Shop API"
    base_url = "https://shop.example/api/v2"


def _answers(status: int, body: bytes, headers: dict[str, str] | None = None) -> httpx2.Client:
    def handle(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(status, content=body, headers=headers)

    return httpx2.Client(transport=httpx2.MockTransport(handle))


@pytest.mark.parametrize(("status", "kind"), sorted(nucleo.HTTP_STATUS_TABLE.items()))
def test_service_client_on_httpx2_maps_every_status_row(status: int, kind: type[Any]) -> None:
    with pytest.raises(kind) as caught:
        Shop(_answers(status, b"nope")).get_json("/orders/7")
    assert caught.value.endpoint == "/api/v2/orders/7"


def test_service_client_on_httpx2_decodes_json_and_says_when_it_is_not() -> None:
    assert Shop(_answers(200, b'{"id": 7}')).get_json("/orders/7") == {"id": 7}
    with pytest.raises(ExternalServiceException) as caught:
        Shop(_answers(200, b"<html>hi</html>")).get_json("/orders/7")
    assert "not the JSON expected" in caught.value.llm_message


def test_service_client_on_httpx2_reports_a_transport_failure_like_httpx() -> None:
    class Local(ServiceClient):
        service_name = "Shop API"
        base_url = "http://127.0.0.1"

    with loopback("refused") as url, pytest.raises(ExternalServiceException) as caught:
        Local(httpx2.Client(timeout=TIMEOUT)).get_json(url + "/orders/7")
    assert isinstance(caught.value.__cause__, httpx2.ConnectError)
    assert caught.value.llm_message.startswith(
        "The external service Shop API gave no answer to GET /orders/7: the connection was refused"
    )


def test_async_service_client_on_httpx2() -> None:
    class AsyncShop(nucleo.AsyncServiceClient):
        service_name = "Shop API"
        base_url = "https://shop.example"

    def handle(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(404, content=b"no such order")

    async def call() -> None:
        async with httpx2.AsyncClient(transport=httpx2.MockTransport(handle)) as client:
            await AsyncShop(client).get_json("/orders/7")

    with pytest.raises(Http404Exception):
        asyncio.run(call())


@pytest.mark.parametrize(
    "make", [requests.Session, httpx2.AsyncClient, httpx.AsyncClient, lambda: "https://x"]
)
def test_service_client_refuses_a_client_it_cannot_drive(make: Callable[[], Any]) -> None:
    client = make()
    with pytest.raises(TypeError, match=r"ServiceClient\(client=...\) takes an httpx.Client"):
        Shop(client)
    if hasattr(client, "close") and not isinstance(client, httpx.AsyncClient | httpx2.AsyncClient):
        client.close()


class AsyncShopHere(nucleo.AsyncServiceClient):
    service_name = "Shop API"
    base_url = "https://shop.example"


def test_async_service_client_refuses_a_sync_client() -> None:
    expected = r"AsyncServiceClient\(client=...\) takes an httpx.AsyncClient or an httpx2"
    with httpx2.Client() as client, pytest.raises(TypeError, match=expected):
        AsyncShopHere(client)  # type: ignore[arg-type]


# --- what the core imports --------------------------------------------------------------------


def test_unwrap_on_a_plain_exception_imports_no_client_or_sdk() -> None:
    code = (
        "import sys, pytest_nucleo as n\n"
        "n.unwrap(ValueError('x'))\n"
        "n.wrap_with_context(KeyError('k'), 'svc', 'p', 1, 'step')\n"
        "n.run_tool(lambda: 1)\n"
        "heavy = {'httpx', 'httpx2', 'requests', 'urllib3', 'aiohttp', 'openai', 'anthropic'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_header_sent_twice_counts_by_its_first_value_for_httpx2_too() -> None:
    response = httpx2.Response(
        429,
        headers=[("Retry-After", "5"), ("Retry-After", "60")],
        request=httpx2.Request("GET", "https://x.example/a"),
    )
    exc = nucleo.exception_for_response("Shop API", response)
    assert isinstance(exc, Http429Exception)
    assert exc.retry_after == 5.0
