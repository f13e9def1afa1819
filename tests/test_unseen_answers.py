"""What the mapping cannot see of an answer, it does not describe.

A status a client's own retries gave up on (urllib3's ``Retry(status_forcelist=...)``, alone or
under a requests adapter) is read as that status: the service answered every try with it.
urllib3 keeps only the number, so the text says nothing of the body or of a wait it cannot
know, rather than that there was none. Likewise for a body the mapping cannot see: aiohttp
raises for a status before reading the body, and a streamed requests body the tool read is
gone. A body that is still there, a seekable one the tool read, is quoted whole. Behind a
proxy, the service named is the one the URL calls, not the proxy."""

from __future__ import annotations

import asyncio
import http.client
import io
import urllib.error

import aiohttp
import pytest
import requests
import urllib3
from requests.adapters import HTTPAdapter
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo import (
    ExternalServiceException,
    Http404Exception,
    Http429Exception,
    Http503Exception,
)
from pytest_nucleo.testing import FakeUpstream, text_problems
from tests._loopback import answering

URL = "https://api.shop.example/v1/orders/7"
QUERY_KEY = "canary-query-7781"
TOKEN = "canary-token-7782"


def _retrying_session(status: int) -> requests.Session:
    # No backoff: urllib3 then retries at once (these tests never sleep).
    retry = urllib3.Retry(total=2, status_forcelist=[status], backoff_factor=0)
    session = requests.Session()
    session.mount("https://", HTTPAdapter(max_retries=retry))
    return session


def _given_up_under_requests(status: int) -> BaseException:
    with FakeUpstream() as upstream:
        route = upstream.get(URL).respond(status, json={"error": "try later"})
        with pytest.raises(requests.exceptions.RetryError) as caught:
            _retrying_session(status).get(
                URL, params={"api_key": QUERY_KEY}, headers={"Authorization": f"Bearer {TOKEN}"}
            )
        assert len(route.calls) == 3  # the first try and two retries
    return caught.value


def _mapped(error: BaseException) -> nucleo.LLMReadableException:
    try:
        failure = nucleo.unwrap(error, component="orders")
    except nucleo.LLMReadableException as raised:  # a checked failure is raised, not returned
        failure = raised
    assert isinstance(failure, nucleo.LLMReadableException)
    return failure


@pytest.mark.parametrize(
    ("status", "expected"), [(503, Http503Exception), (429, Http429Exception)], ids=["503", "429"]
)
def test_under_requests_the_status_given_up_on_is_read_as_that_status(
    status: int, expected: type[Exception], llm_snapshot: SnapshotAssertion
) -> None:
    failure = _mapped(_given_up_under_requests(status))
    assert type(failure) is expected
    text = failure.explain_to_llm()
    assert "/v1/orders/7" in text
    assert "connection" not in text  # it answered: no connection failed
    assert "had no body" not in text  # it had one, which urllib3 did not keep
    assert QUERY_KEY not in f"{text}{failure}{failure!r}"
    assert str(failure).endswith("(body not seen)")
    assert text_problems(text, retry_after=None) == []
    assert text == llm_snapshot


def test_a_throttle_given_up_on_says_no_wait_is_known() -> None:
    failure = _mapped(_given_up_under_requests(429))
    assert isinstance(failure, Http429Exception)
    assert failure.retry_after is None
    assert "No wait is known" in failure.llm_message
    assert "No wait was given" not in failure.llm_message  # its Retry-After may have been lost


def test_urllib3_alone_reads_the_status_it_gave_up_on(llm_snapshot: SnapshotAssertion) -> None:
    # The server closes each connection after its answer: say so, or urllib3 would reuse it.
    answer = (
        b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 9\r\n\r\n"
        b"try later"
    )
    with answering(answer) as base, urllib3.PoolManager() as pool:
        retry = urllib3.Retry(total=1, status_forcelist=[503], backoff_factor=0)
        with pytest.raises(urllib3.exceptions.MaxRetryError) as caught:
            pool.request("GET", f"{base}/v1/orders/7?api_key={QUERY_KEY}", retries=retry)
    failure = _mapped(caught.value)
    assert type(failure) is Http503Exception
    assert failure.status_code == 503
    assert failure.endpoint == "/v1/orders/7"
    assert "had no body" not in failure.llm_message
    assert QUERY_KEY not in f"{failure.explain_to_llm()}{failure}{failure!r}"
    assert failure.explain_to_llm() == llm_snapshot  # a loopback server: the component named


def test_urllib3_giving_up_on_redirects_still_reads_as_too_many_redirects() -> None:
    answer = b"HTTP/1.1 302 Found\r\nLocation: /v1/orders/7\r\nConnection: close\r\n\r\n"
    with (
        answering(answer) as base,
        urllib3.PoolManager() as pool,
        pytest.raises(urllib3.exceptions.MaxRetryError) as caught,
    ):
        pool.request("GET", f"{base}/v1/orders/7", retries=urllib3.Retry(total=3))
    assert str(caught.value.reason) == "too many redirects"
    failure = _mapped(caught.value)
    assert type(failure) is ExternalServiceException
    assert "it redirected the request too many times" in failure.llm_message


# --- the service a whole URL names ------------------------------------------------------------


def test_behind_an_http_proxy_the_service_given_up_on_is_the_one_called() -> None:
    # For an http:// URL, urllib3's ProxyManager sends the whole URL to the proxy's pool: the
    # pool's host is the proxy's (here a loopback server answering for the service), the
    # service is the URL's.
    answer = b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
    with answering(answer) as proxy, urllib3.ProxyManager(proxy) as pool:
        retry = urllib3.Retry(total=1, status_forcelist=[503], backoff_factor=0)
        with pytest.raises(urllib3.exceptions.MaxRetryError) as caught:
            pool.request("GET", "http://api.shop.example/v1/orders/7", retries=retry)
    failure = _mapped(caught.value)
    assert type(failure) is Http503Exception
    assert failure.endpoint == "/v1/orders/7"
    assert "api.shop.example" in failure.llm_message
    assert "127.0.0.1" not in f"{failure.explain_to_llm()}{failure}"


def test_behind_an_http_proxy_a_call_the_proxy_failed_names_the_service_called() -> None:
    # The proxy closes the connection, answering nothing.
    with (
        answering(b"") as proxy,
        urllib3.ProxyManager(proxy) as pool,
        pytest.raises(urllib3.exceptions.MaxRetryError) as caught,
    ):
        pool.request("GET", "http://api.shop.example/v1/orders/7", retries=0)
    failure = _mapped(caught.value)
    assert isinstance(failure, ExternalServiceException)
    assert "the proxy refused the request" in failure.llm_message
    assert "api.shop.example" in failure.llm_message
    assert "127.0.0.1" not in f"{failure.explain_to_llm()}{failure}"


def test_a_path_whose_query_holds_a_url_keeps_the_host_of_its_pool() -> None:
    # Only a whole URL (a scheme first) names its own service; "://" in a query does not.
    pool = urllib3.HTTPConnectionPool("api.shop.example", 80)
    path = "/v1/orders/7?next=http://elsewhere.example/"
    error = urllib3.exceptions.MaxRetryError(
        pool, path, urllib3.exceptions.ReadTimeoutError(pool, path, "Read timed out.")
    )
    failure = _mapped(error)
    assert "api.shop.example" in failure.llm_message
    assert "elsewhere.example" not in failure.llm_message


def test_a_redirect_to_another_host_names_the_host_called() -> None:
    # A pool (not behind a proxy) refuses to follow a redirect to another host: the whole URL
    # it was sent to was never called.
    pool = urllib3.HTTPConnectionPool("api.shop.example", 80)
    error = urllib3.exceptions.HostChangedError(pool, "http://elsewhere.example/login")
    failure = _mapped(error)
    assert "api.shop.example" in failure.llm_message
    assert "elsewhere.example" not in failure.llm_message


# --- bodies the mapping cannot see ------------------------------------------------------------


def test_aiohttp_raising_for_a_status_says_nothing_of_the_body(
    llm_snapshot: SnapshotAssertion,
) -> None:
    async def call() -> None:
        async with aiohttp.ClientSession() as session, session.get(URL) as response:
            response.raise_for_status()

    with FakeUpstream() as upstream:
        upstream.get(URL).respond(404, json={"error": "no order 7"})
        with pytest.raises(aiohttp.ClientResponseError) as caught:
            asyncio.run(call())
    failure = _mapped(caught.value)
    assert type(failure) is Http404Exception
    text = failure.explain_to_llm()
    assert "had no body" not in text  # it had one, which aiohttp had not read
    assert str(failure).endswith("(body not seen)")
    assert text == llm_snapshot


def test_a_streamed_requests_body_the_tool_read_is_not_said_to_be_empty() -> None:
    with FakeUpstream() as upstream:
        upstream.get(URL).respond(503, text="down for maintenance")
        response = requests.get(URL, stream=True, timeout=5)
        assert b"".join(response.iter_content(8)) == b"down for maintenance"
        with pytest.raises(requests.HTTPError) as caught:
            response.raise_for_status()
    failure = _mapped(caught.value)  # raised "content already consumed" before
    assert type(failure) is Http503Exception
    assert "had no body" not in failure.llm_message
    assert str(failure).endswith("(body not seen)")


def test_a_seekable_urllib_body_the_tool_read_is_quoted_whole() -> None:
    body = io.BytesIO(b'{"error": "no order 7"}')
    error = urllib.error.HTTPError(URL, 404, "Not Found", http.client.HTTPMessage(), body)
    assert error.read() == b'{"error": "no order 7"}'  # what an SDK reads for its message
    failure = _mapped(error)
    assert type(failure) is Http404Exception
    assert '"no order 7"' in failure.llm_message
    assert error.read() == b""  # where the tool had left it
