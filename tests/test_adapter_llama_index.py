"""The LlamaIndex adapter, through a real ``FunctionAgent`` on LlamaIndex's mock LLM, offline.

The text asserted is the ``role="tool"`` chat message the agent sends the model next.
"""

from __future__ import annotations

from tests._frameworks import needs_frameworks

needs_frameworks("llama_index.core")

import asyncio
from typing import Any

import adapter_tools
import pytest
from adapter_tools import FAILURES, ORDER_TEXT, SECRET, arrange, expected_text
from llama_index.core.base.llms.types import TextBlock
from llama_index.core.tools import FunctionTool
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo.adapters.llama_index import (
    LlamaIndexReceived,
    ToolFailureText,
    arun_through_agent,
    llama_index_tool,
    run_through_agent,
)

SYNC_TOOL = llama_index_tool(adapter_tools.fetch_order)
ASYNC_TOOL = llama_index_tool(adapter_tools.afetch_order, name="fetch_order")


@pytest.fixture(params=["sync", "async"])
def fetch_tool(request: pytest.FixtureRequest) -> FunctionTool:
    """The same tool as a def and as an async def: the model must read the same text."""
    return SYNC_TOOL if request.param == "sync" else ASYNC_TOOL


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("failure", FAILURES)
def test_each_failure_reaches_the_model_as_the_tool_message(
    fake_upstream: Any, fetch_tool: FunctionTool, failure: str, llm_snapshot: SnapshotAssertion
) -> None:
    arguments = arrange(fake_upstream, failure)
    received = run_through_agent(fetch_tool, arguments)
    assert received.is_error  # the ToolOutput's flag: LlamaIndex does not send it
    assert received.channel == "tool message"
    assert received.text == expected_text(arguments)
    assert received.message is not None
    # Nothing but the text and the call id reaches the model: no error flag to send.
    assert received.message.additional_kwargs == {"tool_call_id": "call_nucleo_1"}
    assert SECRET not in received.text
    assert received.text == llm_snapshot


def test_a_success_is_the_runner_s_text() -> None:
    received = run_through_agent(
        llama_index_tool(adapter_tools.order_dict), {"order_number": "1042"}
    )
    assert received == LlamaIndexReceived(is_error=False, text=ORDER_TEXT)


def test_content_blocks_are_passed_on_as_they_are() -> None:
    def draw(month: str) -> list[TextBlock]:
        """Draw the month's orders."""
        return [TextBlock(text=f"3 orders in {month}")]

    received = run_through_agent(llama_index_tool(draw), {"month": "May"})
    assert received == LlamaIndexReceived(is_error=False, text="3 orders in May")


def test_the_run_goes_on_after_a_failure(fake_upstream: Any) -> None:
    arguments = arrange(fake_upstream, "throttled")
    # The harness asserts the agent called the model again with the tool message.
    assert run_through_agent(SYNC_TOOL, arguments).is_error


@pytest.mark.nucleo(expect_leaks=True)
def test_the_tool_output_carries_the_failure_for_code() -> None:
    output = llama_index_tool(adapter_tools.leaky).call(order_number="1")
    assert output.is_error
    assert isinstance(output.raw_output, ToolFailureText)
    assert isinstance(output.exception, nucleo.SystemException)
    assert output.content == nucleo.run_tool(adapter_tools.leaky, {"order_number": "1"}).text


def test_the_schema_and_description_are_the_ones_llama_index_builds() -> None:
    plain = FunctionTool.from_defaults(adapter_tools.fetch_order)
    assert SYNC_TOOL.metadata.get_parameters_dict() == plain.metadata.get_parameters_dict()
    assert SYNC_TOOL.metadata.description == plain.metadata.description
    assert SYNC_TOOL.metadata.name == "fetch_order"


def test_runner_options_apply() -> None:
    lookup = adapter_tools.flaky_order()
    received = run_through_agent(
        llama_index_tool(lookup, retries=1, backoff=0), {"order_number": "7"}
    )
    assert received == LlamaIndexReceived(
        is_error=False, text='{"number": "7", "status": "shipped"}'
    )
    assert lookup.state.calls == 2


def test_a_timeout_reads_as_job_timeout() -> None:
    clock = nucleo.FakeClock()

    def slow(order_number: str) -> str:
        """Wait for the shop forever."""
        clock.sleep(60)
        return "late"

    tool = llama_index_tool(slow, timeout=30, clock=clock)
    received = run_through_agent(tool, {"order_number": "1"})
    assert received == LlamaIndexReceived(is_error=True, text=adapter_tools.TIMEOUT_TEXT)


@pytest.mark.nucleo(expect_leaks=True)
def test_the_async_harness_and_call_tool_read_the_same() -> None:
    from llama_index.core.tools.calling import call_tool

    tool = llama_index_tool(adapter_tools.leaky)
    through_agent = asyncio.run(arun_through_agent(tool, {"order_number": "1"}))
    through_call_tool = call_tool(tool, {"order_number": "1"})
    assert through_call_tool.content == through_agent.text  # no "Encountered error:" prefix
    assert through_call_tool.is_error


# --- what LlamaIndex sends without the adapter --------------------------------------------


@pytest.mark.nucleo(expect_leaks=True)
def test_without_the_adapter_the_model_reads_the_bare_message(fake_upstream: Any) -> None:
    arguments = arrange(fake_upstream, "not found")
    plain = FunctionTool.from_defaults(nucleo.llm_errors(adapter_tools.fetch_order))
    received = run_through_agent(plain, arguments)
    assert received.is_error
    assert received.text == 'Shop: HTTP 404 Not Found at /api/orders/404: {"error":"no such order"}'
    assert received.text != expected_text(arguments)


def test_options_are_checked_when_the_tool_is_wrapped() -> None:
    with pytest.raises(TypeError, match="unknown option 'retry'"):
        llama_index_tool(retry=3)  # type: ignore[call-arg]
