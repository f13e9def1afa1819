"""Every failure text stored in a committed snapshot keeps the text style.

The snapshots are the reviewed texts the package and its examples produce; the style rules of
"How the texts are written" (docs/explanation/failure-contract.md) are checked over all of them
at once, so a wording change that breaks a rule anywhere fails here with the file and the
snapshot named.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from pytest_nucleo import CORRECTABLE_HINT, UNCORRECTABLE_HINT
from pytest_nucleo.testing import text_problems
from pytest_nucleo.testing._contract._wording import wording_problems

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT_FILES = sorted(
    [*ROOT.glob("tests/__snapshots__/*.txt"), *ROOT.glob("examples/**/__snapshots__/*.txt")]
)
# A label some snapshots put before each of several texts ("requests: The external ...").
_LABEL = re.compile(r"^[\w.-]+: (?=[A-Z])")
RULES = ("contradicts hint", "says twice", "empty quote", "loopback service", "too long", "wait")


def failure_texts(path: Path) -> list[tuple[str, str]]:
    """(snapshot name, text) for every text ending in a hint line in one snapshot file."""
    texts: list[tuple[str, str]] = []
    name, lines = "", []
    for raw in path.read_text(encoding="utf-8").splitlines():
        if raw.startswith("# name: "):
            name, lines = raw[len("# name: ") :], []
            continue
        line = raw[2:] if raw.startswith("  ") else raw
        if line in (CORRECTABLE_HINT, UNCORRECTABLE_HINT):
            body = "\n".join(piece for piece in lines if piece.strip())
            if body:
                texts.append((name, _LABEL.sub("", body) + "\n" + line))
            lines = []
        elif line.strip() == "---":  # between the texts of one snapshot
            lines = []
        elif not raw.startswith("#"):
            lines.append(line)
    return texts


ALL_TEXTS = [(path, name, text) for path in SNAPSHOT_FILES for name, text in failure_texts(path)]


def test_the_snapshots_hold_failure_texts_to_check() -> None:
    # A parser that found nothing would pass every rule below.
    assert len(SNAPSHOT_FILES) >= 25
    assert len(ALL_TEXTS) >= 400
    assert {path.parent.parent.name for path, _, _ in ALL_TEXTS} >= {
        "tests", "chemistry", "clients", "frameworks", "orders", "recorded",
    }  # fmt: skip


def test_no_committed_snapshot_text_breaks_a_style_rule() -> None:
    broken: Counter[str] = Counter()
    shown = []
    for path, name, text in ALL_TEXTS:
        for problem in text_problems(text):
            broken[problem.rule] += 1
            if len(shown) < 10:
                shown.append(f"{path.relative_to(ROOT)}::{name}: {problem}\n  {text}")
    # The rules of the style by name, each counted (0 expected), then any hygiene rule too.
    assert {rule: broken[rule] for rule in RULES} == dict.fromkeys(RULES, 0), "\n".join(shown)
    assert broken == Counter(), "\n".join(shown)


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        (
            "The external service Shop is throttling our requests. It asked us to wait 30 "
            f"seconds before calling again.\n{UNCORRECTABLE_HINT}",
            "contradicts hint",
        ),
        (
            f"The external service Shop failed. Calling it again now is unlikely to help.\n"
            f"{UNCORRECTABLE_HINT}",
            "says twice",
        ),
        (
            'The external service Shop failed with an internal error. It said: "[REDACTED] '
            f'[REDACTED]". Use another way, or come back later.\n{UNCORRECTABLE_HINT}',
            "empty quote",
        ),
        (
            "The external service 127.0.0.1 gave no answer. Use another way, or come back "
            f"later.\n{UNCORRECTABLE_HINT}",
            "loopback service",
        ),
        ("The external service Shop failed. " * 20 + f"\n{UNCORRECTABLE_HINT}", "too long"),
        (
            "The external service Shop is throttling our requests. This tool will not work for "
            "about 30 seconds; the server asked for 60 seconds. Use another way, or come back "
            f"later.\n{UNCORRECTABLE_HINT}",
            "wait",
        ),
        (
            f"The external service Shop is throttling our requests.\n{UNCORRECTABLE_HINT}",
            "wait",
        ),
    ],
    ids=["contradicts", "twice", "masked", "loopback", "long", "two-waits", "no-wait"],
)
def test_the_rules_counted_above_catch_what_they_count(text: str, rule: str) -> None:
    # The count over the snapshots means something only if each rule finds its own defect.
    assert rule in {problem.rule for problem in text_problems(text)}


def test_a_quote_mark_inside_the_servers_words_does_not_end_the_quote() -> None:
    # 'It said: "!" A".' quotes `!" A`, which has a word; read up to the first '"' it would
    # be the empty quote '!'.
    said = 'The external service Shop failed. It said: "!" A". Use another way, or come back later.'
    assert text_problems(f"{said}\n{UNCORRECTABLE_HINT}") == []
    bare = 'The external service Shop failed. It said: "!". Use another way, or come back later.'
    assert "empty quote" in {p.rule for p in text_problems(f"{bare}\n{UNCORRECTABLE_HINT}")}


_THROTTLED = "The external service Shop is throttling our requests. This tool will not work for"


@pytest.mark.parametrize(
    ("stated", "enforced", "agrees"),
    [
        ("about 2 minutes", 120, True),
        ("about 3 minutes", 150, True),  # rounded as "about" allows
        ("about 2 minutes", 180, False),
        ("about 24 hours", 86_400, True),
        ("about 24 hours", 85_600, True),
        ("about 1.5 hours", 5_400, True),
        ("about 1 hour", 3_600, True),
        ("about 24 hours", 7_200, False),
        ("about 120 seconds", 120, True),
        ("about 121 seconds", 120, False),  # seconds are stated exactly
    ],
)
def test_a_wait_in_minutes_or_hours_agrees_with_the_enforced_wait_within_its_rounding(
    stated: str, enforced: float, agrees: bool
) -> None:
    text = f"{_THROTTLED} {stated}; use another way or come back later.\n{UNCORRECTABLE_HINT}"
    problems = [p.rule for p in wording_problems(text, retry_after=enforced)]
    assert problems == ([] if agrees else ["wait"])


def test_a_duration_that_is_not_a_wait_is_not_read_as_one() -> None:
    text = (
        "The external service Shop failed; its answers are cached for 24 hours. Use another "
        f"way, or come back later.\n{UNCORRECTABLE_HINT}"
    )
    assert wording_problems(text, retry_after=None) == []


def test_a_throttle_scenario_reads_a_wait_in_minutes_or_hours_as_the_wording_check_does() -> None:
    from pytest_nucleo import UpstreamThrottleException
    from pytest_nucleo.testing._contract._scenarios import Expectation, _throttle_violation

    expect = Expectation(UpstreamThrottleException, False, "a throttle", retry_after=900.0)
    for said, agrees in (("about 15 minutes", True), ("900 seconds", True), ("1 hour", False)):
        error = UpstreamThrottleException("Shop", "HTTP 429", 900.0)
        text = f"The service Shop is throttling our requests; wait for {said}."
        problem, _ = _throttle_violation(error, text, expect)
        assert (problem is None) is agrees, said
