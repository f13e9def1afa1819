"""Retries and backoff: the default retry options, their checks, the :class:`_RetryBudget`
that turns a retry signal into the wait before the next attempt (or the
:class:`RetriesExhaustedException` that ends the call), and the warning when a provider SDK
retried on its own.

The call's lifecycle (``_call``) asks the budget after each retry signal; the exception it
returns is in ``_results``.
"""

from __future__ import annotations

import dataclasses
import math

from pytest_nucleo._exceptions import UpstreamRetryException
from pytest_nucleo._text._render import seconds

from ._log import logger
from ._results import RetriesExhaustedException

DEFAULT_RETRIES = 3
DEFAULT_BACKOFF = 0.5
DEFAULT_MAX_BACKOFF = 30.0
_DEFAULTS = (DEFAULT_RETRIES, DEFAULT_BACKOFF, DEFAULT_MAX_BACKOFF)


def _check_options(retries: int, backoff: float, max_backoff: float) -> None:
    if not (isinstance(retries, int) and not isinstance(retries, bool) and retries >= 0):
        raise ValueError(f"retries must be a whole number >= 0; got {retries!r}")
    for label, value in (("backoff", backoff), ("max_backoff", max_backoff)):
        if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
            raise ValueError(f"{label} must be a finite number of seconds >= 0; got {value!r}")
    if max_backoff < backoff:
        raise ValueError(
            f"max_backoff ({max_backoff!r}) must be >= backoff ({backoff!r}): raise max_backoff "
            "or lower backoff"
        )


@dataclasses.dataclass(frozen=True, slots=True)
class _RetryBudget:
    """How often the runner calls a tool again after a retry signal, and how long it waits."""

    retries: int
    backoff: float
    max_backoff: float

    def after(
        self, name: str, signal: UpstreamRetryException, attempt: int
    ) -> float | RetriesExhaustedException:
        """The wait before the next attempt, or the failure that ends the call: the budget is
        spent, or the signal asks for a wait beyond ``max_backoff`` (never slept: reported)."""
        _warn_of_sdk_retries(name, signal)
        over_cap = signal.retry_after is not None and signal.retry_after > self.max_backoff
        if attempt >= self.retries or over_cap:
            return self.exhausted(name, signal, attempt + 1)
        delay = min(self.backoff * 2.0**attempt, self.max_backoff)
        if signal.retry_after is not None:
            delay = max(delay, signal.retry_after)
        logger.info(
            "tool %s raised a %s retry signal; attempt %d of %d in %s",
            name,
            signal.kind,
            attempt + 2,
            self.retries + 1,
            seconds(delay),
        )
        return delay

    def exhausted(
        self, name: str, signal: UpstreamRetryException, attempts: int
    ) -> RetriesExhaustedException:
        """The failure that ends the call, keeping the wait the last signal asked for."""
        wait = signal.retry_after
        over_cap = wait is not None and wait > self.max_backoff
        failure = RetriesExhaustedException(
            name, signal.kind, attempts, wait, self.max_backoff if over_cap else None
        )
        failure.__cause__ = signal
        return failure


_DEFAULT_BUDGET = _RetryBudget(*_DEFAULTS)

_SDKS_WARNED: set[str] = set()


def _warn_of_sdk_retries(name: str, signal: UpstreamRetryException) -> None:
    """Once per SDK and process, a WARNING when a provider SDK retried a request on its own
    before its error became this retry signal: its retries then multiply the runner's, blind
    to the budget and the limiters (with the default two, each attempt is three requests)."""
    cause = signal.__cause__
    if cause is None:
        return
    # Imports no SDK: one of its errors exists already.
    from pytest_nucleo._http._providers import sdk_retries

    retried = sdk_retries(cause)
    sdk = type(cause).__module__.partition(".")[0]
    if not retried or sdk in _SDKS_WARNED:
        return
    _SDKS_WARNED.add(sdk)
    logger.warning(
        "tool %s: the %s client retried its request %d time(s) on its own before the "
        "runner's retry; the runner retries provider failures itself, within its budget "
        "and under the tool's limiters, so build the client with max_retries=0",
        name,
        sdk,
        retried,
    )
