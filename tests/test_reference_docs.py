"""The reference documents every public name exactly once: each name in a public module's
``__all__``, each public member (method, property, attribute) of the classes among them, each
fixture, marker option, command-line option and command of the plugin is one entry (one
heading id) of the built site, and every public member has a docstring, so a new name without
docs fails here."""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from _pytest.fixtures import FixtureFunctionDefinition

from pytest_nucleo import plugin
from pytest_nucleo.__main__ import _parser
from tests._doc_blocks import ROOT
from tests._frameworks import needs_frameworks

PUBLIC_MODULES = (
    "pytest_nucleo",
    "pytest_nucleo.testing",
    "pytest_nucleo.strategies",
    "pytest_nucleo.adapters",
    "pytest_nucleo.adapters.mcp",
    "pytest_nucleo.adapters.pydantic_ai",
    "pytest_nucleo.adapters.langchain",
    "pytest_nucleo.adapters.openai_agents",
    "pytest_nucleo.adapters.anthropic",
    "pytest_nucleo.adapters.llama_index",
    "pytest_nucleo.adapters.google_adk",
    "pytest_nucleo.adapters.crewai",
    "pytest_nucleo.adapters.strands",
    "pytest_nucleo.adapters.dspy",
    "pytest_nucleo.adapters.agno",
    "pytest_nucleo.adapters.agent_framework",
    "pytest_nucleo.adapters.semantic_kernel",
)
# Modules whose framework runs in an environment of its own (CrewAI and Semantic Kernel pin older
# releases of what the other adapters need): where the docs are built it is not installed, so
# their names are read from the source, as mkdocstrings reads them, not by importing them.
APART = ("pytest_nucleo.adapters.crewai", "pytest_nucleo.adapters.semantic_kernel")
_HEADING_ID = re.compile(r'<h[1-6] id="([^"]+)"')


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if importlib.util.find_spec("mkdocs") is None and not os.environ.get("CI"):
        pytest.skip("mkdocs is not installed: pip install -e '.[docs]'")
    site = tmp_path_factory.mktemp("site")
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT, capture_output=True, text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    assert build.returncode == 0, build.stderr[-3000:]
    return site


def _entries(site: Path) -> Counter[str]:
    """The heading ids of the reference pages: one per documented object or option."""
    ids: Counter[str] = Counter()
    for page in sorted((site / "reference").rglob("*.html")):
        ids.update(_HEADING_ID.findall(page.read_text(encoding="utf-8")))
    return ids


def _command_line_options(*, ini: bool = False) -> list[str]:
    """The plugin's command-line options, or (``ini=True``) its ini keys."""
    seen: list[str] = []
    keys: list[str] = []

    class Group:
        def addoption(self, *names: str, **_: Any) -> None:
            seen.extend(names)

    class Parser:
        def getgroup(self, *_: Any) -> Group:
            return Group()

        def addini(self, name: str, *_: Any, **__: Any) -> None:
            keys.append(name)

    plugin.pytest_addoption(Parser())  # type: ignore[arg-type]
    return keys if ini else seen


def _commands() -> list[str]:
    return [
        command
        for action in _parser()._actions
        if isinstance(action, argparse._SubParsersAction)
        for command in action.choices
    ]


def _all_of(module: str) -> list[str]:
    """The module's ``__all__``: imported, or for a module of :data:`APART` read from its
    source (a literal list)."""
    if module not in APART:
        return list(importlib.import_module(module).__all__)
    path = ROOT / (module.replace(".", "/") + ".py")
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
        ):
            return list(ast.literal_eval(node.value))
    raise AssertionError(f"{path} has no __all__")


def _needs_the_frameworks() -> None:
    # The adapters import their framework: without the frameworks extra, this skips.
    needs_frameworks(
        *(m for m in PUBLIC_MODULES if m.startswith("pytest_nucleo.adapters.") and m not in APART)
    )


def _public_members() -> dict[str, Any]:
    """Every public member of the public classes, by the path the reference shows it under,
    as griffe (mkdocstrings' reader) sees it: methods, properties, class attributes and the
    attributes ``__init__`` sets. A class exported twice counts once, under its first path;
    members a class inherits are documented on the class that defines them."""
    _needs_the_frameworks()
    import griffe

    package = griffe.load("pytest_nucleo", resolve_aliases=True, resolve_external=False)
    members: dict[str, Any] = {}
    seen = set()
    for module in PUBLIC_MODULES:
        for name in _all_of(module):
            inner = module.removeprefix("pytest_nucleo").lstrip(".")
            cls = package[f"{inner}.{name}" if inner else name]
            cls = cls.final_target if cls.is_alias else cls
            if not cls.is_class:
                continue
            if cls.path in seen:
                continue
            seen.add(cls.path)
            for member_name, member in cls.members.items():
                if not member_name.startswith("_") and not member.is_alias:
                    members[f"{module}.{name}.{member_name}"] = member
    return members


def _expected_entries(*, members: bool = True) -> list[str]:
    _needs_the_frameworks()
    names = [f"{module}.{name}" for module in PUBLIC_MODULES for name in _all_of(module)]
    if members:
        names += list(_public_members())
    fixtures = [n for n, o in vars(plugin).items() if isinstance(o, FixtureFunctionDefinition)]
    names += [f"fixture-{name}" for name in fixtures]
    names += [f"marker-{option}" for option in plugin.MARKER_OPTIONS]
    names += [f"option-{option.lstrip('-')}" for option in _command_line_options()]
    names += [f"ini-{key}" for key in _command_line_options(ini=True)]
    names += [f"command-{command}" for command in _commands()]
    return names


def test_every_public_member_has_a_docstring() -> None:
    if importlib.util.find_spec("griffe") is None and not os.environ.get("CI"):
        pytest.skip("griffe is not installed: pip install -e '.[docs]'")
    members = _public_members()
    # Guards the walk: were it to find nothing, the check below could not fail.
    assert {
        "pytest_nucleo.testing.FakeUpstream.get",
        "pytest_nucleo.testing.FakeRoute.respond",
        "pytest_nucleo.testing.ToolContract.tool",  # a class attribute
        "pytest_nucleo.RateLimiter.max_requests",  # set by __init__
        "pytest_nucleo.testing.FakeRoute.calls",  # a property
    } <= set(members)
    bare = [path for path, member in members.items() if not member.docstring]
    assert not bare, f"public members without a docstring: {bare}"


def test_the_plugin_has_what_the_reference_page_lists() -> None:
    # Guards the discovery below: were it to find nothing, the test after it could not fail.
    expected = _expected_entries(members=False)
    assert {"fixture-fake_upstream", "fixture-llm_snapshot", "marker-allow_network"} <= set(
        expected
    )
    assert {"option-nucleo-strict", "command-scenarios", "pytest_nucleo.run_tool"} <= set(expected)
    assert {"ini-nucleo_strict", "ini-nucleo_allow_hosts"} <= set(expected)


def test_every_option_of_the_plugin_is_also_an_ini_key() -> None:
    options = {o.lstrip("-").removeprefix("no-") for o in _command_line_options()}
    assert {key.replace("_", "-") for key in _command_line_options(ini=True)} == options


@pytest.mark.slow
def test_every_public_name_is_one_entry_of_the_reference(site: Path) -> None:
    entries = _entries(site)
    missing = [name for name in _expected_entries() if entries[name] == 0]
    twice = [name for name in _expected_entries() if entries[name] > 1]
    assert not missing, f"not in docs/reference/: {missing}"
    assert not twice, f"documented more than once in docs/reference/: {twice}"


@pytest.mark.slow
def test_no_entry_is_documented_under_a_private_path(site: Path) -> None:
    # A name documented under its private module (pytest_nucleo._runner.run_tool) would be a
    # second entry for one object, under a path no reader imports.
    private = [name for name in _entries(site) if re.search(r"(^|\.)_[a-z]", name)]
    assert not private, private


@pytest.mark.slow
def test_library_types_in_signatures_link_to_their_libraries_docs(site: Path) -> None:
    # Through the inventories docs/_ext/inventories.py hands mkdocstrings (the build is offline).
    pages = "".join(
        page.read_text(encoding="utf-8") for page in (site / "reference").rglob("*.html")
    )
    for href in (
        "https://www.python-httpx.org/api/#response",
        "https://docs.python.org/3/library/collections.abc.html#collections.abc.Mapping",
        "https://hypothesis.readthedocs.io/en/latest/reference/strategies.html"
        "#hypothesis.strategies.SearchStrategy",
    ):
        assert f'href="{href}"' in pages, href
