"""The wait a response states, in every documented dialect, read in one order.

Services say "wait" in many ways: the standard ``Retry-After`` header, milliseconds headers,
rate-limit reset headers (as an epoch or a delta), duration strings, a field of the JSON body.
Each dialect is one module here with one function from a :class:`Said` to seconds or None;
:data:`DIALECTS` lists them in the order they count, the first that states a wait wins.

The order, and why: a header that says "retry after" (in milliseconds first, as it is the more
precise copy of the same wait) beats a header that says when a limit resets, which beats a
duration string, and every header beats the body: a header is written by the service's
gateway for machines, a body field is often an echo of it for people.

Every wait is in ``[0, RETRY_AFTER_CAP]``: a reset in the past is 0 (call now), a wait past
the cap is the cap. A time of day (an HTTP-date, an epoch) is measured against the response's
own ``Date`` header when it has one, so a skew between the service's clock and ours changes
nothing; without one, against ``now``.

Adding a dialect is one module here and one line in :data:`DIALECTS` (and, for a header of
its own, its name in :data:`HEADERS_READ`, the headers read from a response).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC
from email.utils import parsedate_to_datetime

from pytest_nucleo._http._body_rules import Headers, first_values
from pytest_nucleo._http._retry_after import RETRY_AFTER_CAP

from . import _body, _durations, _milliseconds, _ratelimit_field, _reset, _retry_after_header
from ._said import HEADERS_READ, Said

DIALECTS: tuple[Callable[[Said], float | None], ...] = (
    _milliseconds.wait,  # retry-after-ms, x-ms-retry-after-ms
    _retry_after_header.wait,  # Retry-After: 30, 2.0, or an HTTP-date
    _ratelimit_field.wait,  # RateLimit: "default";r=0;t=30 (the IETF fields)
    _reset.wait,  # x-ratelimit-reset, RateLimit-Reset, ...: an epoch or a delta
    _durations.wait,  # x-ratelimit-reset-requests: 1m30s (OpenAI)
    _body.wait,  # {"retry_after": 1.5}, Google's "retryDelay": "43s"
)
"""Every dialect, in the order it counts: the first that states a wait wins."""

__all__ = ["DIALECTS", "HEADERS_READ", "Said", "body_start", "stated_wait", "wait_in"]


def stated_wait(
    headers: Headers | None,
    body: bytes | str | None = None,
    *,
    status: int | None = None,
    now: float | None = None,
) -> float | None:
    """Seconds a response asks the caller to wait, in ``[0, RETRY_AFTER_CAP]``, or None when
    it states no wait; never raises.

    Read from every documented dialect, the first in this order that states one: the
    ``retry-after-ms`` and ``x-ms-retry-after-ms`` headers, ``Retry-After`` (seconds, decimal
    seconds or an HTTP-date), the IETF ``RateLimit`` field, the reset headers
    (``x-ratelimit-reset``, ``x-rate-limit-reset``, ``RateLimit-Reset``,
    ``x-ratelimit-reset-after``: an epoch or a delta, told apart by size), OpenAI's
    ``x-ratelimit-reset-requests`` / ``-tokens`` durations, then the body's ``retry_after``,
    ``retryAfter``, ``retryDelay`` or "Please try again in 2.4s". ``headers`` is a mapping, an ``httpx.Headers`` or
    (name, value) pairs; ``body`` the raw body (only its start is read); ``status`` lets a
    reset header count on a 429 that does not say what remains; ``now`` is the current time
    in epoch seconds (default ``time.time()``), used only when the response has no ``Date``.
    """
    return wait_in(first_values(headers, HEADERS_READ), body_start(body), status=status, now=now)


def body_start(body: bytes | str | None) -> str:
    """The start of ``body`` as text: what the body's dialects read."""
    if not body:
        return ""
    start = body[: _body.SCAN]
    return start if isinstance(start, str) else bytes(start).decode("utf-8", "replace")


def wait_in(
    headers: dict[str, str], body: str = "", *, status: int | None = None, now: float | None = None
) -> float | None:
    """:func:`stated_wait` of headers already read (lower-case name -> first value, for the
    names in :data:`HEADERS_READ`) and the start of a body as text."""
    said = Said(headers, body, status, _reference_time(headers, now))
    for dialect in DIALECTS:
        wait = dialect(said)
        if wait is not None:
            # NaN compares false both ways, so max() and min() would let it through.
            return min(max(wait, 0.0), RETRY_AFTER_CAP) if wait == wait else None
    return None


def _reference_time(headers: dict[str, str], now: float | None) -> float:
    """The response's own ``Date`` in epoch seconds, else ``now``, else the current time."""
    date = headers.get("date")
    if date is not None and date[:1].isalpha() and len(date) <= 64:
        try:
            when = parsedate_to_datetime(date)
            seconds = (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()
        except (ValueError, TypeError, IndexError, OverflowError):
            seconds = None  # a Date that is no date: our clock, then
        if seconds is not None and _EPOCH_RANGE[0] <= seconds <= _EPOCH_RANGE[1]:
            return seconds
    if now is not None and _EPOCH_RANGE[0] <= now <= _EPOCH_RANGE[1]:  # also refuses NaN
        return now
    return time.time()


# Times a datetime can hold (years 1 to 9999, with a day's margin for any zone): a Date or a
# ``now`` outside them would make reading an HTTP-date raise.
_EPOCH_RANGE = (-62_135_596_800.0 + 86_400, 253_402_300_799.0 - 86_400)
