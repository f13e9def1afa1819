"""Adapters: the same failures, delivered through the agent frameworks tools run under.

One module per framework (``pytest_nucleo.adapters.mcp``, ``.pydantic_ai``, ``.langchain``,
``.openai_agents``, ``.anthropic``, ``.llama_index``, ``.google_adk``, ``.crewai``,
``.strands``, ``.dspy``, ``.agno``, ``.agent_framework``, ``.semantic_kernel``), each importing
its framework only when it is imported itself; install the matching extra
(``pytest-nucleo[mcp]`` and so on; CrewAI's and Semantic Kernel's in environments of their
own). ``import pytest_nucleo`` imports none of them.
"""

from pytest_nucleo.adapters._core import RunnerOptions

__all__ = ["RunnerOptions"]
