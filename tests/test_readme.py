"""The README's code is executed, so it cannot drift from the package."""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", README, flags=re.DOTALL)
PYTHON = [code for lang, code in BLOCKS if lang == "python"]
SCRIPTS = [code for code in PYTHON if "def test_" not in code]
TESTS = [code for code in PYTHON if "def test_" in code]


@pytest.mark.parametrize("code", SCRIPTS, ids=[f"script{n}" for n in range(len(SCRIPTS))])
def test_python_block_runs(code: str) -> None:
    exec(compile(code, "README.md", "exec"), {"__name__": "readme"})


@pytest.mark.parametrize("code", TESTS, ids=[f"tests{n}" for n in range(len(TESTS))])
def test_test_block_passes(pytester: pytest.Pytester, code: str) -> None:
    pytester.makepyfile(test_readme_block=code)
    result = pytester.runpytest("--snapshot-update")
    assert result.ret == 0, result.stdout.str()
    assert result.parseoutcomes()["passed"] == code.count("def test_")
    pytester.runpytest().assert_outcomes(passed=code.count("def test_"))


def test_printed_output_shown_in_the_readme_is_true() -> None:
    first = next(code for code in SCRIPTS if "print(failure.explain_to_llm())" in code)
    shown = next(code for lang, code in BLOCKS if lang == "text")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(first, "README.md", "exec"), {"__name__": "readme"})
    assert out.getvalue() == shown


def test_the_two_commands_are_documented() -> None:
    commands = [code.strip() for lang, code in BLOCKS if lang == "sh"]
    assert commands[0].endswith("pip install . && python examples/demo.py")
    assert commands[1].endswith("pip install -e '.[test]' && python -m pytest")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python -m pip install --quiet -e '.[test]'" in ci
    assert ci.rstrip().endswith("python -m pytest")


def test_demo_prints_what_the_model_reads(llm_snapshot: SnapshotAssertion) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout == llm_snapshot
