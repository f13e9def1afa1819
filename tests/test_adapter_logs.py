"""No secret reaches stderr through the logging each framework installs.

Handlers such as rich's rebuild a traceback from the exception object itself (each level's
``str()``), past any masking of the formatted text, so the runner logs a masked copy. Each test
runs one call of a tool whose foreign exception carries a secret, in a fresh interpreter with
the framework's usual logging set up, and reads stderr: the traceback is there (so the test
can fail), the secret is not.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from adapter_tools import SECRET

from tests._frameworks import APART, imports_of, needs_apart, needs_frameworks

TESTS = str(Path(__file__).parent)

LEAKY = '''
def leaky(order_number: str) -> str:
    """Fetch an order; a bug puts a secret in a foreign exception."""
    raise KeyError("token sk-live-0123456789abcdefABCDEF")
'''

RICH_ROOT = """
import logging
from rich.console import Console
from rich.logging import RichHandler
logging.basicConfig(level="INFO", handlers=[RichHandler(console=Console(stderr=True, width=200), rich_tracebacks=True)])
"""

SCRIPTS = {
    # MCPServer() installs rich tracebacks on the root logger itself.
    "mcpserver": """
from mcp.server.mcpserver import MCPServer
from pytest_nucleo.adapters.mcp import call_mcp_tool, mcp_tool
server = MCPServer("shop")
server.tool()(mcp_tool(leaky))
print(call_mcp_tool(server, "leaky", {"order_number": "1"}).is_error)
""",
    # fastmcp's own rich logging, applied to the root logger the runner's records reach.
    "fastmcp": """
import logging, fastmcp
from fastmcp.utilities.logging import configure_logging
from pytest_nucleo.adapters.mcp import call_mcp_tool, mcp_tool
configure_logging(logger=logging.getLogger(), enable_rich_tracebacks=True)
server = fastmcp.FastMCP("shop")
server.tool()(mcp_tool(leaky))
print(call_mcp_tool(server, "leaky", {"order_number": "1"}).is_error)
""",
    # uvicorn's logging config (an MCP or agent server behind uvicorn), its handler on root.
    "uvicorn": """
import copy, logging.config
from uvicorn.config import LOGGING_CONFIG
config = copy.deepcopy(LOGGING_CONFIG)
config["handlers"]["default"]["stream"] = "ext://sys.stderr"
config["root"] = {"handlers": ["default"], "level": "INFO"}
logging.config.dictConfig(config)
from mcp.server.mcpserver import MCPServer
from pytest_nucleo.adapters.mcp import call_mcp_tool, mcp_tool
server = MCPServer("shop", log_level="CRITICAL")
server.tool()(mcp_tool(leaky))
print(call_mcp_tool(server, "leaky", {"order_number": "1"}).is_error)
""",
    # The SDK's own loggers at DEBUG: it logs each request, the tool_result included.
    "anthropic": RICH_ROOT
    + """
logging.getLogger("anthropic").setLevel("DEBUG")
from pytest_nucleo.adapters.anthropic import anthropic_tool, run_through_tool_runner
print(run_through_tool_runner(anthropic_tool(leaky), {"order_number": "1"}).is_error)
""",
    # LlamaIndex's own loggers at DEBUG (the agent workflow's and the LLM's).
    "llama-index": RICH_ROOT
    + """
logging.getLogger("llama_index").setLevel("DEBUG")
from pytest_nucleo.adapters.llama_index import llama_index_tool, run_through_agent
print(run_through_agent(llama_index_tool(leaky), {"order_number": "1"}).is_error)
""",
    # ADK's own loggers at DEBUG (it logs each model request, the function response included).
    "google-adk": RICH_ROOT
    + """
logging.getLogger("google_adk").setLevel("DEBUG")
from pytest_nucleo.adapters.google_adk import adk_tool, run_through_adk
print(run_through_adk(adk_tool(leaky), {"order_number": "1"}).is_error)
""",
    # CrewAI's own loggers at DEBUG, and its console panels (printed to stdout), on both paths.
    "crewai": RICH_ROOT
    + """
logging.getLogger("crewai").setLevel("DEBUG")
from pytest_nucleo.adapters.crewai import crewai_tool, run_through_crewai
tool = crewai_tool(leaky)
print(run_through_crewai(tool, {"order_number": "1"}).is_error)
print(run_through_crewai(tool, {"order_number": "1"}, path="react").is_error)
""",
    # Strands' own loggers at DEBUG (the agent loop, the tool executor, the tool registry).
    "strands": RICH_ROOT
    + """
logging.getLogger("strands").setLevel("DEBUG")
from pytest_nucleo.adapters.strands import run_through_strands, strands_tool
print(run_through_strands(strands_tool(leaky), {"order_number": "1"}).is_error)
""",
    # DSPy's own loggers at DEBUG (ReAct's, the LM clients' and the adapters').
    "dspy": RICH_ROOT
    + """
logging.getLogger("dspy").setLevel("DEBUG")
from pytest_nucleo.adapters.dspy import dspy_tool, run_through_dspy
print(run_through_dspy(dspy_tool(leaky), {"order_number": "1"}).is_error)
""",
    # Agno's own logger at DEBUG with its tracebacks (it prints to stdout, apart from root);
    # Agno resets its logger's level at each run unless its own debug switches are on.
    "agno": RICH_ROOT
    + """
import os
os.environ.update(AGNO_DEBUG="true", AGNO_LOG_TRACEBACKS="true")
from pytest_nucleo.adapters.agno import agno_tool, nucleo_tool_hook, run_through_agno
print(run_through_agno(agno_tool(leaky), {"order_number": "1"}).is_error)
print(run_through_agno(leaky, {"order_number": "1"}, tool_hooks=[nucleo_tool_hook]).is_error)
""",
    # The framework's own logger at DEBUG, with its sensitive-data mode on (it then logs the
    # function's arguments and the exception's message; ours is the model's text).
    "agent-framework": RICH_ROOT
    + """
import os
os.environ["ENABLE_SENSITIVE_DATA"] = "true"
logging.getLogger("agent_framework").setLevel("DEBUG")
from pytest_nucleo.adapters.agent_framework import agent_framework_tool, run_through_agent_framework
print(run_through_agent_framework(agent_framework_tool(leaky), {"order_number": "1"}).is_error)
""",
    # Semantic Kernel's own loggers at DEBUG (it logs each function's arguments and result), on
    # the decorated function and, through the filter, on a plain one.
    "semantic-kernel": RICH_ROOT
    + """
logging.getLogger("semantic_kernel").setLevel("DEBUG")
from semantic_kernel.functions import kernel_function
from pytest_nucleo.adapters.semantic_kernel import nucleo_kernel_function, run_through_semantic_kernel
print(run_through_semantic_kernel(nucleo_kernel_function(leaky), {"order_number": "1"}).is_error)
print(run_through_semantic_kernel(kernel_function(leaky), {"order_number": "1"}).is_error)
""",
    "pydantic-ai": RICH_ROOT
    + """
from pytest_nucleo.adapters.pydantic_ai import call_through_agent, make_tool
print(call_through_agent(make_tool(leaky), {"order_number": "1"}).is_error)
""",
    "langchain": RICH_ROOT
    + """
from langchain_core.globals import set_debug
from pytest_nucleo.adapters.langchain import invoke_tool, langchain_tool
set_debug(True)
print(invoke_tool(langchain_tool(leaky), {"order_number": "1"}).is_error)
""",
    "openai-agents": RICH_ROOT
    + """
from agents import enable_verbose_stdout_logging
from pytest_nucleo.adapters.openai_agents import nucleo_function_tool, run_through_agents
enable_verbose_stdout_logging()
print(run_through_agents(nucleo_function_tool(leaky), {"order_number": "1"}).is_error)
""",
}


@pytest.mark.slow
@pytest.mark.parametrize("framework", sorted(SCRIPTS))
def test_no_secret_reaches_stderr_through_the_framework_s_logging(framework: str) -> None:
    if framework in APART:
        needs_apart(framework)  # in an environment of its own
    else:
        needs_frameworks(*imports_of(SCRIPTS[framework]))
    code = textwrap.dedent(LEAKY) + SCRIPTS[framework]
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=TESTS,
        # Offline: the Agents SDK would otherwise start its trace exporter; no OpenTelemetry
        # exporter either (ADK starts one only when an endpoint is configured).
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("OTEL_EXPORTER_")},
            "OPENAI_AGENTS_DISABLE_TRACING": "1",
            "OTEL_SDK_DISABLED": "true",
            "CREWAI_DISABLE_TELEMETRY": "true",
        },
    )
    assert done.returncode == 0, done.stderr
    assert "True" in done.stdout.split()  # the call failed, as a result
    assert "KeyError" in done.stderr  # the traceback was logged, cause included
    assert "tool leaky failed" in done.stderr
    assert SECRET not in done.stderr + done.stdout
    assert SECRET[8:] not in done.stderr + done.stdout
