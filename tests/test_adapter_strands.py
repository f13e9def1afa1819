"""The Strands Agents adapter, through a real ``strands.Agent`` on a scripted ``Model``.

No network and no API key: the model is a ``strands.models.Model`` subclass whose first turn
calls the tool and whose second keeps the messages it is handed; the text asserted is the
``toolResult`` block of those messages.
"""

from __future__ import annotations

from tests._frameworks import needs_frameworks

needs_frameworks("strands")

import asyncio
import json
import logging
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import adapter_tools
import pytest
import strands
from adapter_tools import FAILURES, ORDER_TEXT, SECRET, arrange, expected_text
from strands import Agent, ToolContext
from strands.hooks import AfterToolCallEvent
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo import CORRECTABLE_HINT, UNCORRECTABLE_HINT
from pytest_nucleo.adapters.strands import (
    StrandsReceived,
    _results,
    _ScriptedModel,
    arun_through_strands,
    run_through_strands,
    strands_tool,
)

SYNC_TOOL = strands_tool(adapter_tools.fetch_order)
ASYNC_TOOL = strands_tool(adapter_tools.afetch_order, name="fetch_order")
TESTS = str(Path(__file__).parent)


@pytest.fixture(params=["sync", "async"])
def fetch_tool(request: pytest.FixtureRequest) -> Any:
    """The same tool as a def and as an async def: the model must read the same text."""
    return SYNC_TOOL if request.param == "sync" else ASYNC_TOOL


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("failure", FAILURES)
def test_each_failure_reaches_the_model_with_the_error_status(
    fake_upstream: Any, fetch_tool: Any, failure: str, llm_snapshot: SnapshotAssertion
) -> None:
    arguments = arrange(fake_upstream, failure)
    received = run_through_strands(fetch_tool, arguments)
    assert received.is_error
    assert received.channel == "toolResult"
    assert dict(received.block) == {
        "toolUseId": "tooluse_nucleo_1",
        "status": "error",
        "content": [{"text": expected_text(arguments)}],  # one block: nothing added, no prefix
    }
    assert received.text == expected_text(arguments)
    assert SECRET not in received.text
    assert received.text == llm_snapshot


def test_a_success_is_the_runner_s_text() -> None:
    received = run_through_strands(strands_tool(adapter_tools.order_dict), {"order_number": "1042"})
    assert received == StrandsReceived(is_error=False, text=ORDER_TEXT)
    assert received.block["status"] == "success"
    # Bare Strands renders the same dict with its own json.dumps: key order as returned.
    plain = run_through_strands(strands.tool(adapter_tools.order_dict), {"order_number": "1042"})
    assert plain.text == '{"number": "1042", "items": ["kettle", "tea"], "total": 12.5}'


def test_a_result_of_strands_own_shape_is_handed_over_unchanged() -> None:
    def draw(month: str) -> dict[str, Any]:
        """Draw the month's orders."""
        return {"status": "success", "content": [{"text": month}, {"json": {"orders": 3}}]}

    received = run_through_strands(strands_tool(draw), {"month": "May"})
    assert received.block["content"] == [{"text": "May"}, {"json": {"orders": 3}}]
    assert received == StrandsReceived(is_error=False, text='May\n{"orders": 3}')


def test_the_run_goes_on_after_a_failure(fake_upstream: Any) -> None:
    """A failed call is a result like any other: the model is called again and ends the run."""
    arguments = arrange(fake_upstream, "throttled")
    model = _ScriptedModel("fetch_order", arguments)
    agent = Agent(model=model, tools=[SYNC_TOOL], callback_handler=None)
    result = agent("Call the tool.")
    assert result.stop_reason == "end_turn"
    assert str(result).strip() == "done"  # the model's second turn
    assert [len(turn) for turn in model.turns] == [1, 3]  # asked; then call, result included
    assert _results(model.turns[1])[0]["status"] == "error"


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("adapted", [False, True], ids=["strands", "adapter"])
def test_strands_hooks_see_the_error_status_and_no_exception_under_the_adapter(
    adapted: bool,
) -> None:
    seen: list[tuple[Any, Any]] = []

    def after(event: AfterToolCallEvent) -> None:
        seen.append((event.result["status"], event.exception))

    tool = strands_tool(adapter_tools.leaky) if adapted else strands.tool(adapter_tools.leaky)
    agent = Agent(
        model=_ScriptedModel("leaky", {"order_number": "1"}), tools=[tool], callback_handler=None
    )
    agent.add_hook(after, AfterToolCallEvent)
    agent("Call the tool.")
    [(status, exception)] = seen
    assert status == "error"
    if adapted:
        assert exception is None
    else:
        assert isinstance(exception, KeyError)
        assert SECRET in str(exception)


def test_the_tool_spec_is_the_one_strands_builds() -> None:
    def get_order(
        order_number: Annotated[str, "The 8-digit number"], include_items: bool = False
    ) -> dict[str, Any]:
        """Fetch one order.

        Args:
            include_items: Whether to list the order's items.
        """
        return {}

    def refund(order_number: str, tool_context: ToolContext) -> str:
        """Refund an order."""
        return order_number

    assert SYNC_TOOL.tool_spec == strands.tool(adapter_tools.fetch_order).tool_spec
    assert (
        ASYNC_TOOL.tool_spec
        == strands.tool(name="fetch_order")(adapter_tools.afetch_order).tool_spec
    )
    assert strands_tool(get_order).tool_spec == strands.tool(get_order).tool_spec
    # A sync tool under a timeout becomes an async def: the same spec.
    assert strands_tool(get_order, timeout=5).tool_spec == strands.tool(get_order).tool_spec
    assert (
        strands_tool(context=True)(refund).tool_spec == strands.tool(context=True)(refund).tool_spec
    )
    described = strands_tool(description="Look an order up.", name="look_up")(get_order)
    assert (
        described.tool_spec
        == strands.tool(description="Look an order up.", name="look_up")(get_order).tool_spec
    )
    assert described.tool_name == "look_up"


@pytest.mark.nucleo(expect_leaks=True)
def test_the_failure_texts_use_the_name_the_model_called() -> None:
    received = run_through_strands(
        strands_tool(adapter_tools.leaky, name="lookup"), {"order_number": "1"}
    )
    assert received.text.startswith("A system error occurred in lookup.")

    @strands_tool
    @nucleo.tool(name="fetch")
    def leaky(order_number: str) -> str:
        """Fetch an order."""
        raise KeyError(SECRET)

    assert leaky.tool_name == "fetch"
    assert run_through_strands(leaky, {"order_number": "1"}).text.startswith(
        "A system error occurred in fetch."
    )


def test_input_strands_refuses_is_a_correctable_failure(
    llm_snapshot: SnapshotAssertion, caplog: pytest.LogCaptureFixture
) -> None:
    def count(order_number: str, times: int) -> str:
        """Count an order."""
        return order_number * times

    runner_s = nucleo.run_tool(count, {"order_number": "1"}).text
    caplog.clear()
    tool = strands_tool(count)
    missing = run_through_strands(tool, {"order_number": "1"})
    assert missing.text == runner_s  # the runner's own words for a missing parameter
    wrong = run_through_strands(tool, {"order_number": "1", "times": "many"})
    for received in (missing, wrong):
        assert received.is_error
        assert received.text.endswith("\n" + CORRECTABLE_HINT)
        assert "'times'" in received.text
        assert "Validation failed" not in received.text
    assert missing.text == llm_snapshot
    assert wrong.text == llm_snapshot
    # The runner never saw these calls: the adapter logs them as it would.
    assert [r.levelno for r in caplog.records if r.name == "pytest_nucleo.runner"] == [
        logging.WARNING
    ] * 2


async def _result_of(tool: Any, tool_use: Any) -> Any:
    events = [event async for event in tool.stream(tool_use, {})]
    return events[-1].tool_result


@pytest.mark.nucleo(expect_leaks=True)
def test_another_error_strands_raises_before_the_function_runs_reads_as_the_system_text(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def refund(order_number: str, tool_context: ToolContext) -> str:
        """Refund an order."""
        raise AssertionError("not called: Strands cannot fill tool_context")

    # Called with no agent in the invocation state, Strands cannot build the ToolContext.
    tool_use = {"toolUseId": "t1", "name": "refund", "input": {"order_number": "7"}}
    plain = asyncio.run(_result_of(strands.tool(context=True)(refund), tool_use))
    assert plain["content"] == [{"text": "Error: KeyError - 'agent'"}]
    adapted = asyncio.run(_result_of(strands_tool(context=True)(refund), tool_use))
    assert adapted == {
        "toolUseId": "t1",
        "status": "error",
        "content": [
            {
                "text": "A system error occurred in refund. The operation could not be "
                "completed.\n" + UNCORRECTABLE_HINT
            }
        ],
    }
    assert [r.levelno for r in caplog.records if r.name == "pytest_nucleo.runner"] == [
        logging.ERROR
    ]


def test_without_the_adapter_refused_input_reads_as_pydantic_s_report() -> None:
    received = run_through_strands(strands.tool(adapter_tools.fetch_order), {})
    assert received.is_error
    assert received.text.startswith("Error: Validation failed for input parameters: 1 validation")


def test_runner_options_apply() -> None:
    lookup = adapter_tools.flaky_order()
    received = run_through_strands(
        strands_tool(lookup, retries=1, backoff=0), {"order_number": "7"}
    )
    assert received == StrandsReceived(is_error=False, text='{"number": "7", "status": "shipped"}')
    assert lookup.state.calls == 2


def test_a_timeout_reads_as_job_timeout() -> None:
    clock = nucleo.FakeClock()

    def slow(order_number: str) -> str:
        """Wait for the shop forever."""
        clock.sleep(60)
        return "late"

    async def aslow(order_number: str) -> str:
        """Wait for the shop forever."""
        await clock.asleep(60)
        return "late"

    for tool in (
        strands_tool(slow, timeout=30, clock=clock),
        strands_tool(aslow, timeout=30, clock=clock),
    ):
        received = run_through_strands(tool, {"order_number": "1"})
        assert received == StrandsReceived(is_error=True, text=adapter_tools.TIMEOUT_TEXT)


def test_a_tool_context_reaches_the_function() -> None:
    @strands_tool(context=True)
    def whoami(order_number: str, tool_context: ToolContext) -> str:
        """Say which call this is."""
        return f"{order_number} in {tool_context.tool_use['toolUseId']}"

    received = run_through_strands(whoami, {"order_number": "7"})
    assert received == StrandsReceived(is_error=False, text="7 in tooluse_nucleo_1")


@pytest.mark.parametrize("adapted", [False, True], ids=["strands", "adapter"])
def test_an_interrupt_stops_the_agent_for_a_human_as_without_the_adapter(adapted: bool) -> None:
    def refund(order_number: str, tool_context: ToolContext) -> str:
        """Refund an order once a human approves."""
        answer = tool_context.interrupt("approve", reason=f"refund {order_number}?")
        return f"refund {order_number}: {answer}"

    tool = strands_tool(context=True)(refund) if adapted else strands.tool(context=True)(refund)
    model = _ScriptedModel("refund", {"order_number": "7"})
    agent = Agent(model=model, tools=[tool], callback_handler=None)
    asked = agent("Refund order 7.")
    assert asked.stop_reason == "interrupt"
    assert asked.interrupts is not None
    assert [(i.name, i.reason) for i in asked.interrupts] == [("approve", "refund 7?")]
    assert len(model.turns) == 1  # the model has not been sent anything yet
    answer = {"interruptResponse": {"interruptId": asked.interrupts[0].id, "response": "yes"}}
    done = agent([answer])  # type: ignore[arg-type]  # an InterruptResponseContent
    assert done.stop_reason == "end_turn"
    assert _results(model.turns[1]) == [
        {
            "toolUseId": "tooluse_nucleo_1",
            "status": "success",
            "content": [{"text": "refund 7: yes"}],
        }
    ]


def test_a_method_stays_an_adapted_tool() -> None:
    class Shop:
        def __init__(self) -> None:
            self.prefix = "order"

        @strands_tool
        def describe(self, order_number: str) -> str:
            """Describe an order."""
            if not order_number.isdigit():
                raise nucleo.InvalidInputException("order_number", order_number, "digits only")
            return f"{self.prefix} {order_number}"

    shop = Shop()
    assert run_through_strands(shop.describe, {"order_number": "7"}).text == "order 7"
    typo = run_through_strands(shop.describe, {"order_number": "7a"})
    expected = nucleo.InvalidInputException("order_number", "7a", "digits only")
    assert (typo.is_error, typo.text) == (True, expected.explain_to_llm())
    refused = run_through_strands(shop.describe, {})
    assert refused.is_error
    assert "Validation failed" not in refused.text
    assert "self" not in shop.describe.tool_spec["inputSchema"]["json"]["properties"]


def test_the_async_harness_runs_under_a_running_loop() -> None:
    received = asyncio.run(
        arun_through_strands(strands_tool(adapter_tools.order_dict), {"order_number": "1042"})
    )
    assert received == StrandsReceived(is_error=False, text=ORDER_TEXT)
    with pytest.raises(RuntimeError, match="arun_through_strands"):
        asyncio.run(_sync_harness_under_a_loop())


async def _sync_harness_under_a_loop() -> StrandsReceived:
    return run_through_strands(SYNC_TOOL, {"order_number": "1"})


def test_what_cannot_be_wrapped_is_refused_when_wrapped() -> None:
    with pytest.raises(TypeError, match="unknown option 'retry'"):
        strands_tool(retry=3)  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="timeout"):
        strands_tool(timeout=-1)

    async def stream_orders(month: str) -> Any:
        """Stream the month's orders."""
        yield month

    with pytest.raises(TypeError, match="async generator stream_orders"):
        strands_tool(stream_orders)
    with pytest.raises(TypeError, match="wraps a function"):
        strands_tool("fetch_order")  # type: ignore[call-overload]


# --- what Strands does without the adapter ------------------------------------------------


@pytest.mark.nucleo(expect_leaks=True)
def test_without_the_adapter_the_model_reads_the_class_name_and_the_raw_message(
    fake_upstream: Any,
) -> None:
    not_found = run_through_strands(
        strands.tool(nucleo.llm_errors(adapter_tools.fetch_order)),
        arrange(fake_upstream, "not found"),
    )
    assert not_found.is_error
    assert not_found.text.startswith("Error: Http404Exception - Shop: HTTP 404 Not Found at ")
    assert not not_found.text.endswith(UNCORRECTABLE_HINT)
    foreign = run_through_strands(strands.tool(adapter_tools.leaky), {"order_number": "1"})
    assert foreign == StrandsReceived(is_error=True, text=f"Error: KeyError - 'token {SECRET}'")


# --- what each provider sends the model of the error status -------------------------------


def _messages(block: Any) -> Any:
    use = {"toolUseId": "tooluse_nucleo_1", "name": "fetch_order", "input": {"order_number": "1"}}
    return [
        {"role": "user", "content": [{"text": "Call the tool."}]},
        {"role": "assistant", "content": [{"toolUse": use}]},
        {"role": "user", "content": [{"toolResult": dict(block)}]},
    ]


def _openai(block: Any) -> Any:
    from strands.models.openai import OpenAIModel

    model = OpenAIModel(client_args={"api_key": "unused"}, model_id="gpt-4o")
    return model.format_request(_messages(block))["messages"][-1]


def _anthropic(block: Any) -> Any:
    from strands.models.anthropic import AnthropicModel

    model = AnthropicModel(
        client_args={"api_key": "unused"}, model_id="claude-sonnet-4-6", max_tokens=64
    )
    return model.format_request(_messages(block))["messages"][-1]["content"][0]


def _bedrock(model_id: str | None = None, **config: Any) -> Any:
    def send(block: Any) -> Any:
        import boto3
        from strands.models.bedrock import BedrockModel

        if model_id is not None:
            config["model_id"] = model_id
        # Credentials of its own: boto3 would otherwise look for them on the network.
        session = boto3.Session(
            aws_access_key_id="unused", aws_secret_access_key="unused", region_name="us-east-1"
        )
        model = BedrockModel(boto_session=session, **config)
        return model.format_request(_messages(block))["messages"][-1]["content"][0]["toolResult"]

    return send


def _gemini(block: Any) -> Any:
    from strands.models.gemini import GeminiModel

    model = GeminiModel(client_args={"api_key": "unused"}, model_id="gemini-2.5-flash")
    parts = model._format_request_content(_messages(block))[-1].parts
    assert parts is not None
    response = parts[0].function_response
    assert response is not None
    return response.model_dump(exclude_none=True)


TEXT = "the failure's text"
BLOCK = {"toolUseId": "tooluse_nucleo_1", "status": "error", "content": [{"text": TEXT}]}
PROVIDERS = {
    # provider: (the module it needs, how it formats the block, what it sends)
    "anthropic": (
        "anthropic",
        _anthropic,
        {
            "type": "tool_result",
            "tool_use_id": "tooluse_nucleo_1",
            "is_error": True,
            "content": [{"type": "text", "text": TEXT}],
        },
    ),
    "bedrock, Strands' default model (Claude)": (
        "boto3",
        _bedrock(),
        {"toolUseId": "tooluse_nucleo_1", "status": "error", "content": [{"text": TEXT}]},
    ),
    "bedrock, Amazon Nova": (
        "boto3",
        _bedrock("amazon.nova-pro-v1:0"),
        {"toolUseId": "tooluse_nucleo_1", "status": "error", "content": [{"text": TEXT}]},
    ),
    "bedrock, another model": (
        "boto3",
        _bedrock("meta.llama3-70b-instruct-v1:0"),
        {"toolUseId": "tooluse_nucleo_1", "content": [{"text": TEXT}]},
    ),
    "bedrock, another model, include_tool_result_status=True": (
        "boto3",
        _bedrock("meta.llama3-70b-instruct-v1:0", include_tool_result_status=True),
        {"toolUseId": "tooluse_nucleo_1", "status": "error", "content": [{"text": TEXT}]},
    ),
    "openai": (
        "openai",
        _openai,
        {"role": "tool", "tool_call_id": "tooluse_nucleo_1", "content": TEXT},
    ),
    "gemini": (
        "google.genai",
        _gemini,
        {"id": "tooluse_nucleo_1", "name": "fetch_order", "response": {"output": [{"text": TEXT}]}},
    ),
}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_error_status_reaches_the_model_only_through_some_providers(provider: str) -> None:
    module, send, sent = PROVIDERS[provider]
    needs_frameworks(module)
    assert send(BLOCK) == sent


def test_the_block_the_providers_format_is_the_one_the_harness_reads(fake_upstream: Any) -> None:
    arguments = arrange(fake_upstream, "not found")
    received = run_through_strands(SYNC_TOOL, arguments)
    assert dict(received.block) == {**BLOCK, "content": [{"text": expected_text(arguments)}]}


# --- Strands' telemetry -------------------------------------------------------------------

_LEAKY_RUNS = '''
import strands
from pytest_nucleo.adapters.strands import run_through_strands, strands_tool

def leaky(order_number: str) -> str:
    """Fetch an order; a bug puts a secret in a foreign exception."""
    raise KeyError("token sk-live-0123456789abcdefABCDEF")

plain = run_through_strands(strands.tool(leaky), {"order_number": "1"})
adapted = run_through_strands(strands_tool(leaky), {"order_number": "1"})
'''


def _python(code: str) -> subprocess.CompletedProcess[str]:
    # No OpenTelemetry configuration from the environment the suite runs in.
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=TESTS,
        env=env,
    )


@pytest.mark.slow
def test_strands_starts_no_exporter_without_configuration() -> None:
    done = _python(
        _LEAKY_RUNS
        + """
import threading
from opentelemetry import metrics, trace
print(type(trace.get_tracer_provider()).__name__, type(metrics.get_meter_provider()).__name__)
print(sorted(thread.name for thread in threading.enumerate()))
"""
    )
    assert done.returncode == 0, done.stderr
    providers, threads = done.stdout.splitlines()[-2:]
    # The API's stand-ins, which drop every span and measurement: nothing is exported.
    assert providers == "ProxyTracerProvider _ProxyMeterProvider"
    assert threads == "['MainThread']"


@pytest.mark.slow
def test_a_configured_tracer_records_no_secret_under_the_adapter() -> None:
    """Bare Strands hands the tool's exception to its tracer, which records its message and
    stack on the span; under the adapter the span has the status and the failure's text."""
    done = _python(
        """
import json
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
"""
        + _LEAKY_RUNS
        + """
tools = [s for s in exporter.get_finished_spans() if s.name == "execute_tool leaky"]
print(json.dumps([[s.status.status_code.name, s.status.description, s.to_json()] for s in tools]))
"""
    )
    assert done.returncode == 0, done.stderr
    (plain_status, plain_text, plain), (status, text, adapted) = json.loads(
        done.stdout.splitlines()[-1]
    )
    assert (plain_status, plain_text) == ("ERROR", f"'token {SECRET}'")
    assert SECRET in plain
    assert "exception.stacktrace" in plain
    assert (status, text) == (
        "ERROR",
        "A system error occurred in leaky. The operation could not be completed.\n"
        + UNCORRECTABLE_HINT,
    )
    assert SECRET not in adapted
    assert SECRET[8:] not in adapted
    assert "exception.stacktrace" not in adapted
    assert Counter(done.stderr.split()).get(SECRET, 0) == 0
