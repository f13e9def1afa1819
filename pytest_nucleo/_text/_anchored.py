"""Masking patterns tried only where a match can start (used by :mod:`._secrets`).

A pattern that starts with a word boundary, or with a letter under ``re.IGNORECASE``, gives
Python's regex engine nothing to skip ahead with: it tries the pattern at every character of
a text, some 50 to 100 ns each, so a few hundred bytes of an error body holding a URL and the
word "tokens" cost tens of microseconds a pattern. Each ``*_starts`` function here finds, at C
speed (``str.find``, ``bytes.translate``), every position where one pattern's match can start,
and :func:`sub_at` tries the pattern there only: the text ``pattern.sub`` gives, since a
pattern is tried at a position with the whole text around it (its look-behinds and word
boundaries see what comes before), and a position where no match can start is one where
``pattern.sub`` finds none either. The case-insensitive patterns' positions are found in the
lower-cased text, which lines up with the text only when it is ASCII: callers pass ASCII text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

Replacement = str | Callable[[re.Match[str]], str]


def sub_at(pattern: re.Pattern[str], repl: Replacement, text: str, starts: Iterable[int]) -> str:
    """``pattern.sub(repl, text)``, for a ``pattern`` that matches no empty string and whose
    every match in ``text`` starts at one of ``starts``: each is tried in order, as the
    regex engine would reach it, skipping those inside a match already made. ``repl`` is
    a function of the match, or a literal text (no group references: ``Match.expand``
    parses its template at every call)."""
    shown: list[str] = []
    copied = 0
    for start in sorted(starts):
        if start < copied:
            continue
        match = pattern.match(text, start)
        if match is None:
            continue
        shown += (text[copied:start], repl if isinstance(repl, str) else repl(match))
        copied = match.end()
    return "".join(shown) + text[copied:] if shown else text


def found_at(text: str, words: Iterable[str]) -> set[int]:
    """Where each of ``words`` starts in ``text``, every occurrence."""
    found: set[int] = set()
    for word in words:
        at = text.find(word)
        while at >= 0:
            found.add(at)
            at = text.find(word, at + 1)
    return found


def hint_starts(text: str, groups: tuple[tuple[str, tuple[str, ...]], ...]) -> set[int]:
    """Where the hints of ``groups`` start in ``text``, as ``holds_hint`` files them: a group
    is looked at only when its mark is in the text (none of its hints can be there without
    it). Empty exactly when ``holds_hint`` says False."""
    found: set[int] = set()
    for mark, hints in groups:
        if mark in text:
            found |= found_at(text, hints)
    return found


# The characters of a credential pair's key ([a-z0-9_\-] under IGNORECASE, in ASCII text) and
# of a URL's scheme ([a-z][a-z0-9+.\-]), each made "b" and every other byte "x": where a run of
# them starts is then one rfind away.
_KEY_MAP = bytes(0x62 if chr(b).isascii() and (chr(b).isalnum() or chr(b) in "_-") else 0x78
                 for b in range(256))  # fmt: skip
_SCHEME_MAP = bytes(0x62 if chr(b).isascii() and (chr(b).isalnum() or chr(b) in "+.-") else 0x78
                    for b in range(256))  # fmt: skip


def _in_runs(text: str, ends: Iterable[int], mapping: bytes, inner: str) -> set[int]:
    """For each of ``ends``, the positions of the run of ``mapping``'s characters it lies in
    (or ends just before) where a word boundary can fall: the run's start, and each position
    beside one of the ``inner`` characters, which are not word characters, up to the end."""
    mapped = text.encode("ascii").translate(mapping)
    found: set[int] = set()
    for end in ends:
        start = mapped.rfind(b"x", 0, end) + 1
        found.add(start)
        for mark in inner:
            at = text.find(mark, start, end + 1)
            while at >= 0:
                found.update((at, at + 1))
                at = text.find(mark, at + 1, end + 1)
    return found


def pair_starts(text: str, hints_at: Iterable[int]) -> set[int]:
    """Where a credential pair (``_SECRET_PAIR``) can start in the ASCII ``text``, given where
    the hints of its key start: its key is a run of key characters holding a hint, and the
    pair starts at a word boundary of that run before the hint."""
    return _in_runs(text, hints_at, _KEY_MAP, "-")


# A colon a URL's "//" follows, maybe escaped ("\/\/"), as _USERINFO and _QUERY read it.
_SCHEME_END = re.compile(r":(?=[/\\])")


def url_starts(text: str) -> set[int]:
    """Where a URL's userinfo (``_USERINFO``) can start in the ASCII ``text``: at a word
    boundary of the scheme run before a colon and a slash."""
    ends = [match.start() for match in _SCHEME_END.finditer(text)]
    return _in_runs(text, ends, _SCHEME_MAP, "+.-") if ends else set()


def query_starts(text: str) -> set[int]:
    """Where a URL with a query (``_QUERY``) can start in the ASCII ``text``: its scheme,
    http, https, ws or wss, ends at a colon a slash follows."""
    return {
        match.start() - length
        for match in _SCHEME_END.finditer(text)
        for length in (2, 3, 4, 5)
        if match.start() >= length
    }


# The literal start of each alternative of _TOKENS (a match starts with one), filed under the
# separator it ends with: a body holds a few dozen "_", "-" and "." at most, and one C call
# at each tells whether any start of its file ends there, where a search for each of some
# forty starts cost a scan of the text each.
TOKEN_STARTS_BY_END = (
    ("_", (
        "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "sk_", "rk_", "npm_", "hf_",
        "api_org_", "shpat_", "shpss_", "shpca_", "shppa_", "doo_v1_", "dop_v1_", "dor_v1_",
        "gsk_", "lin_api_", "secret_", "ntn_", "whsec_",
    )),
    ("-", (
        "sk-", "glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glft-", "glimt-", "gloas-",
        "glsoat-", "glagent-", "xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "xoxe-", "xapp-",
        "pypi-", "sq0atp-", "sq0csp-", "xai-", "GOCSPX-", "key-", "PMAK-", "HRKU-",
    )),
    (".", ("SG.", "ya29.")),
)  # fmt: skip
TOKEN_STARTS_BARE = ("AKIA", "ASIA", "AIza", "ATATT3", "dapi", "eyJ", "SK")
"""The starts of the other alternatives, looked for each in the whole text."""


def token_starts(text: str) -> set[int]:
    """Where a token of ``_TOKENS`` can start in ``text`` (any text: that pattern is
    case-sensitive): where one of its alternatives' literal starts is."""
    found = found_at(text, TOKEN_STARTS_BARE)
    for end, starts, before in _TOKEN_ENDS:
        if text.count(end) > len(starts):
            # More separators than starts (a log's dates and names): a search for each start
            # costs less than a look at each separator.
            found |= found_at(text, starts)
            continue
        at = text.find(end)
        while at >= 0:
            # Most separators follow a character no start has there ("2026-12"): one set
            # lookup, before the call that tries every start of the file.
            if text[at - 1 : at] in before and text.endswith(starts, 0, at + 1):
                found.update(at + 1 - len(start) for start in starts
                             if text.endswith(start, 0, at + 1))  # fmt: skip
            at = text.find(end, at + 1)
    return found


# Each separator, its starts, and the characters they have before it.
_TOKEN_ENDS = tuple(
    (end, starts, frozenset(start[-2] for start in starts)) for end, starts in TOKEN_STARTS_BY_END
)
