"""The reference documents every public name exactly once: each name in a public module's
``__all__``, each fixture, marker option, command-line option and command of the plugin is one
entry (one heading id) of the built site, so a new name without docs fails here."""

from __future__ import annotations

import argparse
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
)
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


def _expected_entries() -> list[str]:
    names = [
        f"{module}.{name}"
        for module in PUBLIC_MODULES
        for name in importlib.import_module(module).__all__
    ]
    fixtures = [n for n, o in vars(plugin).items() if isinstance(o, FixtureFunctionDefinition)]
    names += [f"fixture-{name}" for name in fixtures]
    names += [f"marker-{option}" for option in plugin.MARKER_OPTIONS]
    names += [f"option-{option.lstrip('-')}" for option in _command_line_options()]
    names += [f"ini-{key}" for key in _command_line_options(ini=True)]
    names += [f"command-{command}" for command in _commands()]
    return names


def test_the_plugin_has_what_the_reference_page_lists() -> None:
    # Guards the discovery below: were it to find nothing, the test after it could not fail.
    expected = _expected_entries()
    assert {"fixture-fake_upstream", "fixture-llm_snapshot", "marker-allow_network"} <= set(
        expected
    )
    assert {"option-nucleo-strict", "command-scenarios", "pytest_nucleo.run_tool"} <= set(expected)
    assert {"ini-nucleo_strict", "ini-nucleo_allow_hosts"} <= set(expected)


def test_every_option_of_the_plugin_is_also_an_ini_key() -> None:
    options = {o.lstrip("-").removeprefix("no-") for o in _command_line_options()}
    assert {key.replace("_", "-") for key in _command_line_options(ini=True)} == options


def test_every_public_name_is_one_entry_of_the_reference(site: Path) -> None:
    entries = _entries(site)
    missing = [name for name in _expected_entries() if entries[name] == 0]
    twice = [name for name in _expected_entries() if entries[name] > 1]
    assert not missing, f"not in docs/reference/: {missing}"
    assert not twice, f"documented more than once in docs/reference/: {twice}"


def test_no_entry_is_documented_under_a_private_path(site: Path) -> None:
    # A name documented under its private module (pytest_nucleo._runner.run_tool) would be a
    # second entry for one object, under a path no reader imports.
    private = [name for name in _entries(site) if re.search(r"(^|\.)_[a-z]", name)]
    assert not private, private
