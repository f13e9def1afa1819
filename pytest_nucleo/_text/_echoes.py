"""The forms a known value is masked in, beside the value itself (used by :mod:`._secrets`).

A server may echo a credential it was sent altered: upper or lower case, its slashes escaped,
HTML character references, base64-encoded inside a longer text, shortened to its first or last
characters; and a ``Basic`` credential carries the ``user:password`` it encodes. These are the
forms :func:`._secrets.redact` masks for each ``known`` value (see ``ECHO_MIN`` and
``PIECE_MIN``).
"""

from __future__ import annotations

import base64
import binascii
import functools
import html
from collections.abc import Iterable


def _known_forms(known: Iterable[str]) -> list[str]:
    """The known values to mask, longest first: each value, and for a ``Basic`` credential the
    ``user:password`` it encodes and the password alone (a server may echo either); and the
    forms a server echoes a value in (see ``_echo_forms``)."""
    known = tuple(known)
    return list(_forms_of(known)) if known else []


@functools.lru_cache(maxsize=256)
def _forms_of(known: tuple[str, ...]) -> tuple[str, ...]:
    # A client masks with the same values many times (each field, the excerpt, the log).
    values = set()
    for value in known:
        values.add(value)
        if value[:6].lower() == "basic ":
            values.update(_basic_parts(value[6:].strip()))
    for value in list(values):
        values.update(_echo_forms(value))
    return tuple(sorted((v for v in values if len(v) >= 4), key=len, reverse=True))


ECHO_MIN = 8
"""A known value this long or longer is also masked as a server may echo it altered: upper or
lower case, its slashes escaped ``\\/`` (PHP's JSON), its ``& < > " ' / + =`` written as HTML
character references."""

PIECE_MIN = 16
"""A known value this long or longer, with no space and with letters and digits, is also
masked base64-encoded (at any alignment inside a longer encoded text), and its first 16 and
last 12 characters wherever they appear alone (a server that shows a key shortened), and
across a line break (see ``_mask_broken``). Shorter pieces of a key would mask ordinary
words."""

_HTML_CHARS = "&<>\"'/+="


def _echo_forms(value: str) -> list[str]:
    if len(value) < ECHO_MIN:
        return []
    forms = [value.upper(), value.lower()]
    if "/" in value:
        forms.append(value.replace("/", "\\/"))
    if any(c in _HTML_CHARS for c in value):
        forms.append(html.escape(value))
        for reference in ("&#{};", "&#x{:X};", "&#x{:x};"):
            forms.append(
                "".join(reference.format(ord(c)) if c in _HTML_CHARS else c for c in value)
            )
    if _piece_worthy(value):
        forms += (value[:PIECE_MIN], value[-12:])
        forms += _base64_forms(value.encode("utf-8"))
    return [form for form in forms if form != value]


@functools.lru_cache(maxsize=4096)
def _piece_worthy(value: str) -> bool:
    return (
        len(value) >= PIECE_MIN
        and "://" not in value
        and not any(c.isspace() for c in value)
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
    )


def _base64_forms(raw: bytes) -> list[str]:
    """The base64 of ``raw`` as it reads inside any longer encoded text: for each of the three
    offsets it may start at, the characters that depend on ``raw`` alone (standard and URL-safe
    alphabets)."""
    forms: list[str] = []
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode("ascii")
        core = encoded[-(-8 * offset // 6) : 8 * (offset + len(raw)) // 6]
        forms += (core, core.replace("+", "-").replace("/", "_"))
    return forms


def _basic_parts(encoded: str) -> tuple[str, ...]:
    try:
        decoded = base64.b64decode(encoded, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):  # not base64, or not UTF-8 inside: nothing to add
        return ()
    return (decoded, decoded.partition(":")[2])
