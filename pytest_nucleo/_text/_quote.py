"""What of a server's answer a model text quotes: its words when they carry information.

:func:`body_excerpt` keeps a bounded, masked excerpt of a body for logs and for
``response_body``; a model text quotes less. :func:`quote_of` picks from that excerpt what
tells the model something: the message of a JSON body (read by its shape when the excerpt holds
the whole document, see ``_shapes``; else the value of its most telling message key), the text
of a short body, or, when nothing in it can be read (a body made only of masked values, of
brackets, a JSON body with no message), its shape ("a JSON body of 200 kB with no message
field"). It works on the excerpt only, so its cost does not grow with the body.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ._secrets import MASK, redact
from ._shapes import CUT_MARK as _CUT_MARK
from ._shapes import MESSAGE_KEYS as _MESSAGE_KEYS
from ._shapes import PY_STRUCTURE as _PY_STRUCTURE
from ._shapes import has_markup, plain_words, read_body

SHORT_JSON = 100
"""A JSON body whose excerpt is at most this long is quoted whole: its keys help the model
("qty" in ``{"loc": ["qty"], "msg": "must be > 0"}``). Not one with HTML in it: its message
is quoted, without the markup."""

MIN_QUOTE = 24
"""Fewer characters than this left for a quote, and the text names the body's shape instead."""

# A JSON string written unrolled ("[^"\\]*(?:\\.[^"\\]*)*"): the same strings as one
# alternation per character, matched several times faster.
_FIELD = re.compile(r'"(' + "|".join(_MESSAGE_KEYS) + r')"\s*:\s*("[^"\\]*(?:\\.[^"\\]*)*")')
# The same in a Python dict's repr, whose strings are quoted with "'" (or with '"' when they
# hold a "'", which this leaves out).
_PY_FIELD = re.compile(r"'(" + "|".join(_MESSAGE_KEYS) + r")'\s*:\s*'([^'\\]*(?:\\.[^'\\]*)*)'")
_JSON_KEY = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"\s*:')
_BINARY = re.compile(r"<\d+ bytes of binary data>")


@dataclass(frozen=True, slots=True)
class Quote:
    """What a text says about a body: ``words`` to quote, or a ``shape`` to name, or neither
    (an empty body, or one with nothing worth quoting); and the ``fields`` a whole JSON body
    says are at fault (see ``_shapes.error_fields``), whatever is quoted."""

    words: str = ""
    shape: str = ""
    fields: tuple[str, ...] = ()


def has_words(text: str) -> bool:
    """Whether ``text`` holds a letter once masked values, and the keys of any JSON in it,
    are taken out: ``{"api_key": "[REDACTED]"}`` has none."""
    return any(c.isalpha() for c in _JSON_KEY.sub("", text.replace(MASK, "")))


def size_of(count: int) -> str:
    """``512`` -> ``"512 bytes"``, ``204800`` -> ``"200 kB"``, ``10485760`` -> ``"10 MB"``."""
    if count < 1024:
        return f"{count} bytes"
    if count < 1024 * 1024:
        return f"{count // 1024} kB"
    return f"{count // (1024 * 1024)} MB"


def quote_of(excerpt: str, size: int, budget: int) -> Quote:
    """What to quote of a body whose excerpt is ``excerpt`` and whose length is ``size``
    (bytes, or characters), in at most ``budget`` characters; and the fields a whole JSON body
    says are at fault (``error_fields``). Never raises."""
    if not excerpt:  # an empty body, or one with nothing to show (only scripts, or spaces)
        return (
            Quote(shape=f"a body of {size_of(size)} with no text to show")
            if size > 200
            else Quote()
        )
    if _BINARY.fullmatch(excerpt):  # body_excerpt's own words for a binary body
        return Quote(shape=excerpt[1:-1])
    # Quote marks around the whole answer add nothing, and one at its edge would read as the
    # end of the quote: '"" a"'.
    cut = _CUT_MARK.search(excerpt)
    head = (excerpt[: cut.start()] if cut else excerpt).strip().strip("\"'").strip()
    is_json = head[:1] in ("{", "[")
    # A whole document is read by its shape; a cut one is not JSON, and is read by its keys.
    shape = read_body(head) if is_json and cut is None else None
    fields = shape.fields if shape is not None else ()
    if is_json and not (
        len(excerpt) <= SHORT_JSON
        and MASK not in excerpt
        and not has_markup(excerpt)
        and not _PY_STRUCTURE.search(excerpt)  # a Python repr is read for its message
    ):
        message = (shape.message if shape is not None else None) or _message_field(head)
        if message is None:
            return Quote(
                shape=f"a JSON body of {size_of(size)} with no message field", fields=fields
            )
        head = message
    if not has_words(head):
        # Only masked values, digits or punctuation: nothing the model can read.
        return (
            Quote(shape=f"a body of {size_of(size)} with no words in it", fields=fields)
            if size > 200
            else Quote(fields=fields)
        )
    if budget < MIN_QUOTE:
        return Quote(fields=fields)
    words = _fit(head, budget)
    # A cut can leave only keys and brackets of what had words: '{"error": {"code": 1...'.
    return Quote(words=words, fields=fields) if has_words(words) else Quote(fields=fields)


def _message_field(text: str) -> str | None:
    """The most telling message field with words in it, decoded from its JSON string, any
    HTML in it reduced to its words. A value written with escapes is masked again: an escape
    can spell a secret the masking of the raw text did not recognise (``sk\\u002d...``)."""
    found: dict[str, str] = {}
    for match in _FIELD.finditer(text):
        key = match.group(1)
        if key in found:
            continue
        try:
            value = json.loads(match.group(2))
        except ValueError:
            continue
        if not isinstance(value, str):
            continue
        if "\\" in match.group(2):
            value = redact(value)
        # One line, without the control characters a JSON escape can spell ("\\u0007"), which
        # the excerpt's cleaning of the raw text did not see.
        words = plain_words(value)
        if has_words(words):
            found[key] = words
    if not found and _PY_STRUCTURE.search(text):
        for match in _PY_FIELD.finditer(text):
            words = plain_words(redact(match.group(2).replace("\\'", "'")))
            if match.group(1) not in found and has_words(words):
                found[match.group(1)] = words
    for key in _MESSAGE_KEYS:
        if key in found:
            return found[key]
    return None


def _fit(text: str, budget: int) -> str:
    """``text`` cut to ``budget`` characters at a word, marked with ``...`` when cut."""
    if len(text) <= budget:
        return text
    cut = text[: budget - 3]
    space = cut.rfind(" ")
    if space > budget // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.") + "..."


def said_of(excerpt: str, size: int, budget: int) -> str:
    """The sentence a text gives a body, with its leading space, in at most about ``budget``
    characters: ``' It said: "..."'`` for words worth quoting, ``" Its answer was a JSON body
    of 200 kB with no message field."`` for a shape, ``""`` for nothing worth saying."""
    quote = quote_of(excerpt, size, budget - len(' It said: "".'))
    if quote.words:
        return f' It said: "{quote.words}".'
    return f" Its answer was {quote.shape}." if quote.shape else ""


# Up to the first '".' that ends a sentence: words after the quote may be quoted too.
_QUOTED = re.compile(r' It said: "(.*?)"\.(?=\s|$)', re.S)


def fit_quote(text: str, limit: int) -> str:
    """``text`` with its quote of the server (``It said: "..."``) cut so that the text is at
    most ``limit`` characters, or left out when too little room is left or what is left has no
    words (a JSON body cut down to its keys and numbers); a text that fits, or has no quote, is
    returned as it is. For a wrapper that puts words before a text."""
    if len(text) <= limit:
        return text
    match = _QUOTED.search(text)
    if match is None:
        return text
    room = len(match.group(1)) - (len(text) - limit)
    words = _fit(match.group(1), room) if room >= MIN_QUOTE else ""
    said = f' It said: "{words}".' if has_words(words) else ""
    return text[: match.start()] + said + text[match.end() :]


# A sentence meant for a person at a browser: a link to follow, a page to visit, a form to
# fill in. A model can do none of these.
_FOR_A_PERSON = re.compile(
    r"https?://|^(?:you can find|please (?:go to|visit|contact|sign in)|visit|contact us)\b",
    re.I,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def without_instructions(text: str) -> str:
    """``text`` without its sentences meant for a person (a link to an API-key page, "Please go
    to Plans & Billing"); ``text`` itself when every sentence is one."""
    kept = [s for s in _SENTENCE.split(text) if not _FOR_A_PERSON.search(s)]
    return " ".join(kept) if kept else text
