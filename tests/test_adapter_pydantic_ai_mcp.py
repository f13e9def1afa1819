"""pydantic-ai's ``MCPToolset`` over our MCP tools: the hook that keeps correctable apart.

The toolset turns every MCP ``isError`` result into a retry; ``keep_mcp_failures`` makes an
uncorrectable one a failed call again. Through a real ``Agent`` on ``FunctionModel`` and an
in-memory fastmcp server: no network.
"""

from __future__ import annotations

from tests._frameworks import needs_frameworks

needs_frameworks("fastmcp", "pydantic_ai")

import asyncio
from typing import Any

import adapter_tools
import fastmcp
import pytest
from adapter_tools import FAILURES, arrange, expected_text
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pytest_nucleo.adapters.mcp import mcp_tool
from pytest_nucleo.adapters.pydantic_ai import call_through_agent, keep_mcp_failures

CORRECTABLE = {"not found"}


def _server() -> fastmcp.FastMCP:
    server = fastmcp.FastMCP("shop")
    server.tool()(mcp_tool(adapter_tools.fetch_order))
    return server


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("failure", FAILURES)
def test_the_toolset_alone_retries_every_failure(fake_upstream: Any, failure: str) -> None:
    arguments = arrange(fake_upstream, failure)
    received = call_through_agent(MCPToolset(fastmcp.Client(_server())), arguments)
    assert received.channel == "retried"  # a 429, a timeout and a bug alike
    assert received.text == expected_text(arguments)


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("behavior", ["retry", "failed"])
@pytest.mark.parametrize("failure", FAILURES)
def test_the_hook_keeps_correctable_apart(fake_upstream: Any, failure: str, behavior: Any) -> None:
    arguments = arrange(fake_upstream, failure)
    toolset = MCPToolset(
        fastmcp.Client(_server()), process_tool_call=keep_mcp_failures, tool_error_behavior=behavior
    )
    received = call_through_agent(toolset, arguments)
    assert received.channel == ("retried" if failure in CORRECTABLE else "failed")
    assert received.text == expected_text(arguments)


@pytest.mark.nucleo(expect_leaks=True)
def test_with_the_hook_failures_spend_no_retry_budget_and_the_run_goes_on(
    fake_upstream: Any,
) -> None:
    arguments = arrange(fake_upstream, "throttled")
    seen: list[ToolReturnPart] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        seen.extend(p for p in last.parts if isinstance(p, ToolReturnPart))
        if len(seen) < 3:
            return ModelResponse(parts=[ToolCallPart(tool_name="fetch_order", args=arguments)])
        return ModelResponse(parts=[TextPart("gave up")])

    toolset = MCPToolset(fastmcp.Client(_server()), process_tool_call=keep_mcp_failures)
    agent = Agent(FunctionModel(model), toolsets=[toolset])
    assert asyncio.run(agent.run("go")).output == "gave up"
    assert [p.outcome for p in seen] == ["failed"] * 3


def test_a_success_passes_through_the_hook(fake_upstream: Any) -> None:
    fake_upstream.get(f"{adapter_tools.ORDERS_URL}/42").respond(200, json={"number": "42"})
    toolset = MCPToolset(fastmcp.Client(_server()), process_tool_call=keep_mcp_failures)
    received = call_through_agent(toolset, {"order_number": "42"})
    assert (received.channel, received.is_error) == ("success", False)
