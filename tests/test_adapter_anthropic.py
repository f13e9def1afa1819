"""The Anthropic SDK adapter, through the SDK's own ``tool_runner``, offline.

The Messages API is faked in-process (``httpx.MockTransport``); the text asserted is the
``tool_result`` block the runner sends the model in its next request.
"""

from __future__ import annotations

from tests._frameworks import needs_frameworks

needs_frameworks("anthropic")

import asyncio
import logging
from typing import Any

import adapter_tools
import pytest
from adapter_tools import FAILURES, ORDER_TEXT, SECRET, arrange, expected_text
from anthropic.lib.tools import beta_tool
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo import CORRECTABLE_HINT
from pytest_nucleo.adapters.anthropic import (
    AnthropicReceived,
    anthropic_tool,
    arun_through_tool_runner,
    run_through_tool_runner,
)

SYNC_TOOL = anthropic_tool(adapter_tools.fetch_order)
ASYNC_TOOL = anthropic_tool(adapter_tools.afetch_order, name="fetch_order")


@pytest.fixture(params=["sync", "async"])
def fetch_tool(request: pytest.FixtureRequest) -> Any:
    """The same tool as a def and as an async def: the model must read the same text."""
    return SYNC_TOOL if request.param == "sync" else ASYNC_TOOL


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("failure", FAILURES)
def test_each_failure_reaches_the_model_with_is_error(
    fake_upstream: Any, fetch_tool: Any, failure: str, llm_snapshot: SnapshotAssertion
) -> None:
    arguments = arrange(fake_upstream, failure)
    received = run_through_tool_runner(fetch_tool, arguments)
    assert received.is_error
    assert received.channel == "tool_result"
    assert received.block["is_error"] is True
    assert received.text == expected_text(arguments)
    assert received.block["content"] == received.text  # one string: nothing added, nothing cut
    assert SECRET not in received.text
    assert received.text == llm_snapshot


def test_a_success_is_the_runner_s_text() -> None:
    received = run_through_tool_runner(
        anthropic_tool(adapter_tools.order_dict), {"order_number": "1042"}
    )
    assert received == AnthropicReceived(is_error=False, text=ORDER_TEXT)
    assert "is_error" not in received.block


def test_content_blocks_are_passed_on_as_they_are() -> None:
    def draw(month: str) -> list[dict[str, str]]:
        """Draw the month's orders."""
        return [{"type": "text", "text": f"3 orders in {month}"}]

    received = run_through_tool_runner(anthropic_tool(draw), {"month": "May"})
    assert received.block["content"] == [{"type": "text", "text": "3 orders in May"}]
    assert not received.is_error


def test_the_run_goes_on_after_a_failure(fake_upstream: Any) -> None:
    """A failed call is one tool_result among others; the next turn still happens."""
    arguments = arrange(fake_upstream, "throttled")
    assert run_through_tool_runner(SYNC_TOOL, arguments).is_error
    # The harness saw the runner's second request (it asserts so): the run was not ended.
    fake_upstream.get(f"{adapter_tools.ORDERS_URL}/42").respond(200, json={"number": "42"})
    ok = run_through_tool_runner(SYNC_TOOL, {"order_number": "42"})
    assert ok == AnthropicReceived(is_error=False, text='{"number": "42"}')


def test_the_schema_is_the_one_beta_tool_builds() -> None:
    plain = beta_tool(adapter_tools.fetch_order)
    assert SYNC_TOOL.to_dict() == plain.to_dict()
    assert SYNC_TOOL.to_dict()["description"] == "Fetch one order of the shop by its number."


def test_input_the_sdk_refuses_is_a_correctable_failure(
    llm_snapshot: SnapshotAssertion, caplog: pytest.LogCaptureFixture
) -> None:
    missing = run_through_tool_runner(SYNC_TOOL, {})
    wrong = run_through_tool_runner(SYNC_TOOL, {"order_number": ["1"]})
    for received in (missing, wrong):
        assert received.is_error
        assert received.text.endswith("\n" + CORRECTABLE_HINT)
        assert "'order_number'" in received.text
    assert missing.text == llm_snapshot
    assert wrong.text == llm_snapshot
    assert [r.levelno for r in caplog.records if r.name == "pytest_nucleo.runner"] == [
        logging.WARNING
    ] * 2


def test_runner_options_apply(fake_upstream: Any) -> None:
    """Retries: a first overload is retried by the runner, the model reads the success."""
    lookup = adapter_tools.flaky_order()
    received = run_through_tool_runner(
        anthropic_tool(lookup, retries=1, backoff=0), {"order_number": "7"}
    )
    assert received == AnthropicReceived(
        is_error=False, text='{"number": "7", "status": "shipped"}'
    )
    assert lookup.state.calls == 2


def test_a_timeout_reads_as_job_timeout_under_both_runners() -> None:
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
        anthropic_tool(slow, timeout=30, clock=clock),
        anthropic_tool(aslow, timeout=30, clock=clock),
    ):
        received = run_through_tool_runner(tool, {"order_number": "1"})
        assert received == AnthropicReceived(is_error=True, text=adapter_tools.TIMEOUT_TEXT)


@pytest.mark.nucleo(expect_leaks=True)
def test_the_async_harness_runs_under_a_running_loop() -> None:
    received = asyncio.run(arun_through_tool_runner(SYNC_TOOL, {"order_number": "bug"}))
    assert received.is_error
    assert received.text.startswith("A system error occurred in fetch_order.")


# --- what the SDK sends without the adapter (why it raises ToolError) -----------------------


@pytest.mark.nucleo(expect_leaks=True)
def test_without_the_adapter_the_model_reads_the_exception_s_repr(fake_upstream: Any) -> None:
    arguments = arrange(fake_upstream, "not found")
    plain = run_through_tool_runner(
        beta_tool(nucleo.llm_errors(adapter_tools.fetch_order)), arguments
    )
    assert plain.is_error
    assert plain.text.startswith("Http404Exception(service='Shop'")
    assert plain.text != expected_text(arguments)


@pytest.mark.nucleo(expect_leaks=True)
def test_returning_the_runner_s_text_loses_is_error() -> None:
    def fetch(order_number: str) -> str:
        """Fetch an order."""
        return nucleo.run_tool(adapter_tools.leaky, {"order_number": order_number}).text

    received = run_through_tool_runner(beta_tool(fetch), {"order_number": "1"})
    assert not received.is_error
    assert received.text.startswith("A system error occurred in leaky.")


def test_options_are_checked_when_the_tool_is_wrapped() -> None:
    with pytest.raises(TypeError, match="unknown option 'retry'"):
        anthropic_tool(retry=3)  # type: ignore[call-arg]
