"""The LLM providers' own errors, raised by the real openai and anthropic SDKs.

Each SDK client talks to an ``httpx2.MockTransport`` answering as the provider does (their
documented error bodies), with ``max_retries=0`` so the SDK raises its own error at once.
"""

from __future__ import annotations

from tests._frameworks import needs_frameworks

needs_frameworks("anthropic", "openai")

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo import (
    ContextOverflowException,
    ExternalServiceException,
    InvalidInputException,
    ModelNotFoundException,
    OverloadRetryException,
    QuotaExhaustedException,
    RateLimiter,
    RateLimitRetryException,
    TransientErrorRetryException,
    UnauthorizedException,
)

OPENAI_KEY = "sk-proj-canaryOpenAIKey0123456789abcdef"
ANTHROPIC_KEY = "sk-ant-api03-canaryAnthropicKey0123456789"
# The conversation: it mentions the very words the rules read, and must change nothing.
PROMPT = "canary prompt: please explain HTTP 429 insufficient_quota overloaded_error 529"
CANARIES = (OPENAI_KEY, ANTHROPIC_KEY, PROMPT, "canaryOpenAIKey", "canaryAnthropicKey")

Handler = Callable[[httpx2.Request], httpx2.Response]


def _answer(status: int, body: object, headers: dict[str, str] | None = None) -> Handler:
    def handle(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(status, json=body, headers=headers)

    return handle


def _openai_error(handle: Handler, headers: dict[str, str] | None = None) -> Exception:
    client = openai.OpenAI(
        api_key=OPENAI_KEY,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handle)),
        max_retries=0,
    )
    try:
        client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": PROMPT}], extra_headers=headers
        )
    except Exception as exc:
        return exc
    raise AssertionError("the SDK raised nothing")


def _anthropic_error(handle: Handler) -> Exception:
    client = anthropic.Anthropic(
        api_key=ANTHROPIC_KEY,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handle)),
        max_retries=0,
    )
    try:
        client.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=64,
            messages=[{"role": "user", "content": PROMPT}],
        )
    except Exception as exc:
        return exc
    raise AssertionError("the SDK raised nothing")


def _openai_body(message: str, kind: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _anthropic_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _refused(request: httpx2.Request) -> httpx2.Response:
    raise httpx2.ConnectError("[Errno 111] Connection refused", request=request)


def _timed_out(request: httpx2.Request) -> httpx2.Response:
    raise httpx2.ReadTimeout("The read operation timed out", request=request)


# name -> (the SDK error, what it must become)
CASES: dict[str, tuple[Callable[[], Exception], type[Exception]]] = {
    "openai-quota": (
        lambda: _openai_error(_answer(429, _openai_body(
            "You exceeded your current quota, please check your plan and billing details.",
            "insufficient_quota", "insufficient_quota",
        ))),
        QuotaExhaustedException,
    ),
    "openai-rate-limit": (
        lambda: _openai_error(_answer(429, _openai_body(
            "Rate limit reached for gpt-4o on requests per min (RPM): Limit 500, Used 500.",
            "requests", "rate_limit_exceeded",
        ), {"retry-after": "20"})),
        RateLimitRetryException,
    ),
    "openai-unknown-model": (
        lambda: _openai_error(_answer(404, _openai_body(
            "The model `gpt-4o` does not exist or you do not have access to it.",
            "invalid_request_error", "model_not_found",
        ))),
        ModelNotFoundException,
    ),
    "openai-context-overflow": (
        lambda: _openai_error(_answer(400, _openai_body(
            "This model's maximum context length is 128000 tokens. However, your messages "
            "resulted in 130512 tokens. Please reduce the length of the messages.",
            "invalid_request_error", "context_length_exceeded",
        ))),
        ContextOverflowException,
    ),
    "openai-bad-request": (
        lambda: _openai_error(_answer(400, _openai_body(
            "Invalid value for 'temperature': expected a number between 0 and 2.",
            "invalid_request_error", "invalid_value",
        ))),
        ExternalServiceException,
    ),
    "openai-bad-key": (
        lambda: _openai_error(_answer(401, _openai_body(
            f"Incorrect API key provided: {OPENAI_KEY}. You can find your API key at "
            "https://platform.openai.com/account/api-keys.",
            "invalid_request_error", "invalid_api_key",
        ))),
        UnauthorizedException,
    ),
    "openai-500": (
        lambda: _openai_error(_answer(500, _openai_body(
            "The server had an error while processing your request.", "server_error", None
        ))),
        TransientErrorRetryException,
    ),
    "openai-502": (lambda: _openai_error(_answer(502, {})), TransientErrorRetryException),
    "openai-504": (lambda: _openai_error(_answer(504, {})), TransientErrorRetryException),
    "openai-503": (
        lambda: _openai_error(_answer(503, _openai_body(
            "The engine is currently overloaded, please try again later.", "server_error", None
        ))),
        TransientErrorRetryException,
    ),
    "openai-connection": (lambda: _openai_error(_refused), TransientErrorRetryException),
    "openai-timeout": (lambda: _openai_error(_timed_out), TransientErrorRetryException),
    "anthropic-credit": (
        lambda: _anthropic_error(_answer(400, _anthropic_body(
            "invalid_request_error",
            "Your credit balance is too low to access the Anthropic API. Please go to Plans & "
            "Billing to upgrade or purchase credits.",
        ))),
        QuotaExhaustedException,
    ),
    "anthropic-overloaded": (
        lambda: _anthropic_error(_answer(529, _anthropic_body("overloaded_error", "Overloaded"))),
        OverloadRetryException,
    ),
    "anthropic-rate-limit": (
        lambda: _anthropic_error(_answer(429, _anthropic_body(
            "rate_limit_error",
            "This request would exceed the rate limit for your organization of 50 requests "
            "per minute.",
        ), {"retry-after": "12"})),
        RateLimitRetryException,
    ),
    "anthropic-unknown-model": (
        lambda: _anthropic_error(_answer(404, _anthropic_body(
            "not_found_error", "model: claude-sonnet-4-5"
        ))),
        ModelNotFoundException,
    ),
    "anthropic-prompt-too-long": (
        lambda: _anthropic_error(_answer(400, _anthropic_body(
            "invalid_request_error", "prompt is too long: 208310 tokens > 200000 maximum"
        ))),
        ContextOverflowException,
    ),
    "anthropic-500": (
        lambda: _anthropic_error(_answer(500, _anthropic_body("api_error", "Internal server error"))),
        TransientErrorRetryException,
    ),
    "anthropic-forbidden": (
        lambda: _anthropic_error(_answer(403, _anthropic_body(
            "permission_error", "Your API key does not have permission to use the specified resource."
        ))),
        UnauthorizedException,
    ),
    "anthropic-too-large": (
        lambda: _anthropic_error(_answer(413, _anthropic_body(
            "request_too_large", "Request exceeds the maximum allowed number of bytes."
        ))),
        InvalidInputException,
    ),
    "anthropic-connection": (lambda: _anthropic_error(_refused), TransientErrorRetryException),
    "anthropic-timeout": (lambda: _anthropic_error(_timed_out), TransientErrorRetryException),
}  # fmt: skip


def _members_shown(result: BaseException) -> str:
    """Every text of every exception of ours in the chain of ``result``."""
    shown = []
    for member in nucleo._causes.iter_chain(result):
        if isinstance(member, nucleo.LLMReadableException):
            shown += [str(member), repr(member), member.explain_to_llm()]
        elif isinstance(member, nucleo.UpstreamRetryException):
            shown += [str(member), repr(member), member.message]
    return "\n".join(shown)


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_provider_error_sorts_as_the_provider_means_it(case: str) -> None:
    make, expected = CASES[case]
    error = make()
    result = nucleo.from_provider_error(error)
    assert type(result) is expected
    assert result.__cause__ is error
    shown = _members_shown(result)
    for canary in CANARIES:
        assert canary not in shown


def test_a_rate_limit_carries_the_servers_retry_after() -> None:
    for name, wait in (("openai-rate-limit", 20.0), ("anthropic-rate-limit", 12.0)):
        signal = nucleo.from_provider_error(CASES[name][0]())
        assert isinstance(signal, RateLimitRetryException)
        assert signal.retry_after == wait


def test_openais_retry_after_ms_is_read_when_retry_after_is_absent() -> None:
    error = _openai_error(
        _answer(429, _openai_body("slow", "requests", None), {"retry-after-ms": "1500"})
    )
    signal = nucleo.from_provider_error(error)
    assert isinstance(signal, RateLimitRetryException)
    assert signal.retry_after == 1.5
    for odd, wait in (
        ("nan", None),
        ("-5", None),
        ("1e3", None),
        ("9" * 40, nucleo.RETRY_AFTER_CAP),
    ):
        error = _openai_error(
            _answer(429, _openai_body("slow", "requests", None), {"retry-after-ms": odd})
        )
        signal = nucleo.from_provider_error(error)
        assert isinstance(signal, RateLimitRetryException)
        assert signal.retry_after == wait, odd


def test_the_quota_failure_names_provider_model_and_the_providers_words() -> None:
    quota = nucleo.from_provider_error(CASES["openai-quota"][0]())
    assert isinstance(quota, QuotaExhaustedException)
    assert (quota.provider, quota.model) == ("OpenAI", "gpt-4o")
    assert "You exceeded your current quota" in quota.llm_message


def test_the_unknown_model_is_the_one_the_request_asked_for() -> None:
    missing = nucleo.from_provider_error(CASES["anthropic-unknown-model"][0]())
    assert isinstance(missing, ModelNotFoundException)
    assert missing.model_id == "claude-sonnet-4-5"


@pytest.mark.parametrize(
    "case",
    ["openai-quota", "openai-unknown-model", "openai-context-overflow", "openai-bad-request",
     "openai-bad-key", "anthropic-credit", "anthropic-forbidden", "anthropic-too-large"],
)  # fmt: skip
def test_provider_failure_texts_snapshot(case: str, llm_snapshot: SnapshotAssertion) -> None:
    result = nucleo.from_provider_error(CASES[case][0]())
    assert isinstance(result, nucleo.LLMReadableException)
    assert result.explain_to_llm() == llm_snapshot


def test_words_in_the_conversation_never_change_the_classification() -> None:
    # The request says 429 and insufficient_quota; the provider answers a plain 400 echoing it.
    echo = _openai_body(
        f"Unrecognized request argument supplied: {PROMPT}", "invalid_request_error", None
    )
    result = nucleo.from_provider_error(_openai_error(_answer(400, echo)))
    assert type(result) is ExternalServiceException
    assert "HTTP 400" in result.llm_message
    assert PROMPT not in _members_shown(result)


def test_an_exception_of_no_provider_is_none() -> None:
    assert nucleo.from_provider_error(ValueError("429 insufficient_quota")) is None
    assert nucleo.from_provider_error(httpx2.ConnectError("refused")) is None


def test_unwrap_raises_a_providers_retry_signal_and_its_runtime_failures() -> None:
    with pytest.raises(RateLimitRetryException):
        nucleo.unwrap(CASES["openai-rate-limit"][0]())
    with pytest.raises(QuotaExhaustedException):  # a runtime-family failure is raised as itself
        nucleo.unwrap(CASES["anthropic-credit"][0]())
    bad_request = nucleo.unwrap(CASES["openai-bad-request"][0]())
    assert type(bad_request) is ExternalServiceException


def test_a_provider_error_under_another_exception_is_still_found() -> None:
    try:
        try:
            raise CASES["anthropic-overloaded"][0]()
        except anthropic.APIError as error:
            raise RuntimeError("summariser failed") from error
    except RuntimeError as outer:
        with pytest.raises(OverloadRetryException):
            nucleo.unwrap(outer)


def test_the_runner_retries_a_rate_limited_tool_and_tells_its_limiter() -> None:
    clock = nucleo.FakeClock()
    limiter = RateLimiter("openai", max_requests=100, window_seconds=60.0, clock=clock)
    errors = [CASES["openai-rate-limit"][0](), CASES["anthropic-overloaded"][0]()]

    @nucleo.tool(limiters=[limiter])
    def summarise() -> str:
        if errors:
            raise errors.pop(0)
        return "a summary"

    result = nucleo.run_tool(summarise, clock=clock)
    assert not result.is_error
    assert result.value == "a summary"
    assert clock.sleeps[0] == 20.0  # the server's Retry-After was waited, on the fake clock
    assert limiter.stats().successes == 1


def test_a_client_that_retried_on_its_own_is_named_once_with_the_setting_to_change(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_nucleo._runner import _retries

    monkeypatch.setattr(_retries, "_SDKS_WARNED", set())
    busy = _answer(429, _openai_body("Slow down.", "requests", "rate_limit_exceeded"))
    # What openai's client raises on its third try, after two retries of its own: the retry
    # count it sends with every request says so (set here, so that no test sleeps between tries).
    errors = {
        "alone": lambda: _openai_error(busy),
        "retried": lambda: _openai_error(busy, {"x-stainless-retry-count": "2"}),
    }
    warned: dict[str, list[str]] = {}
    for case in ("alone", "retried", "retried"):
        caplog.clear()

        def summarise() -> str:
            raise errors[case]()  # noqa: B023  (called within this iteration)

        with caplog.at_level(logging.WARNING, logger="pytest_nucleo"):
            result = nucleo.run_tool(summarise, retries=1, clock=nucleo.FakeClock())
        assert type(result.exception) is nucleo.RetriesExhaustedException
        warned.setdefault(case, []).extend(
            r.getMessage() for r in caplog.records if "max_retries=0" in r.getMessage()
        )
    assert warned["alone"] == []
    assert warned["retried"] == [
        "tool summarise: the openai client retried its request 2 time(s) on its own before "
        "the runner's retry; the runner retries provider failures itself, within its budget "
        "and under the tool's limiters, so build the client with max_retries=0"
    ]  # once per process, not at every retry


def test_a_providers_retry_after_holds_the_tools_limiter() -> None:
    clock = nucleo.FakeClock()
    limiter = RateLimiter("openai", max_requests=100, window_seconds=60.0, clock=clock)

    @nucleo.tool(limiters=[limiter])
    def summarise() -> str:
        raise CASES["openai-rate-limit"][0]()

    result = nucleo.run_tool(summarise, retries=0, clock=clock)
    assert type(result.exception) is nucleo.RetriesExhaustedException
    limiter.release(limiter.acquire())  # the next call waits out the server's 20 seconds
    assert sum(clock.sleeps) == pytest.approx(20.0)


def test_the_runner_returns_a_quota_failure_without_retrying() -> None:
    calls = []

    def summarise() -> str:
        calls.append(1)
        raise CASES["openai-quota"][0]()

    result = nucleo.run_tool(summarise, clock=nucleo.FakeClock())
    assert len(calls) == 1
    assert type(result.exception) is QuotaExhaustedException
    for canary in CANARIES:
        assert canary not in result.text


def test_arun_tool_retries_a_transient_provider_error() -> None:
    errors = [CASES["anthropic-500"][0]()]

    async def judge() -> str:
        if errors:
            raise errors.pop(0)
        return "pass"

    result = asyncio.run(nucleo.arun_tool(judge, clock=nucleo.FakeClock()))
    assert result.value == "pass"


def test_the_sdks_async_clients_raise_errors_that_sort_the_same() -> None:
    async def call() -> Exception:
        client = openai.AsyncOpenAI(
            api_key=OPENAI_KEY,
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(
                _answer(429, _openai_body("quota", "insufficient_quota", "insufficient_quota"))
            )),
            max_retries=0,
        )  # fmt: skip
        try:
            await client.embeddings.create(model="text-embedding-3-small", input=PROMPT)
        except Exception as exc:
            return exc
        raise AssertionError("the SDK raised nothing")

    assert type(nucleo.from_provider_error(asyncio.run(call()))) is QuotaExhaustedException


def test_a_body_that_is_not_json_still_sorts_by_status() -> None:
    def handle(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(503, content=b"<html>upstream connect error</html>")

    assert type(nucleo.from_provider_error(_openai_error(handle))) is TransientErrorRetryException
    body = json.dumps({"error": "not an object"}).encode()
    odd = _openai_error(lambda r: httpx2.Response(418, content=body))
    assert type(nucleo.from_provider_error(odd)) is ExternalServiceException


def test_a_streamed_error_the_sdk_did_not_read_still_sorts_by_its_status() -> None:
    request = httpx2.Request("POST", "https://api.openai.com/v1/chat/completions")
    response = httpx2.Response(503, stream=httpx2.ByteStream(b"{}"), request=request)
    error = openai.InternalServerError("Error code: 503", response=response, body=None)
    assert type(nucleo.from_provider_error(error)) is TransientErrorRetryException


def test_an_adapted_tool_delivers_a_providers_failure_and_retries_its_signals() -> None:
    # The adapters wrap a tool through the runner: the same sorting reaches every framework.
    from pytest_nucleo._runner._results import ToolResult
    from pytest_nucleo.adapters._core import through_runner

    delivered: list[ToolResult] = []
    errors = [CASES["anthropic-overloaded"][0](), CASES["openai-quota"][0]()]

    def summarise(text: str) -> str:
        """Summarise a text."""
        raise errors.pop(0)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("pytest_nucleo._runner._call.SYSTEM_CLOCK", nucleo.FakeClock())
        through_runner(summarise, delivered.append)("a long text")
    assert errors == []  # the overload was retried, the quota was not
    (result,) = delivered
    assert type(result.exception) is QuotaExhaustedException
