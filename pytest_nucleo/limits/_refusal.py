"""The failure a limiter gives instead of admitting a call, and the text the model reads."""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Literal

from pytest_nucleo._exceptions import UncorrectableLLMException
from pytest_nucleo._text import VALUE_LIMIT, clean_block, one_line, seconds

if TYPE_CHECKING:
    from ._failure import UpstreamFailure
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
    reads the limiter's name, its nominal rate, how long the tool stays off and the last
    response that switched it off. A refusal is never counted as an upstream failure. For a
    throttle answer from the service itself, see :class:`UpstreamThrottleException`.
    """

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
            max_wait_seconds,
            budget,
            units,
        )
        # The cached texts are already clean. LLMReadableException.__init__ would clean them
        # again, and its secret-masking regexes are most of what a refusal costs, so the two
        # messages are set here directly, exactly as that __init__ sets them.
        Exception.__init__(self, technical)
        self._message = technical
        self.llm_message = text
        """The model-facing message: which limiter refused and when calling again can help."""
        self._keep(
            limiter_name=limiter_name,
            max_requests=max_requests,
            window_seconds=window_seconds,
            off_for=off_for,
            reason=reason,
            last_failure=last_failure,
            max_wait_seconds=max_wait_seconds,
            budget=budget,
            units=units,
        )


@functools.lru_cache(maxsize=512)
def _refusal_texts(
    limiter_name: str,
    max_requests: int,
    window_seconds: float,
    off_for: int,
    reason: RefusalReason,
    last_failure: UpstreamFailure | None,
    max_wait_seconds: float | None,
    budget: Budget | None,
    units: int | None,
) -> tuple[str, str]:
    """The technical and the model message of a refusal, cleaned once per distinct refusal."""
    name = one_line(limiter_name, VALUE_LIMIT)
    rate = _rate(max_requests, window_seconds)
    off = seconds(off_for)
    quote_failure = True
    if reason == "open":
        what = (
            f"The rate limiter '{name}' of this tool (nominal rate: {rate}) has switched the "
            f"tool off after repeated upstream failures. It stays off for the next {off}, "
            "then lets a single trial call through."
        )
    elif reason == "probing":
        what = (
            f"The rate limiter '{name}' of this tool (nominal rate: {rate}) has switched the "
            "tool off after repeated upstream failures and is letting a single trial call "
            f"through; other calls stay off until it completes, for up to the next {off}."
        )
    elif reason == "too-large":
        quote_failure = False  # the size of the call is the reason, not the service's state
        budget_name = one_line(budget.name if budget else "requests", VALUE_LIMIT)
        capacity = budget.max_units if budget else max_requests
        per = seconds(budget.window_seconds if budget else window_seconds)
        what = (
            f"The rate limiter '{name}' of this tool (nominal rate: {rate}) cannot admit this "
            f"call: it would take {units} units of its budget '{budget_name}', which holds at "
            f"most {capacity} units per {per}, so the call was not made and waiting will not "
            "help. Make the call smaller (for example a shorter input) or split it."
        )
    elif reason == "unreachable":
        quote_failure = False  # the store is unreachable, not the service: quote nothing of it
        what = (
            f"The rate limiter '{name}' of this tool (nominal rate: {rate}) shares its state "
            "with other workers through a store it cannot reach right now, and is set to "
            "refuse calls meanwhile, so the call was not made. This is not a failure of the "
            f"service the tool calls. The tool stays off for the next {off}."
        )
    else:
        limit = "" if max_wait_seconds is None else f" (at most {seconds(max_wait_seconds)})"
        why = " The service asked us to pause its calls." if reason == "held" else ""
        what = (
            f"The rate limiter '{name}' of this tool (nominal rate: {rate}) would have to "
            f"hold this call for {off}, longer than it may wait{limit}, so the call was not "
            f"made.{why} The tool stays off for the next {off}."
        )
    if not quote_failure:
        said = ""
    elif last_failure is not None:
        said = f" The last response that switched it off: {last_failure.describe()}."
    elif reason == "held":
        said = ""  # a retry signal asked for the pause: there was no failed response to quote
    else:
        said = (
            " No upstream failure was recorded: the tool is called more often than its rate allows."
        )
    return (
        clean_block(f"Limiter {name} refused the call ({reason}); off for {off}"),
        clean_block(what + said),
    )
