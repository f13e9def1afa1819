"""Gemini's errors, raised by the real google-genai SDK against fake_upstream.

The SDK calls the Gemini API with httpx (and, for its async client, with aiohttp when it is
installed); fake_upstream answers both as the API does (its documented error bodies).
"""

from __future__ import annotations

from tests._frameworks import needs_frameworks

needs_frameworks("google.genai")

import asyncio
from typing import Any

import httpx
import pytest
from google import genai
from google.genai import errors, types
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo import (
    ContextOverflowException,
    ExternalServiceException,
    ModelNotFoundException,
    RateLimitRetryException,
    TransientErrorRetryException,
    UnauthorizedException,
)

# google-genai's async client subclasses aiohttp's ClientSession, which aiohttp warns against
# when the SDK first makes one: the SDK's warning, not this package's.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Inheritance class AiohttpClientSession from ClientSession:DeprecationWarning"
)

KEY = "AIzaSyCanaryGeminiKey0123456789abcdefgh"
PROMPT = "canary prompt: explain RESOURCE_EXHAUSTED 429 and API_KEY_INVALID"
MODEL = "gemini-2.5-flash"
URL = f"https://generativelanguage.googleapis.com/v1beta/models/{MODEL}:generateContent"


def _error(code: int, status: str, message: str, *details: dict[str, Any]) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status, "details": details}}


def _retry_info(delay: str) -> dict[str, Any]:
    return {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}


def _error_info(reason: str) -> dict[str, Any]:
    return {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": reason,
        "domain": "googleapis.com",
    }


QUOTA = (
    "You exceeded your current quota, please check your plan and billing details. For more "
    "information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits."
)

# name -> (status, body, what it must become)
CASES: dict[str, tuple[int, dict[str, Any], type[Exception]]] = {
    "rate-limit": (429, _error(429, "RESOURCE_EXHAUSTED", QUOTA, _retry_info("17s")),
                   RateLimitRetryException),
    "overloaded": (503, _error(503, "UNAVAILABLE", "The model is overloaded. Please try again "
                               "later."), TransientErrorRetryException),
    "internal": (500, _error(500, "INTERNAL", "An internal error has occurred."),
                 TransientErrorRetryException),
    "deadline": (504, _error(504, "DEADLINE_EXCEEDED", "Deadline expired before operation could "
                             "complete."), TransientErrorRetryException),
    "context-overflow": (400, _error(400, "INVALID_ARGUMENT", "The input token count (1200000) "
                                     "exceeds the maximum number of tokens allowed (1048576)."),
                         ContextOverflowException),
    "unknown-model": (404, _error(404, "NOT_FOUND", f"models/{MODEL} is not found for API "
                                  "version v1beta, or is not supported for generateContent."),
                      ModelNotFoundException),
    "bad-key": (400, _error(400, "INVALID_ARGUMENT", f"API key not valid: {KEY}. Please pass a "
                            "valid API key.", _error_info("API_KEY_INVALID")),
                UnauthorizedException),
    "forbidden": (403, _error(403, "PERMISSION_DENIED", "Method doesn't allow unregistered "
                              "callers."), UnauthorizedException),
    "bad-request": (400, _error(400, "INVALID_ARGUMENT", f"Invalid JSON payload received: "
                                f"{PROMPT}"), ExternalServiceException),
}  # fmt: skip


# The API version pinned: google-genai 3 calls v1 by default, 2 called v1beta. No
# retry_options: the SDK does not retry.
OPTIONS = types.HttpOptions(api_version="v1beta")


def ask(question: str) -> str:
    client = genai.Client(api_key=KEY, http_options=OPTIONS)
    return client.models.generate_content(model=MODEL, contents=question).text or ""


async def aask(question: str) -> str:
    client = genai.Client(api_key=KEY, http_options=OPTIONS)
    answer = await client.aio.models.generate_content(model=MODEL, contents=question)
    return answer.text or ""


def _raised(fake_upstream: Any, case: str, *, sync: bool = True) -> errors.APIError:
    status, body, _ = CASES[case]
    fake_upstream.post(URL).respond(status, json=body)
    with pytest.raises(errors.APIError) as raised:
        ask(PROMPT) if sync else asyncio.run(aask(PROMPT))
    return raised.value


def _shown(result: BaseException) -> str:
    if isinstance(result, nucleo.LLMReadableException):
        return "\n".join([str(result), repr(result), result.explain_to_llm()])
    return "\n".join([str(result), repr(result)])


@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_gemini_error_sorts_as_google_means_it(
    case: str, sync: bool, fake_upstream: Any
) -> None:
    error = _raised(fake_upstream, case, sync=sync)
    result = nucleo.from_provider_error(error)
    assert type(result) is CASES[case][2]
    assert result.__cause__ is error
    shown = _shown(result)
    for canary in (KEY, PROMPT, "CanaryGeminiKey"):
        assert canary not in shown


def test_a_rate_limit_waits_what_its_retry_info_asks(fake_upstream: Any) -> None:
    signal = nucleo.from_provider_error(_raised(fake_upstream, "rate-limit"))
    assert isinstance(signal, RateLimitRetryException)
    assert signal.retry_after == 17.0


@pytest.mark.parametrize(
    ("delay", "wait"),
    [("0.5s", 0.5), ("3.250s", 3.25), ("1e3s", None), ("-5s", None), ("17", None),
     ("9" * 12 + "s", nucleo.RETRY_AFTER_CAP)],
)  # fmt: skip
def test_a_retry_delay_is_read_as_a_duration_and_capped(
    delay: str, wait: float | None, fake_upstream: Any
) -> None:
    body = _error(429, "RESOURCE_EXHAUSTED", QUOTA, _retry_info(delay))
    fake_upstream.post(URL).respond(429, json=body)
    with pytest.raises(errors.ClientError) as raised:
        ask("hello")
    signal = nucleo.from_provider_error(raised.value)
    assert isinstance(signal, RateLimitRetryException)
    assert signal.retry_after == wait


def test_without_retry_info_the_retry_after_header_gives_the_wait(fake_upstream: Any) -> None:
    body = _error(429, "RESOURCE_EXHAUSTED", QUOTA)
    fake_upstream.post(URL).respond(429, json=body, headers={"Retry-After": "20"})
    with pytest.raises(errors.ClientError) as raised:
        ask("hello")
    signal = nucleo.from_provider_error(raised.value)
    assert isinstance(signal, RateLimitRetryException)
    assert signal.retry_after == 20.0


def test_the_unknown_model_is_the_one_the_path_asked_for_on_either_backend() -> None:
    # Vertex AI names the model in a longer path; the error is built as the SDK builds it.
    vertex = (
        "https://us-central1-aiplatform.googleapis.com/v1beta1/projects/p/locations/"
        f"us-central1/publishers/google/models/{MODEL}:generateContent"
    )
    for url in (URL, vertex):
        response = httpx.Response(404, json={}, request=httpx.Request("POST", url))
        body = CASES["unknown-model"][1]
        missing = nucleo.from_provider_error(errors.ClientError(404, body, response))
        assert isinstance(missing, ModelNotFoundException)
        assert missing.model_id == MODEL


@pytest.mark.parametrize("case", ["bad-key", "forbidden", "bad-request", "unknown-model"])
def test_gemini_failure_texts_snapshot(
    case: str, fake_upstream: Any, llm_snapshot: SnapshotAssertion
) -> None:
    result = nucleo.from_provider_error(_raised(fake_upstream, case))
    assert isinstance(result, nucleo.LLMReadableException)
    assert result.explain_to_llm() == llm_snapshot


def test_a_tool_on_gemini_tells_the_model_through_the_runner(fake_upstream: Any) -> None:
    fake_upstream.post(URL).respond(400, json=CASES["bad-key"][1])
    result = nucleo.run_tool(ask, {"question": "hello"})
    assert result.is_error
    assert isinstance(result.exception, UnauthorizedException)
    assert "The service Google rejected the tool's credentials" in result.text
    assert KEY not in result.text


def test_another_google_packages_error_is_no_providers() -> None:
    # The registry finds the Gemini reader for every google package: it reads only
    # google-genai's errors, and leaves the others to the rest of the mapping.
    auth = pytest.importorskip("google.auth.exceptions")
    assert nucleo.from_provider_error(auth.RefreshError("token expired")) is None
    built_without_status = errors.APIError(0, {"error": {"message": "odd"}})
    assert nucleo.from_provider_error(built_without_status) is None
    live_closed = errors.APIError(1011, "Internal error encountered.")  # a WebSocket close code
    assert nucleo.from_provider_error(live_closed) is None
