"""The README's code is executed (or is an excerpt of a file that is), so it cannot drift."""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
# (excerpt source or None, language, code) for every fenced block, in order.
BLOCKS = [
    (source, lang, code)
    for source, lang, code in re.findall(
        r"(?:<!-- excerpt of (\S+) -->\n)?```(\w+)\n(.*?)```", README, flags=re.DOTALL
    )
]
PYTHON = [code for source, lang, code in BLOCKS if lang == "python" and not source]
SCRIPTS = [code for code in PYTHON if "def test_" not in code]
TESTS = [code for code in PYTHON if "def test_" in code]
EXCERPTS = [(source, code) for source, lang, code in BLOCKS if source]

# The test blocks run in pytester's in-process runs, which forget every module first imported
# during a run; mcp's cryptography bindings then fail when imported a second time. Import what
# the blocks import once, here, so this file also passes when run on its own.
for _module in sorted(
    {name for code in TESTS for name in re.findall(r"^(?:from|import) ([\w.]+)", code, re.M)}
):
    importlib.import_module(_module)


@pytest.mark.parametrize(
    "code",
    [
        # A script that shows a bug reaching the model as the SystemException text leaks a
        # foreign exception on purpose.
        pytest.param(
            code,
            id=f"script{n}",
            marks=[pytest.mark.nucleo(expect_leaks=True)]
            if "A system error occurred" in code
            else [],
        )
        for n, code in enumerate(SCRIPTS)
    ],
)
def test_python_block_runs(code: str) -> None:
    exec(compile(code, "README.md", "exec"), {"__name__": "readme"})


@pytest.mark.parametrize("code", TESTS, ids=[f"tests{n}" for n in range(len(TESTS))])
def test_test_block_passes(pytester: pytest.Pytester, code: str) -> None:
    pytester.makepyfile(test_readme_block=code)
    result = pytester.runpytest("--snapshot-update")
    assert result.ret == 0, result.stdout.str()
    assert result.parseoutcomes()["passed"] == code.count("def test_")
    pytester.runpytest().assert_outcomes(passed=code.count("def test_"))


@pytest.mark.parametrize(
    ("source", "code"), EXCERPTS, ids=[f"excerpt{n}" for n in range(len(EXCERPTS))]
)
def test_excerpt_blocks_are_in_their_file(source: str, code: str) -> None:
    assert code in (ROOT / source).read_text(encoding="utf-8"), f"not an excerpt of {source}"


def test_every_block_is_checked() -> None:
    checked = len(SCRIPTS) + len(TESTS) + len(EXCERPTS)
    shell = [code for source, lang, code in BLOCKS if lang == "sh"]
    output = [code for source, lang, code in BLOCKS if lang == "text"]
    assert checked + len(shell) + len(output) == len(BLOCKS)


def test_printed_output_shown_in_the_readme_is_true() -> None:
    first = next(code for code in SCRIPTS if "print(failure.explain_to_llm())" in code)
    shown = next(code for source, lang, code in BLOCKS if lang == "text")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(first, "README.md", "exec"), {"__name__": "readme"})
    assert out.getvalue() == shown


def test_the_two_commands_are_the_ones_ci_and_newcomers_run() -> None:
    install_and_run, run_tests = (code.strip() for source, lang, code in BLOCKS if lang == "sh")
    assert install_and_run.endswith(
        "pip install '.[httpx2,requests,aiohttp]' && pytest examples -v"
    )
    assert run_tests.endswith("pip install -e '.[test]' && python -m pytest -n auto")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python -m pip install --quiet -e '.[test]'" in ci
    assert ci.rstrip().endswith("python -m pytest -n auto")


def test_the_first_command_prints_the_failure_matrix_of_both_examples() -> None:
    # What the README promises of `pytest examples`. The frameworks example is left out, as
    # the first command skips it (it needs the test extra). A reader's terminal is wide.
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "examples", "-v", "-p", "no:cacheprovider",
         "--ignore=examples/frameworks"],
        cwd=ROOT, capture_output=True, text=True, env={**os.environ, "COLUMNS": "250"},
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:]
    matrix = result.stdout.split("nucleo failure matrix", 1)[1]
    tools = ("get_order", "search_compounds", "fetch_compound", "get_issue")
    for client in ("Requests", "Httpx2", "Aiohttp"):
        tools += (f"Test{client}FetchBook.fetch_book", f"Test{client}SearchBooks.search_books")
    for tool in tools:
        assert re.search(rf"^\S*{re.escape(tool)}\s", matrix, re.M), tool
    assert re.search(r"^\S*get_issue\s+recorded-github_issues-2\s.*\sok\s*$", matrix, re.M)
    assert re.search(r"^\d+ tool\(s\), \d+ scenario\(s\): \d+ ok, 0 broken", matrix, re.M)


def test_the_examples_are_collected_by_the_test_command() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'testpaths = ["tests", "examples"]' in pyproject
    for example in ("orders", "chemistry"):
        assert (ROOT / "examples" / example / "__snapshots__" / f"test_{example}.txt").is_file()
