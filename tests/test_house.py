"""House rules that no linter checks.

- A module of the package is about 700 lines at most, a class 260: past that a reader no
  longer holds it whole, and it is split by subject (docs/explanation/design.md, "A map of
  the package", says where each subject lives). The limits checked here leave a little room
  above the rule (720 lines for a module), so a fix does not fail for a line or two.
- The test modules that need an optional framework are listed in tests/_frameworks.py's
  ``NEEDS``, which the conftest consults to keep them out of collection when the framework is
  missing; the ``needs_frameworks(...)`` or ``needs_apart(extra)`` at each module's top must name
  the same modules (it skips the module when run directly).
"""

from __future__ import annotations

import ast
import importlib.util
import textwrap
from importlib.machinery import ModuleSpec
from pathlib import Path

import pytest

from tests._frameworks import INSTALL, NEEDS, apart_install, left_out, not_collected

ROOT = Path(__file__).parent.parent
PACKAGE = ROOT / "pytest_nucleo"
TESTS = Path(__file__).parent
DESIGN = "docs/explanation/design.md"

MODULE_LINES = 720
CLASS_LINES = 260
_FIND_SPEC = importlib.util.find_spec


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_no_module_of_the_package_is_over_720_lines() -> None:
    sizes = {path: len(path.read_text(encoding="utf-8").splitlines()) for path in _modules()}
    over = [
        f"{_name(path)}: {lines} lines"
        for path, lines in sorted(sizes.items(), key=lambda item: -item[1])
        if lines > MODULE_LINES
    ]
    assert not over, (
        f"modules over {MODULE_LINES} lines (the house rule is about 700):\n  "
        + "\n  ".join(over)
        + f"\nsplit each by subject into modules of a folder of its own; see {DESIGN}"
    )


def test_no_class_of_the_package_is_over_260_lines() -> None:
    over = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                lines = (node.end_lineno or node.lineno) - first + 1
                if lines > CLASS_LINES:
                    over.append((lines, f"{_name(path)}:{first} class {node.name}: {lines} lines"))
    assert not over, (
        f"classes over {CLASS_LINES} lines:\n  "
        + "\n  ".join(line for _, line in sorted(over, reverse=True))
        + "\nsplit each: move what is not the class's own state and steps to functions or "
        f"to classes of their own beside it; see {DESIGN}"
    )


def _top_level_needs(path: Path) -> tuple[tuple[str, ...], str | None] | None:
    """The modules named by the module-level ``needs_frameworks(...)`` calls of the test
    module at ``path``, or the framework's module and extra of its ``needs_apart(extra)``;
    None when it calls neither at its top."""
    modules: list[str] = []
    apart = None
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        call = node.value if isinstance(node, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
            continue
        named = [str(arg.value) for arg in call.args if isinstance(arg, ast.Constant)]
        if call.func.id == "needs_apart":
            apart = named[0]
            modules.append(apart.replace("-", "_"))
        elif call.func.id == "needs_frameworks":
            modules += named
    if not modules:
        return None
    return tuple(modules), apart


def test_the_frameworks_table_agrees_with_the_test_modules() -> None:
    """A check, reading the sources: the conftest itself reads only the table."""
    called = {
        path.name: needs
        for path in sorted(TESTS.glob("test_*.py"))
        if (needs := _top_level_needs(path)) is not None
    }
    table = {name: (needs.modules, needs.apart) for name, needs in NEEDS.items()}
    missing = sorted(set(called) - set(table))
    assert not missing, (
        f"these test modules call needs_frameworks(...) or needs_apart(extra) at their top but "
        f"are not in NEEDS in tests/_frameworks.py, so they are collected (and fail or leave "
        f"syrupy's snapshots unused) without their framework: add a line for each: {missing}"
    )
    gone = sorted(name for name in table if not (TESTS / name).is_file())
    assert not gone, f"NEEDS in tests/_frameworks.py names test modules that are gone: {gone}"
    uncalled = sorted(set(table) - set(called))
    assert not uncalled, (
        f"NEEDS in tests/_frameworks.py names test modules that call neither "
        f"needs_frameworks(...) nor needs_apart(extra) at their top (so they do not skip when run "
        f"directly): {uncalled}"
    )
    differ = [
        f"{name}: the module names {called[name]}, NEEDS {table[name]}"
        for name in sorted(table)
        if table[name] != called[name]
    ]
    assert not differ, "NEEDS in tests/_frameworks.py and the modules differ:\n" + "\n".join(differ)


def _without(monkeypatch: pytest.MonkeyPatch, *missing: str) -> None:
    """Make ``importlib.util.find_spec`` find none of the ``missing`` modules (nor their
    submodules), as in an environment without them, and every other module ``NEEDS`` names,
    whether it is installed here or not."""
    named = {module for needs in NEEDS.values() for module in needs.modules}

    def find_spec(name: str, package: str | None = None) -> ModuleSpec | None:
        if any(name == m or name.startswith(f"{m}.") for m in missing):
            return None
        if name in named:
            return ModuleSpec(name, None)
        return _FIND_SPEC(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def test_a_module_whose_framework_is_missing_is_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch)
    assert all(left_out(TESTS / name) is None for name in NEEDS)
    _without(monkeypatch, "fastmcp", "agents", "google")
    # Only what is missing is named.
    assert left_out(TESTS / "test_adapter_mcp.py") == (
        f"needs fastmcp, from the frameworks extra: {INSTALL}"
    )
    assert left_out(TESTS / "test_adapter_texts.py") == (
        f"needs fastmcp, agents, from the frameworks extra: {INSTALL}"
    )
    assert left_out(TESTS / "test_adapter_anthropic.py") is None
    # A submodule the table names is missing when its package is.
    assert left_out(TESTS / "test_provider_google.py") == (
        f"needs google.genai, from the frameworks extra: {INSTALL}"
    )
    # Modules the table does not name are never left out.
    assert left_out(TESTS / "test_clock.py") is None
    assert left_out(TESTS / "test_frameworks_table.py") is None


def test_the_crewai_module_names_its_own_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "crewai")
    why = left_out(TESTS / "test_adapter_crewai.py")
    assert why is not None
    assert why.startswith("needs crewai, from the crewai extra, which needs an environment")
    assert why.endswith(apart_install("crewai"))


def test_the_modules_left_out_are_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "crewai", "llama_index")
    assert not_collected(TESTS) == [
        f"test_adapter_crewai.py: {left_out(TESTS / 'test_adapter_crewai.py')}",
        f"test_adapter_llama_index.py: needs llama_index.core, from the frameworks extra: {INSTALL}",
    ]


def test_the_run_keeps_a_missing_framework_s_module_out_and_says_so(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the suite's own conftest hooks: the module is not collected (not even
    imported: its top would fail), the others run, and the run's end names it."""
    conftest = TESTS / "conftest.py"
    pytester.makeconftest(
        textwrap.dedent(
            f"""
            import importlib.util

            spec = importlib.util.spec_from_file_location("_suite_conftest", {str(conftest)!r})
            suite = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(suite)
            pytest_ignore_collect = suite.pytest_ignore_collect
            pytest_terminal_summary = suite.pytest_terminal_summary
            """
        )
    )
    pytester.makepyfile(
        test_adapter_llama_index="raise AssertionError('imported, though left out')",
        test_plain="def test_plain():\n    pass\n",
    )
    _without(monkeypatch, "llama_index")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*= test modules not collected: their frameworks are not installed =*",
            f"test_adapter_llama_index.py: needs llama_index.core, from the frameworks extra: {INSTALL}",
        ]
    )
