"""What the distributions hold and what installing them brings.

The wheel and sdist are built here, from this checkout, with ``build`` and hatchling (both in
the ``test`` extra, so no build environment is fetched), and their file lists compared with what
they should hold. The runtime install is tried in a fresh virtual environment: pip fetches httpx
and its dependencies the way it is configured to (an index, or a local registry), never the
test stack. Those tests are marked ``packaging`` (about fifteen seconds on two cores);
``-m "not packaging"`` leaves them out.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from tests._frameworks import APART
from tests._frameworks import INSTALL as FRAMEWORKS_INSTALL

ROOT = Path(__file__).resolve().parent.parent
TEST_STACK = {"pytest", "hypothesis", "respx", "syrupy"}
SDIST_TOP = {
    "PKG-INFO",
    "pyproject.toml",
    "hatch_build.py",
    "README.md",
    "CHANGELOG.md",
    "LICENSE",
    "mkdocs.yml",
}
SDIST_TREES = ("pytest_nucleo", "tests", "examples", "docs")
DIST_INFO = {"METADATA", "WHEEL", "RECORD", "entry_points.txt", "licenses/LICENSE"}
PROJECT_URLS = {
    "Homepage": "https://pytest-nucleo.github.io/pytest-nucleo/",
    "Documentation": "https://pytest-nucleo.github.io/pytest-nucleo/",
    "Repository": "https://github.com/pytest-nucleo/pytest-nucleo",
    "Changelog": "https://github.com/pytest-nucleo/pytest-nucleo/blob/main/CHANGELOG.md",
    "Issues": "https://github.com/pytest-nucleo/pytest-nucleo/issues",
}


def _run(*args: str | Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(arg) for arg in args], capture_output=True, text=True, check=False, **kwargs
    )  # type: ignore[call-overload]
    assert result.returncode == 0, f"{args}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result  # type: ignore[no-any-return]


def _tracked(*trees: str) -> set[str]:
    """The files of ``trees`` a checkout holds: git's list, so an untracked stray shows up as
    one in the distribution; an unpacked sdist (no git) lists its own files."""
    if (ROOT / ".git").exists():
        listed = _run("git", "ls-files", "--", *trees, cwd=ROOT).stdout.split()
        return {name for name in listed if (ROOT / name).exists()}  # deleted, not committed
    return {
        path.relative_to(ROOT).as_posix()
        for tree in trees
        for path in (ROOT / tree).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    # The wheel is built from the sdist (build's default), so the sdist is shown to be enough.
    _run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out, ROOT)
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    return {"sdist": sdist, "wheel": wheel}


@pytest.mark.packaging
def test_the_wheel_holds_the_package_and_its_metadata(dists: dict[str, Path]) -> None:
    with zipfile.ZipFile(dists["wheel"]) as wheel:
        names = set(wheel.namelist())
        (info,) = {name.split("/")[0] for name in names if ".dist-info/" in name}
        metadata = Parser().parsestr(wheel.read(f"{info}/METADATA").decode())
        entry_points = wheel.read(f"{info}/entry_points.txt").decode()
    assert names == _tracked("pytest_nucleo") | {f"{info}/{name}" for name in DIST_INFO}
    urls = dict(url.split(", ", 1) for url in metadata.get_all("Project-URL", []))
    assert urls == PROJECT_URLS
    # The plain install needs httpx alone; the test stack comes with the `pytest` extra.
    always = [req for req in metadata.get_all("Requires-Dist", []) if "extra ==" not in req]
    assert always == ["httpx>=0.28"]
    for name in TEST_STACK:
        assert any(
            req.startswith(name) and "extra == 'pytest'" in req
            for req in metadata.get_all("Requires-Dist", [])
        ), name
    assert "nucleo = pytest_nucleo.plugin" in entry_points
    assert "pytest_nucleo = pytest_nucleo._hypothesis:register_type_strategies" in entry_points


@pytest.mark.packaging
def test_the_sdist_holds_what_the_suite_and_the_docs_need_and_nothing_else(
    dists: dict[str, Path],
) -> None:
    with tarfile.open(dists["sdist"]) as sdist:
        members = [member for member in sdist.getmembers() if member.isfile()]
    (top,) = {member.name.split("/")[0] for member in members}
    names = {member.name.removeprefix(f"{top}/") for member in members}
    # No bench/ (its README among them), no .ci/, no .gitignore, no caches.
    assert names == SDIST_TOP | _tracked(*SDIST_TREES)


def _fresh_venv(tmp_path: Path) -> tuple[Path, tuple[str | Path, ...]]:
    """A fresh virtual environment's Python, and the pip command that installs into it.

    It has no pip of its own (installing one cost 8 s): this pip installs into it, fetching
    what it fetches as it would there. Nor is it byte-compiled: the few modules run here compile
    faster than pip compiles them all."""
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    pip = (sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-compile")
    return python, (*pip, "--disable-pip-version-check")


# requests allows urllib3 1.x, whose names differ from 2's in places (a NewConnectionError's
# connection is its ``pool``, a response has no ``url``): a failure must still map, never raise.
URLLIB3_1X_FAILURES = textwrap.dedent("""
    import socket, threading
    import requests, urllib3
    import pytest_nucleo as nucleo

    assert urllib3.__version__.startswith("1."), urllib3.__version__
    probe = socket.socket(); probe.bind(("127.0.0.1", 0)); port = probe.getsockname()[1]
    probe.close()  # nothing listens on that port now: a refused connection
    for call in (
        lambda: urllib3.PoolManager().request("GET", f"http://127.0.0.1:{port}/x", retries=False),
        lambda: requests.get(f"http://127.0.0.1:{port}/x", timeout=5),
    ):
        try:
            call()
        except Exception as error:
            print(nucleo.unwrap(error, component="orders").llm_message)
    listener = socket.socket(); listener.bind(("127.0.0.1", 0)); listener.listen(1)

    def answer():
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 503 Service Unavailable\\r\\nContent-Length: 9\\r\\n\\r\\ntry later")
        conn.close()

    threading.Thread(target=answer).start()
    response = urllib3.PoolManager().request(
        "GET", f"http://127.0.0.1:{listener.getsockname()[1]}/orders/7", retries=False
    )
    print(nucleo.exception_for_response("Shop", response))
""")


@pytest.mark.packaging
def test_failures_map_under_urllib3_1x_which_requests_allows(
    dists: dict[str, Path], tmp_path: Path
) -> None:
    python, pip = _fresh_venv(tmp_path)
    _run(*pip, dists["wheel"], "requests>=2.32", "urllib3<2")
    printed = _run(python, "-c", URLLIB3_1X_FAILURES).stdout.splitlines()
    refused = "the connection was refused or could not be made. Nothing was sent"
    assert len(printed) == 3, printed
    assert refused in printed[0], printed  # urllib3's own error
    assert refused in printed[1], printed  # requests' wrapping it
    assert printed[2] == "Shop: HTTP 503 Service Unavailable at /orders/7: try later"


@pytest.mark.packaging
def test_the_runtime_installs_alone_and_the_plugin_names_the_extra_it_lacks(
    dists: dict[str, Path], tmp_path: Path
) -> None:
    python, pip = _fresh_venv(tmp_path)
    _run(*pip, dists["wheel"])
    installed = json.loads(
        _run(
            python,
            "-c",
            "import importlib.metadata as m, json;"
            "print(json.dumps(sorted(d.metadata['Name'].lower() for d in m.distributions())))",
        ).stdout
    )
    assert "pytest-nucleo" in installed
    assert "httpx" in installed
    assert not TEST_STACK & set(installed), installed
    # The core works: a failure's text, the client base (httpx), the limiters.
    core = textwrap.dedent("""
        import sys
        import pytest_nucleo as nucleo
        failure = nucleo.ResourceNotFoundException("order", "99")
        assert "order" in failure.explain_to_llm()
        nucleo.ServiceClient, nucleo.RateLimiter
        print(sorted(name for name in ("pytest", "hypothesis", "respx", "syrupy") if name in sys.modules))
    """)
    assert _run(python, "-c", core).stdout.strip() == "[]"

    # pytest alone installed beside it: the plugin loads, says what is missing in the header,
    # and the fixture that needs respx fails with the command that brings it.
    _run(*pip, "pytest>=8.0")
    (tmp_path / "test_tool.py").write_text(
        "def test_fake(fake_upstream):\n    pass\n", encoding="utf-8"
    )
    result = subprocess.run(
        [python, "-m", "pytest", "-p", "no:cacheprovider", "test_tool.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")},
    )
    assert result.returncode == 1, result.stdout
    assert (
        "pytest-nucleo: hypothesis, respx, syrupy not installed; "
        "pip install 'pytest-nucleo[pytest]' brings them"
    ) in result.stdout
    assert (
        "fake_upstream needs respx, which is not installed: pip install 'pytest-nucleo[pytest]'"
        in (result.stdout)
    )


def _modules_after(code: str) -> list[str]:
    """The package's modules (and httpx) imported once ``code`` has run in a fresh process."""
    probe = (
        f"{code}\nimport sys, json\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pytest_nucleo', 'httpx'))))"
    )
    result = _run(sys.executable, "-c", probe, cwd=ROOT)
    return json.loads(result.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def test_importing_hypothesis_loads_nothing_of_the_package_but_the_entry_point() -> None:
    # What hypothesis' entry point costs a process that never asks for our types: the package's
    # namespace (lazy) and the entry point module, nothing of the failure set and no httpx.
    assert _modules_after("import hypothesis") == [
        "pytest_nucleo",
        "pytest_nucleo._hypothesis",  # the entry point ran
        "pytest_nucleo._lazy",
    ]


@pytest.mark.parametrize(
    "code",
    [
        "import hypothesis\nimport pytest_nucleo as n\nn.GuardrailException",
        "import pytest_nucleo as n\nn.GuardrailException\nimport hypothesis",
    ],
    ids=["hypothesis-first", "failure-set-first"],
)
def test_from_type_knows_the_failure_set_whichever_is_imported_first(code: str) -> None:
    probe = f"{code}\nfrom hypothesis import strategies as st\nprint(repr(st.from_type(n.GuardrailException)))"
    shown = _run(sys.executable, "-c", probe, cwd=ROOT).stdout.strip()
    # Ours draws a sentence for the reason; hypothesis alone would build it with no argument.
    assert shown.startswith("builds(GuardrailException, text(alphabet="), shown


def _frameworks_extra_modules() -> set[str]:
    """The top-level modules the `frameworks` extra installs (those installed here)."""
    import tomllib
    from importlib.metadata import packages_distributions

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    names: set[str] = set()
    pending = list(extras["frameworks"])
    while pending:
        requirement = pending.pop()
        if requirement.startswith("pytest-nucleo["):  # one of our own extras: its requirements
            for extra in requirement.removeprefix("pytest-nucleo[").rstrip("]").split(","):
                pending += extras[extra]
        else:
            names.add(re.split(r"[<>=\[; ]", requirement, maxsplit=1)[0].lower().replace("_", "-"))
    return {
        module
        for module, dists in packages_distributions().items()
        if any(dist.lower().replace("_", "-") in names for dist in dists)
    }


def test_every_test_module_importing_a_framework_skips_without_it() -> None:
    # Without the frameworks extra, such a module must skip (tests/_frameworks.py), not fail to
    # import: checked here for every module, so a new adapter's tests cannot forget it.
    frameworks = _frameworks_extra_modules()
    if not frameworks:
        pytest.skip(f"the frameworks extra is not installed: {FRAMEWORKS_INSTALL}")
    # Their own extras and environments: never installed here.
    frameworks |= {extra.replace("-", "_") for extra in APART}
    unguarded = []
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {
            name.split(".")[0]
            for node in tree.body
            for name in (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
        } & frameworks
        calls = [
            node.value
            for node in tree.body
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
        ]
        guarded = {
            arg.value.split(".")[0]
            for call in calls
            if getattr(call.func, "id", None) == "needs_frameworks"
            for arg in call.args
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
        } | {
            arg.value.replace("-", "_")
            for call in calls
            if getattr(call.func, "id", None) == "needs_apart"
            for arg in call.args
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
        }
        if imported - guarded:
            unguarded.append(f"{path.name}: {sorted(imported - guarded)}")
    assert not unguarded, (
        f"call needs_frameworks(...) or needs_apart(extra) before importing: {unguarded}"
    )
