"""The Semantic Kernel adapter, through a real ``Kernel`` and ``ChatCompletionAgent``, offline.

No network and no API key: the agent's chat service is a ``ChatCompletionClientBase`` whose
first answer is a scripted function call; the text asserted is the ``role="tool"`` message of
the model's next request, as Semantic Kernel's chat services prepare it.

Semantic Kernel pins older mcp and pydantic than the frameworks extra, so these tests run in an
environment of their own and skip elsewhere.
"""

from __future__ import annotations

from tests._doc_blocks import Block, python_blocks_using
from tests._frameworks import needs_apart

needs_apart("semantic-kernel")

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import adapter_tools
import pytest
from adapter_tools import FAILURES, ORDER_TEXT, SECRET, arrange, expected_text
from semantic_kernel import Kernel
from semantic_kernel.connectors.ai.function_calling_utils import (
    kernel_function_metadata_to_function_call_format,
)
from semantic_kernel.contents import ImageContent
from semantic_kernel.filters import FilterTypes, FunctionInvocationContext
from semantic_kernel.functions import KernelArguments, KernelFunction, kernel_function
from semantic_kernel.functions.kernel_function_from_method import KernelFunctionFromMethod
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo.adapters.semantic_kernel import (
    SemanticKernelReceived,
    ToolFailureText,
    arun_through_semantic_kernel,
    nucleo_function_filter,
    nucleo_kernel_function,
    run_through_semantic_kernel,
)

SYNC_TOOL = nucleo_kernel_function(adapter_tools.fetch_order)
ASYNC_TOOL = nucleo_kernel_function(adapter_tools.afetch_order, name="fetch_order")
SYSTEM_TEXT = (
    "A system error occurred in leaky. The operation could not be completed.\n"
    + nucleo.UNCORRECTABLE_HINT
)


@pytest.fixture(params=["sync", "async"])
def fetch_tool(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """The same tool as a def and as an async def: the model must read the same text."""
    return SYNC_TOOL if request.param == "sync" else ASYNC_TOOL


def count(n: int) -> int:
    """Count up to n."""
    return n


def spec(function: Callable[..., Any]) -> dict[str, Any]:
    """The function as Semantic Kernel describes it to the model."""
    made = KernelFunctionFromMethod(method=function, plugin_name="Shop")
    return kernel_function_metadata_to_function_call_format(made.metadata)


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("failure", FAILURES)
def test_each_failure_reaches_the_model_as_the_tool_message(
    fake_upstream: Any,
    fetch_tool: Callable[..., Any],
    failure: str,
    llm_snapshot: SnapshotAssertion,
) -> None:
    arguments = arrange(fake_upstream, failure)
    received = run_through_semantic_kernel(fetch_tool, arguments)
    assert received.is_error  # the value is a ToolFailureText: the model gets no flag
    assert received.channel == "tool message"
    assert received.text == expected_text(arguments)
    # Nothing but the text and the call id reaches the model: no error flag to send.
    assert received.message == {
        "role": "tool",
        "content": received.text,
        "tool_call_id": "call_nucleo_1",
    }
    assert SECRET not in received.text
    assert received.text == llm_snapshot


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("failure", FAILURES)
def test_the_function_alone_delivers_the_text_without_the_filter(
    fake_upstream: Any, fetch_tool: Callable[..., Any], failure: str
) -> None:
    arguments = arrange(fake_upstream, failure)
    received = run_through_semantic_kernel(fetch_tool, arguments, filters=())
    assert (received.is_error, received.text) == (True, expected_text(arguments))


@pytest.mark.nucleo(expect_leaks=True)
def test_the_filter_answers_for_a_plain_function_too(fake_upstream: Any) -> None:
    leaky = run_through_semantic_kernel(kernel_function(adapter_tools.leaky), {"order_number": "1"})
    assert (leaky.is_error, leaky.text) == (True, SYSTEM_TEXT)
    arguments = arrange(fake_upstream, "not found")
    ours = run_through_semantic_kernel(
        kernel_function(nucleo.llm_errors(adapter_tools.fetch_order)), arguments
    )
    assert (ours.is_error, ours.text) == (True, expected_text(arguments))


@pytest.mark.nucleo(expect_leaks=True)
def test_the_filter_logs_what_the_runner_did_not_see(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="pytest_nucleo.runner"):
        run_through_semantic_kernel(kernel_function(adapter_tools.leaky), {"order_number": "1"})
    assert "tool leaky failed" in caplog.text
    assert "KeyError" in caplog.text  # the stack, cause included
    assert SECRET not in caplog.text


@pytest.mark.nucleo(expect_leaks=True)
def test_the_filter_answers_kernel_invoke_with_the_failure() -> None:
    kernel = Kernel()
    kernel.add_filter(FilterTypes.FUNCTION_INVOCATION, nucleo_function_filter)
    leaky = kernel.add_function("Shop", kernel_function(adapter_tools.leaky))
    assert isinstance(leaky, KernelFunction)
    result = asyncio.run(kernel.invoke(leaky, order_number="1"))
    assert result is not None
    assert isinstance(result.value, ToolFailureText)
    assert str(result.value) == SYSTEM_TEXT
    assert isinstance(result.value.exception, nucleo.SystemException)


def test_an_argument_it_cannot_convert_reads_as_a_correctable_failure() -> None:
    expected = nucleo.InvalidInputException(
        "n", "abc", "Input should be a valid integer, unable to parse string as an integer"
    ).explain_to_llm()
    for function in (nucleo_kernel_function(count), kernel_function(count)):
        received = run_through_semantic_kernel(function, {"n": "abc"})
        assert (received.is_error, received.text) == (True, expected)
    assert run_through_semantic_kernel(nucleo_kernel_function(count), {"n": "5"}).text == "5"


def test_a_missing_argument_reads_as_the_runner_s_under_kernel_invoke() -> None:
    kernel = Kernel()
    kernel.add_filter(FilterTypes.FUNCTION_INVOCATION, nucleo_function_filter)
    fetch = kernel.add_function("Shop", SYNC_TOOL)
    assert isinstance(fetch, KernelFunction)
    result = asyncio.run(kernel.invoke(fetch))
    assert result is not None
    assert str(result.value) == nucleo.run_tool(adapter_tools.fetch_order, {}).text


def test_a_success_is_the_runner_s_text() -> None:
    received = run_through_semantic_kernel(
        nucleo_kernel_function(adapter_tools.order_dict), {"order_number": "1042"}
    )
    assert received == SemanticKernelReceived(is_error=False, text=ORDER_TEXT)
    chart = run_through_semantic_kernel(nucleo_kernel_function(adapter_tools.chart), {"month": "5"})
    assert chart.text == "chart of 3 orders: 1042, 1043, 1044"  # str() of a value with no JSON


def test_semantic_kernel_s_own_content_is_passed_on() -> None:
    image = ImageContent(data_uri="data:image/png;base64,iVBORw0KGgo=")

    def draw(month: str) -> ImageContent:
        """Draw the month's orders."""
        return image

    received = run_through_semantic_kernel(nucleo_kernel_function(draw), {"month": "5"})
    assert (received.is_error, received.text) == (False, str(image))


def test_the_run_goes_on_after_a_failure(fake_upstream: Any) -> None:
    arguments = arrange(fake_upstream, "throttled")
    # The harness asserts the model was called again with the tool message, and the run ended.
    assert run_through_semantic_kernel(SYNC_TOOL, arguments).is_error


@pytest.mark.parametrize(
    ("ours", "bare"),
    [
        (SYNC_TOOL, adapter_tools.fetch_order),
        (ASYNC_TOOL, adapter_tools.afetch_order),
        (nucleo_kernel_function(adapter_tools.fetch_order, timeout=5), adapter_tools.fetch_order),
        (nucleo_kernel_function(count), count),
    ],
    ids=["sync", "async", "sync under a timeout", "an int"],
)
def test_the_schema_is_the_one_semantic_kernel_builds(
    ours: Callable[..., Any], bare: Callable[..., Any]
) -> None:
    expected = spec(kernel_function(bare, name=ours.__name__))
    assert spec(ours) == expected
    assert expected["function"]["parameters"]["required"]


@pytest.mark.nucleo(expect_leaks=True)
def test_a_plugin_s_method_runs_through_the_runner() -> None:
    class Shop:
        def __init__(self) -> None:
            self.prefix = "order"

        @nucleo_kernel_function
        def fetch(self, order_number: str) -> str:
            """Fetch one order by its number."""
            if order_number == "bug":
                raise KeyError(SECRET)
            return f"{self.prefix} {order_number}"

    plugin = Kernel().add_plugin(Shop(), "Shop")
    assert run_through_semantic_kernel(plugin["fetch"], {"order_number": "7"}).text == "order 7"
    bug = run_through_semantic_kernel(plugin["fetch"], {"order_number": "bug"}, filters=())
    assert bug.text == SYSTEM_TEXT.replace("leaky", "fetch")


@pytest.mark.nucleo(expect_leaks=True)
def test_the_name_is_the_runner_s() -> None:
    renamed = nucleo_kernel_function(adapter_tools.leaky, name="lookup")
    received = run_through_semantic_kernel(renamed, {"order_number": "1"})
    assert received.text.startswith("A system error occurred in lookup.")
    beneath = nucleo_kernel_function(
        kernel_function(name="find")(adapter_tools.fresh(adapter_tools.get_order))
    )
    assert spec(beneath)["function"]["name"] == "Shop-find"
    assert run_through_semantic_kernel(beneath, {"order_number": "bug"}).text.startswith(
        "A system error occurred in find."
    )


def test_runner_options_apply() -> None:
    lookup = adapter_tools.flaky_order()
    received = run_through_semantic_kernel(
        nucleo_kernel_function(lookup, retries=1, backoff=0), {"order_number": "7"}
    )
    assert received == SemanticKernelReceived(
        is_error=False, text='{"number": "7", "status": "shipped"}'
    )
    assert lookup.state.calls == 2


def test_a_timeout_reads_as_job_timeout() -> None:
    clock = nucleo.FakeClock()

    def slow(order_number: str) -> str:
        """Wait for the shop forever."""
        clock.sleep(60)
        return "late"

    received = run_through_semantic_kernel(
        nucleo_kernel_function(slow, timeout=30, clock=clock), {"order_number": "1"}
    )
    assert (received.is_error, received.text) == (True, adapter_tools.TIMEOUT_TEXT)


def test_the_async_harness_runs_under_a_running_loop() -> None:
    received = asyncio.run(
        arun_through_semantic_kernel(
            nucleo_kernel_function(adapter_tools.order_dict), {"order_number": "1"}
        )
    )
    assert not received.is_error


def test_the_filter_lets_a_cancellation_through() -> None:
    context = FunctionInvocationContext(
        function=KernelFunctionFromMethod(method=SYNC_TOOL, plugin_name="Shop"),
        kernel=Kernel(),
        arguments=KernelArguments(),
    )

    async def cancelled(context: FunctionInvocationContext) -> None:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(nucleo_function_filter(context, cancelled))
    assert context.result is None


def test_options_are_checked_when_the_function_is_wrapped() -> None:
    with pytest.raises(TypeError, match="unknown option 'retry'"):
        nucleo_kernel_function(retry=3)  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="name must be a non-empty string"):
        nucleo_kernel_function(name=" ")
    with pytest.raises(TypeError, match="wraps a function"):
        nucleo_kernel_function(timeout=1)("fetch_order")  # type: ignore[arg-type]


# --- what Semantic Kernel does without the adapter --------------------------------------------


@pytest.mark.nucleo(expect_leaks=True)
def test_without_the_adapter_the_raw_message_reaches_the_model() -> None:
    received = run_through_semantic_kernel(
        kernel_function(adapter_tools.leaky), {"order_number": "1"}, plugin_name="Shop", filters=()
    )
    assert received.text == (
        f"An error occurred while invoking the function Shop-leaky: 'token {SECRET}'"
    )
    assert not received.is_error  # a str like any result: nothing marks it


@pytest.mark.nucleo(expect_leaks=True)
def test_without_the_adapter_a_throttle_reads_as_its_technical_message(
    fake_upstream: Any,
) -> None:
    arguments = arrange(fake_upstream, "throttled")
    plain = kernel_function(nucleo.llm_errors(adapter_tools.fetch_order))
    received = run_through_semantic_kernel(plain, arguments, filters=())
    assert received.text.startswith(
        "An error occurred while invoking the function tools-fetch_order: Shop: HTTP 429"
    )
    assert "not correctable" not in received.text  # no hint whether to retry


def test_without_the_filter_an_unconverted_argument_reads_as_semantic_kernel_s_words() -> None:
    received = run_through_semantic_kernel(nucleo_kernel_function(count), {"n": "abc"}, filters=())
    assert received.text == (
        "An error occurred while invoking the function tools-count: Parameter n is expected to "
        "be parsed to <class 'int'> but is not."
    )


def test_semantic_kernel_answers_a_missing_argument_itself() -> None:
    received = run_through_semantic_kernel(SYNC_TOOL, {})
    assert (received.is_error, received.text) == (
        False,
        "Missing required argument(s): ['order_number']. Please revise the arguments to match "
        "the function signature.",
    )


def test_a_dict_reads_as_its_python_repr_without_the_adapter() -> None:
    received = run_through_semantic_kernel(
        kernel_function(adapter_tools.order_dict), {"order_number": "1042"}, filters=()
    )
    assert received.text == str(dict(adapter_tools.ORDER))


# --- the docs' examples, which the main environment's docs tests skip ------------------------

DOC_BLOCKS = python_blocks_using("pytest_nucleo.adapters.semantic_kernel")


def test_the_docs_have_semantic_kernel_examples() -> None:
    # Guards the test below: were the blocks not found, it would check nothing.
    assert [block.page for block in DOC_BLOCKS] == ["docs/how-to/frameworks.md"]


@pytest.mark.parametrize("block", DOC_BLOCKS, ids=[block.id for block in DOC_BLOCKS])
def test_the_docs_examples_run(block: Block) -> None:
    exec(compile(block.code, block.page, "exec"), {"__name__": "docs"})
