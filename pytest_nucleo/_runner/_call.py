"""The call's lifecycle: one call of a tool from its prepared options to its
:class:`ToolResult`, attempt after attempt (the permits taken, the tool run, the outcome told
to the limiters and the retry budget), in sync code or under asyncio; and what the runner lets
through from a tool.

The pieces it stands on: the bound arguments and the tool's facts (``_binding``), the retry
budget (``_retries``), the permits' fate (``_permits``), the log of a failure (``_log``), and
the result types (``_results``). The runner's own stops around an async call, its timeout and
its cancel token, are in ``_stops``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import sys
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from pytest_nucleo._causes import STOPS, find_in_chain, is_a, iter_chain, stop_in
from pytest_nucleo._chain import recognise_foreign, unwrap
from pytest_nucleo._clock import SYSTEM_CLOCK, Clock
from pytest_nucleo._exceptions import (
    JobCancelledException,
    LLMReadableException,
    LLMReadableRuntimeException,
    SystemException,
    UpstreamRetryException,
)
from pytest_nucleo._text._message import described, message_of
from pytest_nucleo._text._render import encodable
from pytest_nucleo._text._secrets import redact
from pytest_nucleo.limits._limiter import RateLimiter
from pytest_nucleo.limits._refusal import LimiterRefusalException
from pytest_nucleo.limits._units import Units

from . import _permits
from ._binding import _Facts, _facts
from ._log import _log_failure
from ._permits import _Permits
from ._results import (
    DEFAULT_TEXT_LIMIT,
    CancelToken,
    Cost,
    RetriesExhaustedException,
    ToolInfo,
    ToolResult,
    _bounded_success,
    _check_cost,
    _check_limiters,
    _check_text_limit,
    _name_of,
    _NoJSONForm,
    _serialize,
)
from ._retries import _DEFAULT_BUDGET, _DEFAULTS, _check_options, _RetryBudget

_NEVER_CAUGHT = STOPS
"""What the runner lets through from a tool: the user or the process asked to stop."""


def _pass_stops(exc: BaseException) -> None:
    """Raise the stop a group holds (anyio's and trio's task groups wrap a KeyboardInterrupt
    or a SystemExit in a ``BaseExceptionGroup``): a stop propagates however it is wrapped, as
    itself, so ``except KeyboardInterrupt`` and a SystemExit's exit code still work."""
    stop = stop_in(exc)
    if stop is not None:
        raise stop


def _failure_text(failure: LLMReadableException, name: str) -> tuple[str, LLMReadableException]:
    """What the model reads of ``failure``, encodable as UTF-8; a class of the set whose own
    ``explain_to_llm`` raises or returns no string is read as a system error instead."""
    try:
        text = failure.explain_to_llm()
        if type(text) is not str:  # a str subclass may override what later code calls on it
            raise TypeError("explain_to_llm() returned no plain string")
    except BaseException as error:
        if is_a(error, STOPS):
            raise
        failure = SystemException(
            name, f"a {type(failure).__name__} whose text could not be read", cause=failure
        )
        text = failure.explain_to_llm()
    return encodable(text), failure


# Python 3.11, and 3.12 before 3.12.3: an asyncio.TaskGroup whose task fails after the group's
# body ended cancels the task it runs in and never takes that request back (fixed upstream in
# 3.12.3 and 3.13).
_TASK_GROUPS_LEAVE_REQUESTS = sys.version_info < (3, 12, 3)


def _requests_left_by_task_groups(exc: BaseException, task: asyncio.Task[Any]) -> int:
    """How many cancellation requests the tool's task groups left on ``task`` (see above):
    one per group in the chain of ``exc`` that asked to cancel ``task`` once its body had
    ended. Whether the runner's task is being cancelled is what tells a stop from a failure,
    so a request the caller never made must be given back before it is asked. A group that
    asked while its body ran took its request back itself: its error's context is the
    CancelledError its body got."""
    if not _TASK_GROUPS_LEAVE_REQUESTS:
        return 0
    try:
        return _left_by(exc, task)
    except Exception:  # a hostile exception whose links or frames cannot be read: none left
        return 0


def _left_by(exc: BaseException, task: asyncio.Task[Any]) -> int:
    left = 0
    for group in iter_chain(exc):  # a group's members are visited too
        if not is_a(group, BaseExceptionGroup) or is_a(group.__context__, asyncio.CancelledError):
            continue
        tb = group.__traceback__
        while tb is not None:
            owner = tb.tb_frame.f_locals.get("self")
            if (
                tb.tb_frame.f_code.co_name == "__aexit__"
                and isinstance(owner, asyncio.TaskGroup)
                and getattr(owner, "_parent_task", None) is task
                and getattr(owner, "_parent_cancel_requested", False)
            ):
                left += 1
                break
            tb = tb.tb_next
    return left


@dataclasses.dataclass(slots=True)
class _Call:
    tool: Callable[..., Any]
    name: str
    limiters: tuple[RateLimiter, ...]
    budget: _RetryBudget
    clock: Clock
    facts: _Facts
    text_limit: int
    cost: Cost | None = None
    # What the tool raised on its way out while the runner was stopping it: the stop's cause.
    raised_while_stopped: BaseException | None = None
    # A value with no JSON form reads as its str() (the adapters' choice) instead of failing.
    str_fallback: bool = False

    @classmethod
    def prepare(
        cls,
        target: Callable[..., Any],
        name: str | None,
        limiters: Iterable[RateLimiter] | None,
        retries: int,
        backoff: float,
        max_backoff: float,
        clock: Clock | None,
        text_limit: int | None = None,
        cost: Cost | None = None,
    ) -> _Call:
        if not callable(target):
            raise TypeError(f"a tool must be callable; got a {type(target).__name__}")
        if (retries, backoff, max_backoff) == _DEFAULTS:
            budget = _DEFAULT_BUDGET  # built once: a frozen dataclass is slow to build
        else:
            _check_options(retries, backoff, max_backoff)
            budget = _RetryBudget(retries, float(backoff), float(max_backoff))
        _check_text_limit(text_limit)
        info = ToolInfo.of(target)
        if text_limit is None and info is not None:
            text_limit = info.text_limit
        if limiters is None:
            attached = info.limiters if info is not None else ()
        else:
            attached = _check_limiters(limiters)
        return cls(
            tool=target,
            name=name or (info.name if info is not None else _name_of(target)),
            limiters=attached,
            budget=budget,
            clock=clock if clock is not None else SYSTEM_CLOCK,
            facts=_facts(target),
            text_limit=DEFAULT_TEXT_LIMIT if text_limit is None else text_limit,
            cost=_check_cost(cost) or (info.cost if info is not None else None),
        )

    # outcomes

    def failed(self, failure: LLMReadableException) -> ToolResult:
        text, failure = _failure_text(failure, self.name)
        _log_failure(self.name, failure)
        return ToolResult(True, text, None, failure)

    def succeeded(self, permits: _Permits, value: Any) -> ToolResult:
        for limiter, permit in permits:
            limiter.record_success(permit)
        return self.result(value)

    async def asucceeded(self, permits: _Permits, value: Any) -> ToolResult:
        for limiter, permit in permits:
            await limiter.arecord_success(permit)
        return self.result(value)

    def result(self, value: Any) -> ToolResult:
        try:
            try:
                text = _serialize(value)
            except _NoJSONForm:
                if not self.str_fallback:
                    raise
                # What the frameworks do with such a value; a str() that raises still fails.
                text = str(value)
        except _NEVER_CAUGHT:
            raise
        except BaseException as exc:
            _pass_stops(exc)
            # Serializing runs the value's own code (model_dump, a dataclass field's copy, a
            # Mapping's iteration), which may raise anything, with anything in its message.
            return self.failed(
                SystemException(
                    self.name,
                    "the tool returned a value that cannot be serialized for the model: "
                    # Ours says it all ("a value of type X has no JSON form"); a foreign one
                    # needs its class.
                    + redact(message_of(exc) if isinstance(exc, _NoJSONForm) else described(exc)),
                    cause=exc,
                )
            )
        return ToolResult(False, _bounded_success(text, self.text_limit), value, None)

    def readable(self, exc: BaseException) -> LLMReadableException:
        try:
            return unwrap(exc, component=self.name)
        except LLMReadableRuntimeException as runtime:
            return runtime

    def units(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Units:
        """What this call takes of its limiters: the cost function's answer, else 1."""
        return 1 if self.cost is None or not self.limiters else self.cost(*args, **kwargs)

    def after_error(
        self, permits: _Permits, exc: BaseException, attempt: int
    ) -> ToolResult | float:
        """Tell the limiters; return the final result, or the delay before the next attempt."""
        # A client's or a provider's own error means what it says: a retry signal is retried,
        # a refused connection tells the limiters the upstream failed.
        exc = recognise_foreign(exc, self.name)
        _permits.after_error(permits, exc)
        return self.next_step(exc, attempt)

    async def aafter_error(
        self, permits: _Permits, exc: BaseException, attempt: int
    ) -> ToolResult | float:
        """:meth:`after_error`, telling the limiters with their awaitable methods."""
        exc = recognise_foreign(exc, self.name)
        await _permits.aafter_error(permits, exc)
        return self.next_step(exc, attempt)

    def next_step(self, exc: BaseException, attempt: int) -> ToolResult | float:
        signal = find_in_chain(exc, UpstreamRetryException)
        if signal is None:
            return self.failed(self.readable(exc))
        try:
            outcome = self.budget.after(self.name, signal, attempt)
        except Exception:  # a retry signal whose own code raises: a bug, read as one
            return self.failed(
                SystemException(
                    self.name,
                    f"a {type(signal).__name__} whose fields could not be read",
                    cause=exc,
                )
            )
        return self.failed(outcome) if isinstance(outcome, RetriesExhaustedException) else outcome

    # sync

    def run(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], cancel: CancelToken | None
    ) -> ToolResult:
        attempt = 0
        try:
            units = self.units(args, kwargs)
        except _NEVER_CAUGHT:
            raise
        except BaseException as exc:  # a cost function fails the call as the tool would
            _pass_stops(exc)
            return self.failed(self.readable(exc))
        while True:
            if cancel is not None and cancel.cancelled:
                return self.failed(JobCancelledException())
            permits: _Permits = []
            try:
                for limiter in self.limiters:
                    permits.append((limiter, limiter.acquire(units)))
            except LimiterRefusalException as refusal:
                _permits.release(permits)
                return self.failed(refusal)
            except BaseException:
                _permits.release(permits)
                raise
            try:
                value = self.tool(*args, **kwargs)
                if inspect.isawaitable(value):
                    _close(value)
                    raise TypeError(
                        "the tool returned an awaitable from a plain call: make it an async def "
                        "and run it with arun_tool"
                    )
            except _NEVER_CAUGHT:
                _permits.release(permits)
                raise
            except BaseException as exc:
                if stop_in(exc) is not None:
                    _permits.release(permits)
                    _pass_stops(exc)
                # Nothing is cancelling a plain call: a CancelledError, a GeneratorExit or a
                # custom BaseException is the tool's own, a bug like any other exception.
                outcome = self.after_error(permits, exc, attempt)
            else:
                return self.succeeded(permits, value)
            if isinstance(outcome, ToolResult):
                return outcome
            if cancel is not None and cancel.cancelled:
                return self.failed(JobCancelledException())
            self.clock.sleep(outcome)
            attempt += 1

    # async

    async def arun(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> ToolResult:
        attempt = 0
        is_async = self.facts.is_async
        try:
            units = self.units(args, kwargs)
        except _NEVER_CAUGHT:
            raise
        except BaseException as exc:  # a cost function fails the call as the tool would
            _pass_stops(exc)
            return self.failed(self.readable(exc))
        while True:
            permits: _Permits = []
            try:
                for limiter in self.limiters:
                    permits.append((limiter, await limiter.aacquire(units)))
            except LimiterRefusalException as refusal:
                await _permits.arelease(permits)
                return self.failed(refusal)
            except BaseException:
                await _permits.arelease(permits)
                raise
            try:
                if is_async:
                    value = await self.tool(*args, **kwargs)
                else:
                    # A plain function runs in a worker thread: it must not block the loop, and
                    # a timeout or a cancellation must still be able to end the call.
                    value = await asyncio.to_thread(_boxed, self.tool, args, kwargs)
                    if isinstance(value, _Raised):
                        raise value.exception
                    if inspect.isawaitable(value):
                        value = await value
            except _NEVER_CAUGHT:
                await _permits.arelease(permits)
                raise
            except BaseException as exc:
                if stop_in(exc) is not None:
                    await _permits.arelease(permits)
                    _pass_stops(exc)
                task = asyncio.current_task()
                if task is not None:
                    for _ in range(_requests_left_by_task_groups(exc, task)):
                        task.uncancel()
                if task is None or task.cancelling():
                    # This task is being cancelled (the runner's timeout or token, or the
                    # caller's own cancellation): the stop is the outcome, whatever the tool
                    # raised on its way out (a "Statement closed" from its cleanup, say).
                    await _permits.arelease(permits)
                    if isinstance(exc, asyncio.CancelledError):
                        raise
                    self.raised_while_stopped = exc
                    raise asyncio.CancelledError() from exc
                # Otherwise a CancelledError, a GeneratorExit or a custom BaseException is the
                # tool's own: a bug of the tool, like any other exception.
                outcome = await self.aafter_error(permits, exc, attempt)
            else:
                return await self.asucceeded(permits, value)
            if isinstance(outcome, ToolResult):
                return outcome
            await self.clock.asleep(outcome)
            attempt += 1


@dataclasses.dataclass(frozen=True, slots=True)
class _Raised:
    exception: BaseException


def _boxed(tool: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Call a plain tool in a worker thread, handing back what it raised as a value.

    asyncio delivers a thread's exception by throwing it into the awaiting coroutine, and a
    thrown GeneratorExit closes the coroutines on the way instead of reaching their ``except``:
    raised again in the runner's own frame, it is handled like anything else the tool raised.
    """
    try:
        return tool(*args, **kwargs)
    except BaseException as exc:
        return _Raised(exc)


def _close(awaitable: Awaitable[Any]) -> None:
    close = getattr(awaitable, "close", None)
    if callable(close):
        close()
