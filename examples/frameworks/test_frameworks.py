"""The same tool module under all four frameworks: the model reads the same failure text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import pytest

# The frameworks come with the `frameworks` extra (or each adapter's own extra); without
# them the other examples run and this one skips, saying so.
for framework in ("mcp", "pydantic_ai", "langchain_core", "agents"):
    pytest.importorskip(framework, reason=f"needs {framework}: pip install -e '.[frameworks]'")

import shop_tools  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402

import pytest_nucleo as nucleo  # noqa: E402
from pytest_nucleo.adapters import langchain, mcp, openai_agents, pydantic_ai  # noqa: E402

if TYPE_CHECKING:
    from syrupy.assertion import SnapshotAssertion

server = MCPServer("shop")
server.tool()(mcp.mcp_tool(shop_tools.get_order))
for_langchain = langchain.langchain_tool(shop_tools.get_order)
for_pydantic_ai = pydantic_ai.wrap_tool(shop_tools.get_order)
for_agents_sdk = openai_agents.nucleo_function_tool(shop_tools.get_order)


def through_each_framework(order_number: str) -> dict[str, tuple[bool, str]]:
    """(error flag, text the model receives) for one call, per framework."""
    args = {"order_number": order_number}
    received: dict[str, Received] = {
        "mcp": mcp.call_mcp_tool(server, "get_order", args),
        "pydantic-ai": pydantic_ai.call_through_agent(for_pydantic_ai, args),
        "langchain": langchain.invoke_tool(for_langchain, args),
        "openai-agents": openai_agents.run_through_agents(for_agents_sdk, args),
    }
    return {name: (r.is_error, r.text) for name, r in received.items()}


class Received(Protocol):
    """What each framework's call helper returns: the error flag and the model's text."""

    @property
    def is_error(self) -> bool: ...
    @property
    def text(self) -> str: ...


def explanation_of(order_number: str) -> str:
    result = nucleo.run_tool(shop_tools.get_order, {"order_number": order_number})
    assert result.is_error
    return result.text


@pytest.mark.parametrize(
    "order_number",
    [
        pytest.param("12-AB", id="correctable"),
        pytest.param("00000500", id="uncorrectable"),
        # shop_tools leaks a KeyError for this order on purpose: the report need not list it.
        pytest.param("00000013", id="foreign", marks=pytest.mark.nucleo(expect_leaks=True)),
        pytest.param("00000429", id="throttled"),
    ],
)
def test_every_framework_delivers_the_same_text(
    order_number: str, llm_snapshot: SnapshotAssertion
) -> None:
    expected = explanation_of(order_number)
    assert through_each_framework(order_number) == {
        "mcp": (True, expected),
        "pydantic-ai": (True, expected),
        "langchain": (True, expected),
        "openai-agents": (True, expected),
    }
    assert expected == llm_snapshot
