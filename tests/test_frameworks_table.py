"""The docs' table of what each framework sends the model for a failure, without an adapter.

Each row is measured here, through the framework's own machinery and the same harness as its
adapter's tests, for one 404 on a fetch (a tool raising our own exception, unwrapped). The
test fails when the table in docs/how-to/frameworks.md differs from what it measures, and
prints the table to paste.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import adapter_tools
import pytest

import pytest_nucleo as nucleo
from tests._frameworks import needs_apart, needs_frameworks

PAGE = Path(__file__).parent.parent / "docs" / "how-to" / "frameworks.md"
PLAIN = nucleo.llm_errors(adapter_tools.fetch_order)  # raises our exceptions, no adapter
CUT = 80


def _mcp(args: dict[str, str]) -> tuple[bool, str]:
    from mcp.server.mcpserver import MCPServer

    from pytest_nucleo.adapters.mcp import call_mcp_tool

    server = MCPServer("shop", log_level="CRITICAL")
    server.tool()(PLAIN)
    received = call_mcp_tool(server, "fetch_order", args)
    return received.is_error, received.text


def _pydantic_ai(args: dict[str, str]) -> tuple[bool, str]:
    from pytest_nucleo.adapters.pydantic_ai import call_through_agent

    received = call_through_agent(PLAIN, args)
    return received.is_error, received.text


def _langchain(args: dict[str, str]) -> tuple[bool, str]:
    from langchain_core.tools import tool

    from pytest_nucleo.adapters.langchain import invoke_tool

    received = invoke_tool(tool(PLAIN), args)
    return received.is_error, received.text


def _openai_agents(args: dict[str, str]) -> tuple[bool, str]:
    from agents import function_tool

    from pytest_nucleo.adapters.openai_agents import run_through_agents

    received = run_through_agents(function_tool(PLAIN), args)
    return False, received.text  # function_call_output has no error flag


def _anthropic(args: dict[str, str]) -> tuple[bool, str]:
    from anthropic.lib.tools import beta_tool

    from pytest_nucleo.adapters.anthropic import run_through_tool_runner

    received = run_through_tool_runner(beta_tool(PLAIN), args)
    return bool(received.block.get("is_error")), received.text


def _llama_index(args: dict[str, str]) -> tuple[bool, str]:
    from llama_index.core.tools import FunctionTool

    from pytest_nucleo.adapters.llama_index import run_through_agent

    received = run_through_agent(FunctionTool.from_defaults(PLAIN), args)
    assert received.message is not None
    return "is_error" in received.message.additional_kwargs, received.text


def _google_adk(args: dict[str, str]) -> tuple[bool, str]:
    from google.adk.tools.function_tool import FunctionTool

    from pytest_nucleo.adapters.google_adk import run_through_adk

    received = run_through_adk(FunctionTool(PLAIN), args, on_tool_error_callback=None)
    return received.is_error, received.text


def _strands(args: dict[str, str]) -> tuple[bool, str]:
    import strands

    from pytest_nucleo.adapters.strands import run_through_strands

    received = run_through_strands(strands.tool(PLAIN), args)
    return received.is_error, received.text  # the toolResult's status, as Strands sets it


def _dspy(args: dict[str, str]) -> tuple[bool, str]:
    import dspy

    from pytest_nucleo.adapters.dspy import run_through_dspy

    received = run_through_dspy(dspy.Tool(PLAIN), args)
    # The traceback's first frame is in DSPy's own file, whose path differs per machine.
    installed = str(Path(dspy.__file__).parent.parent)
    return False, received.text.replace(installed, "<site-packages>")  # no error flag


def _agno(args: dict[str, str]) -> tuple[bool, str]:
    from agno.models.openai import OpenAIChat

    from pytest_nucleo.adapters.agno import run_through_agno

    received = run_through_agno(PLAIN, args)
    assert received.message is not None
    # A flag would be a key of the tool message as Agno sends it to an OpenAI chat model
    # beyond the plain ones (Agno keeps tool_call_error for itself; no request is made here).
    sent = OpenAIChat(id="gpt-4o")._format_message(received.message)
    return bool(set(sent) - {"role", "content", "tool_call_id"}), received.text


def _agent_framework(args: dict[str, str]) -> tuple[bool, str]:
    from agent_framework import tool

    from pytest_nucleo.adapters.agent_framework import run_through_agent_framework

    received = run_through_agent_framework(tool(PLAIN), args, middleware=())
    # The flag is the function result's `exception` field (Anthropic's client sends it as
    # is_error, Bedrock's as status="error"; the OpenAI clients send no flag).
    return received.flagged, received.text


def _semantic_kernel(args: dict[str, str]) -> tuple[bool, str]:
    from semantic_kernel.functions import kernel_function

    from pytest_nucleo.adapters.semantic_kernel import run_through_semantic_kernel

    received = run_through_semantic_kernel(kernel_function(PLAIN), args, filters=())
    # A flag would be a key of the tool message beyond the plain ones; Semantic Kernel's chat
    # services send the content and the call id only.
    return bool(set(received.message) - {"role", "content", "tool_call_id"}), received.text


def _crewai(path: str) -> Callable[[dict[str, str]], tuple[bool, str]]:
    def measure(args: dict[str, str]) -> tuple[bool, str]:
        from crewai.tools import tool

        from pytest_nucleo.adapters.crewai import run_through_crewai

        received = run_through_crewai(tool("fetch_order")(PLAIN), args, path=path)  # type: ignore[arg-type]
        # A flag would be a key of the tool message beyond the plain ones (ReAct has no tool
        # message: its observation is the model's own text, continued).
        plain = {"role", "tool_call_id", "name", "content"}
        tool_messages = [m for m in received.messages if m.get("role") == "tool"]
        return any(set(m) - plain for m in tool_messages), received.text

    return measure


FRAMEWORKS: dict[str, Callable[[dict[str, str]], tuple[bool, str]]] = {
    "MCP (`MCPServer`)": _mcp,
    "pydantic-ai": _pydantic_ai,
    "LangChain": _langchain,
    "OpenAI Agents SDK": _openai_agents,
    "Anthropic tool runner": _anthropic,
    "LlamaIndex": _llama_index,
    "Google ADK": _google_adk,
    "Strands Agents": _strands,
    "DSPy (`ReAct`)": _dspy,
    "Agno": _agno,
    "Microsoft Agent Framework": _agent_framework,
}

# The frameworks in environments of their own (tests/_frameworks.py, APART), by extra: their
# rows are measured there, and follow the others in the table.
APART_ROWS: dict[str, dict[str, Callable[[dict[str, str]], tuple[bool, str]]]] = {
    "crewai": {
        "CrewAI (native calling)": _crewai("native"),
        "CrewAI (ReAct)": _crewai("react"),
    },
    "semantic-kernel": {"Semantic Kernel": _semantic_kernel},
}
HEADER = [
    "| framework, no adapter | the model reads, for a 404 | error flag sent |",
    "|---|---|---|",
]


def _cell(text: str) -> str:
    text = text.replace("\n", " ").strip()
    if len(text) > CUT:
        text = text[: CUT - 1] + "…"
    return "`" + text.replace("`", "'").replace("|", "\\|") + "`"


def _row(name: str, measure: Callable[[dict[str, str]], tuple[bool, str]], args: Any) -> str:
    try:
        flag, text = measure(args)
    except Exception as error:  # the framework let the exception end the run
        return f"| {name} | the run ends: `{type(error).__name__}` is raised | — |"
    return f"| {name} | {_cell(text)} | {'yes' if flag else 'no'} |"


@pytest.mark.nucleo(expect_leaks=True)
def test_the_docs_table_is_what_each_framework_sends(fake_upstream: Any) -> None:
    needs_frameworks(
        "mcp",
        "pydantic_ai",
        "langchain_core",
        "agents",
        "anthropic",
        "llama_index",
        "google.adk",
        "strands",
        "dspy",
        "agno",
        "agent_framework",
    )
    args = adapter_tools.arrange(fake_upstream, "not found")
    rows = [_row(name, measure, args) for name, measure in FRAMEWORKS.items()]
    table = "\n".join([*HEADER, *rows])
    assert table in PAGE.read_text(encoding="utf-8"), (
        f"the table in {PAGE.name} differs from what the frameworks send; measured:\n{table}"
    )


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("extra", sorted(APART_ROWS))
def test_the_docs_table_is_what_each_framework_apart_sends(fake_upstream: Any, extra: str) -> None:
    needs_apart(extra)
    args = adapter_tools.arrange(fake_upstream, "not found")
    rows = "\n".join(_row(name, measure, args) for name, measure in APART_ROWS[extra].items())
    page = PAGE.read_text(encoding="utf-8")
    # In the table of what frameworks send without an adapter, not the adapters' table above,
    # after the rows measured in the main environment.
    table = page.index("\n".join(HEADER))
    last_of_the_others = page.index(f"\n| {list(FRAMEWORKS)[-1]} |", table)
    assert f"\n{rows}\n" in page[last_of_the_others:], (
        f"the {extra} rows of the table in {PAGE.name} differ from what it sends, or do not "
        f"follow the {list(FRAMEWORKS)[-1]} row; measured:\n{rows}"
    )
