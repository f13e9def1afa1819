"""Rendering of values and messages into clean, bounded, secret-free model-facing text.

Every string that reaches a model text passes through one of these helpers, so the rules
of every model text (no ``\\r``, no object reprs, no secrets, bounded size) hold in one place.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable

from ._secrets import redact_piece

VALUE_LIMIT = 200
"""Characters kept of a value the model sent (``invalid_value``, an identifier)."""

MESSAGE_LIMIT = 2000
"""Characters kept of a free-text field (a rule, error details, a reason, a message)."""

BODY_LENGTH_LIMIT = 400
"""Characters a model text the package builds from an answer (a status, no answer, a body
that is not JSON) keeps before its hint line: a quote of what the server said is cut to fit,
and a long path, then a long service name, is shortened. The text checks hold every text to
it, a tool's own words (a rule, details) included."""

# Headroom read past a limit before masking, so that a secret straddling the cut is still
# recognised by its full shape and masked rather than half shown.
_LOOKAHEAD = 256

INVISIBLE = "\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
"""Zero-width and bidirectional format characters (a character class body): invisible to a
reviewer, yet able to reorder or hide what the model reads, so cleaning treats them as
control characters."""

SURROGATES = "\ud800-\udfff"
"""Lone surrogates (a character class body): a text holding one cannot be encoded as UTF-8, so
no model text may keep one; cleaning treats them as control characters."""

_WHITESPACE = re.compile(rf"[\s\x00-\x1f\x7f\x85\u2028\u2029{INVISIBLE}{SURROGATES}]+")
# Controls str.split() does not split on, the invisible format characters, lone surrogates.
_CONTROL = re.compile(rf"[\x00-\x08\x0e-\x1b\x7f{INVISIBLE}{SURROGATES}]+")
_CONTROL_BUT_NEWLINE = re.compile(
    rf"[\x00-\x09\x0b-\x1f\x7f\x85\u2028\u2029{INVISIBLE}{SURROGATES}]"
)
_SURROGATE = re.compile(rf"[{SURROGATES}]")
_BLANK_LINES = re.compile(r"\n{3,}")


def encodable(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, so that it encodes as UTF-8: the
    last step of every text the model reads, a success's included (a file name from
    ``os.listdir`` that is not UTF-8 holds one, and the agent's next request would fail)."""
    if str.isascii(text):
        return text
    try:
        str.encode(text, "utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def _bounded(text: str, limit: int, known: Iterable[str]) -> tuple[str, int]:
    """Mask secrets in the head of ``text``, then cut: return the masked head and how much was
    cut. A known value the cut splits is masked for the part of it that is kept."""
    piece = text[: limit + _LOOKAHEAD]
    head = redact_piece(piece, known, cut_end=len(piece) < len(text))
    cut = max(len(text) - limit - _LOOKAHEAD, 0) + max(len(head) - limit, 0)
    return head[:limit], cut


def _with_cut(text: str, cut: int) -> str:
    return f"{text}... ({cut} more characters cut)" if cut else text


def one_line(text: str, limit: int = MESSAGE_LIMIT, known: Iterable[str] = ()) -> str:
    """Collapse whitespace and control characters to single spaces, mask secrets, bound length."""
    head, cut = _bounded(text, limit, known)
    return _with_cut(_collapse(head), cut)


def _collapse(text: str, controls: re.Pattern[str] | None = None) -> str:
    """Same as ``_WHITESPACE.sub(" ", text).strip()``, several times faster on prose.

    ``controls`` is what counts as a control character besides whitespace (``_CONTROL`` by
    default); its ASCII part must be that of ``_CONTROL``. ASCII text, the usual case, is
    collapsed on its bytes: every control character and space made a space, runs of spaces
    halved until none is left (a few C-speed passes), while ``str.split()`` made a string per
    word (some 80 ns each, most of the cost of an excerpt). Other text: ``str.split()``
    handles every Unicode space, and only the remaining control characters need a pass.
    """
    if text.isascii():
        raw = text.encode("ascii").translate(_ASCII_TO_SPACE)
        while b"  " in raw:
            raw = raw.replace(b"  ", b" ")
        return raw.strip(b" ").decode("ascii")
    pattern = _CONTROL if controls is None else controls
    if pattern.search(text):
        text = pattern.sub(" ", text)
    return " ".join(text.split())


# The ASCII characters str.split() splits on (\t to \r, \x1c to \x1f, space) and the ASCII
# controls of _CONTROL: together every byte up to the space, and DEL.
_ASCII_TO_SPACE = bytes(0x20 if byte <= 0x20 or byte == 0x7F else byte for byte in range(256))
_CONTROL_BUT_NEWLINE_BYTES = bytes([*range(0x00, 0x0A), *range(0x0B, 0x20), 0x7F])


def _holds(text: str, ascii_set: bytes, pattern: re.Pattern[str]) -> bool:
    """Whether ``pattern`` (a character class; ``ascii_set`` is its ASCII part) occurs in
    ``text``. ASCII text, the usual case, is checked at C speed on its bytes: a regex scan
    costs about 13 ns a character, more than all the rest of an excerpt."""
    if text.isascii():
        raw = text.encode("ascii")
        return len(raw.translate(None, ascii_set)) != len(raw)
    return pattern.search(text) is not None


class Cleaned(str):
    """Text assembled only from pieces that already went through these helpers (one line,
    masked, bounded): :func:`clean_block` returns it as it is when it fits the limit, instead
    of masking a kilobyte a second time. The HTTP carriers build their texts this way."""

    __slots__ = ()


def clean_block(text: str, limit: int = MESSAGE_LIMIT, known: Iterable[str] = ()) -> str:
    """Like :func:`one_line`, but keep single line breaks (``\\r\\n`` and ``\\r`` become ``\\n``)."""
    if type(text) is Cleaned and len(text) <= limit and not known:
        return str(text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    head, cut = _bounded(text, limit, known)
    # Each pass only when it can change something: most texts are one clean line.
    if _holds(head, _CONTROL_BUT_NEWLINE_BYTES, _CONTROL_BUT_NEWLINE):
        head = _CONTROL_BUT_NEWLINE.sub(" ", head)
    if "\n" in head:
        head = "\n".join(line.strip() for line in head.split("\n"))
        if "\n\n\n" in head:
            head = _BLANK_LINES.sub("\n\n", head)
    return _with_cut(head.strip(), cut)


def render_value(value: object, limit: int = VALUE_LIMIT) -> str:
    """Render a value the model sent as one bounded line, in the JSON the model wrote it in.

    Strings are quoted with JSON escapes (so a ``\\n`` inside shows as ``\\n``, not as a line
    break); numbers, booleans and None as JSON; lists and dicts as compact JSON; bytes and any
    other object by their kind and size only, never by ``repr()``, which would show memory
    addresses and internals the model cannot act on.
    """
    if isinstance(value, str):
        head, cut = _bounded(value, limit, ())
        if not head.isascii():
            head = _SURROGATE.sub("\ufffd", head)
        return _with_cut(json.dumps(head, ensure_ascii=False), cut)
    if isinstance(value, int) and value.bit_length() > _LONGEST_INT_BITS:
        # Longer than a value may be shown (and past 4,300 digits, Python refuses to print
        # it): say its size, computed without printing it.
        return f"<an integer of {_digits(abs(value))} digits>"
    if value is None or isinstance(value, bool | int | float):
        return json.dumps(value)  # NaN and infinity render as NaN / Infinity, like JavaScript
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{len(value)} bytes of binary data>"
    if isinstance(value, list | tuple | dict):
        try:
            encoded = json.dumps(value, ensure_ascii=False, default=_kind_of)
        # Circular or absurdly deep structures, huge ints inside, keys JSON has no form for.
        except (ValueError, RecursionError, TypeError):
            return f"<a {type(value).__name__} that cannot be shown>"
        head, cut = _bounded(encoded, limit, ())
        return _with_cut(_WHITESPACE.sub(" ", head), cut)
    return _kind_of(value)


_LONGEST_INT_BITS = 660
"""Integers of more bits (about 199 digits and up) are shown by their size, not their digits."""


_SHORTEST_SHOWN = 40
"""Characters a service name or a path keeps at least when a text is fitted to its bound."""


def fit_to_bound(
    build: Callable[[str, str], str], name: str, path: str, limit: int = BODY_LENGTH_LIMIT
) -> str:
    """``build(name, path)``, the part of a model text before its hint line that names a
    service and a path, kept within ``limit`` characters: past it, the path loses its middle
    (its start says what kind of resource, its end which one), then the name its end, each
    to no fewer than 40 characters. Both are bounded already (a name to 200 characters, a
    path to 300); together, in the longest sentences, they could pass the bound."""
    text = build(name, path)
    over = len(text) - limit
    if over > 0 and len(path) > _SHORTEST_SHOWN:
        path = _without_middle(path, max(_SHORTEST_SHOWN, len(path) - over))
        text = build(name, path)
        over = len(text) - limit
    if over > 0 and len(name) > _SHORTEST_SHOWN:
        text = build(cut_end(name, max(_SHORTEST_SHOWN, len(name) - over)), path)
    return text


_LONG_RUN = re.compile(rf"\S{{{_SHORTEST_SHOWN + 1},}}")


def shorten_long_runs(text: str, limit: int = BODY_LENGTH_LIMIT) -> str:
    """``text`` within ``limit`` characters by cutting the middle of its longest runs without
    a space (a path), each to no fewer than 40 characters; a text that fits, or has no such
    run left, as it is. For a wrapper that puts words before a text fitted without them."""
    while len(text) > limit:
        runs = list(_LONG_RUN.finditer(text))
        if not runs:
            break
        longest = max(runs, key=lambda run: len(run.group()))
        run = longest.group()
        shorter = _without_middle(run, max(_SHORTEST_SHOWN, len(run) - (len(text) - limit)))
        text = f"{text[: longest.start()]}{shorter}{text[longest.end() :]}"
    return text


def shorten_names(text: str, names: Iterable[str], limit: int, shortest: int) -> str:
    """``text`` within ``limit`` characters by cutting the end of the ``names`` it holds (a
    service's: words, which ``shorten_long_runs`` leaves alone), the longest first, each to
    no fewer than ``shortest`` characters; a text that fits as it is. A name is looked for
    where it first appears; shown cut already (see ``fit_to_bound``), by its start."""
    for name in sorted(names, key=len, reverse=True):
        over = len(text) - limit
        if over <= 0 or len(name) <= shortest:
            break
        at = text.find(name)
        if at < 0:
            at = text.find(name[:shortest])
            shown = _shown_cut(text, at, name) if at >= 0 else None
            if shown is None:
                continue
            name = shown
        shorter = cut_end(name, max(shortest, len(name) - over))
        text = f"{text[:at]}{shorter}{text[at + len(name) :]}"
    return text


def cut_end(text: str, limit: int) -> str:
    """``text`` cut at its end to ``limit`` characters, marked with ``...``; as it is when it
    fits."""
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _shown_cut(text: str, at: int, name: str) -> str | None:
    """``name`` as ``text`` shows it cut at ``at`` (as ``cut_end`` cuts: a start of it, then
    ``...``), or None when it is not there."""
    shown, shared = text[at : at + len(name)], 0
    while shared < len(shown) and shown[shared] == name[shared]:
        shared += 1
    for end in range(shared, 0, -1):  # the cut's own "..." may look like the name's
        shown = name[:end].rstrip() + "..."
        if text.startswith(shown, at):
            return shown
    return None


def _without_middle(text: str, length: int) -> str:
    """``text`` cut to ``length`` characters by replacing its middle with ``...``."""
    keep = length - 3
    return f"{text[: keep // 2]}...{text[len(text) - (keep - keep // 2) :]}"


def _digits(value: int) -> int:
    """How many decimal digits the positive ``value`` has."""
    digits = int(math.log10(value)) + 1
    # log10 of a huge int may land a hair off an exact power of ten: correct by one.
    if 10 ** (digits - 1) > value:
        return digits - 1
    if 10**digits <= value:
        return digits + 1
    return digits


def _kind_of(value: object) -> str:
    return f"<a value of type {type(value).__name__}>"


def seconds(value: float) -> str:
    """``30.0`` -> ``"30 seconds"``, ``1`` -> ``"1 second"``, ``0.25`` -> ``"0.25 seconds"``."""
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return f"{text} second" if text == "1" else f"{text} seconds"


def duration(value: float) -> str:
    """A wait as a model reads it at a glance, rounded as "about" allows: seconds to the tenth
    under ten, whole seconds under two minutes, whole minutes under an hour, then hours to the
    half hour (``2.44`` -> ``"2.4 seconds"``, ``118.903`` -> ``"119 seconds"``, ``90`` -> ``"90
    seconds"``, ``900`` -> ``"15 minutes"``, ``5400`` -> ``"1.5 hours"``, ``86400`` -> ``"24
    hours"``)."""
    if not math.isfinite(value):
        return seconds(value)
    if value < 10:  # "2.4 seconds": a tenth of a second still tells a short wait apart
        return seconds(round(value, 1))
    if value < 120:
        return seconds(round(value))
    minutes = int(value / 60 + 0.5)
    if minutes < 60:
        return f"{minutes} minutes"
    hours = int(value / 1800 + 0.5) / 2
    return "1 hour" if hours == 1 else f"{hours:.1f}".removesuffix(".0") + " hours"


def next_step(retry_after: float | None, *, throttled: bool = False, wait_seen: bool = True) -> str:
    """The closing sentence of a text about a service that cannot help now: it agrees with the
    uncorrectable hint line and states the wait once (``retry_after``, as it will be enforced),
    or says that a throttle gave none (or, ``wait_seen=False``, that its answer's headers were
    not seen, so no wait is known)."""
    if retry_after is not None and retry_after < 1:
        return (
            f"It asked for a wait of {seconds(retry_after)}, so the limit may already be over; "
            "use another way or come back later."
        )
    if retry_after is not None:
        return (
            f"This tool will not work for about {duration(retry_after)}; use another way or "
            "come back later."
        )
    if throttled:
        said = "No wait was given" if wait_seen else "No wait is known"
        return f"{said}; use another way or come back later."
    return "Use another way, or come back later."


def quota_step(retry_after: float | None) -> str:
    """The closing sentence of a text about a used-up quota or billing: waiting does not
    help, so it says who can act (the user) and what to tell them. A wait the service gave
    is when the quota comes back, stated once."""
    if retry_after is not None and retry_after >= 1:
        return (
            f"It says the quota comes back in about {duration(retry_after)}; until then only "
            "the user can act (a higher quota, a plan or billing): tell the user."
        )
    return (
        "Waiting will not help: only the user can act (a higher quota, a plan, billing or a "
        "payment method); tell the user."
    )
