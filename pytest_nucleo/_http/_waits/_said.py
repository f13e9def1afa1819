"""What a wait is read from: the headers that matter, the start of the body, the status, now."""

from __future__ import annotations

from typing import NamedTuple


class Said(NamedTuple):
    """A response as the wait dialects read it."""

    headers: dict[str, str]
    """Lower-case header name -> its first value, for the names in :data:`HEADERS_READ`."""
    body: str
    """The start of the body, as text."""
    status: int | None
    """The status received, when known."""
    now: float
    """The time the response was sent, in epoch seconds: its ``Date``, else our clock."""

    def number(self, name: str) -> float | None:
        """The header ``name`` as a plain ASCII decimal (``"30"``, ``"2.0"``), or None."""
        value = self.headers.get(name)
        return None if value is None else decimal(value)

    @property
    def throttled(self) -> bool:
        """Whether the status may be a throttle's (403, 429, a 5xx, or not known): a reset
        header or a body field on another answer (GitHub sends its reset on every one, a 400
        may echo a request's ``retry_after``) states no wait."""
        return self.status is None or self.status in (403, 429) or self.status >= 500

    def exhausted(self, remaining: str) -> bool:
        """Whether a reset header counts as a wait: the answer may be a throttle's, and its
        ``remaining`` header says 0, or it is a 429 that does not say what remains."""
        if not self.throttled:
            return False
        left = self.headers.get(remaining)
        if left is None:
            return self.status == 429
        return decimal(left) == 0


# A time of day in epoch seconds is past this (2001-09-09); a wait in seconds never is, as
# no cap comes near 31 years. Past the second bound it is in milliseconds (Java's clock).
EPOCH_SECONDS = 1_000_000_000.0
EPOCH_MILLISECONDS = 1_000_000_000_000.0


def until(value: float, now: float) -> float:
    """``value`` as seconds from ``now``: a delta as it is, an epoch (in seconds, or in
    milliseconds) as the time left until it; negative when it is past (the caller floors)."""
    if value >= EPOCH_MILLISECONDS:
        return value / 1000.0 - now
    if value >= EPOCH_SECONDS:
        return value - now
    return value


_MAX_LENGTH = 32  # longer is not a number of seconds any service sends
_PAST_ANY_CAP = 1e30


def decimal(text: str) -> float | None:
    """``"30"``, ``"2.0"``, ``" 1.5 "`` -> seconds; anything else (``+1``, ``1e3``, ``nan``,
    ``-1``, full-width digits, ``.5``) -> None. The forms ``float()`` accepts beyond plain
    decimals would let ``inf`` or ``nan`` reach a sleep."""
    text = text.strip(" \t")
    if not text or not text.isascii():
        return None
    if len(text) > _MAX_LENGTH:
        # Digits past any cap (int() of thousands of them is slow, and past 4,300 raises).
        return _PAST_ANY_CAP if text.isdigit() else None
    whole, dot, fraction = text.partition(".")
    if not whole.isdigit() or (dot and not fraction.isdigit()):
        return None
    return float(text)


HEADERS_READ = frozenset(
    {
        "date",
        "retry-after",
        "retry-after-ms",
        "x-ms-retry-after-ms",
        "ratelimit",
        "ratelimit-reset",
        "ratelimit-remaining",
        "x-ratelimit-reset",
        "x-ratelimit-remaining",
        "x-ratelimit-reset-after",
        "x-rate-limit-reset",
        "x-rate-limit-remaining",
        "x-ratelimit-reset-requests",
        "x-ratelimit-reset-tokens",
        "x-ratelimit-remaining-requests",
        "x-ratelimit-remaining-tokens",
    }
)
"""Every header a dialect reads (lower case)."""
