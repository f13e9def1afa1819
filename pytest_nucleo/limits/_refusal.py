"""The failure a limiter gives instead of admitting a call, and the text the model reads.

It quotes the last :class:`UpstreamFailure` (``_failure``), which is why it imports that
module and not the other way round: ``UpstreamFailure.from_exception`` knows a refusal only as
the :class:`OwnRefusal` it registers as.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Literal

from pytest_nucleo._exceptions import UncorrectableLLMException
from pytest_nucleo._text._render import VALUE_LIMIT, clean_block, next_step, one_line, seconds

from ._failure import OwnRefusal, UpstreamFailure

if TYPE_CHECKING:
    from ._window import Budget

RefusalReason = Literal["open", "probing", "wait", "held", "too-large", "unreachable"]


def _rate(max_requests: int, window_seconds: float) -> str:
    noun = "request" if max_requests == 1 else "requests"
    return f"{max_requests} {noun} per {seconds(window_seconds)}"


class LimiterRefusalException(UncorrectableLLMException):
    """A rate limiter refused the call: its circuit is open (``reason`` ``"open"``), a single
    probe call is in flight (``"probing"``), the wait for a slot (``"wait"``) or for the pause a
    server asked for (``"held"``) is longer than it may wait, the call would take more units of
    a ``budget`` than it can ever hold (``"too-large"``), or the limiter's shared store is
    unreachable and it is set to refuse meanwhile (``"unreachable"``).

    Raised by :meth:`RateLimiter.acquire`; the runner turns it into the tool's result. The model
    reads why no call was made, how long the tool stays off (once) and the last response that
    switched it off; the limiter's name and settings are only in the technical message. A refusal is never counted as an upstream failure. For a
    throttle answer from the service itself, see :class:`UpstreamThrottleException`.
    """

    # Set by the constructor (in __dict__, see there); declared so that type checkers see them.
    limiter_name: str
    """The limiter's name."""
    max_requests: int
    """The limiter's main budget: requests per ``window_seconds``."""
    window_seconds: float
    """The main budget's window."""
    off_for: float
    """Seconds until the tool may be called again, as the limiter knew it when refusing."""
    reason: RefusalReason
    """Why no call was made: ``"open"``, ``"probing"``, ``"wait"``, ``"held"``,
    ``"too-large"`` or ``"unreachable"``."""
    last_failure: UpstreamFailure | None
    """The last upstream failure the limiter recorded, if any."""
    max_wait_seconds: float | None
    """The longest the limiter may wait, on a ``"wait"`` or ``"held"`` refusal (else None)."""
    budget: Budget | None
    """The budget that refused the call, when it is not the main one (else None)."""
    units: int | None
    """The units the call would take of the budget that refused it, if a budget did."""

    def __init__(
        self,
        limiter_name: str,
        max_requests: int,
        window_seconds: float,
        off_for: float,
        reason: RefusalReason,
        last_failure: UpstreamFailure | None = None,
        max_wait_seconds: float | None = None,
        budget: Budget | None = None,
        units: int | None = None,
    ) -> None:
        technical, text = _refusal_texts(
            limiter_name,
            max_requests,
            window_seconds,
            math.ceil(round(off_for, 3)),  # whole seconds: finer is noise to the model
            reason,
            last_failure,
            budget,
            units,
        )
        args = (
            limiter_name,
            max_requests,
            window_seconds,
            off_for,
            reason,
            last_failure,
            max_wait_seconds,
            budget,
            units,
        )
        # The cached texts are already clean. LLMReadableException.__init__ would clean them
        # again, and its secret-masking regexes are most of what a refusal costs, so what it
        # and _keep set is set here directly, exactly as they set it: a refusal is every call
        # while a circuit is open, and goes back to the model within microseconds.
        Exception.__init__(self, *args)  # args in constructor order, as _keep sets them
        attributes = self.__dict__
        attributes["_message"] = technical
        attributes["llm_message"] = text  # the model-facing message
        attributes.update(zip(_FIELDS, args, strict=True))
        attributes["_fields"] = _FIELDS


OwnRefusal.register(LimiterRefusalException)  # never read as an upstream failure (see there)

_FIELDS = (
    "limiter_name",
    "max_requests",
    "window_seconds",
    "off_for",
    "reason",
    "last_failure",
    "max_wait_seconds",
    "budget",
    "units",
)
"""The constructor's arguments, in order: the exception's fields and ``args``."""


@functools.lru_cache(maxsize=512)
def _refusal_texts(
    limiter_name: str,
    max_requests: int,
    window_seconds: float,
    off_for: int,
    reason: RefusalReason,
    last_failure: UpstreamFailure | None,
    budget: Budget | None,
    units: int | None,
) -> tuple[str, str]:
    """The technical and the model message of a refusal, cleaned once per distinct refusal."""
    # The model reads what happened and for how long the tool is off, stated once; the
    # limiter's name, rate, patience and budget sizes are the tool's settings, which the model
    # cannot change, so only the technical message names them.
    name = one_line(limiter_name, VALUE_LIMIT)
    off = seconds(off_for)
    last = f" (the last: {last_failure.describe()})" if last_failure is not None else ""
    then = " " + next_step(off_for)
    if reason == "open":
        what = (
            "This tool's calls were stopped after repeated failures of the service it calls"
            f"{last}.{then}"
        )
    elif reason == "probing":
        what = (
            "This tool's calls were stopped after repeated failures of the service it calls"
            f"{last}, and one trial call is under way.{then}"
        )
    elif reason == "too-large":
        what = (
            "This call is larger than the tool's rate limit ever admits, so it was not made, "
            "and it will not be made later either. Use another way to get this done."
        )
    elif reason == "unreachable":
        what = (
            "The tool cannot reach the store its rate limit shares with other workers, so it "
            f"makes no calls meanwhile; the service it calls has not failed.{then}"
        )
    elif reason == "held":
        asked = f" (its answer: {last_failure.describe()})" if last_failure is not None else ""
        what = (
            f"The service asked the tool to pause its calls{asked}, so this call was not made."
            f"{then}"
        )
    else:
        what = (
            "This tool is called more often than its rate limit allows, so this call was not "
            f"made{last}.{then}"
        )
    technical = (
        f"Limiter {name} ({_rate(max_requests, window_seconds)}) refused the call ({reason}); "
        f"off for {off}"
    )
    if reason == "too-large":
        budget_name = one_line(budget.name if budget else "requests", VALUE_LIMIT)
        capacity = budget.max_units if budget else max_requests
        per = seconds(budget.window_seconds if budget else window_seconds)
        technical = (
            f"Limiter {name} refused the call (too-large): it takes {units} units of its "
            f"budget '{budget_name}', which holds at most {capacity} units per {per}"
        )
    return (
        clean_block(technical),
        clean_block(what),
    )
