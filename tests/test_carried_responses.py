"""SDKs that raise an error of their own for a failing status, keeping the response they got.

The two SDKs here are written as published ones are: a Speakeasy-generated one (mistralai's
shape: ``SDKError(message, raw_response)`` over httpx) and one that keeps ``response`` (over
requests). Neither is a client the runtime knows; the response each error carries is.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import requests
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo

KEY = "sk-chat-canary-0123456789abcdef"
CHAT = "https://api.chat.example/v1/chat/completions"


class SDKError(Exception):
    """Speakeasy's error: the message, and the httpx response as ``raw_response``."""

    def __init__(self, message: str, raw_response: httpx.Response) -> None:
        super().__init__(message)
        self.raw_response = raw_response
        self.status_code = raw_response.status_code


def chat(question: str) -> dict[str, Any]:
    with httpx.Client(headers={"Authorization": f"Bearer {KEY}"}) as client:
        response = client.post(CHAT, json={"messages": [{"role": "user", "content": question}]})
    if response.status_code >= 400:
        raise SDKError(f"API error occurred: Status {response.status_code}", response)
    return dict(response.json())


class ApiError(Exception):
    def __init__(self, response: requests.Response) -> None:
        super().__init__(f"request failed ({response.status_code})")
        self.response = response


def search(query: str) -> list[Any]:
    response = requests.get("https://api.search.example/v1/search", params={"q": query}, timeout=5)
    if not response.ok:
        raise ApiError(response)
    return list(response.json()["results"])


def test_a_speakeasy_error_maps_by_the_response_it_keeps(
    fake_upstream: Any, llm_snapshot: SnapshotAssertion
) -> None:
    fake_upstream.post(CHAT).respond(
        429, json={"message": "Requests rate limit exceeded"}, headers={"Retry-After": "30"}
    )
    result = nucleo.run_tool(chat, {"question": "hello"}, retries=0)
    assert isinstance(result.exception, nucleo.UpstreamThrottleException)
    assert result.exception.retry_after == 30
    assert "The external service api.chat.example is throttling our requests" in result.text
    assert KEY not in result.text
    assert result.text == llm_snapshot


def test_an_error_keeping_response_maps_by_it(fake_upstream: Any) -> None:
    fake_upstream.get("https://api.search.example/v1/search").respond(404, text="no index")
    with pytest.raises(ApiError) as raised:
        search("aspirin")
    mapped = nucleo.unwrap(raised.value, component="search")
    assert type(mapped) is nucleo.Http404Exception
    assert mapped.endpoint == "/v1/search"
    assert "aspirin" not in mapped.explain_to_llm()  # a query value the request carried


def test_only_a_failing_response_of_a_client_counts() -> None:
    request = httpx.Request("GET", "https://api.chat.example/v1/models")

    class RaisingProperty(Exception):
        @property
        def response(self) -> object:
            raise RuntimeError("no response kept")

    class RaisingAttempt(Exception):
        @property
        def last_attempt(self) -> object:
            raise RuntimeError("no attempt kept")

    class KeepingADict(Exception):
        response = {"ResponseMetadata": {"HTTPStatusCode": 500}}  # botocore's shape: no client's

    for error in (
        SDKError("odd", httpx.Response(200, json={}, request=request)),  # not a failure
        RaisingProperty(),
        RaisingAttempt(),
        KeepingADict(),
    ):
        assert type(nucleo.unwrap(error, component="chat")) is nucleo.SystemException


def test_tenacity_giving_up_on_a_result_maps_by_the_response_it_retried_on(
    fake_upstream: Any, llm_snapshot: SnapshotAssertion
) -> None:
    # retry_if_result on a status: when the tries run out, tenacity raises a RetryError whose
    # last attempt holds the response. It read as a bug in the tool.
    tenacity = pytest.importorskip("tenacity", reason="needs tenacity: pip install -e '.[test]'")

    @tenacity.retry(
        retry=tenacity.retry_if_result(lambda response: response.status_code == 503),
        stop=tenacity.stop_after_attempt(2),
        wait=tenacity.wait_none(),
        sleep=lambda _: None,  # tests never sleep
    )
    def fetch_order(number: str) -> requests.Response:
        return requests.get(f"https://api.shop.example/orders/{number}", timeout=5)

    route = fake_upstream.get("https://api.shop.example/orders/42").respond(
        503, text="down for maintenance", headers={"Retry-After": "120"}
    )
    result = nucleo.run_tool(fetch_order, {"number": "42"}, retries=0)
    assert len(route.calls) == 2
    assert type(result.exception) is nucleo.Http503Exception
    assert result.exception.retry_after == 120
    assert result.text == llm_snapshot


def test_tenacity_giving_up_on_a_success_or_an_exception_is_not_read_as_a_response() -> None:
    tenacity = pytest.importorskip("tenacity", reason="needs tenacity: pip install -e '.[test]'")
    ok = httpx.Response(200, json={}, request=httpx.Request("GET", "https://api.example/"))

    @tenacity.retry(
        retry=tenacity.retry_if_result(lambda _: True), stop=tenacity.stop_after_attempt(1)
    )
    def always_retried() -> httpx.Response:
        return ok

    with pytest.raises(tenacity.RetryError) as raised:
        always_retried()
    assert type(nucleo.unwrap(raised.value, component="orders")) is nucleo.SystemException

    @tenacity.retry(stop=tenacity.stop_after_attempt(1))
    def refused() -> None:
        raise httpx.ConnectError("[Errno 111] Connection refused")

    with pytest.raises(tenacity.RetryError) as raised:
        refused()
    # The exception it gave up on is its cause, and maps as that exception does.
    mapped = nucleo.unwrap(raised.value, component="orders")
    assert type(mapped) is nucleo.ExternalServiceException
    assert "Nothing was sent" in mapped.explain_to_llm()
