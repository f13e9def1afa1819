"""What each framework's model reads for the same four failures of one HTTP tool.

A fetch by id through the package's client, served by the fake upstream: a 404, a 429 with
Retry-After, a read timeout, and a bug (a foreign exception). Each adapter's text is
snapshotted, and each must end in a hint line and keep the text style.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import fastmcp
import httpx
import pytest
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo.adapters.langchain import invoke_tool, langchain_tool
from pytest_nucleo.adapters.mcp import call_mcp_tool, mcp_tool
from pytest_nucleo.adapters.openai_agents import nucleo_function_tool, run_through_agents
from pytest_nucleo.adapters.pydantic_ai import call_through_agent, wrap_tool
from pytest_nucleo.testing import FakeUpstream, text_problems

ORDER = "https://shop.example/api/orders/00000042"


class Shop(nucleo.ServiceClient):
    service_name = "Shop"
    base_url = "https://shop.example/api"


SHOP = Shop(httpx.Client(timeout=5.0))


def fetch_order(order_number: str) -> dict[str, Any]:
    """Fetch one order by its number."""
    if order_number == "bug":
        return {}["eta"]  # type: ignore[no-any-return]  # a bug: a foreign KeyError
    return SHOP.get_json(f"/orders/{order_number}")  # type: ignore[no-any-return]


def _langchain(arguments: dict[str, Any]) -> str:
    return invoke_tool(langchain_tool(fetch_order), arguments).text


def _mcp(arguments: dict[str, Any]) -> str:
    server = fastmcp.FastMCP("shop")
    server.tool()(mcp_tool(fetch_order))
    return call_mcp_tool(server, "fetch_order", arguments).text


def _openai_agents(arguments: dict[str, Any]) -> str:
    return run_through_agents(nucleo_function_tool(fetch_order), arguments).text


def _pydantic_ai(arguments: dict[str, Any]) -> str:
    return call_through_agent(wrap_tool(fetch_order), arguments).text


ADAPTERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "langchain": _langchain,
    "mcp": _mcp,
    "openai-agents": _openai_agents,
    "pydantic-ai": _pydantic_ai,
}

FAILURES: dict[str, Callable[[FakeUpstream], str]] = {
    "404": lambda fake: fake.get(ORDER).respond(404, json={"error": "no order 00000042"}) and "00000042",
    "429-retry-after": lambda fake: fake.get(ORDER).throttle(retry_after=30) and "00000042",
    "timeout": lambda fake: fake.get(ORDER).timeout() and "00000042",
    "foreign-exception": lambda fake: "bug",
}  # fmt: skip


@pytest.mark.parametrize("failure", list(FAILURES))
@pytest.mark.parametrize("adapter", list(ADAPTERS))
@pytest.mark.nucleo(expect_leaks=True)  # the foreign exception is a bug on purpose
def test_each_adapter_delivers_the_styled_text(
    adapter: str,
    failure: str,
    fake_upstream: FakeUpstream,
    llm_snapshot: SnapshotAssertion,
) -> None:
    number = FAILURES[failure](fake_upstream)
    text = ADAPTERS[adapter]({"order_number": number})
    assert text.endswith((nucleo.CORRECTABLE_HINT, nucleo.UNCORRECTABLE_HINT))
    assert text_problems(text) == []
    assert text == llm_snapshot
