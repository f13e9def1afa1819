"""The import contracts in pyproject.toml's ``[tool.importlinter]`` bite.

CI runs ``lint-imports`` over the package itself (.ci/run). These tests check the contracts
rather than the package: each is broken on purpose in a copy of the package (an import added
to one module), and ``lint-imports`` on that copy must fail naming the contract and the import;
the copy as it is must pass. The copy comes first on PYTHONPATH, so import-linter analyses it
and not the checkout, and its config is a copy of pyproject.toml. No network.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "importlinter", reason="needs import-linter, from the test extra: pip install -e '.[test]'"
)

ROOT = Path(__file__).parent.parent
PYPROJECT = ROOT / "pyproject.toml"
CONFIG: dict[str, Any] = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"][
    "importlinter"
]
CONTRACTS: dict[str, dict[str, Any]] = {c["id"]: c for c in CONFIG["contracts"]}


@pytest.fixture
def package_copy(tmp_path: Path) -> Path:
    """A copy of the package under ``tmp_path/src``, and of pyproject.toml beside it."""
    shutil.copytree(
        ROOT / "pytest_nucleo",
        tmp_path / "src" / "pytest_nucleo",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    shutil.copy(PYPROJECT, tmp_path / "pyproject.toml")
    return tmp_path


def _lint(copy: Path) -> subprocess.CompletedProcess[str]:
    path = [str(copy / "src"), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    # Wide and plain, so that a contract's name and an import chain are each on one line.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path), "COLUMNS": "250", "NO_COLOR": "1"}
    command = "from importlinter.cli import lint_imports_command; lint_imports_command()"
    config = str(copy / "pyproject.toml")
    return subprocess.run(
        [sys.executable, "-c", command, "--config", config, "--no-cache"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def _verdicts(output: str) -> dict[str, str]:
    """Each contract's name, as lint-imports printed it, and KEPT or BROKEN."""
    return {
        match["name"]: match["verdict"]
        for match in re.finditer(r"^(?P<name>.+) (?P<verdict>KEPT|BROKEN)$", output, re.MULTILINE)
    }


def _add(copy: Path, module: str, code: str) -> None:
    """Append ``code`` to ``module`` (a path under pytest_nucleo/) of the copy."""
    path = copy / "src" / "pytest_nucleo" / module
    assert path.is_file(), f"{module} is gone from the package: choose another module here"
    path.write_text(path.read_text(encoding="utf-8") + "\n\n" + code + "\n", encoding="utf-8")


def test_the_package_as_it_is_keeps_every_contract(package_copy: Path) -> None:
    result = _lint(package_copy)
    verdicts = _verdicts(result.stdout)
    assert verdicts == {c["name"]: "KEPT" for c in CONTRACTS.values()}, result.stdout
    assert result.returncode == 0, result.stdout + result.stderr


# Each case: the contract's id, the module an import is added to, the code added, and the
# import that lint-imports must name.
VIOLATIONS = {
    "runtime, imported lazily inside a function": (
        "runtime",
        "_clock.py",
        "def _deliberate() -> None:\n    import pytest_nucleo.testing  # noqa: F401",
        "pytest_nucleo._clock -> pytest_nucleo.testing",
    ),
    "runtime, an adapter through a submodule": (
        "runtime",
        "_text/_render.py",
        "import pytest_nucleo.adapters._core",
        "pytest_nucleo._text._render -> pytest_nucleo.adapters._core",
    ),
    "the root, under TYPE_CHECKING": (
        "root",
        "__init__.py",
        "if TYPE_CHECKING:\n    from .testing._fake._upstream import FakeUpstream",
        "pytest_nucleo -> pytest_nucleo.testing._fake._upstream",
    ),
    "testing, an adapter": (
        "testing",
        "testing/_failure.py",
        "import pytest_nucleo.adapters.mcp",
        "pytest_nucleo.testing._failure -> pytest_nucleo.adapters.mcp",
    ),
    "the plugin, from the strategies": (
        "plugin",
        "strategies.py",
        "import pytest_nucleo.plugin",
        "pytest_nucleo.strategies -> pytest_nucleo.plugin",
    ),
    "the runtime's layers, _text importing the failure set": (
        "runtime-layers",
        "_text/_quote.py",
        "import pytest_nucleo._exceptions",
        "pytest_nucleo._text._quote -> pytest_nucleo._exceptions",
    ),
}


@pytest.mark.parametrize(
    ("contract", "module", "code", "named"), VIOLATIONS.values(), ids=VIOLATIONS.keys()
)
def test_a_forbidden_import_breaks_its_contract(
    package_copy: Path, contract: str, module: str, code: str, named: str
) -> None:
    _add(package_copy, module, code)
    result = _lint(package_copy)
    name = CONTRACTS[contract]["name"]
    assert _verdicts(result.stdout).get(name) == "BROKEN", result.stdout + result.stderr
    assert named in result.stdout, result.stdout
    assert result.returncode == 1, result.stdout + result.stderr


def test_a_circle_breaks_the_acyclic_contract(package_copy: Path) -> None:
    # _clock imports _forks at module level; a lazy import back closes a circle.
    _add(package_copy, "_forks.py", "def _deliberate() -> None:\n    import pytest_nucleo._clock")
    result = _lint(package_copy)
    name = CONTRACTS["acyclic"]["name"]
    assert _verdicts(result.stdout).get(name) == "BROKEN", result.stdout + result.stderr
    # Under "No cycles are allowed in pytest_nucleo.", the edge lint-imports would remove.
    assert re.search(r"^- \._(clock|forks) -> \._(clock|forks) \(", result.stdout, re.MULTILINE), (
        result.stdout
    )
    assert result.returncode == 1, result.stdout + result.stderr


def test_every_top_level_module_has_a_side() -> None:
    """Each module and folder at the top of the package is runtime (the contracts' sources) or
    test time and the adapters (what the runtime may not import): a new one must be added to
    one list in pyproject.toml, or the contracts would not see it."""
    runtime = set(CONTRACTS["runtime"]["source_modules"])
    others = set(CONTRACTS["runtime"]["forbidden_modules"])
    package = ROOT / "pytest_nucleo"
    children = {
        f"pytest_nucleo.{path.stem}"
        for path in package.iterdir()
        if (path.suffix == ".py" and path.name != "__init__.py")
        or (path.is_dir() and (path / "__init__.py").is_file())
    }
    unplaced = children - runtime - others
    assert not unplaced, (
        f"not in [tool.importlinter]'s runtime contract in pyproject.toml: {sorted(unplaced)}; "
        "add each to its source_modules (runtime) or its forbidden_modules (test time, adapters)"
    )
    assert not runtime & others, sorted(runtime & others)
    root = {m.removesuffix(".**") for m in CONTRACTS["root"]["forbidden_modules"]}
    assert root == others, "the root's contract forbids what the runtime's forbids"


def _cycles(graph: Any) -> list[str]:
    """Each import cycle of ``graph`` (a grimp graph), once from each of its modules."""
    return sorted(
        " -> ".join((module, *chain))
        for module in sorted(graph.modules)
        for imported in sorted(graph.find_modules_directly_imported_by(module))
        if (chain := graph.find_shortest_chain(importer=imported, imported=module))
    )


def test_no_module_is_in_an_import_cycle() -> None:
    """Module by module, as import-linter's graph library sees the package: no module imports
    itself through others. The acyclic_siblings contract compares folders as wholes, sibling
    with sibling; this one also sees a package's ``__init__`` and its own submodules, which are
    not siblings. Imports made by string (lazy tables, registries) are not seen."""
    import grimp

    cycles = _cycles(grimp.build_graph("pytest_nucleo", cache_dir=None))
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_a_package_and_its_own_submodule_importing_each_other_is_a_cycle() -> None:
    # What acyclic_siblings does not see: pytest_nucleo._http._clients imports its ._kinds.
    import grimp

    graph = grimp.ImportGraph()
    for module in ("p", "p._c", "p._c._kinds", "p._d"):
        graph.add_module(module)
    graph.add_import(importer="p._c", imported="p._c._kinds")
    graph.add_import(importer="p._d", imported="p._c")
    assert _cycles(graph) == []
    graph.add_import(importer="p._c._kinds", imported="p._c")
    assert _cycles(graph) == ["p._c -> p._c._kinds -> p._c", "p._c._kinds -> p._c -> p._c._kinds"]
