"""The LangChain adapter against the real langchain-core: what the model receives per failure."""

from __future__ import annotations

from tests._frameworks import needs_frameworks

needs_frameworks("langchain_core", "langgraph", "langchain")

import asyncio
import logging
import subprocess
import sys
from typing import Any

import adapter_tools
import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langchain_core.utils.function_calling import convert_to_openai_tool
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo.adapters.langchain import (
    ToolCallReceived,
    ainvoke_tool,
    invoke_tool,
    langchain_tool,
)

CORRECTABLE_HINT = (
    "[This error may be correctable - you can retry with different parameters or try a "
    "different approach]"
)
UNCORRECTABLE_HINT = "[This error is not correctable - consider an alternative approach]"
NOTHING: dict[str, dict[str, object]] = {}


def _lookup(order_number: str, include_items: bool) -> dict[str, object]:
    if not order_number.isdigit():
        raise nucleo.InvalidInputException("order_number", order_number, "must be digits only")
    if order_number == "500":
        raise nucleo.ExternalServiceException("orders-db", "connection reset by peer")
    if order_number == "429":
        raise nucleo.UpstreamThrottleException(
            "orders-api", "429 Too Many Requests", retry_after=30
        )
    if order_number == "0":
        return NOTHING["eta"]  # a bug: a foreign KeyError
    return {"number": order_number, "items": ["tea"] if include_items else []}


@langchain_tool
def get_order(order_number: str, include_items: bool = False) -> dict[str, object]:
    """Fetch one order by its number.

    Use search_orders to find a number first.
    """
    return _lookup(order_number, include_items)


@langchain_tool
async def aget_order(order_number: str, include_items: bool = False) -> dict[str, object]:
    """Fetch one order by its number, asynchronously."""
    return _lookup(order_number, include_items)


TOOLS = [get_order, aget_order]
SYNC_AND_ASYNC = pytest.mark.parametrize("tool", TOOLS, ids=["sync", "async"])


def receive(tool: BaseTool, args: dict[str, object]) -> ToolCallReceived:
    """Through the path an agent uses for this tool: invoke for sync, ainvoke for async."""
    if isinstance(tool, StructuredTool) and tool.coroutine is not None:
        return asyncio.run(ainvoke_tool(tool, args))
    return invoke_tool(tool, args)


# --- one test per failure kind ----------------------------------------------------------------


@SYNC_AND_ASYNC
def test_a_correctable_failure_is_an_error_tool_message(
    tool: BaseTool, llm_snapshot: SnapshotAssertion
) -> None:
    received = receive(tool, {"order_number": "12-AB"})
    assert received.is_error
    assert received.status == "error"
    assert received.text.endswith("\n" + CORRECTABLE_HINT)
    assert received.text == llm_snapshot


@SYNC_AND_ASYNC
def test_an_uncorrectable_failure_is_an_error_tool_message(
    tool: BaseTool, llm_snapshot: SnapshotAssertion
) -> None:
    received = receive(tool, {"order_number": "500"})
    assert received.is_error
    assert received.status == "error"
    assert received.text.endswith("\n" + UNCORRECTABLE_HINT)
    assert received.text == llm_snapshot


@SYNC_AND_ASYNC
@pytest.mark.nucleo(expect_leaks=True)
def test_a_foreign_exception_reaches_the_model_as_the_system_exception_text(
    tool: BaseTool, llm_snapshot: SnapshotAssertion
) -> None:
    received = receive(tool, {"order_number": "0"})
    assert received.is_error
    assert received.text == (
        f"A system error occurred in {tool.name}. The operation could not be completed.\n"
        + UNCORRECTABLE_HINT
    )
    assert "KeyError" not in received.text
    assert "eta" not in received.text
    assert received.text == llm_snapshot


@SYNC_AND_ASYNC
def test_a_throttle_tells_the_model_how_long_to_wait(
    tool: BaseTool, llm_snapshot: SnapshotAssertion
) -> None:
    received = receive(tool, {"order_number": "429"})
    assert received.is_error
    assert "about 30 seconds" in received.text
    assert received.text.endswith("\n" + UNCORRECTABLE_HINT)
    assert received.text == llm_snapshot


def test_the_text_is_exactly_explain_to_llm_with_no_prefix() -> None:
    # LangChain adds nothing to a handled error: the content is the handler's return value.
    expected = nucleo.ExternalServiceException(
        "orders-db", "connection reset by peer"
    ).explain_to_llm()
    assert invoke_tool(get_order, {"order_number": "500"}).text == expected
    assert asyncio.run(ainvoke_tool(aget_order, {"order_number": "500"})).text == expected


# --- arguments LangChain rejects before calling the tool ----------------------------------------


def test_a_missing_argument_is_a_correctable_error_not_a_crash(
    llm_snapshot: SnapshotAssertion, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="pytest_nucleo"):
        received = invoke_tool(get_order, {})
    assert received.is_error
    assert "'order_number' is missing" in received.text
    assert received.text.endswith("\n" + CORRECTABLE_HINT)
    assert received.text == llm_snapshot
    # Logged as the runner logs a correctable failure: WARNING, no stack trace.
    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    assert record.exc_info is None


def test_a_mistyped_argument_names_the_parameter_and_the_value(
    llm_snapshot: SnapshotAssertion,
) -> None:
    received = invoke_tool(get_order, {"order_number": "42", "include_items": "lots"})
    assert received.is_error
    assert "'include_items' got \"lots\"" in received.text
    assert received.text.endswith("\n" + CORRECTABLE_HINT)
    assert received.text == llm_snapshot


# --- success, sync and async, name, docstring and schema ---------------------------------------


@SYNC_AND_ASYNC
def test_success_is_a_success_tool_message_with_the_runners_text(tool: BaseTool) -> None:
    received = receive(tool, {"order_number": "42", "include_items": True})
    assert not received.is_error
    assert received.status == "success"
    # The runner's rendering (sorted keys), the same text as under every other adapter.
    assert received.text == '{"items": ["tea"], "number": "42"}'
    assert received.name == tool.name
    assert received.tool_call_id == "call_1"
    assert isinstance(received.message, ToolMessage)


def test_a_sync_tool_also_runs_through_ainvoke() -> None:
    received = asyncio.run(ainvoke_tool(get_order, {"order_number": "12-AB"}))
    assert received.is_error
    assert received.text == invoke_tool(get_order, {"order_number": "12-AB"}).text


def test_the_decorator_gives_a_structured_tool_keeping_name_docstring_and_parameters() -> None:
    assert isinstance(get_order, StructuredTool)
    assert get_order.name == "get_order"
    assert get_order.description == (
        "Fetch one order by its number.\n\nUse search_orders to find a number first."
    )
    assert get_order.func is not None
    assert get_order.coroutine is None
    assert aget_order.func is None
    assert aget_order.coroutine is not None
    assert asyncio.iscoroutinefunction(aget_order.coroutine)
    # What the model is shown, in the OpenAI function format LangChain's chat models send.
    assert convert_to_openai_tool(get_order)["function"] == {
        "name": "get_order",
        "description": "Fetch one order by its number.\n\nUse search_orders to find a number first.",
        "parameters": {
            "type": "object",
            "properties": {
                "order_number": {"type": "string"},
                "include_items": {"type": "boolean", "default": False},
            },
            "required": ["order_number"],
        },
    }
    assert set(aget_order.args) == {"order_number", "include_items"}


@pytest.mark.nucleo(expect_leaks=True)
def test_the_runners_name_and_an_explicit_description_are_used() -> None:
    @langchain_tool(description="Look up the weather.")
    @nucleo.tool(name="weather_lookup")
    def weather(city: str) -> str:
        """Internal docstring."""
        return str(NOTHING[city])

    assert weather.name == "weather_lookup"
    assert weather.description == "Look up the weather."
    received = invoke_tool(weather, {"city": "Oslo"})
    # The SystemException names the tool by the name the model knows it by.
    assert received.text.startswith("A system error occurred in weather_lookup.")
    assert received.name == "weather_lookup"


def test_the_decorator_refuses_what_is_not_a_function() -> None:
    with pytest.raises(TypeError, match="wraps a function"):
        langchain_tool("get_order")  # type: ignore[call-overload]


def test_the_harness_refuses_what_is_not_a_langchain_tool() -> None:
    def plain(order_number: str) -> str:
        """A plain function."""
        return order_number

    with pytest.raises(TypeError, match="wrap the function with @langchain_tool"):
        invoke_tool(plain, {"order_number": "1"})  # type: ignore[arg-type]


def test_a_tool_call_from_a_scripted_chat_model_gets_the_error_message_back() -> None:
    # The agent loop in miniature: LangChain's scripted chat model asks for the tool, the tool
    # call it produced is invoked with its id, and the model's next turn gets the result.
    model = FakeMessagesListChatModel(
        responses=[
            AIMessage(
                content="",
                tool_calls=[{"name": "get_order", "args": {"order_number": "500"}, "id": "c7"}],
            ),
            AIMessage(content="The order service is down; I will try later."),
        ]
    )
    history: list[BaseMessage] = [HumanMessage("Where is order 500?")]
    first = model.invoke(history)
    assert isinstance(first, AIMessage)
    history.append(first)
    for call in first.tool_calls:
        history.append(get_order.invoke({**call, "type": "tool_call"}))
    reply = model.invoke(history)
    result = history[-1]
    assert isinstance(result, ToolMessage)
    assert result.status == "error"
    assert result.tool_call_id == "c7"
    assert result.content == invoke_tool(get_order, {"order_number": "500"}).text
    assert reply.content == "The order service is down; I will try later."


# --- LangChain's own behaviour, pinned -----------------------------------------------------------


def test_without_the_adapter_langchain_lets_the_failure_stop_the_agent() -> None:
    # Why the adapter exists: a plain LangChain tool without handle_tool_error re-raises.
    plain = StructuredTool.from_function(func=_lookup, name="get_order", description="Fetch.")
    with pytest.raises(nucleo.ExternalServiceException):
        plain.invoke(
            {
                "name": "get_order",
                "args": {"order_number": "500", "include_items": False},
                "id": "c1",
                "type": "tool_call",
            }
        )


def test_invoked_without_a_tool_call_the_failure_is_a_plain_string() -> None:
    # LangChain builds a ToolMessage (with its status) only for a ToolCall: with bare arguments
    # the error text comes back as a plain string, with no error flag.
    output = get_order.invoke({"order_number": "500"})
    assert output == invoke_tool(get_order, {"order_number": "500"}).text


def test_an_async_tool_has_no_sync_path() -> None:
    with pytest.raises(NotImplementedError, match="does not support sync invocation"):
        invoke_tool(aget_order, {"order_number": "42"})


def test_a_tool_exception_raised_by_the_function_reads_as_its_message() -> None:
    # LangChain's own error for a message to the model: the model reads what LangChain would
    # send with handle_tool_error=True, the message (secrets masked), and a hint line.
    @langchain_tool
    def legacy(order_number: str) -> str:
        """A tool written for LangChain's ToolException."""
        raise ToolException(f"order {order_number} is archived: ask for its invoice instead")

    received = invoke_tool(legacy, {"order_number": "1"})
    assert received.is_error
    assert received.text == (
        "order 1 is archived: ask for its invoice instead\n" + CORRECTABLE_HINT
    )


@pytest.mark.nucleo(expect_leaks=True)
def test_a_tool_exception_without_a_message_is_foreign_to_the_contract() -> None:
    @langchain_tool
    def legacy(order_number: str) -> str:
        """A tool written for LangChain's ToolException."""
        raise ToolException()

    received = invoke_tool(legacy, {"order_number": "1"})
    assert received.is_error
    assert received.text == (
        "A system error occurred in legacy. The operation could not be completed.\n"
        + UNCORRECTABLE_HINT
    )


def test_import_pytest_nucleo_does_not_import_langchain() -> None:
    code = (
        "import sys, pytest_nucleo, pytest_nucleo.adapters\n"
        "print(sorted(m for m in sys.modules if m.startswith('langchain')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    code = "import sys, pytest_nucleo.adapters.langchain\nprint('langchain_core' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text")


def test_a_stray_tool_exception_with_an_unprintable_message_still_reads() -> None:
    from langchain_core.tools import ToolException

    from pytest_nucleo.adapters.langchain import _tool_error_text

    text = _tool_error_text(ToolException(Unprintable()))
    assert text == "(the message of this ToolException could not be read)"


# --- second pass: the runner's options, LangChain's options, values, langgraph ----------------


def test_the_runner_options_reach_the_runner() -> None:
    clock = nucleo.FakeClock()
    flaky = adapter_tools.flaky_order()
    received = invoke_tool(langchain_tool(retries=1, clock=clock)(flaky), {"order_number": "1"})
    assert (received.status, received.text) == ("success", '{"number": "1", "status": "shipped"}')
    assert clock.sleeps == [0.5]
    timed = langchain_tool(timeout=30, retries=5, clock=nucleo.FakeClock())(
        adapter_tools.always_overloaded
    )
    received = asyncio.run(ainvoke_tool(timed, {"order_number": "1"}))
    assert (received.status, received.text) == ("error", adapter_tools.TIMEOUT_TEXT)
    token = nucleo.CancelToken()
    token.cancel()
    cancelled = langchain_tool(cancel=token)(adapter_tools.never_called)
    received = invoke_tool(cancelled, {"order_number": "1"})
    assert (received.status, received.text) == ("error", adapter_tools.CANCELLED_TEXT)
    with pytest.raises(TypeError, match="unknown option 'retry'"):
        langchain_tool(retry=2)  # type: ignore[call-overload]


def test_a_sync_tool_under_a_timeout_has_both_paths() -> None:
    clock = nucleo.FakeClock()
    tool = langchain_tool(timeout=30, clock=clock)(adapter_tools.order_dict)
    assert invoke_tool(tool, {"order_number": "1042"}).text == adapter_tools.ORDER_TEXT
    received = asyncio.run(ainvoke_tool(tool, {"order_number": "1042"}))
    assert received.text == adapter_tools.ORDER_TEXT


@pytest.mark.nucleo(expect_leaks=True)
def test_a_renamed_tool_s_text_names_the_name_the_model_called() -> None:
    tool = langchain_tool(name="fetch_order")(adapter_tools.get_order)
    assert tool.name == "fetch_order"
    received = invoke_tool(tool, {"order_number": "bug"})
    assert received.text.startswith("A system error occurred in fetch_order.")


def test_a_value_with_no_json_form_is_a_success_read_as_its_str() -> None:
    received = invoke_tool(langchain_tool(adapter_tools.chart), {"month": "may"})
    assert (received.status, received.text) == ("success", str(adapter_tools.Chart()))


def test_content_and_artifact_renders_the_content_and_keeps_the_artifact() -> None:
    def rows(month: str) -> tuple[dict[str, int], list[int]]:
        """Count the month's orders."""
        if month == "never":
            raise nucleo.ResourceNotFoundException("month", month)
        return {"orders": 3}, [1042, 1043, 1044]

    tool = langchain_tool(response_format="content_and_artifact")(rows)
    received = invoke_tool(tool, {"month": "may"})
    assert (received.status, received.text) == ("success", '{"orders": 3}')
    assert received.message.artifact == [1042, 1043, 1044]
    failed = invoke_tool(tool, {"month": "never"})
    assert failed.status == "error"
    assert failed.text.endswith(CORRECTABLE_HINT)
    with pytest.raises(ValueError, match="response_format must be"):
        langchain_tool(response_format="artifact")  # type: ignore[call-overload]


def test_return_direct_and_args_schema_are_langchain_s() -> None:
    from pydantic import BaseModel, Field

    class Lookup(BaseModel):
        order_number: str = Field(description="The order's digits.", pattern=r"^\d+$")

    tool = langchain_tool(return_direct=True, args_schema=Lookup)(adapter_tools.get_order)
    assert tool.return_direct is True
    assert tool.args["order_number"]["description"] == "The order's digits."
    assert invoke_tool(tool, {"order_number": "7"}).text == "order 7"
    refused = invoke_tool(tool, {"order_number": "x7"})
    assert refused.status == "error"
    assert refused.text.startswith("The parameter 'order_number' got \"x7\"")


def test_langgraph_tool_node_delivers_the_failure_exactly() -> None:
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode([get_order]))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    call = {"name": "get_order", "args": {"order_number": "500"}, "id": "c1", "type": "tool_call"}
    asked = AIMessage(content="", tool_calls=[call])
    message = graph.compile().invoke({"messages": [asked]})["messages"][-1]
    assert isinstance(message, ToolMessage)
    assert message.status == "error"
    assert message.content == invoke_tool(get_order, {"order_number": "500"}).text


def test_langgraph_interrupt_asks_the_human_and_the_answer_resumes_the_tool() -> None:
    # interrupt() inside a tool raises LangGraph's GraphInterrupt: the graph pauses for a human
    # (https://docs.langchain.com/oss/python/langgraph/interrupts), it is not a failure.
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode
    from langgraph.types import Command, interrupt

    @langchain_tool
    def refund(order_number: str) -> str:
        """Refund an order once a human approves."""
        answer = interrupt(f"refund order {order_number}?")
        return f"refunded {order_number}" if answer == "yes" else "not refunded"

    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode([refund]))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    app = graph.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t1"}}
    call = {"name": "refund", "args": {"order_number": "7"}, "id": "c1", "type": "tool_call"}
    paused = app.invoke({"messages": [AIMessage(content="", tool_calls=[call])]}, config)
    [question] = paused["__interrupt__"]
    assert question.value == "refund order 7?"
    assert not any(isinstance(m, ToolMessage) for m in paused["messages"])
    resumed = app.invoke(Command(resume="yes"), config)["messages"][-1]
    assert isinstance(resumed, ToolMessage)
    assert (resumed.content, resumed.status) == ("refunded 7", "success")


class _ToolCallingFake(FakeMessagesListChatModel):
    """LangChain's scripted chat model, able to bind tools, keeping what it was sent."""

    seen: list[list[BaseMessage]] = []

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def test_create_agent_sends_the_model_the_failure_text() -> None:
    from langchain.agents import create_agent

    model = _ToolCallingFake(
        responses=[
            AIMessage(
                content="",
                tool_calls=[{"name": "get_order", "args": {"order_number": "500"}, "id": "c9"}],
            ),
            AIMessage(content="The shop is down."),
        ]
    )
    model.seen = []
    agent = create_agent(model, tools=[get_order])
    result = agent.invoke({"messages": [HumanMessage("Where is order 500?")]})
    assert result["messages"][-1].content == "The shop is down."
    [sent] = [m for m in model.seen[-1] if isinstance(m, ToolMessage)]
    assert sent.status == "error"
    assert sent.content == invoke_tool(get_order, {"order_number": "500"}).text


def test_a_long_success_text_is_bounded_by_the_tool_s_text_limit() -> None:
    def listing(month: str) -> str:
        """Every order of the month."""
        return "order\n" * 100

    received = invoke_tool(langchain_tool(text_limit=60)(listing), {"month": "may"})
    assert received.status == "success"
    assert received.text.startswith("order\norder")
    assert "cut from the middle of this result (this tool shows at most 60)" in received.text
