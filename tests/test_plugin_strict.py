"""--nucleo-strict judges every text the runner produced, and says so on pytest's last line."""

from __future__ import annotations

import pytest

CORRECTABLE_BUT_UNCLEAN = """
import pytest_nucleo as nucleo


class Catalogue:
    pass


catalogue = Catalogue()


def find_book(isbn: str) -> dict:
    raise nucleo.InvalidInputException("isbn", isbn, f"rejected by {catalogue!r}")


def test_the_model_is_told_to_fix_the_isbn():
    result = nucleo.run_tool(find_book, {"isbn": "123"})
    assert result.is_error
"""


def test_an_unclean_correctable_text_fails_a_strict_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_books=CORRECTABLE_BUT_UNCLEAN)
    assert pytester.runpytest().ret == 0
    strict = pytester.runpytest("--nucleo-strict")
    strict.assert_outcomes(passed=1)
    strict.stdout.fnmatch_lines(
        [
            "*--nucleo-strict failed the run:*",
            "*find_book [[]test_books.py::test_the_model_is_told_to_fix_the_isbn[]]: unclean text "
            "(it holds an object repr or memory address ('<test_books.Catalogue object at 0x*",
        ]
    )
    assert strict.ret == 1


LEAK = """
import pytest_nucleo as nucleo


def test_a_leak_the_test_does_not_see():
    assert nucleo.run_tool(lambda: {}["x"], {}).is_error
"""


def test_the_last_line_says_the_strict_run_failed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_books=LEAK)
    strict = pytester.runpytest("--nucleo-strict")
    assert strict.ret == 1
    last = strict.outlines[-1]
    assert "1 passed, failed by --nucleo-strict (1 problem) in " in last
    assert last.startswith("=")
    plain = pytester.runpytest()
    assert "--nucleo-strict" not in plain.outlines[-1]


def test_the_last_line_is_red_when_strict_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_books=LEAK)
    strict = pytester.runpytest("--nucleo-strict", "--color=yes")
    last = strict.outlines[-1]
    assert last.startswith("\x1b[31m=")  # the line is red, as pytest makes a failed run's
    assert "\x1b[31m\x1b[1mfailed by --nucleo-strict (1 problem)" in last


def test_strict_problems_are_a_failed_test_case_of_the_junit_file(
    pytester: pytest.Pytester,
) -> None:
    import xml.etree.ElementTree as ET

    pytester.makepyfile(test_books=LEAK)
    strict = pytester.runpytest("--nucleo-strict", "--junitxml=strict.xml")
    assert strict.ret == 1
    suite = ET.parse(pytester.path / "strict.xml").getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "1", "0")
    [case] = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert (case.get("classname"), case.get("name")) == ("pytest-nucleo", "strict")
    failure = case.find("failure")
    assert failure is not None
    lines = (failure.text or "").splitlines()
    assert lines[0] == "--nucleo-strict failed the run (1 problem):"
    assert lines[1].startswith(
        "<lambda> [test_books.py::test_a_leak_the_test_does_not_see]: leaked KeyError"
    ), lines[1]
    assert failure.get("message", "").startswith("--nucleo-strict failed the run (1 problem):")

    plain = pytester.runpytest("--junitxml=plain.xml")
    assert plain.ret == 0
    suite = ET.parse(pytester.path / "plain.xml").getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures")) == ("1", "0")
