"""Masking the values a caller knows it sent (used by :mod:`._secrets`, whose ``redact``
applies it): each value and its echo forms (see :mod:`._echoes`) wherever they appear, a value
whose percent-escapes a server wrote in the other case, a value a line break splits, and the
part of a value a cut left at either end of a piece.
"""

from __future__ import annotations

import bisect
import functools
import re

from ._echoes import _piece_worthy

MASK = "[REDACTED]"

_ESCAPE = re.compile(r"(%[0-9A-Fa-f]{2})")


# A line break a server put inside a value (literal or JSON-escaped, with the indent after it),
# or the space that a collapsed line break leaves.
_BREAK = re.compile(r"(?:\r?\n|\\r\\n|\\n)[ \t]*|[ \t]+")


@functools.lru_cache(maxsize=256)
def _broken_candidates(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(value for value in values if _piece_worthy(value))


def _mask_broken(text: str, values: tuple[str, ...]) -> str:
    """Mask a known value that a line break (or a space) splits: found in the text with its
    breaks taken out, then masked from its first character to its last in the text."""
    if not values:
        return text
    # A cheap first look: a value of 16 characters or more split once keeps its first 8 or
    # its last 8 whole.
    candidates = [value for value in values if value[:8] in text or value[-8:] in text]
    if not candidates:
        return text
    joined = _BREAK.sub("", text)
    if not any(value in joined for value in candidates):
        return text
    # Where each piece of the text between breaks starts, in the joined text and in the text.
    starts, origins, position, at = [0], [0], 0, 0
    for match in _BREAK.finditer(text):
        at += match.start() - position
        position = match.end()
        starts.append(at)
        origins.append(position)

    def origin(index: int) -> int:
        piece = bisect.bisect_right(starts, index) - 1
        return origins[piece] + index - starts[piece]

    spans = []
    for value in candidates:
        found = joined.find(value)
        while found >= 0:
            spans.append((origin(found), origin(found + len(value) - 1) + 1))
            found = joined.find(value, found + len(value))
    shown: list[str] = []
    copied = 0
    for start, end in sorted(spans):
        if start >= copied:
            shown += (text[copied:start], MASK)
            copied = end
        elif end > copied:
            copied = end
    return "".join(shown) + text[copied:]


# Places a known value could start, found by string search, beyond which a regex finds it.
_FEW_CANDIDATES = 32


def _mask_value(text: str, value: str) -> str:
    if "%" not in value or not _ESCAPE.search(value):
        return text.replace(value, MASK)
    # A server may echo "%2F" as "%2f": the value's percent-escapes match in either case, the
    # rest of it exactly. Found with str.find, not a regex: compiling one per value cost more
    # than the rest of a redaction, the values being new at each call.
    pieces = _ESCAPE.split(value)  # text, escape, text, ..., text
    if not all(piece in text for piece in pieces[::2]):
        return text
    # Every match holds the value's longest escape-free piece at the same offset (or, when
    # the value is escapes only, a "%" at its start): look for that, then check the rest.
    longest = max(range(0, len(pieces), 2), key=lambda index: len(pieces[index]))
    anchor = pieces[longest] or "%"
    if text.count(anchor) > _FEW_CANDIDATES:
        # Checking each one costs the value's length: a text full of them (of escapes, of a
        # repeated piece) is left to a regex, whose cost does not grow with the value.
        return re.sub(_escaped_pattern(pieces), MASK, text)
    offset = sum(map(len, pieces[:longest]))
    shown: list[str] = []
    copied = 0
    found = text.find(anchor)
    while found >= 0:
        start = found - offset
        if start >= copied and _matches_at(text, start, pieces):
            shown += (text[copied:start], MASK)
            copied = start + len(value)
            found = text.find(anchor, copied + offset)
        else:
            found = text.find(anchor, found + 1)
    return "".join(shown) + text[copied:] if shown else text


def _escaped_pattern(pieces: list[str]) -> str:
    """The regex of a value split into ``pieces``: its escapes in either case, the rest as is."""
    return "".join(
        f"%[{piece[1].upper()}{piece[1].lower()}][{piece[2].upper()}{piece[2].lower()}]"
        if index % 2
        else re.escape(piece)
        for index, piece in enumerate(pieces)
    )


def _matches_at(text: str, start: int, pieces: list[str]) -> bool:
    """Whether the value split into ``pieces`` starts at ``start`` of ``text``: its text pieces
    as they are, its escapes whatever the case of their hexadecimal digits."""
    at = start
    for index, piece in enumerate(pieces):
        if index % 2 == 0:
            if not text.startswith(piece, at):
                return False
        elif not (
            text.startswith("%", at)
            and text[at + 1 : at + 2] in (piece[1].lower(), piece[1].upper())
            and text[at + 2 : at + 3] in (piece[2].lower(), piece[2].upper())
        ):
            return False
        at += len(piece)
    return True


def _mask_split_end(text: str, values: list[str]) -> str:
    """Mask the start of a known value that ends ``text`` (the rest of it was cut away)."""
    for value in values:
        probe = value[:4]
        index = text.find(probe, max(len(text) - len(value) + 1, 0))
        while index >= 0:
            if value.startswith(text[index:]):
                return text[:index] + MASK
            index = text.find(probe, index + 1)
    return text


def _mask_split_start(text: str, values: list[str]) -> str:
    """Mask the end of a known value that starts ``text`` (its start was cut away)."""
    longest = 0
    for value in values:
        probe = value[-4:]
        index = text.find(probe, 0, len(value) - 1)
        while index >= 0:
            end = index + len(probe)
            if end > longest and value.endswith(text[:end]):
                longest = end
            index = text.find(probe, index + 1, len(value) - 1)
    return MASK + text[longest:] if longest else text
