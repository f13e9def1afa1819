"""The MCP adapter, against the installed ``mcp`` SDK (MCPServer) and ``fastmcp`` servers.

Every call goes through the framework's own in-memory client, so the texts snapshotted here are
what an MCP client (and so the model) receives, prefixes included. Both servers are run for
every failure kind: the snapshot file shows, side by side, that they deliver the same text.
"""

from __future__ import annotations

from tests._frameworks import needs_frameworks

needs_frameworks("mcp", "fastmcp")

import asyncio
import datetime
import functools
import inspect
import logging
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import adapter_tools
import fastmcp
import pytest
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo import CORRECTABLE_HINT, UNCORRECTABLE_HINT
from pytest_nucleo.adapters.mcp import (
    MCPReceived,
    acall_mcp_tool,
    call_mcp_tool,
    error_result,
    mcp_tool,
)

# --- the tools: plain functions that know nothing about MCP ----------------------------------


def get_order(order_number: str, include_items: bool = False) -> dict[str, Any]:
    """Fetch one order from the shop by its number."""
    if not order_number.isdigit():
        raise nucleo.InvalidInputException(
            "order_number", order_number, "use the order's digits only, like 1042"
        )
    if order_number == "503":
        raise nucleo.ExternalServiceException("Shop", "HTTP 503 from /orders: maintenance")
    if order_number == "429":
        raise nucleo.UpstreamThrottleException("Shop", "HTTP 429 from /orders", retry_after=30)
    if order_number == "13":
        return dict[str, Any]()["eta"]  # type: ignore[no-any-return]  # a bug: a foreign KeyError
    return {"number": order_number, "items": ["kettle"] if include_items else None}


async def aget_order(order_number: str, include_items: bool = False) -> dict[str, Any]:
    """Fetch one order from the shop by its number, asynchronously."""
    await asyncio.sleep(0)
    return get_order(order_number, include_items)


Server = MCPServer | fastmcp.FastMCP[Any]


def official_server() -> MCPServer:
    return MCPServer("shop")


def fastmcp_server() -> fastmcp.FastMCP[Any]:
    return fastmcp.FastMCP("shop")


SERVERS: list[Any] = [
    pytest.param(official_server, id="mcpserver"),
    pytest.param(fastmcp_server, id="fastmcp"),
]


@pytest.fixture(params=SERVERS)
def server(request: pytest.FixtureRequest) -> Server:
    """A fresh server of each kind with both tools registered through the adapter."""
    make: Callable[[], Server] = request.param
    built = make()
    built.tool()(mcp_tool(get_order))
    built.tool()(mcp_tool(aget_order))
    return built


# --- one test per failure kind, sync and async tools ------------------------------------------

TOOLS = ["get_order", "aget_order"]


@pytest.mark.parametrize("tool", TOOLS)
def test_correctable_failure_is_an_error_result_with_the_explanation(
    server: Server, tool: str, llm_snapshot: SnapshotAssertion
) -> None:
    received = call_mcp_tool(server, tool, {"order_number": "10-42"})
    assert received.is_error
    assert received.channel == "error result"
    assert received.text.endswith("\n" + CORRECTABLE_HINT)
    assert received.text == llm_snapshot


@pytest.mark.parametrize("tool", TOOLS)
def test_uncorrectable_failure_is_an_error_result_with_the_explanation(
    server: Server, tool: str, llm_snapshot: SnapshotAssertion
) -> None:
    received = call_mcp_tool(server, tool, {"order_number": "503"})
    assert received.is_error
    assert received.channel == "error result"
    assert received.text.endswith("\n" + UNCORRECTABLE_HINT)
    assert received.text == llm_snapshot


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.nucleo(expect_leaks=True)
def test_foreign_exception_reaches_the_model_as_the_system_exception_text(
    server: Server, tool: str, llm_snapshot: SnapshotAssertion
) -> None:
    received = call_mcp_tool(server, tool, {"order_number": "13"})
    assert received.is_error
    assert received.text == (
        f"A system error occurred in {tool}. The operation could not be completed.\n"
        + UNCORRECTABLE_HINT
    )
    assert "KeyError" not in received.text
    assert "eta" not in received.text
    assert received.text == llm_snapshot


@pytest.mark.parametrize("tool", TOOLS)
def test_throttled_failure_tells_the_model_how_long_to_wait(
    server: Server, tool: str, llm_snapshot: SnapshotAssertion
) -> None:
    received = call_mcp_tool(server, tool, {"order_number": "429"})
    assert received.is_error
    assert received.channel == "error result"
    assert "about 30 seconds" in received.text
    assert received.text.endswith("\n" + UNCORRECTABLE_HINT)
    assert received.text == llm_snapshot


@pytest.mark.parametrize("tool", TOOLS)
def test_success_is_a_plain_result(
    server: Server, tool: str, llm_snapshot: SnapshotAssertion
) -> None:
    received = call_mcp_tool(server, tool, {"order_number": "1042", "include_items": True})
    assert not received.is_error
    assert received.channel == "result"
    assert received.text == llm_snapshot


def test_the_text_is_exactly_explain_to_llm() -> None:
    # The snapshots are reviewed text; this ties them to the exceptions byte for byte.
    server = official_server()
    server.tool()(mcp_tool(get_order))
    expected = nucleo.ExternalServiceException(
        "Shop", "HTTP 503 from /orders: maintenance"
    ).explain_to_llm()
    assert call_mcp_tool(server, "get_order", {"order_number": "503"}).text == expected


@pytest.mark.nucleo(expect_leaks=True)
def test_failures_are_logged_once_by_the_runner_not_by_the_server(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG):
        call_mcp_tool(server, "get_order", {"order_number": "13"})
    failures = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert [r.name for r in failures] == ["pytest_nucleo.runner"]
    assert failures[0].exc_info is not None  # the stack stays in the log


@pytest.mark.nucleo(expect_leaks=True)
def test_fastmcp_masking_does_not_hide_our_text() -> None:
    # mask_error_details replaces a raised exception's text; our result is not an exception,
    # and its text is already safe for the model.
    masked = fastmcp.FastMCP("shop", mask_error_details=True)
    masked.tool()(mcp_tool(get_order))
    received = call_mcp_tool(masked, "get_order", {"order_number": "13"})
    assert received.text.startswith("A system error occurred in get_order.")


# --- the decorator: signature, docstring, schema ----------------------------------------------


def test_the_decorator_keeps_name_docstring_signature_and_kind() -> None:
    for func in (get_order, aget_order):
        wrapped = mcp_tool(func)
        assert wrapped.__name__ == func.__name__
        assert wrapped.__doc__ == func.__doc__
        assert inspect.signature(wrapped) == inspect.signature(func)
        assert inspect.iscoroutinefunction(wrapped) == inspect.iscoroutinefunction(func)
        assert mcp_tool(wrapped) is wrapped  # wrapping twice wraps once


@pytest.mark.parametrize("make", SERVERS)
def test_the_server_builds_the_same_schema_as_for_the_bare_function(
    make: Callable[[], Server],
) -> None:
    bare, adapted = make(), make()
    bare.tool()(get_order)
    adapted.tool()(mcp_tool(get_order))

    async def listed(server: Server) -> Any:
        if isinstance(server, MCPServer):
            (official,) = await server.list_tools()
            return official
        (standalone,) = await server.list_tools()
        return standalone.to_mcp_tool()

    bare_tool, adapted_tool = asyncio.run(listed(bare)), asyncio.run(listed(adapted))
    assert adapted_tool.description == "Fetch one order from the shop by its number."
    assert adapted_tool.input_schema == bare_tool.input_schema
    assert adapted_tool.input_schema["properties"].keys() == {"order_number", "include_items"}
    assert adapted_tool.input_schema["required"] == ["order_number"]
    assert adapted_tool.output_schema == bare_tool.output_schema


def test_stacked_under_the_server_decorator() -> None:
    server = MCPServer("shop")

    @server.tool()
    @mcp_tool
    def cancel_order(order_number: str) -> str:
        """Cancel an order that has not shipped yet."""
        raise nucleo.ResourceNotFoundException("order", order_number)

    received = call_mcp_tool(server, "cancel_order", {"order_number": "77"})
    assert received.is_error
    assert "77" in received.text
    assert received.text.endswith(CORRECTABLE_HINT)


@pytest.mark.parametrize(
    ("make", "start"),
    [
        pytest.param(
            official_server, "Error executing tool get_order: 1 validation error", id="mcpserver"
        ),
        pytest.param(fastmcp_server, "1 validation error for call[get_order]", id="fastmcp"),
    ],
)
def test_arguments_the_schema_rejects_are_still_the_framework_s_own_error(
    make: Callable[[], Server], start: str
) -> None:
    # A limitation, pinned: both servers validate arguments against the input schema before
    # the tool (so our wrapper) runs, and send pydantic's report in their own words.
    server = make()
    server.tool()(mcp_tool(get_order))
    received = call_mcp_tool(server, "get_order", {})
    assert received.is_error
    assert received.text.startswith(start)
    assert CORRECTABLE_HINT not in received.text


# --- what the frameworks do without the adapter (why it returns a result) --------------------


def test_without_the_adapter_mcpserver_prefixes_and_hides() -> None:
    server = official_server()

    @server.tool()
    def refuse(order_number: str) -> str:
        """Refuse."""
        if order_number == "1":
            raise ToolError("Explained.")
        raise KeyError("eta")

    assert call_mcp_tool(server, "refuse", {"order_number": "1"}) == MCPReceived(
        is_error=True, text="Error executing tool refuse: Explained.", channel="error result"
    )
    assert call_mcp_tool(server, "refuse", {"order_number": "2"}).text == (
        "Error executing tool refuse"
    )


def test_without_the_adapter_fastmcp_leaks_the_raw_message() -> None:
    server = fastmcp_server()

    @server.tool()
    def leak(order_number: str) -> str:
        """Leak."""
        raise KeyError("eta")

    received = call_mcp_tool(server, "leak", {"order_number": "1"})
    assert received.is_error
    assert received.text == "Error calling tool 'leak': 'eta'"


# --- the harness -------------------------------------------------------------------------------


def test_the_async_harness_under_a_running_loop(server: Server) -> None:
    async def scenario() -> MCPReceived:
        with pytest.raises(RuntimeError, match="acall_mcp_tool"):
            call_mcp_tool(server, "aget_order", {"order_number": "1"})
        return await acall_mcp_tool(server, "aget_order", {"order_number": "10-42"})

    received = asyncio.run(scenario())
    assert received.is_error
    assert received.text.endswith(CORRECTABLE_HINT)


def test_the_harness_refuses_what_is_not_an_mcp_server() -> None:
    with pytest.raises(TypeError, match=r"MCPServer.*fastmcp\.FastMCP.*got a dict"):
        call_mcp_tool({}, "get_order")  # type: ignore[arg-type]


def test_error_result_is_the_protocol_result() -> None:
    result = nucleo.run_tool(get_order, {"order_number": "x"})
    built = error_result(result)
    assert built.is_error
    assert MCPReceived.from_result(built).text == result.text


def test_importing_pytest_nucleo_imports_neither_mcp_nor_fastmcp() -> None:
    code = (
        "import sys, pytest_nucleo\n"
        "print(sorted(m for m in ('mcp', 'fastmcp', 'pytest_nucleo.adapters.mcp') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_adapter_needs_only_the_official_sdk() -> None:
    # fastmcp is optional: importing the adapter must not import it.
    code = (
        "import sys, pytest_nucleo.adapters.mcp\n"
        "print('mcp' in sys.modules, 'fastmcp' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True False"


# --- second pass: native values, structured output, a renamed tool, the runner's options ------


def _image_tools(server: Server) -> None:
    if isinstance(server, MCPServer):
        from mcp.server.mcpserver.utilities.types import Image
    else:
        from fastmcp.utilities.types import Image  # type: ignore[assignment]

    def chart(month: str) -> Any:
        """Draw the month's orders."""
        return Image(data=b"\x89PNG\r\n", format="png")

    # The annotation the servers read to know an image comes back (evaluated, not a string).
    chart.__annotations__["return"] = Image
    server.tool()(mcp_tool(chart))


def test_an_image_reaches_the_model_as_an_image_block(server: Server) -> None:
    _image_tools(server)
    received = call_mcp_tool(server, "chart", {"month": "may"})
    assert (received.is_error, received.text) == (False, "[image content]")


def test_a_dict_reads_as_the_runner_s_text_beside_the_structured_content(server: Server) -> None:
    server.tool()(mcp_tool(adapter_tools.order_dict))

    async def call() -> Any:
        if isinstance(server, MCPServer):
            from mcp import Client

            async with Client(server) as client:
                return await client.call_tool("order_dict", {"order_number": "1042"})
        async with fastmcp.Client(server) as fast:
            return await fast.call_tool_mcp("order_dict", {"order_number": "1042"})

    result = asyncio.run(call())
    assert not result.is_error
    assert [block.text for block in result.content] == [adapter_tools.ORDER_TEXT]
    assert result.structured_content == adapter_tools.ORDER


def test_a_bare_dict_annotation_succeeds_on_both_servers(server: Server) -> None:
    # fastmcp gives ``-> dict`` an object output schema, the official SDK none: with the
    # runner's text alone, fastmcp refused every success ("structured_content must be a dict").
    @mcp_tool
    def get_invoice(order_number: str) -> dict:
        """Fetch the invoice of one order."""
        return {"number": order_number, "placed": datetime.date(2026, 12, 7)}

    server.tool()(get_invoice)
    received = call_mcp_tool(server, "get_invoice", {"order_number": "7"})
    assert (received.is_error, received.text) == (
        False,
        '{"number": "7", "placed": "2026-12-07"}',
    )


def test_a_value_with_no_json_form_is_a_success(server: Server) -> None:
    server.tool()(mcp_tool(adapter_tools.chart))
    received = call_mcp_tool(server, "chart", {"month": "may"})
    assert (received.is_error, received.text) == (False, str(adapter_tools.Chart()))


@pytest.mark.nucleo(expect_leaks=True)
def test_a_renamed_tool_s_text_names_the_name_the_model_called(server: Server) -> None:
    server.tool()(mcp_tool(name="fetch_order")(adapter_tools.get_order))
    received = call_mcp_tool(server, "fetch_order", {"order_number": "bug"})
    assert received.is_error
    assert received.text.startswith("A system error occurred in fetch_order.")


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("make", SERVERS)
@pytest.mark.parametrize("tool", [get_order, aget_order], ids=["sync", "async"])
def test_a_name_given_to_the_server_s_decorator_is_the_name_the_text_uses(
    make: Callable[[], Server], tool: Callable[..., Any]
) -> None:
    served = make()
    served.tool(name="fetch_order")(mcp_tool(tool))
    # The input schema is still the bare function's: no parameter for the context it is given.
    listed = asyncio.run(served.list_tools())
    (fetch_order,) = listed
    parameters = getattr(fetch_order, "parameters", None) or fetch_order.input_schema
    assert sorted(parameters["properties"]) == ["include_items", "order_number"]
    received = call_mcp_tool(served, "fetch_order", {"order_number": "13"})
    assert received.is_error
    assert received.text.startswith("A system error occurred in fetch_order.")
    received = call_mcp_tool(served, "fetch_order", {"order_number": "1042"})
    assert (received.is_error, received.text) == (False, '{"items": null, "number": "1042"}')


@pytest.mark.nucleo(expect_leaks=True)
def test_a_tool_taking_its_own_context_keeps_it_and_the_server_s_name() -> None:
    seen: list[object] = []

    def get_order(order_number: str, ctx: Context) -> str:  # type: ignore[type-arg]
        """Fetch one order; a bug on "13"."""
        seen.append(ctx)
        return dict[str, str]()["eta"] if order_number == "13" else f"order {order_number}"

    served = official_server()
    served.tool(name="fetch_order")(mcp_tool(get_order))
    received = call_mcp_tool(served, "fetch_order", {"order_number": "13"})
    assert received.text.startswith("A system error occurred in fetch_order.")
    assert call_mcp_tool(served, "fetch_order", {"order_number": "7"}).text == "order 7"
    assert all(isinstance(ctx, Context) for ctx in seen)
    assert len(seen) == 2


@pytest.mark.nucleo(expect_leaks=True)
def test_a_partial_is_wrapped_and_runs_under_its_own_name() -> None:
    # A partial has no type hints to carry the server's Context, so a name given only to
    # the server is not seen: give it to mcp_tool(name=...), as the docs say.
    served = official_server()
    served.tool()(mcp_tool(name="fetch_order")(functools.partial(get_order, include_items=True)))
    received = call_mcp_tool(served, "fetch_order", {"order_number": "13"})
    assert received.text.startswith("A system error occurred in fetch_order.")
    received = call_mcp_tool(served, "fetch_order", {"order_number": "10-42"})
    assert (received.is_error, received.text.endswith(CORRECTABLE_HINT)) == (True, True)


@pytest.mark.nucleo(expect_leaks=True)
def test_the_harness_s_event_loop_check_is_not_in_the_failure_s_chain(
    caplog: pytest.LogCaptureFixture,
) -> None:
    served = official_server()
    served.tool()(mcp_tool(aget_order))
    with caplog.at_level(logging.ERROR, logger="pytest_nucleo.runner"):
        call_mcp_tool(served, "aget_order", {"order_number": "13"})
    (record,) = caplog.records
    assert record.getMessage() == "tool aget_order failed: aget_order: 'eta'"


@pytest.mark.nucleo(expect_leaks=True)
def test_the_called_name_wins_over_the_adapter_s_and_code_calls_keep_the_adapter_s() -> None:
    served = official_server()
    served.tool(name="fetch_order")(mcp_tool(name="lookup")(adapter_tools.get_order))
    received = call_mcp_tool(served, "fetch_order", {"order_number": "bug"})
    assert received.text.startswith("A system error occurred in fetch_order.")
    # Called from code, outside any request, the wrapper knows only the adapter's name.
    result = asyncio.run(served.call_tool("fetch_order", {"order_number": "bug"}))
    assert result.content[0].text.startswith("A system error occurred in lookup.")


def test_the_runner_options_reach_the_runner(server: Server) -> None:
    clock = nucleo.FakeClock()
    flaky = adapter_tools.flaky_order()
    server.tool()(mcp_tool(retries=1, clock=clock)(flaky))
    received = call_mcp_tool(server, "lookup_order", {"order_number": "1"})
    assert (received.is_error, received.text) == (False, '{"number": "1", "status": "shipped"}')
    assert clock.sleeps == [0.5]
    server.tool()(
        mcp_tool(timeout=30, retries=5, clock=nucleo.FakeClock())(adapter_tools.always_overloaded)
    )
    received = call_mcp_tool(server, "always_overloaded", {"order_number": "1"})
    assert (received.is_error, received.text) == (True, adapter_tools.TIMEOUT_TEXT)
    token = nucleo.CancelToken()
    token.cancel()
    server.tool()(mcp_tool(cancel=token)(adapter_tools.never_called))
    received = call_mcp_tool(server, "never_called", {"order_number": "1"})
    assert (received.is_error, received.text) == (True, adapter_tools.CANCELLED_TEXT)
    with pytest.raises(TypeError, match="unknown option 'retry'"):
        mcp_tool(retry=1)  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="name must be a non-empty string"):
        mcp_tool(name="")


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("mask", [True, False, None])
def test_every_fastmcp_masking_setting_sends_our_text(mask: bool | None) -> None:
    options = {} if mask is None else {"mask_error_details": mask}
    served = fastmcp.FastMCP("shop", **options)
    served.tool()(mcp_tool(get_order))
    assert call_mcp_tool(served, "get_order", {"order_number": "13"}).text.startswith(
        "A system error occurred in get_order."
    )
    assert call_mcp_tool(served, "get_order", {"order_number": "10-42"}).text.endswith(
        CORRECTABLE_HINT
    )


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_official_client_reads_the_same_in_direct_and_legacy_mode(mode: str) -> None:
    from mcp import Client

    served = official_server()
    served.tool()(mcp_tool(get_order))
    served.tool()(mcp_tool(name="fetch_order")(adapter_tools.get_order))
    _image_tools(served)
    calls = {
        ("get_order", "10-42"): CORRECTABLE_HINT,
        ("get_order", "503"): UNCORRECTABLE_HINT,
        ("get_order", "13"): UNCORRECTABLE_HINT,
        ("fetch_order", "bug"): UNCORRECTABLE_HINT,
    }

    async def call_all() -> list[MCPReceived]:
        # "auto" dispatches to an in-process server directly; "legacy" runs the initialize
        # handshake and JSON-RPC framing over memory streams.
        async with Client(served, mode=mode) as client:
            received = [
                MCPReceived.from_result(await client.call_tool(tool, {"order_number": number}))
                for tool, number in calls
            ]
            received.append(
                MCPReceived.from_result(await client.call_tool("chart", {"month": "may"}))
            )
            return received

    *failures, image = asyncio.run(call_all())
    for (tool, number), received in zip(calls, failures, strict=True):
        assert received.is_error
        assert received.text.endswith(calls[tool, number])
        assert received.text == call_mcp_tool(served, tool, {"order_number": number}).text
    assert "fetch_order" in failures[-1].text
    assert (image.is_error, image.text) == (False, "[image content]")
