"""The hygiene check for model-facing text: what no text the model reads may hold."""

from __future__ import annotations

import re
from collections.abc import Iterable

import pytest

from pytest_nucleo._text._render import BODY_LENGTH_LIMIT, INVISIBLE
from pytest_nucleo._text._secrets import redact
from pytest_nucleo._text._shapes import PY_STRUCTURE

from ._wording import UNKNOWN_WAIT, TextProblem, wording_problems

DEFAULT_MAX_LENGTH = 8000
"""A model text longer than this is treated as unbounded: no text of the set comes near it."""

_STACK_TRACE = re.compile(r"Traceback \(most recent call last\)|File \"[^\"]*\", line \d+")
_OBJECT_REPR = re.compile(r"<[\w.]+ (?:object|at) (?:at )?0x[0-9a-fA-F]+>|\b0x[0-9a-fA-F]{6,}\b")
# Markup is what a page's HTML or XML looks like, not any "<": a quoted comparison ("must be
# < 100"), a placeholder ("<owner>/<repo>") or an arrow ("<-") is text. So: a doctype, an XML
# declaration, a comment, a CDATA section, or a tag of a known HTML element (open or closing).
_HTML_ELEMENTS = (
    "a|abbr|article|aside|b|base|blockquote|body|br|button|center|code|div|em|font|footer|form|"
    "h[1-6]|head|header|hr|html|i|iframe|img|input|label|li|link|main|meta|nav|noscript|ol|"
    "option|p|pre|script|section|select|small|span|strong|style|svg|table|tbody|td|textarea|"
    "th|thead|title|tr|u|ul"
)
_MARKUP = re.compile(
    rf"<!DOCTYPE\b|<\?xml\b|<!--|<!\[CDATA\[|</?(?:{_HTML_ELEMENTS})(?:\s[^<>]*)?/?>",
    re.IGNORECASE,
)
_CONTROL = re.compile(rf"[\x00-\x09\x0b-\x1f\x7f\x85\u2028\u2029{INVISIBLE}]")


def text_problems(
    text: object,
    *,
    secrets: Iterable[str] = (),
    max_length: int = DEFAULT_MAX_LENGTH,
    retry_after: object = UNKNOWN_WAIT,
    body_limit: int = BODY_LENGTH_LIMIT,
) -> list[TextProblem]:
    """Every problem of ``text``, as sentences; empty when it is clean.

    Each problem is a ``str`` with a ``rule`` attribute naming the rule it broke, which the
    report's matrix shows. Hygiene: a stack trace, an object repr or address, a Python
    structure's repr (``{'error': ...}``), markup, a control character, no content, more than
    ``max_length`` characters, a planted ``secret`` or a secret-looking token. Style (see "How the texts are written" in the docs): a text that
    contradicts its hint line or restates it, says one thing twice, states a wait other than
    ``retry_after`` (pass the seconds the failure is held for, or None for none; left out,
    only a throttle without any wait is flagged), quotes a server with no words, names a
    loopback address as the service, shows a rate limiter's settings, or has more than
    ``body_limit`` characters before its hint line.
    """
    if not isinstance(text, str):
        return [TextProblem("not text", f"a model text must be a str, got {type(text).__name__}")]
    problems: list[TextProblem] = []

    def problem(rule: str, sentence: str) -> None:
        problems.append(TextProblem(rule, sentence))

    if not text.strip():
        problem("empty", "it is empty: the model learns nothing")
    if match := _STACK_TRACE.search(text):
        problem("stack trace", f"it holds a stack trace ({match.group(0)!r})")
    if match := _OBJECT_REPR.search(text):
        problem("object repr", f"it holds an object repr or memory address ({match.group(0)!r})")
    if match := PY_STRUCTURE.search(text):
        # Not JSON, which a short body is quoted as: a program printed a structure, and the
        # model should read the message in it, not its braces and quotes.
        problem(
            "raw structure",
            f"it holds a Python structure's repr ({match.group(0)[:40]!r}): quote the message "
            "in it instead",
        )
    if match := _MARKUP.search(text):
        problem(
            "markup",
            f"it holds markup ({match.group(0)[:40]!r}): the model reads words, so say what the "
            "page said instead of passing its HTML on",
        )
    if match := _CONTROL.search(text):
        problem(
            "control character",
            f"it holds the control character U+{ord(match.group(0)):04X} at offset {match.start()}",
        )
    if len(text) > max_length:
        problem("unbounded", f"it is {len(text)} characters long, over the bound of {max_length}")
    leaked = [s for s in dict.fromkeys(secrets) if s and s in text]  # each secret once
    if leaked:
        shown = ", ".join(f"{s[:4]}..." for s in leaked)
        problem("secret", f"it holds {len(leaked)} planted secret(s) ({shown})")
    elif redact(text) != text:
        problem(
            "secret", "it holds a secret-looking token or a URL with userinfo or a query string"
        )
    problems.extend(wording_problems(text, retry_after=retry_after, body_limit=body_limit))
    return problems


def assert_clean_llm_text(
    text: object,
    *,
    secrets: Iterable[str] = (),
    max_length: int = DEFAULT_MAX_LENGTH,
    retry_after: object = UNKNOWN_WAIT,
    body_limit: int = BODY_LENGTH_LIMIT,
) -> None:
    """Fail when a model-facing text has any of the problems :func:`text_problems` finds:
    hygiene (a stack trace, an object repr or address, a Python structure's repr, markup, a
    control character, no content, more than ``max_length`` characters, a planted ``secret``
    or a secret-looking token) or style (it contradicts or restates its hint line, says one
    thing twice, states a wait other than ``retry_after``, quotes a server with no words, names
    a loopback address as the service, shows a limiter's settings, or is over ``body_limit``
    before its hint)."""
    __tracebackhide__ = True
    problems = text_problems(
        text,
        secrets=secrets,
        max_length=max_length,
        retry_after=retry_after,
        body_limit=body_limit,
    )
    if problems:
        listed = "\n".join(f"- {p}" for p in problems)
        pytest.fail(f"The model text is not clean:\n{listed}\nThe text:\n{text}", pytrace=False)
