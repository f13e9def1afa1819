"""The Agent Framework adapter, through a real ``Agent`` on a scripted chat client, offline.

No network and no API key: the chat client is a ``BaseChatClient`` with the framework's
function-calling, middleware and telemetry layers, whose first response is a scripted function
call; the text asserted is the function result of the model's next request.
"""

from __future__ import annotations

from tests._frameworks import needs_frameworks

needs_frameworks("agent_framework")

import asyncio
import logging
from typing import Any

import adapter_tools
import pytest
from adapter_tools import FAILURES, ORDER_TEXT, SECRET, arrange, expected_text
from agent_framework import (
    Content,
    FunctionInvocationContext,
    FunctionTool,
    MiddlewareFailure,
    MiddlewareTermination,
    tool,
)
from agent_framework.exceptions import UserInputRequiredException
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo.adapters._core import ToolFailureText
from pytest_nucleo.adapters.agent_framework import (
    AgentFrameworkReceived,
    NucleoFunctionMiddleware,
    agent_framework_tool,
    arun_through_agent_framework,
    run_through_agent_framework,
)

SYNC_TOOL = agent_framework_tool(adapter_tools.fetch_order)
ASYNC_TOOL = agent_framework_tool(adapter_tools.afetch_order, name="fetch_order")
PLAIN_FAILURE = "Error: Function failed."
SYSTEM_TEXT = (
    "A system error occurred in leaky. The operation could not be completed.\n"
    + nucleo.UNCORRECTABLE_HINT
)


@pytest.fixture(params=["sync", "async"])
def fetch_tool(request: pytest.FixtureRequest) -> FunctionTool:
    """The same tool as a def and as an async def: the model must read the same text."""
    return SYNC_TOOL if request.param == "sync" else ASYNC_TOOL


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("failure", FAILURES)
def test_each_failure_reaches_the_model_as_the_function_result(
    fake_upstream: Any, fetch_tool: FunctionTool, failure: str, llm_snapshot: SnapshotAssertion
) -> None:
    arguments = arrange(fake_upstream, failure)
    received = run_through_agent_framework(fetch_tool, arguments)
    assert received.is_error
    assert received.channel == "function_result"
    assert received.text == expected_text(arguments)
    assert received.content is not None
    # The framework's flag stays unset: a middleware cannot set it (see the module docs).
    assert not received.flagged
    assert received.content.exception is None
    assert SECRET not in received.text
    assert received.text == llm_snapshot


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("failure", FAILURES)
def test_the_tool_alone_delivers_the_text_without_the_middleware(
    fake_upstream: Any, fetch_tool: FunctionTool, failure: str
) -> None:
    arguments = arrange(fake_upstream, failure)
    received = run_through_agent_framework(fetch_tool, arguments, middleware=())
    assert (received.is_error, received.text) == (True, expected_text(arguments))


def test_the_framework_counts_the_failed_call(fake_upstream: Any) -> None:
    arguments = arrange(fake_upstream, "throttled")
    lookup = agent_framework_tool(adapter_tools.fetch_order)
    run_through_agent_framework(lookup, arguments, middleware=())
    assert lookup.invocation_exception_count == 1  # what max_invocation_exceptions reads


@pytest.mark.nucleo(expect_leaks=True)
def test_the_middleware_answers_for_a_plain_tool_too(fake_upstream: Any) -> None:
    leaky = run_through_agent_framework(tool(adapter_tools.leaky), {"order_number": "1"})
    assert (leaky.is_error, leaky.text, leaky.flagged) == (True, SYSTEM_TEXT, False)
    arguments = arrange(fake_upstream, "not found")
    ours = run_through_agent_framework(
        tool(nucleo.llm_errors(adapter_tools.fetch_order)), arguments
    )
    assert (ours.is_error, ours.text) == (True, expected_text(arguments))


@pytest.mark.nucleo(expect_leaks=True)
def test_the_middleware_logs_what_the_runner_did_not_see(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="pytest_nucleo.runner"):
        run_through_agent_framework(tool(adapter_tools.leaky), {"order_number": "1"})
    assert "tool leaky failed" in caplog.text
    assert "KeyError" in caplog.text  # the stack, cause included
    assert SECRET not in caplog.text


@pytest.mark.parametrize("middleware", [None, ()], ids=["middleware", "tool alone"])
def test_arguments_the_schema_refuses_read_as_a_correctable_failure(middleware: Any) -> None:
    missing = run_through_agent_framework(SYNC_TOOL, {}, middleware=middleware)
    assert missing.is_error
    assert missing.text == nucleo.run_tool(adapter_tools.fetch_order, {}).text
    mistyped = run_through_agent_framework(SYNC_TOOL, {"order_number": 42}, middleware=middleware)
    assert (
        mistyped.text
        == (
            nucleo.InvalidInputException("order_number", 42, "Input should be a valid string")
        ).explain_to_llm()
    )


def test_the_middleware_reads_a_plain_tool_s_refused_arguments_too() -> None:
    received = run_through_agent_framework(tool(adapter_tools.fetch_order), {})
    assert received.text == nucleo.run_tool(adapter_tools.fetch_order, {}).text


def test_a_success_is_the_runner_s_text() -> None:
    received = run_through_agent_framework(
        agent_framework_tool(adapter_tools.order_dict), {"order_number": "1042"}
    )
    assert received == AgentFrameworkReceived(is_error=False, text=ORDER_TEXT)
    chart = run_through_agent_framework(agent_framework_tool(adapter_tools.chart), {"month": "5"})
    assert chart.text == "chart of 3 orders: 1042, 1043, 1044"  # str() of a value with no JSON


def test_the_framework_s_own_content_is_passed_on() -> None:
    def draw(month: str) -> Content:
        """Draw the month's orders."""
        return Content.from_data(b"\x89PNG", media_type="image/png")

    received = run_through_agent_framework(agent_framework_tool(draw), {"month": "5"})
    assert received.content is not None
    assert received.content.items is not None
    assert [item.type for item in received.content.items] == ["data"]
    assert not received.is_error


def test_the_run_goes_on_after_a_failure(fake_upstream: Any) -> None:
    arguments = arrange(fake_upstream, "throttled")
    # The harness asserts the model was called again with the result, and the run ended.
    assert run_through_agent_framework(SYNC_TOOL, arguments).is_error


@pytest.mark.parametrize(
    ("ours", "bare"),
    [
        (SYNC_TOOL, tool(adapter_tools.fetch_order)),
        (ASYNC_TOOL, tool(adapter_tools.afetch_order, name="fetch_order")),
        (
            agent_framework_tool(adapter_tools.fetch_order, timeout=5),
            tool(adapter_tools.fetch_order),
        ),
    ],
    ids=["sync", "async", "sync under a timeout"],
)
def test_the_schema_is_the_one_the_framework_builds(ours: FunctionTool, bare: FunctionTool) -> None:
    assert ours.to_json_schema_spec() == bare.to_json_schema_spec()
    assert ours.parameters()["required"] == ["order_number"]


@pytest.mark.nucleo(expect_leaks=True)
def test_the_name_is_the_runner_s() -> None:
    renamed = agent_framework_tool(adapter_tools.leaky, name="lookup")
    assert renamed.name == "lookup"
    received = run_through_agent_framework(renamed, {"order_number": "1"})
    assert received.text.startswith("A system error occurred in lookup.")
    beneath = agent_framework_tool(
        nucleo.tool(name="find")(adapter_tools.fresh(adapter_tools.get_order))
    )
    assert beneath.name == "find"
    assert run_through_agent_framework(beneath, {"order_number": "7"}).text == "order 7"


def test_a_tool_taking_the_context_gets_it() -> None:
    def whoami(order_number: str, ctx: FunctionInvocationContext) -> str:
        """Say which tool this is."""
        return f"{ctx.function.name} {order_number}"

    ours = agent_framework_tool(whoami)
    assert ours.to_json_schema_spec() == tool(whoami).to_json_schema_spec()
    assert run_through_agent_framework(ours, {"order_number": "7"}).text == "whoami 7"


def test_runner_options_apply() -> None:
    lookup = adapter_tools.flaky_order()
    received = run_through_agent_framework(
        agent_framework_tool(lookup, retries=1, backoff=0), {"order_number": "7"}
    )
    assert received == AgentFrameworkReceived(
        is_error=False, text='{"number": "7", "status": "shipped"}'
    )
    assert lookup.state.calls == 2


def test_a_timeout_reads_as_job_timeout() -> None:
    clock = nucleo.FakeClock()

    def slow(order_number: str) -> str:
        """Wait for the shop forever."""
        clock.sleep(60)
        return "late"

    received = run_through_agent_framework(
        agent_framework_tool(slow, timeout=30, clock=clock), {"order_number": "1"}
    )
    assert (received.is_error, received.text) == (True, adapter_tools.TIMEOUT_TEXT)


def test_the_async_harness_runs_under_a_running_loop() -> None:
    received = asyncio.run(
        arun_through_agent_framework(
            agent_framework_tool(adapter_tools.order_dict), {"order_number": "1"}
        )
    )
    assert not received.is_error


@pytest.mark.nucleo(expect_leaks=True)
def test_a_caller_skipping_parsing_reads_the_text() -> None:
    leaky = agent_framework_tool(adapter_tools.leaky)
    value = asyncio.run(leaky.invoke(arguments={"order_number": "1"}, skip_parsing=True))
    assert isinstance(value, ToolFailureText)
    assert (str(value), type(value.exception)) == (SYSTEM_TEXT, nucleo.SystemException)


@pytest.mark.parametrize(
    "signal",
    [MiddlewareTermination(), MiddlewareFailure(), UserInputRequiredException([])],
    ids=["termination", "failure", "user input"],
)
def test_the_framework_s_signals_pass_the_middleware(signal: Exception) -> None:
    context = FunctionInvocationContext(function=SYNC_TOOL, arguments={"order_number": "1"})

    async def call_next() -> None:
        raise signal

    with pytest.raises(type(signal)):
        asyncio.run(NucleoFunctionMiddleware().process(context, call_next))
    assert context.result is None


def test_options_are_checked_when_the_tool_is_wrapped() -> None:
    with pytest.raises(TypeError, match="unknown option 'retry'"):
        agent_framework_tool(retry=3)  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="name must be a non-empty string"):
        agent_framework_tool(name=" ")
    with pytest.raises(TypeError, match="wraps a function"):
        agent_framework_tool(timeout=1)("fetch_order")  # type: ignore[arg-type]


# --- what the framework does without the adapter ---------------------------------------------


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("failure", FAILURES)
def test_without_the_adapter_every_failure_reads_the_same(fake_upstream: Any, failure: str) -> None:
    arguments = arrange(fake_upstream, failure)
    plain = tool(nucleo.llm_errors(adapter_tools.fetch_order))
    received = run_through_agent_framework(plain, arguments, middleware=())
    assert (received.is_error, received.text, received.flagged) == (True, PLAIN_FAILURE, True)


@pytest.mark.nucleo(expect_leaks=True)
def test_without_the_adapter_the_flag_holds_the_raw_message() -> None:
    received = run_through_agent_framework(
        tool(adapter_tools.leaky), {"order_number": "1"}, middleware=()
    )
    assert received.text == PLAIN_FAILURE
    assert received.content is not None
    assert received.content.exception is not None
    # str(exc), secret included: what Bedrock's client appends to the model's content.
    assert SECRET in received.content.exception
    detailed = run_through_agent_framework(
        tool(adapter_tools.leaky),
        {"order_number": "1"},
        middleware=(),
        include_detailed_errors=True,
    )
    assert detailed.text == f"{PLAIN_FAILURE} Exception: 'token {SECRET}'"


def test_without_the_adapter_refused_arguments_read_as_parsing_failed() -> None:
    received = run_through_agent_framework(tool(adapter_tools.fetch_order), {}, middleware=())
    assert (received.text, received.flagged) == ("Error: Argument parsing failed.", True)
