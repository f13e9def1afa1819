"""A bare client error names the service the caller names, over the request's host."""

from __future__ import annotations

import aiohttp
import pytest
import requests

import pytest_nucleo as nucleo
from pytest_nucleo.testing import FakeUpstream

URL = "https://api.library.example/books/1"


def test_unwrap_names_the_service_given_over_the_host() -> None:
    with FakeUpstream() as upstream:
        upstream.get(URL).connect_error()
        with pytest.raises(requests.ConnectionError) as raised:
            requests.get(URL, timeout=5)
    assert nucleo.unwrap(raised.value).service_name == "api.library.example"
    named = nucleo.unwrap(raised.value, service="Library")
    assert isinstance(named, nucleo.ExternalServiceException)
    assert named.service_name == "Library"
    assert named.llm_message.startswith("The external service Library gave no answer to GET ")


def test_llm_errors_names_the_service_of_an_error_that_carries_no_request() -> None:
    # aiohttp's read timeout knows nothing of the request: without a name, the component.
    @nucleo.llm_errors(service="Library")
    async def named() -> bytes:
        async with aiohttp.ClientSession() as session, session.get(URL) as response:
            return await response.read()

    @nucleo.llm_errors
    async def unnamed() -> bytes:
        async with aiohttp.ClientSession() as session, session.get(URL) as response:
            return await response.read()

    with FakeUpstream() as upstream:
        upstream.get(URL).timeout()
        results = [nucleo.run_tool(tool) for tool in (named, unnamed)]
    assert results[0].text.startswith("The external service Library gave no answer: it did")
    assert results[1].text.startswith("The external service called by unnamed gave no answer")


def test_wrap_with_context_names_its_service_over_the_host() -> None:
    with FakeUpstream() as upstream:
        upstream.get(URL).connect_error()
        with pytest.raises(requests.ConnectionError) as raised:
            requests.get(URL, timeout=5)
    wrapped = nucleo.wrap_with_context(raised.value, "Library", "isbn", "1", "book fetch")
    assert wrapped.service_name == "Library"
    assert "api.library.example" not in wrapped.llm_message
    assert "Library gave no answer" in wrapped.llm_message
