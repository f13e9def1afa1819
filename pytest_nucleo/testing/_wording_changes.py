"""The package's own wording changes, so that a snapshot they alone made stale says so.

A snapshot of a model text goes stale in two ways: the tool changed, or pytest-nucleo reworded
one of its texts (a changelog entry says which). The second breaks many snapshots at once and
is no fault of the tool; a plain diff does not tell the two apart. Each change the package
makes to a text it has shipped is recorded here with a rewrite that turns a text in the old
wording into the same text in the new. When the rewrites turn a stored snapshot into exactly
the text the test produced, the difference is the package's wording alone, and
``llm_snapshot``'s failure says so, naming the changelog entries
(:func:`wording_change_lines`). A difference the rewrites do not account for in full is
reported as any other.

A new wording change is one more :class:`WordingChange` in :data:`CHANGES`, in the order the
changes were made; tests/test_wording_changes.py checks that its entry is in the changelog.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from importlib import metadata

from pytest_nucleo._exceptions import _sentence
from pytest_nucleo._http._status import Http401Exception, Http403Exception
from pytest_nucleo._text._render import duration

CHANGELOG = "https://github.com/pytest-nucleo/pytest-nucleo/blob/main/CHANGELOG.md"
"""Where a user reads the package's changelog (the package metadata's Changelog link)."""


@dataclasses.dataclass(frozen=True)
class WordingChange:
    """One change the package made to the wording of texts it had shipped."""

    section: str
    """The changelog's section the entry is under: ``Unreleased`` until the release, then its
    version."""
    entry: str
    """The first words of the changelog entry that describes the change."""
    rewrite: Callable[[str], str]
    """A text in the old wording -> the same text in the new (unchanged when the change does
    not touch it)."""


# "... which is not valid: must be 8 digits" -> "... must be 8 digits.": the rule is the rest
# of its line, which the invalid-input text ends with.
_INVALID_RULE = re.compile(r"(which is not valid: )(.+)$", re.MULTILINE)
# A wait as the texts state it: "about 900 seconds", "for about 118.903 seconds".
_WAIT = re.compile(r"\babout (\d+(?:\.\d+)?) seconds?\b")


def _ends_as_sentence(text: str) -> str:
    return _INVALID_RULE.sub(lambda m: m.group(1) + _sentence(m.group(2)), text)


def _rounded_waits(longer_than: float, shorter_than: float) -> Callable[[str], str]:
    """Waits in seconds within the bounds, as the texts now state them."""

    def rewrite(text: str) -> str:
        def state(match: re.Match[str]) -> str:
            value = float(match.group(1))
            if not longer_than <= value < shorter_than:
                return match.group(0)
            return f"about {duration(value)}"

        return _WAIT.sub(state, text)

    return rewrite


def _replaced(old: str, new: str) -> Callable[[str], str]:
    return lambda text: text.replace(old, new)


CHANGES: tuple[WordingChange, ...] = (
    WordingChange(
        "Unreleased",
        "A 401 or 403 text says who can act and what the model cannot do",
        _replaced(
            "The tool's configuration needs fixing, not the call; tell the user.",
            Http401Exception._then,
        ),
    ),
    WordingChange(
        "Unreleased",
        "A 401 or 403 text says who can act and what the model cannot do",
        _replaced(
            "The tool's credentials or permissions need fixing, not the call; tell the user.",
            Http403Exception._then,
        ),
    ),
    WordingChange(
        "Unreleased",
        "A wait in a text is rounded as a reader takes it",
        _rounded_waits(0, 120),
    ),
    WordingChange(
        "Unreleased",
        "`InvalidInputException`'s model text ends as a sentence",
        _ends_as_sentence,
    ),
    WordingChange(
        "Unreleased",
        "A long wait reads in the unit a model takes at a glance",
        _rounded_waits(120, float("inf")),
    ),
)
"""The package's wording changes, oldest first."""


def explaining(stored: str, produced: str) -> list[WordingChange]:
    """The wording changes that turn the ``stored`` snapshot into exactly the ``produced`` text,
    or ``[]`` when the difference is not theirs alone (or there is none)."""
    if stored == produced:
        return []
    text, used = stored, []
    for change in CHANGES:
        rewritten = change.rewrite(text)
        if rewritten != text:
            used.append(change)
            text = rewritten
    return used if text == produced else []


def _installed_version() -> str:
    try:
        return metadata.version("pytest-nucleo")
    except metadata.PackageNotFoundError:  # a checkout on sys.path, not installed
        return "(not installed)"


def wording_change_lines(stored: str, produced: str) -> list[str]:
    """What a snapshot failure says first when the package's own wording changes alone
    explain it (see the module's docstring), or ``[]``."""
    changes = explaining(stored, produced)
    if not changes:
        return []
    entries = list(dict.fromkeys(f"[{c.section}] {c.entry}" for c in changes))
    return [
        f"This snapshot differs only where pytest-nucleo reworded its own texts (installed: "
        f"pytest-nucleo {_installed_version()}); your tool did not change. The changelog "
        f"says why ({CHANGELOG}):",
        *(f"  - {entry}" for entry in entries),
        "Read the new text below, then run pytest --snapshot-update to store it.",
    ]
