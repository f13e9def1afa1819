"""A snapshot made stale by the package's own rewording says so, naming the changelog entry.

Each old text here is the package's current text with one recorded change undone by hand, in
the exact words the package shipped before it (the change's commit replaced those words).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import pytest_nucleo as nucleo
from pytest_nucleo.testing._wording_changes import (
    CHANGELOG,
    CHANGES,
    explaining,
    wording_change_lines,
)

ROOT = Path(__file__).parent.parent


def _unauthorized() -> str:
    return nucleo.Http401Exception(
        "Shop", "/api/orders/1", status_code=401, response_body=""
    ).explain_to_llm()


def _throttled(seconds: float) -> str:
    return nucleo.UpstreamThrottleException(
        "Shop", "HTTP 429", retry_after=seconds
    ).explain_to_llm()


def _invalid() -> str:
    return nucleo.InvalidInputException("order_number", "12", "must be 8 digits").explain_to_llm()


def test_each_change_is_an_entry_of_its_changelog_section() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    sections = re.split(r"^## ", changelog, flags=re.MULTILINE)
    for change in CHANGES:
        section = next(s for s in sections if s.startswith(f"[{change.section}]"))
        assert f"\n- {change.entry}" in section, change.entry


def test_the_changelog_link_is_the_package_s_own() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert f'Changelog = "{CHANGELOG}"' in pyproject


@pytest.mark.parametrize(
    ("current", "new_words", "old_words", "entry"),
    [
        (
            _unauthorized,
            nucleo.Http401Exception._then,
            "The tool's configuration needs fixing, not the call; tell the user.",
            "A 401 or 403 text says who can act and what the model cannot do",
        ),
        (
            lambda: _throttled(900),
            "about 15 minutes",
            "about 900 seconds",
            "A long wait reads in the unit a model takes at a glance",
        ),
        (
            lambda: _throttled(118.903),
            "about 119 seconds",
            "about 118.903 seconds",
            "A wait in a text is rounded as a reader takes it",
        ),
        (
            _invalid,
            "must be 8 digits.",
            "must be 8 digits",
            "`InvalidInputException`'s model text ends as a sentence",
        ),
    ],
)
def test_an_old_text_is_explained_by_its_change(
    current: object, new_words: str, old_words: str, entry: str
) -> None:
    produced = current()  # type: ignore[operator]
    assert new_words in produced
    stored = produced.replace(new_words, old_words)
    assert [change.entry for change in explaining(stored, produced)] == [entry]
    lines = wording_change_lines(stored, produced)
    assert f"  - [Unreleased] {entry}" in lines
    assert "your tool did not change" in lines[0]


def test_several_changes_in_one_text_are_all_named() -> None:
    produced = _throttled(900) + "\n" + _invalid()
    stored = produced.replace("about 15 minutes", "about 900 seconds").replace(
        "8 digits.", "8 digits"
    )
    assert [change.entry for change in explaining(stored, produced)] == [
        "`InvalidInputException`'s model text ends as a sentence",
        "A long wait reads in the unit a model takes at a glance",
    ]


@pytest.mark.parametrize(
    "stored",
    [
        # The tool changed too: the rewording does not account for the whole difference.
        _throttled(900).replace("about 15 minutes", "about 900 seconds").replace("Shop", "Shop2"),
        # The tool changed alone.
        _throttled(900).replace("Shop", "Store"),
        # Nothing changed.
        _throttled(900),
    ],
)
def test_a_difference_the_rewording_does_not_explain_is_not_claimed(stored: str) -> None:
    assert explaining(stored, _throttled(900)) == []
    assert wording_change_lines(stored, _throttled(900)) == []


TESTS = """
import pytest_nucleo as nucleo

def test_throttled(llm_snapshot):
    text = nucleo.UpstreamThrottleException("Shop", "HTTP 429", retry_after=900).explain_to_llm()
    assert text == llm_snapshot

def test_tool_changed(llm_snapshot):
    assert nucleo.ResourceNotFoundException("order", "99").explain_to_llm() == llm_snapshot
"""


def test_the_snapshot_failure_says_the_package_reworded_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_texts=TESTS)
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=2)
    stored = pytester.path / "__snapshots__" / "test_texts.txt"
    text = stored.read_text(encoding="utf-8")
    assert "about 15 minutes" in text
    # As the package wrote the first text before it stated long waits in minutes; the second
    # as if the tool's own identifier had changed.
    stored.write_text(
        text.replace("about 15 minutes", "about 900 seconds").replace('"99"', '"98"'),
        encoding="utf-8",
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=0, failed=2)
    output = result.stdout.str()
    throttled, tool_changed = output.split("test_tool_changed", 1)
    assert "This snapshot differs only where pytest-nucleo reworded its own texts" in throttled
    assert "[Unreleased] A long wait reads in the unit a model takes at a glance" in throttled
    assert "run pytest --snapshot-update" in throttled
    assert "about 900 seconds" in throttled  # the diff itself still follows
    assert "reworded its own texts" not in tool_changed
