"""The limiters' side of a call: the permits an attempt holds, handed back when it ends, and
what the limiters hear of an attempt that failed (the upstream's failure, or nothing but a retry
signal's suggested wait).

The call's lifecycle (``_call``) takes a permit of each limiter before an attempt and hands them
to these functions when the attempt is over.
"""

from __future__ import annotations

import dataclasses

from pytest_nucleo._causes import find_in_chain
from pytest_nucleo._exceptions import UpstreamRetryException
from pytest_nucleo._http._retry_after import RETRY_AFTER_CAP
from pytest_nucleo.limits._failure import UpstreamFailure
from pytest_nucleo.limits._limiter import Permit, RateLimiter

_Permits = list[tuple[RateLimiter, Permit]]


def release(permits: _Permits) -> None:
    for limiter, permit in permits:
        limiter.release(permit)


async def arelease(permits: _Permits) -> None:
    for limiter, permit in permits:
        await limiter.arelease(permit)


def after_error(permits: _Permits, exc: BaseException) -> None:
    """Tell the limiters of the attempt that raised ``exc`` (already recognised)."""
    failure, wait = news(permits, exc)
    for limiter, permit in permits:
        if failure is None:
            limiter.release(permit, retry_after=wait)
        else:
            limiter.record_failure(failure, permit)


async def aafter_error(permits: _Permits, exc: BaseException) -> None:
    """:func:`after_error`, telling the limiters with their awaitable methods."""
    failure, wait = news(permits, exc)
    for limiter, permit in permits:
        if failure is None:
            await limiter.arelease(permit, retry_after=wait)
        else:
            await limiter.arecord_failure(failure, permit)


def news(permits: _Permits, exc: BaseException) -> tuple[UpstreamFailure | None, float | None]:
    """What the limiters hear of a failed attempt: the upstream's failure, or nothing but
    a retry signal's suggested wait."""
    failure = UpstreamFailure.from_exception(exc) if permits else None
    signal = find_in_chain(exc, UpstreamRetryException)
    # A signal's suggested wait holds the limiters too: no other call goes out before it
    # (capped like a parsed Retry-After, so a wild value cannot switch a tool off for days).
    wait = None
    try:
        stated = signal.retry_after if signal is not None else None
        if stated is not None:
            wait = min(float(stated), RETRY_AFTER_CAP)
    except Exception:  # a signal of a hostile subclass whose wait cannot be read: none stated
        wait = None
    if failure is not None and wait is not None and (failure.retry_after or 0.0) < wait:
        failure = dataclasses.replace(failure, retry_after=wait)
    return failure, wait
