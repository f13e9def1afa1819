"""The pydantic-ai adapter, against the installed pydantic-ai: what the model receives per failure.

Every run is a real ``Agent`` on pydantic-ai's ``FunctionModel`` (no network, no sleeps); the
texts are snapshotted as the model receives them.
"""

from __future__ import annotations

from tests._frameworks import needs_frameworks

needs_frameworks("pydantic_ai", "openai", "anthropic")

import asyncio
import inspect
import json
import subprocess
import sys
from typing import Any

import adapter_tools
import pytest
from pydantic_ai import Agent, BinaryContent, RunContext, Tool, UnexpectedModelBehavior
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
import pytest_nucleo.adapters.pydantic_ai as adapter
from pytest_nucleo.adapters.pydantic_ai import (
    ModelReceived,
    acall_through_agent,
    call_through_agent,
    make_tool,
    wrap_tool,
)

CORRECTABLE_HINT = (
    "[This error may be correctable - you can retry with different parameters or try a "
    "different approach]"
)
UNCORRECTABLE_HINT = "[This error is not correctable - consider an alternative approach]"


def get_order(order_number: str, include_items: bool = False) -> dict[str, object]:
    """Fetch one order by its number.

    Args:
        order_number: The 8-digit order number, as printed on the receipt.
        include_items: Whether to list the order's items too.
    """
    if order_number == "12-34":
        raise nucleo.InvalidInputException("order_number", order_number, "must be 8 digits")
    if order_number == "00000000":
        raise nucleo.ExternalServiceException("orders-api", "connection refused")
    if order_number == "11111111":
        raise nucleo.UpstreamThrottleException("orders-api", "rate limit reached", retry_after=30)
    if order_number == "99999999":
        return {}["eta"]  # type: ignore[return-value]  # a bug: a foreign KeyError
    return {"number": order_number, "items": include_items}


async def aget_order(order_number: str) -> dict[str, object]:
    """Fetch one order by its number, asynchronously.

    Args:
        order_number: The 8-digit order number, as printed on the receipt.
    """
    await asyncio.sleep(0)
    return get_order(order_number)


wrapped_get_order = wrap_tool(get_order)
wrapped_aget_order = wrap_tool(aget_order)


def run(agent: Agent[None, str], prompt: str) -> str:
    # Not agent.run_sync: it leaves its event loop open, and a later asyncio.run drops it
    # unclosed (a ResourceWarning, an error under this suite's -W error).
    return asyncio.run(agent.run(prompt)).output


def explained(exc: nucleo.LLMReadableException) -> str:
    return exc.explain_to_llm()


# --- one test per failure kind: channel, exact text, snapshot ------------------------------------


def test_correctable_failure_goes_to_model_retry(llm_snapshot: SnapshotAssertion) -> None:
    received = call_through_agent(wrapped_get_order, {"order_number": "12-34"})
    assert received.channel == "retried"
    assert received.is_error
    assert received.part.retry is not None
    assert received.part.retry.cause == "model_retry"
    assert received.text == explained(
        nucleo.InvalidInputException("order_number", "12-34", "must be 8 digits")
    )
    assert received.text.endswith(CORRECTABLE_HINT)
    # pydantic-ai adds nothing to a tool retry (the deprecated RetryPromptPart appended this).
    assert "Fix the errors and try again." not in received.text
    assert received.text == llm_snapshot
    assert received.wrapped_text == llm_snapshot


def test_uncorrectable_failure_goes_to_tool_failed(llm_snapshot: SnapshotAssertion) -> None:
    received = call_through_agent(wrapped_get_order, {"order_number": "00000000"})
    assert received.channel == "failed"
    assert received.is_error
    assert received.part.retry is None  # no retry budget spent
    assert received.text == explained(
        nucleo.ExternalServiceException("orders-api", "connection refused")
    )
    assert received.text.endswith(UNCORRECTABLE_HINT)
    assert received.text == llm_snapshot
    assert received.wrapped_text == llm_snapshot


@pytest.mark.nucleo(expect_leaks=True)
def test_foreign_exception_reaches_the_model_as_the_system_exception_text(
    llm_snapshot: SnapshotAssertion,
) -> None:
    received = call_through_agent(wrapped_get_order, {"order_number": "99999999"})
    assert received.channel == "failed"
    assert received.is_error
    assert received.text.startswith(
        "A system error occurred in get_order. The operation could not be completed.\n"
    )
    assert "KeyError" not in received.wrapped_text
    assert "eta" not in received.wrapped_text
    assert received.text == llm_snapshot


def test_throttled_failure_says_how_long_to_wait(llm_snapshot: SnapshotAssertion) -> None:
    received = call_through_agent(wrapped_get_order, {"order_number": "11111111"})
    assert received.channel == "failed"
    assert received.is_error
    assert "about 30 seconds" in received.text
    assert received.text.endswith(UNCORRECTABLE_HINT)
    assert received.text == llm_snapshot


def test_success_reads_as_the_runners_text(
    llm_snapshot: SnapshotAssertion,
) -> None:
    received = call_through_agent(
        wrapped_get_order, {"order_number": "12345678", "include_items": True}
    )
    assert received == ModelReceived(
        channel="success",
        is_error=False,
        text='{"items": true, "number": "12345678"}',
        wrapped_text='{"items": true, "number": "12345678"}',
        part=received.part,
    )
    assert received.text == llm_snapshot


@pytest.mark.nucleo(expect_leaks=True)
def test_the_wrapped_text_is_the_error_object_of_providers_without_an_error_channel() -> None:
    for number in ("12-34", "00000000", "99999999", "11111111"):
        received = call_through_agent(wrapped_get_order, {"order_number": number})
        assert json.loads(received.wrapped_text) == {"error": received.text}


# --- async tools ------------------------------------------------------------------------------


@pytest.mark.nucleo(expect_leaks=True)
def test_async_tool_under_the_async_harness(llm_snapshot: SnapshotAssertion) -> None:
    assert inspect.iscoroutinefunction(wrapped_aget_order)
    ok = asyncio.run(acall_through_agent(wrapped_aget_order, {"order_number": "12345678"}))
    assert (ok.channel, ok.text) == ("success", '{"items": false, "number": "12345678"}')
    retried = asyncio.run(acall_through_agent(wrapped_aget_order, {"order_number": "12-34"}))
    failed = asyncio.run(acall_through_agent(wrapped_aget_order, {"order_number": "99999999"}))
    assert (retried.channel, failed.channel) == ("retried", "failed")
    # The foreign exception is named after the async tool, the one the model called.
    assert failed.text.startswith("A system error occurred in aget_order.")
    assert retried.text == llm_snapshot
    assert failed.text == llm_snapshot


def test_async_tool_under_the_sync_harness() -> None:
    received = call_through_agent(wrapped_aget_order, {"order_number": "00000000"})
    assert received.channel == "failed"
    assert received.text == explained(
        nucleo.ExternalServiceException("orders-api", "connection refused")
    )


def test_the_sync_harness_under_a_running_loop_points_to_the_async_one() -> None:
    async def inside_a_loop() -> None:
        with pytest.raises(RuntimeError, match="acall_through_agent"):
            call_through_agent(wrapped_get_order, {"order_number": "12345678"})

    asyncio.run(inside_a_loop())


def test_sync_tool_under_the_async_harness() -> None:
    received = asyncio.run(acall_through_agent(wrapped_get_order, {"order_number": "12-34"}))
    assert received.channel == "retried"
    assert received.text.endswith(CORRECTABLE_HINT)


# --- the wrapper keeps what pydantic-ai builds the tool from ------------------------------------


@pytest.mark.parametrize(
    ("plain", "wrapped"), [(get_order, wrapped_get_order), (aget_order, wrapped_aget_order)]
)
def test_wrapping_keeps_name_docstring_signature_and_schema(plain: Any, wrapped: Any) -> None:
    assert wrapped.__name__ == plain.__name__
    assert wrapped.__doc__ == plain.__doc__
    assert inspect.signature(wrapped) == inspect.signature(plain)
    assert inspect.iscoroutinefunction(wrapped) == inspect.iscoroutinefunction(plain)
    # The definition pydantic-ai sends the model is the one it builds from the plain function.
    assert Tool(wrapped).tool_def == Tool(plain).tool_def
    assert make_tool(plain).tool_def == Tool(plain).tool_def


def test_the_generated_schema_has_the_parameters_and_their_descriptions() -> None:
    definition = make_tool(get_order).tool_def
    assert definition.name == "get_order"
    assert definition.description == "Fetch one order by its number."
    schema = definition.parameters_json_schema
    assert schema["required"] == ["order_number"]
    assert schema["properties"] == {
        "order_number": {
            "description": "The 8-digit order number, as printed on the receipt.",
            "type": "string",
        },
        "include_items": {
            "default": False,
            "description": "Whether to list the order's items too.",
            "type": "boolean",
        },
    }


def test_wrapping_twice_wraps_once() -> None:
    assert wrap_tool(wrapped_get_order) is wrapped_get_order
    # make_tool of a wrapped function wraps the function beneath: one runner per call.
    assert make_tool(wrapped_get_order).function.__wrapped__.__wrapped__ is get_order


def test_make_tool_passes_tool_options_and_refuses_a_context() -> None:
    built = make_tool(get_order, name="fetch_order", max_retries=3)
    # takes_ctx: the Tool's function takes the RunContext, to see the tool's last attempt.
    assert (built.name, built.max_retries, built.takes_ctx) == ("fetch_order", 3, True)
    received = call_through_agent(built, {"order_number": "00000000"})
    assert received.channel == "failed"
    assert received.part.tool_name == "fetch_order"
    with pytest.raises(TypeError, match="takes_ctx"):
        make_tool(get_order, takes_ctx=True)


def needs_context(ctx: RunContext[None], order_number: str) -> str:
    return order_number


def positional_only(order_number: str, /) -> str:
    return order_number


def star_args(*order_numbers: str) -> str:
    return ",".join(order_numbers)


@pytest.mark.parametrize(
    ("func", "match"),
    [
        (positional_only, "passed positionally"),
        (star_args, "passed positionally"),
    ],
)
def test_signatures_pydantic_ai_calls_positionally_are_refused_at_wrap_time(
    func: Any, match: str
) -> None:
    with pytest.raises(TypeError, match=match):
        wrap_tool(func)


def test_registered_with_tool_plain_the_failure_reaches_the_model() -> None:
    seen: list[ToolReturnPart] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(
                parts=[ToolCallPart(tool_name="get_order", args={"order_number": "12-34"})]
            )
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        seen.extend(p for p in last.parts if isinstance(p, ToolReturnPart))
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(model))
    registered = agent.tool_plain(wrap_tool(get_order))
    assert registered.__name__ == "get_order"
    assert run(agent, "Fetch order 12-34.") == "done"
    [part] = seen
    assert part.outcome == "retried"
    assert part.content == explained(
        nucleo.InvalidInputException("order_number", "12-34", "must be 8 digits")
    )


# --- pydantic-ai's own behaviour, pinned: what the adapter cannot change --------------------------


def test_unwrapped_foreign_exception_ends_the_run() -> None:
    # Why the adapter exists: pydantic-ai lets a foreign exception end the run.
    with pytest.raises(KeyError):
        call_through_agent(get_order, {"order_number": "99999999"})


def test_arguments_that_break_the_schema_get_pydantic_ai_validation_errors(
    llm_snapshot: SnapshotAssertion,
) -> None:
    # Limitation: pydantic-ai validates arguments before the tool (and the runner) runs, so the
    # model reads pydantic's error list, not InvalidInputException's text.
    received = call_through_agent(wrapped_get_order, {"order_number": 12345678})
    assert received.channel == "retried"
    assert received.part.retry is not None
    assert received.part.retry.cause == "validation_error"
    assert CORRECTABLE_HINT not in received.text
    assert json.loads(received.text)[0]["loc"] == ["order_number"]
    assert received.text == llm_snapshot


def _retrying_model(attempts: int) -> tuple[FunctionModel, list[ToolReturnPart]]:
    """A model that calls get_order with a bad number ``attempts`` times, then stops."""
    seen: list[ToolReturnPart] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        seen.extend(p for p in last.parts if isinstance(p, ToolReturnPart))
        if len(seen) < attempts:
            call = ToolCallPart(tool_name="get_order", args={"order_number": "12-34"})
            return ModelResponse(parts=[call])
        return ModelResponse(parts=[TextPart("gave up")])

    return FunctionModel(model), seen


def test_a_correctable_failure_spends_the_retry_budget() -> None:
    # pydantic-ai's default budget is one retry: a second correctable failure ends the run.
    model, seen = _retrying_model(attempts=2)
    agent = Agent(model, tools=[wrapped_get_order])
    with pytest.raises(UnexpectedModelBehavior, match="exceeded max retries count of 1"):
        run(agent, "Fetch order 12-34.")
    assert [p.outcome for p in seen] == ["retried"]
    # With a budget set on the tool, every failure reaches the model.
    model, seen = _retrying_model(attempts=3)
    agent = Agent(model, tools=[make_tool(get_order, max_retries=3)])
    assert run(agent, "Fetch order 12-34.") == "gave up"
    assert [p.outcome for p in seen] == ["retried"] * 3


def test_uncorrectable_failures_spend_no_retry_budget() -> None:
    seen: list[ToolReturnPart] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        seen.extend(p for p in last.parts if isinstance(p, ToolReturnPart))
        if len(seen) < 3:
            call = ToolCallPart(tool_name="get_order", args={"order_number": "00000000"})
            return ModelResponse(parts=[call])
        return ModelResponse(parts=[TextPart("gave up")])

    agent = Agent(FunctionModel(model), tools=[wrapped_get_order])
    assert run(agent, "Fetch order 00000000.") == "gave up"
    assert [p.outcome for p in seen] == ["failed"] * 3


# --- module hygiene ---------------------------------------------------------------------------


def test_public_names() -> None:
    assert sorted(adapter.__all__) == [
        "ModelReceived",
        "acall_through_agent",
        "call_through_agent",
        "keep_mcp_failures",
        "make_tool",
        "wrap_tool",
    ]
    for name in adapter.__all__:
        assert getattr(adapter, name).__doc__


def test_pydantic_ai_is_imported_only_with_the_adapter() -> None:
    code = (
        "import sys, pytest_nucleo, pytest_nucleo.adapters\n"
        "print('pydantic_ai' in sys.modules)\n"
        "import pytest_nucleo.adapters.pydantic_ai\n"
        "print('pydantic_ai' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


# --- second pass: context, the runner's options, the retry budget, values, provider models ----


def test_a_tool_taking_run_context_gets_it_and_its_deps() -> None:
    def with_deps(ctx: RunContext[str], order_number: str) -> str:
        """Fetch an order of the shop in the deps."""
        if order_number == "0":
            raise nucleo.ExternalServiceException(ctx.deps, "closed")
        return f"{ctx.deps}:{order_number}"

    seen: list[ToolReturnPart] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        seen.extend(p for p in last.parts if isinstance(p, ToolReturnPart))
        if len(seen) < 2:
            number = "7" if not seen else "0"
            return ModelResponse(
                parts=[ToolCallPart(tool_name="with_deps", args={"order_number": number})]
            )
        return ModelResponse(parts=[TextPart("done")])

    for registered in (wrap_tool(with_deps), make_tool(with_deps)):
        seen.clear()
        agent = Agent(FunctionModel(model), deps_type=str, tools=[registered])
        assert asyncio.run(agent.run("go", deps="tea-shop")).output == "done"
        assert next((p.outcome, p.model_response_str()) for p in seen) == ("success", "tea-shop:7")
        assert seen[1].outcome == "failed"
        assert (
            seen[1]
            .model_response_str(wrap_if_error=False)
            .startswith("The external service tea-shop failed")
        )


def test_past_the_retry_budget_a_correctable_failure_is_a_failed_result_by_default() -> None:
    model, seen = _retrying_model(attempts=3)
    agent = Agent(model, tools=[make_tool(get_order)])  # pydantic-ai's budget: one retry
    assert run(agent, "Fetch order 12-34.") == "gave up"
    assert [p.outcome for p in seen] == ["retried", "failed", "failed"]
    texts = {p.model_response_str(wrap_if_error=False) for p in seen}
    assert len(texts) == 1
    assert texts.pop().endswith(CORRECTABLE_HINT)
    # The documented alternative: pydantic-ai's own rule, the run ends.
    model, seen = _retrying_model(attempts=3)
    agent = Agent(model, tools=[make_tool(get_order, past_retries="end run")])
    with pytest.raises(UnexpectedModelBehavior, match="exceeded max retries count of 1"):
        run(agent, "Fetch order 12-34.")
    with pytest.raises(ValueError, match="past_retries must be one of"):
        make_tool(get_order, past_retries="ignore")  # type: ignore[arg-type]


def test_make_tool_timeout_is_the_runner_s_job_timeout() -> None:
    built = make_tool(
        adapter_tools.always_overloaded, timeout=30, retries=5, clock=nucleo.FakeClock()
    )
    assert built.timeout is None  # not pydantic-ai's "Timed out after ..." text
    received = call_through_agent(built, {"order_number": "1"})
    assert (received.channel, received.text) == ("failed", adapter_tools.TIMEOUT_TEXT)


def test_the_runner_options_reach_the_runner() -> None:
    clock = nucleo.FakeClock()
    flaky = adapter_tools.flaky_order()
    received = call_through_agent(
        wrap_tool(retries=1, clock=clock)(flaky), {"order_number": "1042"}
    )
    assert (received.channel, received.text) == (
        "success",
        '{"number": "1042", "status": "shipped"}',
    )
    assert clock.sleeps == [0.5]
    token = nucleo.CancelToken()
    token.cancel()
    received = call_through_agent(
        make_tool(adapter_tools.never_called, cancel=token), {"order_number": "1"}
    )
    assert (received.channel, received.text) == ("failed", adapter_tools.CANCELLED_TEXT)
    with pytest.raises(TypeError, match="timout"):  # Tool's own options are pydantic-ai's to check
        make_tool(get_order, timout=3)
    with pytest.raises(ValueError, match="retries must be a whole number"):
        make_tool(get_order, retries=-1)


@pytest.mark.nucleo(expect_leaks=True)
def test_a_renamed_tool_s_text_names_the_name_the_model_called() -> None:
    built = make_tool(adapter_tools.get_order, name="fetch_order")
    received = call_through_agent(built, {"order_number": "bug"})
    assert received.part.tool_name == "fetch_order"
    assert received.text.startswith("A system error occurred in fetch_order.")


def test_binary_content_reaches_the_model_natively() -> None:
    def chart(month: str) -> BinaryContent:
        """Draw the month's orders."""
        return BinaryContent(data=b"\x89PNG...", media_type="image/png")

    received = call_through_agent(wrap_tool(chart), {"month": "may"})
    assert received.channel == "success"
    files = [c for c in received.part.files if isinstance(c, BinaryContent)]
    assert [f.media_type for f in files] == ["image/png"]
    plain = call_through_agent(wrap_tool(adapter_tools.chart), {"month": "may"})
    assert (plain.channel, plain.text) == ("success", str(adapter_tools.Chart()))


def _provider_round_trip(kind: str, tool: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    """One tool call through the real OpenAI or Anthropic model class of pydantic-ai, its SDK
    on a faked transport: returns the tool result as the provider's API receives it."""
    import httpx2

    bodies: list[dict[str, Any]] = []

    def handle(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        bodies.append(body)
        first = len(bodies) == 1
        if kind == "openai":
            message: dict[str, Any] = (
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "get_order", "arguments": json.dumps(arguments)},
                        }
                    ],
                }
                if first
                else {"role": "assistant", "content": "done"}
            )
            return httpx2.Response(
                200,
                json={
                    "id": "x",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "gpt-4o",
                    "choices": [
                        {
                            "index": 0,
                            "message": message,
                            "finish_reason": "tool_calls" if first else "stop",
                        }
                    ],
                },
            )
        content: list[dict[str, Any]] = (
            [{"type": "tool_use", "id": "toolu_1", "name": "get_order", "input": arguments}]
            if first
            else [{"type": "text", "text": "done"}]
        )
        return httpx2.Response(
            200,
            json={
                "id": "msg",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": content,
                "stop_reason": "tool_use" if first else "end_turn",
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        )

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handle))
    if kind == "openai":
        from openai import AsyncOpenAI
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        client = AsyncOpenAI(api_key="test", http_client=http, max_retries=0)
        model: Any = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=client))
    else:
        from anthropic import AsyncAnthropic
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        aclient = AsyncAnthropic(api_key="test", http_client=http, max_retries=0)
        model = AnthropicModel(
            "claude-sonnet-4-5", provider=AnthropicProvider(anthropic_client=aclient)
        )

    async def main() -> str:
        async with http:
            # A small max_tokens: the Anthropic model then sends one request, not a stream.
            agent = Agent(model, tools=[tool], model_settings={"max_tokens": 1024})
            return (await agent.run("go")).output

    assert asyncio.run(main()) == "done"
    last = bodies[-1]["messages"]
    if kind == "openai":
        [sent] = [m for m in last if m["role"] == "tool"]
        return {"text": sent["content"]}
    [sent] = [
        b
        for m in last
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    text = sent["content"] if isinstance(sent["content"], str) else sent["content"][0]["text"]
    return {"text": text, "is_error": sent.get("is_error", False)}


# The model names only label the faked exchange; pydantic-ai warns once a provider retires
# one (claude-sonnet-4-5 in its releases after 2026-11-30), which says nothing of the adapter.
@pytest.mark.filterwarnings("ignore:Model '.*' is deprecated by its provider")
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_through_the_real_provider_models_the_text_arrives_exactly(kind: str) -> None:
    tool = make_tool(get_order)
    failed = _provider_round_trip(kind, tool, {"order_number": "00000000"})
    expected = call_through_agent(tool, {"order_number": "00000000"})
    if kind == "anthropic":
        assert failed == {"text": expected.text, "is_error": True}
    else:
        assert failed == {"text": expected.wrapped_text}
    ok = _provider_round_trip(kind, tool, {"order_number": "12345678"})
    assert ok["text"] == '{"items": false, "number": "12345678"}'


def _three_fetches_of_a_missing_order(tool: Any) -> tuple[Agent[None, str], list[ToolReturnPart]]:
    seen: list[ToolReturnPart] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        seen.extend(p for p in last.parts if isinstance(p, ToolReturnPart))
        if len(seen) < 3:
            call = ToolCallPart(tool_name="fetch_order", args={"order_number": "404"})
            return ModelResponse(parts=[call])
        return ModelResponse(parts=[TextPart("gave up")])

    return Agent(FunctionModel(model), tools=[tool]), seen


def test_three_404s_end_a_run_under_wrap_tool_but_not_under_make_tool(fake_upstream: Any) -> None:
    """A 404 is correctable: each one spends a retry. What the docs' retry budget says."""
    adapter_tools.arrange(fake_upstream, "not found")
    agent, seen = _three_fetches_of_a_missing_order(wrap_tool(adapter_tools.fetch_order))
    with pytest.raises(UnexpectedModelBehavior, match="exceeded max retries count of 1"):
        run(agent, "Fetch order 404.")
    assert [p.outcome for p in seen] == ["retried"]
    agent, seen = _three_fetches_of_a_missing_order(make_tool(adapter_tools.fetch_order))
    assert run(agent, "Fetch order 404.") == "gave up"
    assert [p.outcome for p in seen] == ["retried", "failed", "failed"]
