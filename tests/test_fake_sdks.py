"""fake_upstream fakes the HTTP of the provider SDKs (openai and anthropic ride on httpx2): each
SDK raises its own error for a throttle, a server error and a read timeout, as in production."""

from __future__ import annotations

from tests._frameworks import needs_frameworks

needs_frameworks("anthropic", "openai")

import asyncio
from collections.abc import Callable
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from pytest_nucleo.testing import FakeUpstream

OPENAI = "https://api.openai.com/v1/chat/completions"
ANTHROPIC = "https://api.anthropic.com/v1/messages"
MESSAGES = [{"role": "user", "content": "What is the capital of Peru?"}]


def _openai(asynchronous: bool) -> Callable[[], Any]:
    if asynchronous:
        client = openai.AsyncOpenAI(api_key="sk-test", max_retries=0)
        return lambda: asyncio.run(client.chat.completions.create(model="gpt-x", messages=MESSAGES))
    sync = openai.OpenAI(api_key="sk-test", max_retries=0)
    return lambda: sync.chat.completions.create(model="gpt-x", messages=MESSAGES)


def _anthropic(asynchronous: bool) -> Callable[[], Any]:
    def ask(client: Any) -> Any:
        return client.messages.create(model="claude-x", max_tokens=64, messages=MESSAGES)

    if asynchronous:
        aclient = anthropic.AsyncAnthropic(api_key="test-key", max_retries=0)
        return lambda: asyncio.run(ask(aclient))
    return lambda: ask(anthropic.Anthropic(api_key="test-key", max_retries=0))


SDKS = {
    "openai": (OPENAI, _openai, openai),
    "anthropic": (ANTHROPIC, _anthropic, anthropic),
}

sdks = pytest.mark.parametrize(
    ("sdk", "asynchronous"),
    [(name, mode) for name in SDKS for mode in (False, True)],
    ids=lambda v: v if isinstance(v, str) else ("async" if v else "sync"),
)


@sdks
def test_a_throttle_with_retry_after_is_the_sdks_rate_limit_error(
    sdk: str, asynchronous: bool
) -> None:
    url, build, module = SDKS[sdk]
    with FakeUpstream() as upstream:
        upstream.post(url).throttle(retry_after=12)
        with pytest.raises(module.RateLimitError) as caught:
            build(asynchronous)()
    assert caught.value.status_code == 429
    assert caught.value.response.headers["retry-after"] == "12"


@sdks
def test_a_server_error_is_the_sdks_internal_server_error(sdk: str, asynchronous: bool) -> None:
    url, build, module = SDKS[sdk]
    with FakeUpstream() as upstream:
        route = upstream.post(url).respond(500, json={"error": {"message": "boom"}})
        with pytest.raises(module.InternalServerError) as caught:
            build(asynchronous)()
    assert caught.value.status_code == 500
    (request,) = route.calls
    assert request.method == "POST"
    assert b"capital of Peru" in request.content


@sdks
def test_a_read_timeout_is_the_sdks_timeout_error(sdk: str, asynchronous: bool) -> None:
    url, build, module = SDKS[sdk]
    with FakeUpstream() as upstream:
        upstream.post(url).timeout()
        with pytest.raises(module.APITimeoutError) as caught:
            build(asynchronous)()
    # The SDK saw its transport's own timeout, as it would in production.
    assert isinstance(caught.value.__cause__, httpx2.ReadTimeout)


def test_an_answer_reaches_the_sdk() -> None:
    completion = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-x",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Lima."},
                "finish_reason": "stop",
            }
        ],
    }
    with FakeUpstream() as upstream:
        upstream.post(OPENAI).respond(200, json=completion)
        answer = _openai(False)()
    assert answer.choices[0].message.content == "Lima."
