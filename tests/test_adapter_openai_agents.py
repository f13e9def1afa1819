"""The OpenAI Agents SDK adapter, against the installed ``openai-agents``, offline.

Every call goes through ``Runner.run`` with the SDK's own ``ScriptedModel``; the text asserted
is the ``function_call_output`` the model reads on its next turn.
"""

from __future__ import annotations

from tests._frameworks import needs_frameworks

needs_frameworks("agents")

import asyncio
import copy
import logging
import pickle
import subprocess
import sys
from typing import Any

import adapter_tools
import pytest
from agents import (
    Agent,
    FunctionTool,
    RunConfig,
    RunContextWrapper,
    Runner,
    ToolOutputText,
    function_tool,
)
from agents.items import ToolCallOutputItem
from agents.testing import ScriptedModel, assistant_message, function_call
from agents.tool import _FunctionToolCancelledError, default_tool_error_function
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo import CORRECTABLE_HINT, UNCORRECTABLE_HINT
from pytest_nucleo.adapters.openai_agents import (
    AgentsReceived,
    ToolFailureText,
    arun_through_agents,
    failure_error_function,
    nucleo_function_tool,
    run_through_agents,
)

SECRET = "sk-live-0123456789abcdefABCDEF"


def get_order(order_number: str, include_items: bool = False) -> dict[str, Any]:
    """Fetch one order of the shop by its number.

    Args:
        order_number: The order number, 8 digits.
        include_items: Whether to list the order's items.
    """
    if not order_number.isdigit():
        raise nucleo.InvalidInputException("order_number", order_number, "must be 8 digits")
    if order_number == "00000404":
        raise nucleo.ExternalServiceException("shop", "503 Service Unavailable")
    if order_number == "00000429":
        raise nucleo.UpstreamThrottleException("shop", "429 Too Many Requests", retry_after=30)
    if order_number == "00000500":
        raise KeyError(f"eta (token={SECRET})")
    return {"number": order_number, "items": [] if include_items else None}


async def aget_order(order_number: str, include_items: bool = False) -> dict[str, Any]:
    """Fetch one order of the shop by its number, asynchronously.

    Args:
        order_number: The order number, 8 digits.
        include_items: Whether to list the order's items.
    """
    await asyncio.sleep(0)
    return get_order(order_number, include_items)


SYNC_TOOL = nucleo_function_tool(get_order)
ASYNC_TOOL = nucleo_function_tool(aget_order)


@pytest.fixture(params=["sync", "async"])
def order_tool(request: pytest.FixtureRequest) -> FunctionTool:
    """The same tool as a def and as an async def: the model must read the same text."""
    return SYNC_TOOL if request.param == "sync" else ASYNC_TOOL


# --- failures, one per kind --------------------------------------------------------------------


def test_correctable_failure(order_tool: FunctionTool, llm_snapshot: SnapshotAssertion) -> None:
    received = run_through_agents(order_tool, {"order_number": "12x", "include_items": False})
    assert received.is_error
    assert received.channel == "function_call_output"
    assert received.text.endswith("\n" + CORRECTABLE_HINT)
    assert "'order_number'" in received.text
    assert received.text == llm_snapshot


def test_uncorrectable_failure(order_tool: FunctionTool, llm_snapshot: SnapshotAssertion) -> None:
    received = run_through_agents(order_tool, {"order_number": "00000404", "include_items": False})
    assert received.is_error
    assert received.channel == "function_call_output"
    assert received.text == (
        nucleo.ExternalServiceException("shop", "503 Service Unavailable").explain_to_llm()
    )
    assert received.text.endswith("\n" + UNCORRECTABLE_HINT)
    assert received.text == llm_snapshot


@pytest.mark.nucleo(expect_leaks=True)
def test_foreign_exception_reaches_the_model_as_the_system_exception_text(
    order_tool: FunctionTool, llm_snapshot: SnapshotAssertion, caplog: pytest.LogCaptureFixture
) -> None:
    received = run_through_agents(order_tool, {"order_number": "00000500", "include_items": False})
    assert received.is_error
    assert received.channel == "function_call_output"
    assert received.text == (
        f"A system error occurred in {order_tool.name}. The operation could not be completed.\n"
        + UNCORRECTABLE_HINT
    )
    assert "KeyError" not in received.text
    assert SECRET not in received.text
    assert received.text == llm_snapshot
    # The technical message went to the log, through the runner, at ERROR.
    errors = [r for r in caplog.records if r.name == "pytest_nucleo.runner"]
    assert [r.levelno for r in errors] == [logging.ERROR]


def test_throttled_failure_says_how_long_to_wait(
    order_tool: FunctionTool, llm_snapshot: SnapshotAssertion
) -> None:
    received = run_through_agents(order_tool, {"order_number": "00000429", "include_items": False})
    assert received.is_error
    assert received.channel == "function_call_output"
    assert "about 30 seconds" in received.text
    assert received.text.endswith("\n" + UNCORRECTABLE_HINT)
    assert received.text == llm_snapshot


# --- what the SDK does with the text -----------------------------------------------------------


def test_the_sdk_default_hides_every_failure_and_the_adapter_replaces_it() -> None:
    """Pinned SDK behaviour: without the adapter, the model reads one fixed sentence."""
    plain = function_tool(get_order)
    received = run_through_agents(plain, {"order_number": "00000404", "include_items": False})
    default = default_tool_error_function(None, Exception())  # type: ignore[arg-type]
    # The SDK's one fixed sentence, whatever failed ("... Please try again." before 0.25).
    assert default.startswith("An error occurred while running the tool.")
    # The SDK's text is a plain str: nothing marks it as a failure.
    assert received == AgentsReceived(is_error=False, text=default)


def test_success_and_failure_share_one_channel_with_no_error_flag() -> None:
    """Pinned SDK behaviour: a failure is an ordinary function_call_output; only text differs."""

    async def two_calls() -> tuple[list[Any], list[ToolCallOutputItem]]:
        model = ScriptedModel(
            [
                [
                    function_call("get_order", {"order_number": "00000001"}, call_id="ok"),
                    function_call("get_order", {"order_number": "00000404"}, call_id="ko"),
                ],
                [assistant_message("done")],
            ]
        )
        agent: Agent[None] = Agent(name="shop", model=model, tools=[SYNC_TOOL])
        result = await Runner.run(agent, "go", run_config=RunConfig(tracing_disabled=True))
        assert model.last_call is not None
        assert isinstance(model.last_call.input, list)
        sent = [i for i in model.last_call.input if i.get("type") == "function_call_output"]
        items = [i for i in result.new_items if isinstance(i, ToolCallOutputItem)]
        return sent, items

    sent, items = asyncio.run(two_calls())
    assert [sorted(item) for item in sent] == [["call_id", "output", "type"]] * 2
    ok, ko = sorted(sent, key=lambda item: item["call_id"], reverse=True)
    assert ok["output"] == '{"items": null, "number": "00000001"}'  # the runner's text
    assert ko["output"].endswith(UNCORRECTABLE_HINT)
    # Only our code can tell them apart, by the output's type.
    failed = {item.call_id: isinstance(item.output, ToolFailureText) for item in items}
    assert failed == {"ok": False, "ko": True}


def test_failure_text_carries_the_failure_and_survives_copy_and_pickle() -> None:
    text = ToolFailureText("explained", nucleo.GuardrailException("no refunds over 1000 EUR"))
    for clone in (copy.deepcopy(text), pickle.loads(pickle.dumps(text))):
        assert clone == "explained"
        assert isinstance(clone, ToolFailureText)
        assert isinstance(clone.exception, nucleo.GuardrailException)


def test_arguments_the_sdk_refuses_are_a_correctable_failure_naming_the_parameter(
    llm_snapshot: SnapshotAssertion,
) -> None:
    wrong_type = run_through_agents(SYNC_TOOL, {"order_number": 12, "include_items": False})
    missing = run_through_agents(SYNC_TOOL, {"include_items": False})
    not_json = run_through_agents(SYNC_TOOL, '{"order_number": ')
    for received in (wrong_type, missing, not_json):
        assert received.is_error
        assert received.text.endswith("\n" + CORRECTABLE_HINT)
    assert "'order_number'" in wrong_type.text
    assert "'order_number'" in missing.text
    assert "'arguments'" in not_json.text
    assert wrong_type.text == llm_snapshot
    assert missing.text == llm_snapshot
    assert not_json.text == llm_snapshot


# --- the formatter on its own ------------------------------------------------------------------


def test_failure_error_function_with_the_sdks_own_function_tool() -> None:
    plain = function_tool(get_order, failure_error_function=failure_error_function)
    ours = run_through_agents(plain, {"order_number": "00000429", "include_items": False})
    assert ours.is_error
    assert (
        ours.text
        == nucleo.UpstreamThrottleException(
            "shop", "429 Too Many Requests", retry_after=30
        ).explain_to_llm()
    )
    foreign = run_through_agents(plain, {"order_number": "00000500", "include_items": False})
    assert foreign.is_error
    assert foreign.text == (
        "A system error occurred in get_order. The operation could not be completed.\n"
        + UNCORRECTABLE_HINT
    )


def test_a_cancelled_call_reads_as_job_cancelled() -> None:
    # What the SDK hands the formatter for a cancelled call (agents.tool, 0.24).
    cancelled = _FunctionToolCancelledError(asyncio.CancelledError())
    text = failure_error_function(None, cancelled)  # type: ignore[arg-type]
    assert text == nucleo.JobCancelledException().explain_to_llm()


class StrRaises(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no message today")


def test_the_formatter_is_total_over_a_broken_message() -> None:
    text = failure_error_function(None, StrRaises())  # type: ignore[arg-type]
    assert text == (
        "A system error occurred in the tool. The operation could not be completed.\n"
        + UNCORRECTABLE_HINT
    )
    assert text.exception is not None  # type: ignore[attr-defined]
    assert str(text.exception) == "the tool: StrRaises"  # type: ignore[attr-defined]


# --- success, sync and async, the schema -------------------------------------------------------


def test_success_reaches_the_model_as_the_runners_text(order_tool: FunctionTool) -> None:
    received = run_through_agents(order_tool, {"order_number": "00000001", "include_items": True})
    assert received == AgentsReceived(
        is_error=False, text='{"items": [], "number": "00000001"}', channel="function_call_output"
    )


def test_the_async_harness_runs_in_a_running_loop() -> None:
    received = asyncio.run(
        arun_through_agents(ASYNC_TOOL, {"order_number": "00000001", "include_items": False})
    )
    assert received.text == '{"items": null, "number": "00000001"}'
    assert not received.is_error


def test_the_schema_keeps_name_description_and_parameters(order_tool: FunctionTool) -> None:
    assert order_tool.name in {"get_order", "aget_order"}
    assert order_tool.description.startswith("Fetch one order of the shop by its number")
    schema = order_tool.params_json_schema
    assert list(schema["properties"]) == ["order_number", "include_items"]
    assert schema["properties"]["order_number"]["type"] == "string"
    assert schema["properties"]["order_number"]["description"] == "The order number, 8 digits."
    assert schema["properties"]["include_items"]["type"] == "boolean"
    assert schema["properties"]["include_items"]["default"] is False
    original = get_order if order_tool.name == "get_order" else aget_order
    assert schema == function_tool(original).params_json_schema


def test_the_decorator_forms_and_the_tool_name() -> None:
    @nucleo_function_tool(description="Look an order up.")
    @nucleo.tool(name="lookup_order")
    def lookup(order_number: str) -> str:
        """Not this docstring."""
        return order_number

    assert lookup.name == "lookup_order"
    assert lookup.description == "Look an order up."
    assert run_through_agents(lookup, {"order_number": "7"}).text == "7"


def test_keyword_only_and_var_keyword_parameters_reach_the_tool() -> None:
    # The SDK refuses **kwargs in a strict schema; the option passes through.
    @nucleo_function_tool(strict_mode=False)
    def tag(order_number: str, *, colour: str = "red", **extra: int) -> str:
        """Tag an order."""
        return f"{order_number}:{colour}:{sorted(extra.items())}"

    received = run_through_agents(
        tag, {"order_number": "1", "colour": "blue", "extra": {"rank": 2}}
    )
    assert received.text == "1:blue:[('rank', 2)]"


# --- the runner's options, the SDK's context and options, values ------------------------------


def _run_with_context(tool: FunctionTool, arguments: dict[str, Any], context: Any) -> str:
    async def main() -> str:
        model = ScriptedModel(
            [[function_call(tool.name, arguments, call_id="c1")], [assistant_message("done")]]
        )
        agent: Agent[Any] = Agent(name="shop", model=model, tools=[tool])
        await Runner.run(agent, "go", context=context, run_config=RunConfig(tracing_disabled=True))
        assert model.last_call is not None
        assert isinstance(model.last_call.input, list)
        [output] = [i for i in model.last_call.input if i.get("type") == "function_call_output"]
        return str(output["output"])

    return asyncio.run(main())


def test_a_tool_taking_the_sdk_context_gets_it() -> None:
    def with_context(ctx: RunContextWrapper[dict[str, str]], order_number: str) -> str:
        """Needs the run context."""
        if order_number == "0":
            raise nucleo.InvalidInputException("order_number", order_number, "must be > 0")
        return f"{ctx.context['shop']}:{order_number}"

    tool = nucleo_function_tool(with_context)
    assert list(tool.params_json_schema["properties"]) == ["order_number"]
    assert _run_with_context(tool, {"order_number": "7"}, {"shop": "tea"}) == "tea:7"
    failed = _run_with_context(tool, {"order_number": "0"}, {"shop": "tea"})
    assert failed.startswith("The parameter 'order_number' got \"0\"")
    assert failed.endswith(CORRECTABLE_HINT)


def test_the_runner_options_reach_the_runner() -> None:
    clock = nucleo.FakeClock()
    flaky = adapter_tools.flaky_order()
    received = run_through_agents(
        nucleo_function_tool(flaky, retries=1, clock=clock), {"order_number": "1042"}
    )
    assert (received.is_error, received.text) == (False, '{"number": "1042", "status": "shipped"}')
    assert flaky.state.calls == 2
    assert clock.sleeps == [0.5]
    timed = nucleo_function_tool(
        adapter_tools.always_overloaded, timeout=30, retries=5, clock=nucleo.FakeClock()
    )
    received = run_through_agents(timed, {"order_number": "1"})
    assert (received.is_error, received.text) == (True, adapter_tools.TIMEOUT_TEXT)
    token = nucleo.CancelToken()
    token.cancel()
    received = run_through_agents(
        nucleo_function_tool(adapter_tools.never_called, cancel=token), {"order_number": "1"}
    )
    assert (received.is_error, received.text) == (True, adapter_tools.CANCELLED_TEXT)


def test_bad_runner_options_are_refused_when_the_tool_is_made() -> None:
    with pytest.raises(TypeError, match=r"unknown option 'retry'.*retries"):
        nucleo_function_tool(retry=3)  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="retries must be a whole number"):
        nucleo_function_tool(retries=-1)
    with pytest.raises(TypeError, match="disagree"):
        nucleo_function_tool(name_override="a", name="b")


@pytest.mark.nucleo(expect_leaks=True)
def test_name_override_names_the_tool_and_its_failure_text() -> None:
    tool = nucleo_function_tool(adapter_tools.get_order, name_override="fetch_order")
    assert tool.name == "fetch_order"
    received = run_through_agents(tool, {"order_number": "bug"})
    assert received.is_error
    assert received.text.startswith("A system error occurred in fetch_order.")


def test_a_value_with_no_json_form_is_a_success_read_as_its_str() -> None:
    received = run_through_agents(nucleo_function_tool(adapter_tools.chart), {"month": "may"})
    assert (received.is_error, received.text) == (False, str(adapter_tools.Chart()))


def test_the_sdk_s_own_outputs_are_passed_on() -> None:
    def note(order_number: str) -> ToolOutputText:
        """A note on an order."""
        return ToolOutputText(text=f"note on {order_number}")

    received = run_through_agents(nucleo_function_tool(note), {"order_number": "1"})
    assert "note on 1" in received.text
    assert not received.is_error


def test_a_dict_reads_as_the_runner_s_text() -> None:
    received = run_through_agents(
        nucleo_function_tool(adapter_tools.order_dict), {"order_number": "1042"}
    )
    assert received.text == adapter_tools.ORDER_TEXT


def test_is_enabled_and_needs_approval_are_the_sdk_s() -> None:
    hidden = nucleo_function_tool(adapter_tools.get_order, is_enabled=False)
    assert hidden.is_enabled is False
    guarded = nucleo_function_tool(adapter_tools.get_order, needs_approval=True)

    async def main() -> Any:
        model = ScriptedModel([[function_call("get_order", {"order_number": "1"}, call_id="c1")]])
        agent: Agent[None] = Agent(name="shop", model=model, tools=[guarded])
        return await Runner.run(agent, "go", run_config=RunConfig(tracing_disabled=True))

    result = asyncio.run(main())
    [pending] = result.interruptions
    assert pending.name == "get_order"


def test_import_pytest_nucleo_imports_no_agents_sdk() -> None:
    code = (
        "import sys, pytest_nucleo, pytest_nucleo.adapters\n"
        "print(sorted(m for m in ('agents', 'openai', 'pytest_nucleo.adapters.openai_agents')"
        " if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
