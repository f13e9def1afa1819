"""Reading a server's Retry-After header (RFC 9110 section 10.2.3), totally.

The header is either delay-seconds (ASCII digits only) or an HTTP-date. ``float()`` would accept
``+1``, ``1e3``, ``nan``, ``inf`` and full-width digits, and ``asyncio.sleep(nan)`` or a sleep of
``1e10`` blocks forever, so the parser accepts exactly what the RFC allows and bounds the result.
"""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

RETRY_AFTER_CAP = 86_400.0
"""Longest wait :func:`parse_retry_after` reports by default, in seconds (one day)."""

# More digits than this is past any cap; int() of a huge digit string is slow, and past 4,300
# digits it raises.
_MAX_DIGITS = 18
# The longest HTTP-date form ("Wednesday, 21-Oct-15 07:28:00 GMT") is 33 characters; a longer
# value is not a date, and parsing megabytes of it would only cost time.
_MAX_DATE = 64
_OWS = " \t"


def parse_retry_after(
    value: str | bytes | None, *, cap: float = RETRY_AFTER_CAP, now: datetime | None = None
) -> float | None:
    """Seconds the server asked us to wait, in ``[0, cap]``, or None when it did not say clearly.

    Never raises. ``value`` is the header value: ASCII digits (``"120"``) or an HTTP-date
    (``"Wed, 21 Oct 2015 07:28:00 GMT"``; the obsolete RFC 850 and asctime forms are read too).
    Anything else is None: ``+1``, ``1e3``, ``1.5``, ``nan``, ``inf``, ``-1``, full-width or other
    non-ASCII digits, an empty value. A wait longer than ``cap`` is reported as ``cap``; a date in
    the past is 0. ``now`` is the wall-clock time to measure a date against (default: the current
    UTC time); it is used only to read a date, never to time a wait. A date without a zone is UTC.
    """
    if not (cap >= 0 and cap != float("inf")):  # also refuses a NaN cap
        return None
    if isinstance(value, bytes | bytearray):
        value = bytes(value).decode("latin-1")
    if not isinstance(value, str):
        return None
    text = value.strip(_OWS)
    if not text or not text.isascii():
        return None
    if text.isdigit():  # ASCII-only here, so "isdigit" means 0-9
        digits = text.lstrip("0") or "0"
        return cap if len(digits) > _MAX_DIGITS else min(float(int(digits)), cap)
    return _seconds_until(text, cap, now)


def _seconds_until(text: str, cap: float, now: datetime | None) -> float | None:
    # HTTP-dates start with a day name; this also keeps "1 Jan 2020"-like loose text out.
    if len(text) > _MAX_DATE or not text[:1].isalpha():
        return None
    try:
        when = parsedate_to_datetime(text)
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        current = datetime.now(UTC) if now is None else now
        if current.tzinfo is None:
            current = current.replace(tzinfo=UTC)
        delta = (when - current).total_seconds()
    except (ValueError, TypeError, IndexError, OverflowError):
        return None
    return min(max(delta, 0.0), cap)
