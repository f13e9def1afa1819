"""The CrewAI adapter, through a real ``Agent`` (and ``Crew``) on a scripted ``BaseLLM``, offline.

No network, no API key, CrewAI's telemetry off: the model is a ``BaseLLM`` subclass returning a
scripted tool call, natively or as ReAct text; the text asserted is what CrewAI puts in the
model's next input (the ``role="tool"`` message, or the text after ``Observation:``).

CrewAI pins older mcp, openai, httpx and pydantic than the frameworks extra, so these tests run
in an environment of their own (``bash .ci/apart crewai``) and skip elsewhere.
"""

from __future__ import annotations

from tests._doc_blocks import Block, python_blocks_using
from tests._frameworks import needs_apart

needs_apart("crewai")

import asyncio
import inspect
import os
from typing import Any, Literal

import adapter_tools
import pytest
from adapter_tools import FAILURES, ORDER_TEXT, SECRET, arrange, expected_text
from crewai import Agent, Crew, Task
from crewai.crews.crew_output import CrewOutput
from crewai.tools import ToolFailure, tool
from crewai.tools.base_tool import Tool
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo.adapters.crewai import (
    RETRYABLE,
    CrewAIReceived,
    arun_through_crewai,
    crewai_tool,
    is_retryable,
    run_through_crewai,
    tool_failure,
)

SYNC_TOOL = crewai_tool(adapter_tools.fetch_order)
ASYNC_TOOL = crewai_tool(adapter_tools.afetch_order, name="fetch_order")
PATHS = ("native", "react")
CrewPath = Literal["native", "react"]

# What CrewAI's retryable says for each of the four failures: whether the same call could
# succeed later (a 404 will not; a throttle and a timeout may; a bug will not).
RETRYABLE_BY_FAILURE = {
    "not found": False,
    "throttled": True,
    "read timeout": True,
    "foreign": False,
}


@pytest.fixture(params=["sync", "async"])
def fetch_tool(request: pytest.FixtureRequest) -> Tool[..., Any]:
    """The same tool as a def and as an async def: the model must read the same text."""
    return SYNC_TOOL if request.param == "sync" else ASYNC_TOOL


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("failure", FAILURES)
def test_each_failure_reaches_the_model_as_exactly_its_text(
    fake_upstream: Any,
    fetch_tool: Tool[..., Any],
    failure: str,
    path: CrewPath,
    llm_snapshot: SnapshotAssertion,
) -> None:
    arguments = arrange(fake_upstream, failure)
    received = run_through_crewai(fetch_tool, arguments, path=path)
    assert received.text == expected_text(arguments)
    assert received.channel == ("tool message" if path == "native" else "observation")
    # CrewAI records the call as failed; it sends the model no flag, only the text.
    assert received.is_error
    assert received.failure is not None
    assert received.failure.code is None  # a code would be appended to the text
    assert received.failure.retryable is RETRYABLE_BY_FAILURE[failure]
    assert SECRET not in received.text
    assert received.text == llm_snapshot


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("path", PATHS)
def test_the_message_carries_no_flag_the_model_could_read(path: CrewPath) -> None:
    received = run_through_crewai(SYNC_TOOL, {"order_number": "bug"}, path=path)
    if path == "native":
        (message,) = [m for m in received.messages if m.get("role") == "tool"]
        assert set(message) == {"role", "tool_call_id", "name", "content"}
        assert message["content"] == received.text
    else:
        (step,) = [
            m
            for m in received.messages
            if m.get("role") == "assistant" and "Observation:" in str(m.get("content"))
        ]
        assert str(step["content"]).endswith("\nObservation: " + received.text)


@pytest.mark.parametrize("path", PATHS)
def test_a_success_is_the_runner_s_text(path: CrewPath) -> None:
    received = run_through_crewai(
        crewai_tool(adapter_tools.order_dict),
        {"order_number": "1042"},
        path=path,
    )
    assert (received.is_error, received.text) == (False, ORDER_TEXT)
    assert received.failure is None


def test_a_tool_failure_the_tool_returns_itself_is_passed_on() -> None:
    def post(channel: str) -> Any:
        """Post to a chat channel."""
        return ToolFailure(message="No such channel.", code="channel_not_found")

    received = run_through_crewai(crewai_tool(post), {"channel": "x"})
    assert received.text == "No such channel. (code: channel_not_found)"  # CrewAI's rendering
    assert received.failure == ToolFailure(message="No such channel.", code="channel_not_found")


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("path", PATHS)
def test_the_tool_runs_once_per_call(path: CrewPath) -> None:
    calls = []

    def fetch(order_number: str) -> str:
        """Fetch an order."""
        calls.append(order_number)
        raise KeyError(order_number)

    run_through_crewai(crewai_tool(fetch), {"order_number": "1"}, path=path)
    assert calls == ["1"]  # not CrewAI's retries of a raised exception


@pytest.mark.nucleo(expect_leaks=True)
def test_a_crew_goes_on_after_a_failure_and_records_it(fake_upstream: Any) -> None:
    from pytest_nucleo.adapters.crewai import _offline, _ScriptedLLM

    arguments = arrange(fake_upstream, "throttled")
    with _offline():
        model = _ScriptedLLM(model="scripted", tool_name="fetch_order", arguments=arguments)
        agent = Agent(role="r", goal="g", backstory="b", llm=model, tools=[SYNC_TOOL])
        task = Task(description="Fetch order 429.", expected_output="The order.", agent=agent)
        output = Crew(agents=[agent], tasks=[task]).kickoff()
    assert isinstance(output, CrewOutput)
    assert output.raw == "done"  # the model was asked again, and answered
    (record,) = output.tasks_output[0].tool_failures
    assert record.failure.message == expected_text(arguments)
    assert record.failure.retryable
    assert record.failure.details == {"exception": "Http429Exception", "correctable": False}


def test_the_schema_and_description_are_the_ones_crewai_builds() -> None:
    plain = tool(adapter_tools.fetch_order)
    assert SYNC_TOOL.args_schema.model_json_schema() == plain.args_schema.model_json_schema()
    assert SYNC_TOOL.description == plain.description
    assert SYNC_TOOL.name == "fetch_order"
    assert inspect.signature(SYNC_TOOL.func) == inspect.signature(adapter_tools.fetch_order)


@pytest.mark.parametrize("path", PATHS)
def test_arguments_crewai_refuses_are_a_correctable_failure(
    path: CrewPath, caplog: pytest.LogCaptureFixture
) -> None:
    # In the runner's own words for a missing parameter, not pydantic's report.
    runner_s_words = nucleo.run_tool(adapter_tools.get_order, {}).text
    caplog.clear()
    get_order = crewai_tool(adapter_tools.get_order)
    missing = run_through_crewai(get_order, {}, path=path)
    assert missing.text == runner_s_words
    assert missing.failure is not None
    assert missing.failure.details == {"exception": "InvalidInputException", "correctable": True}
    assert not missing.failure.retryable
    mistyped = run_through_crewai(get_order, {"order_number": 5}, path=path)
    assert (
        mistyped.text
        == nucleo.InvalidInputException(
            "order_number", 5, "Input should be a valid string"
        ).explain_to_llm()
    )
    # Logged as the runner logs a correctable failure: the runner never saw these calls.
    assert [r.levelname for r in caplog.records if "get_order" in r.getMessage()] == [
        "WARNING",
        "WARNING",
    ]


def test_runner_options_apply() -> None:
    lookup = adapter_tools.flaky_order()
    received = run_through_crewai(crewai_tool(lookup, retries=1, backoff=0), {"order_number": "7"})
    assert received == CrewAIReceived(is_error=False, text='{"number": "7", "status": "shipped"}')
    assert lookup.state.calls == 2


def test_crewai_s_own_options_are_passed_on() -> None:
    made = crewai_tool(result_as_answer=True, max_usage_count=3)(adapter_tools.order_dict)
    assert (made.result_as_answer, made.max_usage_count) == (True, 3)


@pytest.mark.parametrize("path", PATHS)
def test_a_timeout_reads_as_job_timeout(path: CrewPath) -> None:
    clock = nucleo.FakeClock()

    def slow(order_number: str) -> str:
        """Wait for the shop forever."""
        clock.sleep(60)
        return "late"

    tool_ = crewai_tool(slow, timeout=30, clock=clock)
    received = run_through_crewai(tool_, {"order_number": "1"}, path=path)
    assert (received.is_error, received.text) == (True, adapter_tools.TIMEOUT_TEXT)
    assert received.failure is not None
    assert received.failure.retryable


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("path", PATHS)
def test_the_async_harness_reads_the_same(path: CrewPath) -> None:
    arguments = {"order_number": "bug"}
    received = asyncio.run(arun_through_crewai(ASYNC_TOOL, arguments, path=path))
    assert received.text == expected_text(arguments)


def test_the_sync_harness_refuses_a_running_loop() -> None:
    async def inside() -> None:
        run_through_crewai(SYNC_TOOL, {"order_number": "1"})

    with pytest.raises(RuntimeError, match="await arun_through_crewai"):
        asyncio.run(inside())


def test_the_harness_turns_crewai_s_telemetry_off_and_restores_the_environment() -> None:
    before = {k: os.environ.get(k) for k in ("CREWAI_DISABLE_TELEMETRY", "OTEL_SDK_DISABLED")}
    seen = {}

    def look(order_number: str) -> str:
        """Read the environment the tool runs in."""
        seen.update({k: os.environ.get(k) for k in before})
        return "ok"

    run_through_crewai(crewai_tool(look), {"order_number": "1"})
    assert seen == {"CREWAI_DISABLE_TELEMETRY": "true", "OTEL_SDK_DISABLED": "true"}
    assert {k: os.environ.get(k) for k in before} == before


# --- correctability and CrewAI's retryable --------------------------------------------------


def test_every_class_of_the_failure_set_has_a_retryable_entry() -> None:
    failure_set = {
        value
        for name in nucleo.__all__
        if isinstance(value := getattr(nucleo, name), type)
        and issubclass(value, nucleo.LLMReadableException)
    }
    assert failure_set - set(RETRYABLE) == set()  # a new class must be mapped on purpose
    assert set(RETRYABLE) - failure_set == set()  # and the table names only public ones


@pytest.mark.parametrize(
    ("failure", "correctable", "retryable"),
    [
        (nucleo.InvalidInputException("order_number", "12-AB", "8 digits"), True, False),
        (nucleo.ResourceNotFoundException("order", "77"), True, False),
        (nucleo.UpstreamThrottleException("Shop", "HTTP 429", retry_after=30), False, True),
        (nucleo.ExternalServiceException("Shop", "HTTP 503"), False, True),
        (nucleo.JobTimeoutException(30), False, True),
        (nucleo.UnauthorizedException("Shop", "bad key"), False, False),
        (nucleo.SystemException("fetch_order", "KeyError"), False, False),
        (nucleo.JobCancelledException(), False, False),
        (nucleo.CorrectableRuntimeLLMException("try another"), True, False),
        (nucleo.QuotaExhaustedException("openai", "acme"), False, False),
        (nucleo.http_exception("Shop", "/orders", 402, b"card declined"), False, False),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, Exception) else str(value),
)
def test_retryable_is_not_correctability(
    failure: nucleo.LLMReadableException, correctable: bool, retryable: bool
) -> None:
    assert failure.is_correctable is correctable
    assert is_retryable(failure) is retryable
    result = nucleo.ToolResult(is_error=True, text=failure.explain_to_llm(), exception=failure)
    made = tool_failure(result)
    assert (made.message, made.code, made.retryable) == (failure.explain_to_llm(), None, retryable)
    assert made.as_agent_message() == failure.explain_to_llm()
    assert made.details == {"exception": type(failure).__name__, "correctable": correctable}


def test_a_subclass_of_your_own_takes_its_nearest_entry() -> None:
    class MaintenanceWindow(nucleo.ExternalServiceException):
        pass

    assert is_retryable(MaintenanceWindow("Shop", "down for maintenance"))


def test_bad_input_is_refused_clearly() -> None:
    with pytest.raises(TypeError, match="exception of the failure set; got a KeyError"):
        is_retryable(KeyError("x"))  # type: ignore[arg-type]
    ok = nucleo.run_tool(adapter_tools.order_dict, {"order_number": "1"})
    with pytest.raises(ValueError, match="failed call's result; this call succeeded"):
        tool_failure(ok)
    with pytest.raises(TypeError, match="unknown option 'retry'"):
        crewai_tool(retry=3)  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="no docstring"):
        crewai_tool(lambda order_number: order_number)
    with pytest.raises(TypeError, match="wraps a function; got a str"):
        crewai_tool("fetch_order")  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="path must be 'native' or 'react'"):
        run_through_crewai(SYNC_TOOL, {}, path="json")  # type: ignore[arg-type]


# --- what CrewAI sends without the adapter --------------------------------------------------

PLAIN = tool("fetch_order")(nucleo.llm_errors(adapter_tools.fetch_order))


@pytest.mark.nucleo(expect_leaks=True)
def test_without_the_adapter_native_calling_sends_the_raw_message(fake_upstream: Any) -> None:
    bare = tool(adapter_tools.fetch_order)  # a bug's KeyError, raised as it is
    received = run_through_crewai(bare, {"order_number": "bug"})
    assert received.text == f"Error executing tool: 'token {SECRET}'"  # the secret, to the model
    arguments = arrange(fake_upstream, "not found")
    received = run_through_crewai(PLAIN, arguments)
    assert received.text.startswith("Error executing tool: Shop: HTTP 404 Not Found")
    assert not received.text.endswith(nucleo.CORRECTABLE_HINT)  # no hint line


@pytest.mark.nucleo(expect_leaks=True)
def test_without_the_adapter_react_calls_the_tool_six_times() -> None:
    calls = []

    def fetch(order_number: str) -> str:
        """Fetch an order."""
        calls.append(order_number)
        raise KeyError(f"token {SECRET}")

    received = run_through_crewai(tool(fetch), {"order_number": "1"}, path="react")
    assert len(calls) == 6
    assert SECRET in received.text
    assert "I encountered an error while trying to use the tool" in received.text


@pytest.mark.parametrize(
    ("path", "start"),
    [
        ("native", "Error executing tool: Tool 'get_order' arguments validation failed: 1 valid"),
        ("react", "\nI encountered an error while trying to use the tool. This was the error: Ar"),
    ],
)
def test_without_the_adapter_a_refused_argument_reads_as_pydantic_s_report(
    path: CrewPath, start: str
) -> None:
    received = run_through_crewai(tool(adapter_tools.get_order), {}, path=path)
    assert received.text.startswith(start)
    assert "validation error for Get_Order" in received.text


def test_a_code_on_a_tool_failure_is_appended_to_the_text() -> None:
    # Why the adapter sets no code: CrewAI would add it to what the model reads.
    failure = ToolFailure(message="text", code="Http404Exception")
    assert failure.as_agent_message() == "text (code: Http404Exception)"


# --- the docs' examples, which the main environment's docs tests skip ------------------------

DOC_BLOCKS = python_blocks_using("pytest_nucleo.adapters.crewai")


def test_the_docs_have_crewai_examples() -> None:
    # Guards the test below: were the blocks not found, it would check nothing.
    assert [block.page for block in DOC_BLOCKS] == ["docs/how-to/frameworks.md"]


@pytest.mark.parametrize("block", DOC_BLOCKS, ids=[block.id for block in DOC_BLOCKS])
def test_the_docs_examples_run(block: Block) -> None:
    exec(compile(block.code, block.page, "exec"), {"__name__": "docs"})
