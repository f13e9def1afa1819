"""Test modules that drive an optional framework or SDK skip, saying which extra brings it.

The `test` extra leaves the agent frameworks and provider SDKs out (they are half of what the
suite would install); the `frameworks` extra brings them, and .ci/run installs both.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

INSTALL = "pip install -e '.[test,frameworks]'"

APART: dict[str, str] = {
    "crewai": "it pins older mcp, openai, httpx and pydantic",
    "semantic-kernel": "it pins older mcp and pydantic",
}
"""The frameworks whose extra needs an environment of its own, by extra, with why: their pins
would downgrade what the frameworks extra needs. ``bash .ci/apart <extra>`` makes it and runs
their tests there; a new one is one more line here."""


def apart_install(extra: str) -> str:
    """The command that makes the environment of a framework in :data:`APART`."""
    return f"bash .ci/apart {extra}"


def apart_reason(extra: str) -> str:
    """Why a test of a framework in :data:`APART` does not run here."""
    return (
        f"needs {extra.replace('-', '_')}, from the {extra} extra, which needs an environment "
        f"of its own ({APART[extra]}): {apart_install(extra)}"
    )


def needs_frameworks(*modules: str) -> None:
    """Skip the calling test module (or test) unless every one of ``modules`` imports.

    Called at a test module's top, the same modules are its line in ``NEEDS`` below, which
    keeps it out of collection when one is missing; this call skips it when run directly."""
    # pytest reports the skip at this line; the reason names the module that asked.
    caller = sys._getframe(1).f_globals["__name__"]
    for module in modules:
        pytest.importorskip(
            module, reason=f"{caller} needs {module}, from the frameworks extra: {INSTALL}"
        )


def needs_apart(extra: str) -> None:
    """Skip the calling test module (or test) unless the framework of ``extra``, one of
    :data:`APART`, imports. Its extra is not part of the frameworks extra (it would downgrade
    what the other adapters need), so the reason names its own extra and environment."""
    caller = sys._getframe(1).f_globals["__name__"]
    pytest.importorskip(extra.replace("-", "_"), reason=f"{caller} {apart_reason(extra)}")


class Needs(NamedTuple):
    """What one test module needs: the modules its top-level ``needs_frameworks(...)`` names, in
    its order, or, for ``needs_apart(extra)``, the framework's module and ``apart=extra``."""

    modules: tuple[str, ...]
    apart: str | None = None


NEEDS: dict[str, Needs] = {
    "test_adapter_anthropic.py": Needs(("anthropic",)),
    "test_adapter_agent_framework.py": Needs(("agent_framework",)),
    "test_adapter_agno.py": Needs(("agno", "openai")),
    "test_adapter_crewai.py": Needs(("crewai",), apart="crewai"),
    "test_adapter_dspy.py": Needs(("dspy",)),
    "test_adapter_google_adk.py": Needs(("google.adk",)),
    "test_adapter_langchain.py": Needs(("langchain_core", "langgraph", "langchain")),
    "test_adapter_llama_index.py": Needs(("llama_index.core",)),
    "test_adapter_mcp.py": Needs(("mcp", "fastmcp")),
    "test_adapter_openai_agents.py": Needs(("agents",)),
    "test_adapter_own_errors.py": Needs(("fastmcp", "mcp", "langchain_core", "pydantic_ai")),
    "test_adapter_pydantic_ai.py": Needs(("pydantic_ai", "openai", "anthropic")),
    "test_adapter_pydantic_ai_mcp.py": Needs(("fastmcp", "pydantic_ai")),
    "test_adapter_semantic_kernel.py": Needs(("semantic_kernel",), apart="semantic-kernel"),
    "test_adapter_strands.py": Needs(("strands",)),
    "test_adapter_texts.py": Needs(("fastmcp", "mcp", "langchain_core", "pydantic_ai", "agents")),
    "test_fake_mcp_http.py": Needs(("mcp",)),
    "test_fake_sdks.py": Needs(("anthropic", "openai")),
    "test_fake_httplib2.py": Needs(("httplib2", "googleapiclient")),
    "test_fetch_server.py": Needs(("mcp_server_fetch",)),
    "test_provider_google.py": Needs(("google.genai",)),
    "test_providers.py": Needs(("anthropic", "openai")),
    "test_sdk_readers.py": Needs(
        ("boto3", "googleapiclient", "google.api_core", "slack_sdk", "github", "stripe", "twilio")
    ),
}
"""Each test module (by file name, in tests/) that needs an optional framework or SDK as a whole,
and what it needs: what ``left_out`` consults. The module itself still calls
``needs_frameworks(...)`` or ``needs_apart(extra)`` at its top, with the same modules, so that it
skips when run directly; tests/test_house.py checks that the two agree. A new such module is
one more line here."""


def left_out(path: Path) -> str | None:
    """Why the test module at ``path`` is left out of collection (the conftest's
    ``pytest_ignore_collect``), or None: ``NEEDS`` names a module for it that is not installed.

    Left out rather than skipped at import: syrupy counts the snapshots of a module that was
    collected and yielded no test as unused, and fails the run; those of a module kept out of
    collection it leaves alone."""
    needs = NEEDS.get(path.name)
    if needs is None:
        return None
    missing = [module for module in needs.modules if not _installed(module)]
    if not missing:
        return None
    if needs.apart is not None:
        return apart_reason(needs.apart)
    return f"needs {', '.join(missing)}, from the frameworks extra: {INSTALL}"


def not_collected(tests: Path) -> list[str]:
    """One line for each test module in the directory ``tests`` that ``left_out`` keeps out of
    collection, saying why: the conftest prints them at the end of the run."""
    return [
        f"{name}: {why}"
        for name in sorted(NEEDS)
        if (tests / name).is_file() and (why := left_out(tests / name))
    ]


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that is missing
        return False


def missing_for(code: str) -> list[str]:
    """The modules the Python ``code`` imports, directly or through the package's adapters, that
    are not installed (an adapter imports its framework when imported)."""
    missing = set()
    for name in imports_of(code):
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name is not None:  # the module itself, or what it imports
                missing.add(error.name.split(".")[0])
        except ImportError:
            continue  # installed, but not importable here: the block's run will say why
    return sorted(missing)


def imports_of(code: str) -> list[str]:
    """Every module ``code`` imports, ``from package import submodule`` included."""
    names = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
            for alias in node.names:
                with contextlib.suppress(ImportError, ValueError):
                    if importlib.util.find_spec(f"{node.module}.{alias.name}") is not None:
                        names.append(f"{node.module}.{alias.name}")
    return names


def skip_unless_installed(code: str) -> list[pytest.MarkDecorator]:
    """A skip mark for a docs block whose imports are not installed, naming the extra; none
    under CI, where everything is installed and a missing module is a broken block."""
    missing = missing_for(code)
    for extra in APART:  # never in the main environment, CI or not: see needs_apart
        if extra.replace("-", "_") in missing:
            return [pytest.mark.skip(reason=apart_reason(extra))]
    if not missing or os.environ.get("CI"):
        return []
    return [
        pytest.mark.skip(reason=f"needs {', '.join(missing)}, from the frameworks extra: {INSTALL}")
    ]
