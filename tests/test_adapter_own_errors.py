"""A framework's own error for a message to the model (MCP's ToolError, fastmcp's, LangChain's
ToolException, pydantic-ai's ModelRetry and ToolFailed), raised by a tool under the adapter: the model reads at least what the plain
framework sends (the message, word for word), and strict mode counts no leak."""

from __future__ import annotations

import asyncio
from typing import Any

import fastmcp
import fastmcp.exceptions
import pytest
from langchain_core.tools import ToolException
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic_ai import ModelRetry, ToolFailed
from syrupy.assertion import SnapshotAssertion

from pytest_nucleo import (
    CORRECTABLE_HINT,
    UNCORRECTABLE_HINT,
    CorrectableRuntimeLLMException,
    UncorrectableRuntimeLLMException,
    run_tool,
)
from pytest_nucleo.adapters._core import own_error_failure, reading_own_errors
from pytest_nucleo.adapters.langchain import invoke_tool, langchain_tool
from pytest_nucleo.adapters.mcp import call_mcp_tool, mcp_tool
from pytest_nucleo.adapters.pydantic_ai import call_through_agent, make_tool

MESSAGE = "Failed to fetch robots.txt https://docs.example/robots.txt due to a connection issue"


def _servers() -> list[Any]:
    return [
        pytest.param(MCPServer, ToolError, "Error executing tool fetch: ", id="mcpserver"),
        pytest.param(
            fastmcp.FastMCP, fastmcp.exceptions.ToolError, "", id="fastmcp"
        ),  # fastmcp sends a ToolError's message bare
    ]


@pytest.mark.parametrize(("make", "error", "prefix"), _servers())
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_a_tool_error_reads_as_its_message_under_mcp_tool(
    make: Any,
    error: type[Exception],
    prefix: str,
    asynchronous: bool,
    llm_snapshot: SnapshotAssertion,
) -> None:
    def fetch(url: str) -> str:
        """Fetch a URL."""
        raise error(MESSAGE)

    async def afetch(url: str) -> str:
        """Fetch a URL."""
        await asyncio.sleep(0)
        raise error(MESSAGE)

    plain, hardened = make("plain"), make("hardened")
    tool = afetch if asynchronous else fetch
    plain.tool(name="fetch")(tool)
    hardened.tool(name="fetch")(mcp_tool(tool))
    sent = call_mcp_tool(plain, "fetch", {"url": "https://docs.example/"})
    received = call_mcp_tool(hardened, "fetch", {"url": "https://docs.example/"})
    assert sent.text == prefix + MESSAGE  # what the plain server sends
    assert received.is_error
    assert received.text == f"{MESSAGE}\n{CORRECTABLE_HINT}"
    assert received.text == llm_snapshot


def test_a_tool_exception_reads_as_its_message_under_langchain_tool(
    llm_snapshot: SnapshotAssertion,
) -> None:
    def search(query: str) -> str:
        """Search."""
        raise ToolException(f"no index for {query!r}: search 'docs' or 'blog' instead")

    received = invoke_tool(langchain_tool(search), {"query": "wiki"})
    assert received.is_error
    assert received.text == (
        "no index for 'wiki': search 'docs' or 'blog' instead\n" + CORRECTABLE_HINT
    )
    assert received.text == llm_snapshot


@pytest.mark.parametrize(
    ("error", "channel", "hint"),
    [(ModelRetry, "retried", CORRECTABLE_HINT), (ToolFailed, "failed", UNCORRECTABLE_HINT)],
    ids=["ModelRetry", "ToolFailed"],
)
def test_pydantic_ai_s_own_errors_read_as_their_messages(
    error: type[Exception], channel: str, hint: str, llm_snapshot: SnapshotAssertion
) -> None:
    def lookup(city: str) -> str:
        """Look a city up."""
        raise error(f"{city} is not a city we know: give its country too")

    received = call_through_agent(make_tool(lookup), {"city": "Springfield"})
    assert received.channel == channel
    assert received.text == f"Springfield is not a city we know: give its country too\n{hint}"
    assert received.text == llm_snapshot


def test_the_message_is_cleaned_and_masked_as_every_text() -> None:
    failure = own_error_failure(ToolError("key sk-live-4711abcdefghijklmnop\r\nrefused"))
    assert isinstance(failure, CorrectableRuntimeLLMException)
    assert "sk-live-4711abcdefghijklmnop" not in failure.explain_to_llm()
    assert "\r" not in failure.explain_to_llm()


def test_an_empty_message_is_left_to_the_runner() -> None:
    assert own_error_failure(ToolError("")) is None
    assert own_error_failure(ToolError("  ")) is None
    final = own_error_failure(ToolFailed("gone for good"), correctable=False)
    assert isinstance(final, UncorrectableRuntimeLLMException)


def test_other_exceptions_pass_and_the_error_stays_the_cause() -> None:
    def tool(kind: str) -> str:
        if kind == "own":
            raise ToolError("say this")
        raise KeyError(kind)

    read = reading_own_errors(
        tool, lambda exc: own_error_failure(exc) if isinstance(exc, ToolError) else None
    )
    with pytest.raises(CorrectableRuntimeLLMException) as caught:
        read("own")
    assert isinstance(caught.value.__cause__, ToolError)
    with pytest.raises(KeyError):
        read("other")
    assert read.__name__ == "tool"
    assert run_tool(read, {"kind": "own"}).text == f"say this\n{CORRECTABLE_HINT}"


STRICT = """
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from pytest_nucleo.adapters.mcp import call_mcp_tool, mcp_tool
from pytest_nucleo.adapters.pydantic_ai import call_through_agent, make_tool

server = MCPServer("docs")


@server.tool()
@mcp_tool
def fetch(url: str) -> str:
    \"\"\"Fetch a URL.\"\"\"
    raise ToolError("robots.txt forbids fetching this page")


def test_the_tool_refuses():
    assert call_mcp_tool(server, "fetch", {"url": "https://docs.example/"}).is_error
"""


def test_strict_mode_counts_no_leak_for_a_tool_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_fetch_tool=STRICT)
    result = pytester.runpytest("--nucleo-strict")
    result.assert_outcomes(passed=1)
    assert result.ret == 0, result.stdout.str()
    assert "reached the model as a system error" not in result.stdout.str()
