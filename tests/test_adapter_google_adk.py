"""The Google ADK adapter, through a real ``Runner`` and ``LlmAgent`` on a scripted ``BaseLlm``.

No network and no API key: the model is a ``BaseLlm`` subclass returning scripted function
calls; the text asserted is the function response of the model's next request.
"""

from __future__ import annotations

from tests._frameworks import needs_frameworks

needs_frameworks("google.adk")

import asyncio
from typing import Any

import adapter_tools
import pytest
from adapter_tools import FAILURES, ORDER_TEXT, SECRET, arrange, expected_text
from google.adk.plugins.reflect_retry_tool_plugin import ReflectAndRetryToolPlugin
from google.adk.tools import FunctionTool
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo.adapters.google_adk import (
    ADKReceived,
    NucleoToolErrorPlugin,
    adk_tool,
    arun_through_adk,
    run_through_adk,
)

SYNC_TOOL = adk_tool(adapter_tools.fetch_order)
ASYNC_TOOL = adk_tool(adapter_tools.afetch_order, name="fetch_order")


@pytest.fixture(params=["sync", "async"])
def fetch_tool(request: pytest.FixtureRequest) -> FunctionTool:
    """The same tool as a def and as an async def: the model must read the same text."""
    return SYNC_TOOL if request.param == "sync" else ASYNC_TOOL


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("failure", FAILURES)
def test_each_failure_reaches_the_model_as_an_error_response(
    fake_upstream: Any, fetch_tool: FunctionTool, failure: str, llm_snapshot: SnapshotAssertion
) -> None:
    arguments = arrange(fake_upstream, failure)
    received = run_through_adk(fetch_tool, arguments)
    assert received.is_error
    assert received.response == {"error": expected_text(arguments)}
    assert received.text == expected_text(arguments)
    assert SECRET not in received.text
    assert received.text == llm_snapshot


@pytest.mark.nucleo(expect_leaks=True)
def test_the_plugin_answers_for_every_agent_of_the_runner(fake_upstream: Any) -> None:
    arguments = arrange(fake_upstream, "throttled")
    received = run_through_adk(
        SYNC_TOOL, arguments, plugins=[NucleoToolErrorPlugin()], on_tool_error_callback=None
    )
    assert received.response == {"error": expected_text(arguments)}


@pytest.mark.nucleo(expect_leaks=True)
def test_the_callback_answers_for_a_plain_adk_tool_too() -> None:
    plain = FunctionTool(adapter_tools.leaky)
    received = run_through_adk(plain, {"order_number": "1"})
    assert received.response == {
        "error": "A system error occurred in leaky. The operation could not be completed.\n"
        + nucleo.UNCORRECTABLE_HINT
    }


def test_a_success_is_the_runner_s_text() -> None:
    received = run_through_adk(adk_tool(adapter_tools.order_dict), {"order_number": "1042"})
    assert received == ADKReceived(is_error=False, text=ORDER_TEXT)
    assert received.response == {"result": ORDER_TEXT}  # ADK's own wrapping of a value


def test_the_run_goes_on_after_a_failure(fake_upstream: Any) -> None:
    arguments = arrange(fake_upstream, "throttled")
    # The harness asserts the model was called again with the function response.
    assert run_through_adk(SYNC_TOOL, arguments).is_error


def test_the_declaration_is_the_one_adk_builds() -> None:
    plain = FunctionTool(adapter_tools.fetch_order)
    assert SYNC_TOOL._get_declaration() == plain._get_declaration()


def test_runner_options_apply() -> None:
    lookup = adapter_tools.flaky_order()
    received = run_through_adk(adk_tool(lookup, retries=1, backoff=0), {"order_number": "7"})
    assert received == ADKReceived(is_error=False, text='{"number": "7", "status": "shipped"}')
    assert lookup.state.calls == 2


def test_a_timeout_reads_as_job_timeout() -> None:
    clock = nucleo.FakeClock()

    def slow(order_number: str) -> str:
        """Wait for the shop forever."""
        clock.sleep(60)
        return "late"

    received = run_through_adk(adk_tool(slow, timeout=30, clock=clock), {"order_number": "1"})
    assert received == ADKReceived(is_error=True, text=adapter_tools.TIMEOUT_TEXT)


def test_the_async_harness_runs_under_a_running_loop() -> None:
    received = asyncio.run(
        arun_through_adk(adk_tool(adapter_tools.order_dict), {"order_number": "1"})
    )
    assert not received.is_error


# --- what ADK does without the adapter --------------------------------------------------


@pytest.mark.nucleo(expect_leaks=True)
def test_without_a_callback_a_failure_ends_the_run(fake_upstream: Any) -> None:
    arguments = arrange(fake_upstream, "throttled")
    with pytest.raises(Exception, match="Too Many Requests"):
        run_through_adk(
            FunctionTool(nucleo.llm_errors(adapter_tools.fetch_order)),
            arguments,
            on_tool_error_callback=None,
        )


@pytest.mark.nucleo(expect_leaks=True)
def test_reflect_and_retry_reads_the_class_name_even_for_a_throttle(fake_upstream: Any) -> None:
    arguments = arrange(fake_upstream, "throttled")
    received = run_through_adk(
        FunctionTool(nucleo.llm_errors(adapter_tools.fetch_order)),
        arguments,
        plugins=[ReflectAndRetryToolPlugin()],
        on_tool_error_callback=None,
    )
    assert received.response["error_type"] == "Http429Exception"  # our class name
    assert received.response["retry_count"] == 1  # a retry invited, for a 429
    assert not received.is_error  # and no "error" key
    assert received.text != expected_text(arguments)


def test_options_are_checked_when_the_tool_is_wrapped() -> None:
    with pytest.raises(TypeError, match="unknown option 'retry'"):
        adk_tool(retry=3)  # type: ignore[call-arg]
