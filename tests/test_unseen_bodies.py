"""An answer whose body the mapping cannot see says nothing of its body, not that it had none:
aiohttp raises for a status before reading the body, and a streamed requests body the tool
read is gone. A body that is still there, a seekable one the tool read, is quoted whole."""

from __future__ import annotations

import asyncio
import http.client
import io
import urllib.error

import aiohttp
import pytest
import requests
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo import Http404Exception, Http503Exception
from pytest_nucleo.testing import FakeUpstream

URL = "https://api.shop.example/v1/orders/7"


def _mapped(error: BaseException) -> nucleo.LLMReadableException:
    try:
        failure = nucleo.unwrap(error, component="orders")
    except nucleo.LLMReadableException as raised:  # a checked failure is raised, not returned
        failure = raised
    assert isinstance(failure, nucleo.LLMReadableException)
    return failure


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
