"""The Agno adapter, through a real ``Agent`` on a scripted subclass of Agno's ``Model``.

No network and no API key: the model returns a scripted tool call, then reads the tool message;
the text asserted is that message, as the model's next call receives it.
"""

from __future__ import annotations

from tests._frameworks import needs_frameworks

needs_frameworks("agno", "openai")

import asyncio
import logging
import os
from collections.abc import Callable, Iterator
from typing import Any

import adapter_tools
import pytest
from adapter_tools import FAILURES, ORDER_TEXT, SECRET, arrange, expected_text
from agno.exceptions import RetryAgentRun, RunCancelledException, StopAgentRun
from agno.models.message import Message
from agno.models.openai import OpenAIChat
from agno.run import RunContext, RunStatus
from agno.tools import tool
from agno.tools.function import Function, ToolResult
from agno.utils.models.claude import format_messages
from pydantic import TypeAdapter
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo.adapters import agno as adapter
from pytest_nucleo.adapters.agno import (
    AgnoReceived,
    agno_tool,
    arun_through_agno,
    nucleo_tool_hook,
    run_through_agno,
)

SYNC_TOOL = agno_tool(adapter_tools.fetch_order)
ASYNC_TOOL = agno_tool(adapter_tools.afetch_order, name="fetch_order")
HOOK = [nucleo_tool_hook]


@pytest.fixture(params=["sync", "async"])
def fetch_tool(request: pytest.FixtureRequest) -> Function:
    """The same tool as a def and as an async def: the model must read the same text."""
    return SYNC_TOOL if request.param == "sync" else ASYNC_TOOL


def _wire(message: Message | None) -> dict[str, Any]:
    """The tool message as Agno sends it to an OpenAI chat model (no request is made)."""
    assert message is not None
    return OpenAIChat(id="gpt-4o")._format_message(message)


@pytest.fixture
def agno_records() -> Iterator[list[logging.LogRecord]]:
    """What Agno logs on its own logger (which prints to stdout and does not propagate)."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep()
    logging.getLogger("agno").addHandler(handler)
    try:
        yield records
    finally:
        logging.getLogger("agno").removeHandler(handler)


def _logged(records: list[logging.LogRecord]) -> str:
    formatter = logging.Formatter()
    return "\n".join(formatter.format(record) for record in records)


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("failure", FAILURES)
def test_each_failure_reaches_the_model_as_the_tool_message(
    fake_upstream: Any, fetch_tool: Function, failure: str, llm_snapshot: SnapshotAssertion
) -> None:
    arguments = arrange(fake_upstream, failure)
    received = run_through_agno(fetch_tool, arguments)
    assert received.is_error  # Agno's tool_call_error: kept for code, not sent
    assert received.channel == "tool message"
    assert received.text == expected_text(arguments)
    assert SECRET not in received.text
    assert received.text == llm_snapshot


@pytest.mark.nucleo(expect_leaks=True)
def test_the_model_reads_the_text_alone_no_error_flag(fake_upstream: Any) -> None:
    arguments = arrange(fake_upstream, "throttled")
    received = run_through_agno(SYNC_TOOL, arguments)
    assert received.message is not None
    assert received.message.tool_call_error
    text = expected_text(arguments)
    assert _wire(received.message) == {
        "role": "tool",
        "content": text,
        "tool_call_id": "call_nucleo_1",
    }
    chat, _system = format_messages([received.message])  # Agno's Claude format
    assert chat == [
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "call_nucleo_1", "content": text}],
        }
    ]


@pytest.mark.nucleo(expect_leaks=True)
def test_agno_logs_the_text_and_never_the_secret(agno_records: list[logging.LogRecord]) -> None:
    received = run_through_agno(agno_tool(adapter_tools.leaky), {"order_number": "1"})
    logged = _logged(agno_records)
    assert received.text in logged  # Agno logs the failure it was handed, as the model's text
    assert SECRET not in logged
    assert SECRET[8:] not in logged


def test_a_success_is_the_runner_s_text() -> None:
    received = run_through_agno(agno_tool(adapter_tools.order_dict), {"order_number": "1042"})
    assert received == AgnoReceived(is_error=False, text=ORDER_TEXT)
    assert received.message is not None
    assert received.message.tool_call_error is False


def test_agno_s_own_tool_result_is_passed_on() -> None:
    def draw(month: str) -> ToolResult:
        """Draw the month's orders."""
        return ToolResult(content=f"3 orders in {month}")

    received = run_through_agno(agno_tool(draw), {"month": "May"})
    assert received == AgnoReceived(is_error=False, text="3 orders in May")


def test_the_run_goes_on_after_a_failure(fake_upstream: Any) -> None:
    arguments = arrange(fake_upstream, "throttled")
    # The harness asserts the model was called again and the run completed.
    assert run_through_agno(SYNC_TOOL, arguments).is_error


def lookup(
    order_number: str, region: str = "eu", tags: list[str] | None = None, limit: int = 10
) -> str:
    """Look orders up.

    Args:
        order_number: The order's number, 8 digits.
        region: Where the order was placed.
        tags: Tags to match.
        limit: The most orders to return.
    """
    return order_number


@pytest.mark.parametrize("target", [adapter_tools.fetch_order, lookup])
def test_the_schema_is_the_one_agno_builds(target: Callable[..., Any]) -> None:
    wrapped = agno_tool(target).to_dict()
    assert wrapped == tool(target).to_dict()  # Agno's own @tool
    from_callable = Function.from_callable(target)  # what an Agent does with a bare function
    assert wrapped == from_callable.to_dict()


@pytest.mark.nucleo(expect_leaks=True)
def test_the_name_is_the_runner_s() -> None:
    renamed = agno_tool(adapter_tools.get_order, name="fetch_order")
    assert renamed.name == "fetch_order"
    received = run_through_agno(renamed, {"order_number": "bug"})
    assert received.text.startswith("A system error occurred in fetch_order.")


def test_runner_options_apply() -> None:
    lookup = adapter_tools.flaky_order()
    received = run_through_agno(agno_tool(lookup, retries=1, backoff=0), {"order_number": "7"})
    assert received == AgnoReceived(is_error=False, text='{"number": "7", "status": "shipped"}')
    assert lookup.state.calls == 2


def _slow_tool(clock: nucleo.FakeClock) -> Function:
    def slow(order_number: str) -> str:
        """Wait for the shop forever."""
        clock.sleep(60)
        return "late"

    return agno_tool(slow, timeout=30, clock=clock)


def test_a_timeout_reads_as_job_timeout_on_both_paths() -> None:
    tool_ = _slow_tool(nucleo.FakeClock())
    timed_out = AgnoReceived(is_error=True, text=adapter_tools.TIMEOUT_TEXT)
    assert run_through_agno(tool_, {"order_number": "1"}) == timed_out  # Agent.run
    assert asyncio.run(arun_through_agno(tool_, {"order_number": "1"})) == timed_out


def test_a_timeout_works_under_an_async_hook() -> None:
    # With an async hook Agno calls the sync tool in the event loop's own thread.
    seen: list[str] = []

    async def audit(function_name: str, function_call: Any, arguments: dict[str, Any]) -> Any:
        seen.append(function_name)
        return await function_call(**arguments)

    received = asyncio.run(
        arun_through_agno(_slow_tool(nucleo.FakeClock()), {"order_number": "1"}, tool_hooks=[audit])
    )
    assert received == AgnoReceived(is_error=True, text=adapter_tools.TIMEOUT_TEXT)
    assert seen == ["slow"]


def test_the_async_harness_runs_under_a_running_loop() -> None:
    received = asyncio.run(
        arun_through_agno(agno_tool(adapter_tools.order_dict), {"order_number": "1042"})
    )
    assert received == AgnoReceived(is_error=False, text=ORDER_TEXT)


def test_agno_s_own_options_are_passed_on() -> None:
    made = agno_tool(
        adapter_tools.order_dict,
        description="Fetch an order.",
        instructions="Use it for one order at a time.",
        stop_after_tool_call=True,
        requires_confirmation=True,
    )
    assert made.description == "Fetch an order."
    assert made.instructions == "Use it for one order at a time."
    assert (made.stop_after_tool_call, made.show_result) == (True, True)  # as Agno's @tool
    assert made.requires_confirmation
    quiet = agno_tool(adapter_tools.order_dict, stop_after_tool_call=True, show_result=False)
    assert (quiet.stop_after_tool_call, quiet.show_result) == (True, False)


def test_options_are_checked_when_the_tool_is_wrapped() -> None:
    with pytest.raises(TypeError, match="unknown option 'retry'"):
        agno_tool(retry=3)  # type: ignore[call-overload]


def test_what_is_not_a_plain_function_is_refused() -> None:
    with pytest.raises(TypeError, match="in place of @tool"):
        agno_tool(tool(adapter_tools.fetch_order))  # type: ignore[call-overload]

    def pages(order_number: str) -> Iterator[str]:
        """Stream an order's pages."""
        yield order_number

    with pytest.raises(TypeError, match="generator"):
        agno_tool(pages)


# --- the arguments: the runner's checks, then Agno's own validation ----------------------


def double(count: int) -> int:
    """Double a count."""
    return count * 2


def test_agno_s_coercion_still_applies() -> None:
    assert run_through_agno(agno_tool(double), {"count": "4"}).text == "8"


def test_a_mistyped_argument_reads_as_invalid_input() -> None:
    received = run_through_agno(agno_tool(double), {"count": "x"})
    expected = nucleo.InvalidInputException(
        "count", "x", "Input should be a valid integer, unable to parse string as an integer"
    )
    assert received == AgnoReceived(is_error=True, text=expected.explain_to_llm())


def test_a_missing_argument_reads_as_the_runner_s_text() -> None:
    received = run_through_agno(agno_tool(double), {})
    assert received.is_error
    assert received.text == nucleo.run_tool(double, {}).text


@pytest.mark.nucleo(expect_leaks=True)
def test_a_validation_error_inside_the_tool_is_the_tool_s_own() -> None:
    def parse(order_number: str) -> int:
        """Parse an order's total from the shop's answer."""
        return TypeAdapter(int).validate_python("not a number")

    received = run_through_agno(agno_tool(parse), {"order_number": "1"})
    assert received.text == nucleo.run_tool(parse, {"order_number": "1"}).text
    assert received.text.startswith("A system error occurred in parse.")


@pytest.mark.parametrize("hooks", [None, HOOK], ids=["adapter", "adapter and hook"])
def test_arguments_that_are_not_json_are_agno_s_to_answer(hooks: list[Any] | None) -> None:
    # Agno answers before any tool or hook runs, and does not even flag the call.
    received = run_through_agno(SYNC_TOOL, '{"order_number": ', tool_hooks=hooks)
    assert not received.is_error
    assert received.text.startswith("Error while decoding function arguments: ")
    assert received.text.endswith("Please make sure we can json.loads() the arguments and retry.")


def test_a_tool_name_agno_does_not_know_is_agno_s_to_answer() -> None:
    agent, model = adapter._agent(SYNC_TOOL, {"order_number": "1"}, HOOK)
    model.tool_name = "fetch_orders"  # the model misspells the tool's name
    with adapter._offline():
        received = adapter._received(agent.run("Call the tool."), model)
    assert received == AgnoReceived(
        is_error=False, text="Error: The requested tool does not exist or is not available."
    )


def test_a_parameter_agno_fills_reaches_the_tool() -> None:
    def session_of(order_number: str, run_context: RunContext) -> str:
        """Say which run looks the order up."""
        return type(run_context).__name__

    wrapped = agno_tool(session_of)
    assert "run_context" not in wrapped.parameters["properties"]
    assert run_through_agno(wrapped, {"order_number": "1"}).text == "RunContext"


# --- Agno's own control flow passes through ----------------------------------------------


def _retry(order_number: str) -> str:
    """Ask for the customer's id first."""
    raise RetryAgentRun("Ask the customer for their id first.")


@pytest.mark.parametrize("served", ["adapter", "hook"])
def test_retry_agent_run_is_agno_s_to_answer(served: str) -> None:
    if served == "adapter":
        received = run_through_agno(agno_tool(_retry), {"order_number": "1"})
    else:
        received = run_through_agno(_retry, {"order_number": "1"}, tool_hooks=HOOK)
    assert received == AgnoReceived(is_error=True, text="Ask the customer for their id first.")


def _stopped_model_calls(raised: Exception, hooks: list[Any] | None) -> tuple[int, RunStatus]:
    def halt(order_number: str) -> str:
        """Stop the run."""
        raise raised

    agent, model = adapter._agent(agno_tool(halt), {"order_number": "1"}, hooks)
    with adapter._offline():
        output = agent.run("Call the tool.")
    return model.calls, output.status


@pytest.mark.parametrize("hooks", [None, HOOK], ids=["adapter", "adapter and hook"])
def test_stop_and_cancel_are_agno_s_to_act_on(hooks: list[Any] | None) -> None:
    assert _stopped_model_calls(StopAgentRun("Stop here."), hooks) == (1, RunStatus.completed)
    assert _stopped_model_calls(RunCancelledException(), hooks) == (1, RunStatus.cancelled)


# --- the hook, for tools not built with the adapter --------------------------------------


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("failure", FAILURES)
@pytest.mark.parametrize("plain", [adapter_tools.fetch_order, adapter_tools.afetch_order])
def test_the_hook_reads_each_failure_of_a_plain_tool(
    fake_upstream: Any, plain: Callable[..., Any], failure: str
) -> None:
    arguments = arrange(fake_upstream, failure)
    received = run_through_agno(plain, arguments, tool_hooks=HOOK)
    assert received.is_error
    assert received.text == expected_text(arguments, name=plain.__name__)


@pytest.mark.nucleo(expect_leaks=True)
def test_the_hook_answers_for_agno_s_own_tool_and_logs_the_failure(
    caplog: pytest.LogCaptureFixture, agno_records: list[logging.LogRecord]
) -> None:
    received = run_through_agno(tool(adapter_tools.leaky), {"order_number": "1"}, tool_hooks=HOOK)
    assert received == AgnoReceived(
        is_error=True,
        text="A system error occurred in leaky. The operation could not be completed.\n"
        + nucleo.UNCORRECTABLE_HINT,
    )
    ours = _logged([record for record in caplog.records if record.name.startswith("pytest_")])
    assert "tool leaky failed" in ours  # as the runner logs one
    assert "KeyError" in ours
    assert SECRET not in ours  # masked
    # Agno's @tool logs the raw exception itself, before any hook runs: use agno_tool.
    assert SECRET in _logged(agno_records)


def test_the_hook_leaves_an_adapter_tool_s_failure_as_it_is() -> None:
    received = run_through_agno(agno_tool(double), {"count": "x"}, tool_hooks=HOOK)
    assert received == run_through_agno(agno_tool(double), {"count": "x"})


async def adouble(count: int) -> int:
    """Double a count."""
    await asyncio.sleep(0)
    return count * 2


@pytest.mark.parametrize("plain", [double, adouble])
def test_the_hook_leaves_agno_s_report_on_the_arguments(plain: Callable[..., Any]) -> None:
    received = run_through_agno(plain, {"count": "x"}, tool_hooks=HOOK)
    assert received == run_through_agno(plain, {"count": "x"})  # as without the hook
    assert received.text.startswith(f"1 validation error for {plain.__name__}\ncount\n")


@pytest.mark.nucleo(expect_leaks=True)
def test_the_hook_answers_for_what_later_hooks_raise() -> None:
    async def audit(function_name: str, function_call: Any, arguments: dict[str, Any]) -> Any:
        raise KeyError(f"audit store refused: token {SECRET}")

    received = asyncio.run(
        arun_through_agno(
            adapter_tools.order_dict, {"order_number": "1"}, tool_hooks=[*HOOK, audit]
        )
    )
    assert received.is_error
    assert received.text.startswith("A system error occurred in order_dict.")
    assert SECRET not in received.text


def test_the_hook_passes_a_success_through_on_both_paths() -> None:
    plain = adapter_tools.order_dict
    text = str(plain("1042"))  # Agno's own rendering of a value: str()
    assert run_through_agno(plain, {"order_number": "1042"}, tool_hooks=HOOK).text == text
    received = asyncio.run(arun_through_agno(plain, {"order_number": "1042"}, tool_hooks=HOOK))
    assert received == AgnoReceived(is_error=False, text=text)


# --- the harness: offline ---------------------------------------------------------------


def test_the_harness_keeps_telemetry_off_and_restores_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import agno.api.agent

    sent: list[Any] = []
    monkeypatch.setattr(agno.api.agent, "create_agent_run", lambda **kw: sent.append(kw))
    monkeypatch.setenv("AGNO_TELEMETRY", "true")  # which overrides Agent(telemetry=False)
    run_through_agno(agno_tool(adapter_tools.order_dict), {"order_number": "1"})
    assert sent == []
    assert os.environ["AGNO_TELEMETRY"] == "true"
    # Without the harness's switch, the same agent reports its run.
    agent, _model = adapter._agent(agno_tool(adapter_tools.order_dict), {"order_number": "1"}, None)
    agent.run("Call the tool.")
    assert len(sent) == 1


# --- what Agno sends without the adapter -------------------------------------------------


@pytest.mark.nucleo(expect_leaks=True)
def test_without_the_adapter_the_model_reads_the_bare_message(fake_upstream: Any) -> None:
    arguments = arrange(fake_upstream, "not found")
    received = run_through_agno(nucleo.llm_errors(adapter_tools.fetch_order), arguments)
    assert received.is_error  # kept by Agno, not sent: the wire has the text alone
    assert received.text == 'Shop: HTTP 404 Not Found at /api/orders/404: {"error":"no such order"}'
    assert set(_wire(received.message)) == {"role", "content", "tool_call_id"}


@pytest.mark.nucleo(expect_leaks=True)
def test_without_the_adapter_a_secret_reaches_the_model_and_agno_s_log(
    agno_records: list[logging.LogRecord],
) -> None:
    received = run_through_agno(adapter_tools.leaky, {"order_number": "1"})
    assert received == AgnoReceived(is_error=True, text=f"'token {SECRET}'")
    assert SECRET in _logged(agno_records)


def test_without_the_adapter_a_dict_reads_as_its_python_repr() -> None:
    received = run_through_agno(adapter_tools.order_dict, {"order_number": "1042"})
    assert received.text == str(adapter_tools.order_dict("1042"))
    assert received.text != ORDER_TEXT
