"""Every code block of the README and the docs runs or is checked, so the docs cannot drift.

What each block claims is read from the comment above it: see ``tests/_doc_blocks.py``.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import re
import shlex
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from tests._doc_blocks import ALL, PAGES, ROOT, SHOWN_ONLY, Block, fence_lines
from tests._frameworks import skip_unless_installed

SCRIPTS = [b for b in ALL if b.lang == "python" and b.marker is None and not b.is_test_module]
TEST_MODULES = [b for b in ALL if b.lang == "python" and b.marker is None and b.is_test_module]
EXCERPTS = [b for b in ALL if b.marker is not None and b.marker.startswith("excerpt of ")]
OUTPUTS = [b for b in ALL if b.marker == "output"]
PROJECTS: dict[str, list[Block]] = defaultdict(list)
for _block in ALL:
    if _block.marker is not None and _block.marker.startswith("file: "):
        PROJECTS[_block.page].append(_block)

# The test blocks run in pytester's in-process runs, which forget every module first imported
# during a run; mcp's cryptography bindings then fail when imported a second time. Import what
# the blocks import once, here, so this file also passes when run on its own.
for _module in sorted(
    {
        name
        for block in [*TEST_MODULES, *(b for p in PROJECTS.values() for b in p)]
        if block.lang == "python"
        for name in re.findall(r"^(?:from|import) ([\w.]+)", block.code, re.M)
        if importlib.util.find_spec(name.split(".")[0]) is not None
        and not (ROOT / name.split(".")[0]).exists()
    }
):
    with contextlib.suppress(ImportError):
        importlib.import_module(_module)


def _run_script(block: Block) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block.code, block.page, "exec"), {"__name__": "docs"})
    return out.getvalue()


def _script_marks(block: Block) -> list[pytest.MarkDecorator]:
    # A script that shows a bug reaching the model as the SystemException text leaks a foreign
    # exception on purpose.
    marks = skip_unless_installed(block.code)
    if "A system error occurred" in block.code:
        marks.append(pytest.mark.nucleo(expect_leaks=True))
    return marks


@pytest.mark.parametrize(
    "block", [pytest.param(b, id=b.id, marks=_script_marks(b)) for b in SCRIPTS]
)
def test_script_block_runs(block: Block) -> None:
    _run_script(block)


def _python_above(block: Block) -> list[Block]:
    return [b for b in ALL if b.page == block.page and b.line < block.line and b.lang == "python"]


def _output_marks(block: Block) -> list[pytest.MarkDecorator]:
    # The output of a script that cannot run here (its SDK not installed) cannot be checked.
    above = _python_above(block)
    return skip_unless_installed(above[-1].code) if above else []


@pytest.mark.parametrize(
    "block", [pytest.param(b, id=b.id, marks=_output_marks(b)) for b in OUTPUTS]
)
def test_output_block_is_what_the_script_above_prints(block: Block) -> None:
    above = _python_above(block)
    assert above, f"{block.id}: an output block needs a Python block above it"
    assert above[-1] in SCRIPTS, f"{block.id}: the block above is not a script"
    assert _run_script(above[-1]) == block.code


@pytest.mark.parametrize(
    "block", [pytest.param(b, id=b.id, marks=skip_unless_installed(b.code)) for b in TEST_MODULES]
)
def test_test_block_passes(pytester: pytest.Pytester, block: Block) -> None:
    tests = len(re.findall(r"^(?:async )?def test_", block.code, re.M))
    pytester.makepyfile(test_docs_block=block.code)
    result = pytester.runpytest("--snapshot-update")
    assert result.ret == 0, result.stdout.str()
    assert result.parseoutcomes()["passed"] == tests
    pytester.runpytest().assert_outcomes(passed=tests)


@pytest.mark.parametrize("block", EXCERPTS, ids=[b.id for b in EXCERPTS])
def test_excerpt_block_is_in_its_file(block: Block) -> None:
    source = ROOT / block.target
    assert source.is_file(), f"{block.id}: {block.target} does not exist"
    assert block.code in source.read_text(encoding="utf-8"), f"not an excerpt of {block.target}"


_SNAPSHOT = ("# serializer version: ", "# name: ")


def test_the_pages_python_files_have_names_of_their_own() -> None:
    # The projects run in this suite's processes, where a module of tests/ or examples/ by the
    # same name may already be imported: the page's file would then go untested, or fail to
    # collect ("import file mismatch"). pytest keeps each conftest.py apart.
    ours = {p.name for folder in ("tests", "examples") for p in (ROOT / folder).rglob("*.py")}
    shared = sorted(
        {
            f"{block.id}: {block.target}"
            for project in PROJECTS.values()
            for block in project
            if block.target.endswith(".py")
            and Path(block.target).name in ours - {"conftest.py", "__init__.py"}
        }
    )
    assert shared == [], "name these files otherwise than a module of tests/ or examples/"


@pytest.mark.parametrize("page", sorted(PROJECTS))
def test_example_project_of_the_page_passes(pytester: pytest.Pytester, page: str) -> None:
    files = {block.target: block.code for block in PROJECTS[page]}  # the last version of each
    for name, code in files.items():
        path = pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code, encoding="utf-8")
    first = pytester.runpytest("--snapshot-update", "-p", "no:cacheprovider")
    assert first.ret == 0, first.stdout.str()
    again = pytester.runpytest("-p", "no:cacheprovider")
    assert again.ret == 0, again.stdout.str()
    # A text block showing a snapshot file, or entries of one, shows what the tests stored.
    stored = "".join(p.read_text("utf-8") for p in pytester.path.glob("**/__snapshots__/*"))
    for block in ALL:
        if block.page == page and block.lang == "text" and block.code.startswith(_SNAPSHOT):
            assert block.code in stored, f"{block.id} is not what the tests stored:\n{stored}"


# A terminal session with pytest or the package's own command: its output is the package's, so
# it is run, in the page's example project as the reader has it by then.
_COMMANDS = re.compile(r"\$ (?:cd \S+ && )?(?:pytest|python -m pytest_nucleo)\b")
SESSIONS = sorted({b.page for b in ALL if b.lang == "console" and _COMMANDS.match(b.code)})
_DURATION = re.compile(r" in \d+\.\d+s$")


@pytest.mark.parametrize("page", SESSIONS)
def test_the_pages_terminal_sessions_print_what_they_show(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, page: str
) -> None:
    """The page followed as a reader does: each file block written as it comes, each command
    run where it comes, printing what the page shows (at 80 columns; a run's duration aside)."""
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    for block in (b for b in ALL if b.page == page):
        if block.marker is not None and block.marker.startswith("file: "):
            path = tmp_path / block.target
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(block.code, encoding="utf-8")
        elif block.lang == "console" and _COMMANDS.match(block.code):
            command, *shown = block.code.splitlines()
            assert not any(line.startswith("$ ") for line in shown), f"{block.id}: one command"
            folder = tmp_path
            if command.startswith("$ cd "):  # a folder of this repository: "$ cd DIR && ..."
                place, _, rest = command.removeprefix("$ cd ").partition(" && ")
                folder, command = ROOT / place, f"$ {rest}"
            arguments = shlex.split(command.removeprefix("$ ").removeprefix("python"))
            if arguments[0] == "pytest":
                arguments[:1] = ["-m", "pytest"]
            # No timeout: with one, subprocess polls the child on the real clock between
            # naps, which the suite's clock guard forbids; without, it blocks on the child.
            ran = subprocess.run(
                [sys.executable, *arguments], cwd=folder, capture_output=True, text=True
            )
            printed = [_DURATION.sub(" in N.NNs", line) for line in ran.stdout.splitlines()]
            expected = [_DURATION.sub(" in N.NNs", line) for line in shown]
            assert printed == expected, f"{block.id}\n{ran.stdout}{ran.stderr}"


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_every_block_of_the_page_is_checked(page: Path) -> None:
    page_blocks = [b for b in ALL if b.page == page.relative_to(ROOT).as_posix()]
    # A fence the parser does not see (indented, say under an admonition) would go unchecked.
    assert [b.line for b in page_blocks] == fence_lines(page)
    for block in page_blocks:
        if block.lang == "python":
            assert block.marker != "output", f"{block.id}: an output block is text"
        elif block.marker is None:
            assert block.lang in SHOWN_ONLY, (
                f"{block.id}: a {block.lang or 'plain'} block is neither run nor checked; mark"
                f" it as an excerpt or a file, or use one of {sorted(SHOWN_ONLY)}"
            )
        elif block.marker == "output":
            assert block.lang == "text", f"{block.id}: an output block is a text block"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_file_blocks_name_their_file_in_a_visible_title(page: Path) -> None:
    # A reader sees a block's title="PATH" above it; an HTML comment they never see.
    hidden = re.findall(r"^<!-- file: (\S+) -->$", page.read_text(encoding="utf-8"), re.M)
    assert hidden == [], f'write ```python title="{hidden[0] if hidden else ""}"``` instead'
