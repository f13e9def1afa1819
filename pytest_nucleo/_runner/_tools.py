"""The boundary that runs tools: what the model reads for a call, and the retry signals.

:func:`run_tool` and :func:`arun_tool` take a tool (any callable, sync or async) and the
arguments a model sent, and return a :class:`ToolResult`: on success the value and its
deterministic text, on failure the exception and its ``explain_to_llm()`` text. Nothing a tool
raises escapes as an exception, except what must not be swallowed: ``KeyboardInterrupt``,
``SystemExit``, and a cancellation of the caller's own task. Any other ``BaseException`` a tool
raises (``GeneratorExit``, a ``CancelledError`` of its own, a custom subclass) is a bug of the
tool and becomes a :class:`SystemException`, in :func:`run_tool` and :func:`arun_tool` alike.

The pieces of the runner it stands on are mapped in ``pytest_nucleo/_runner/__init__.py``;
none of them imports this module.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, TypeVar, overload

from pytest_nucleo._causes import stop_in
from pytest_nucleo._clock import Clock
from pytest_nucleo._exceptions import (
    InvalidInputException,
    JobCancelledException,
    SystemException,
    check_seconds,
)
from pytest_nucleo.limits._limiter import RateLimiter

from ._binding import _bind
from ._call import _Call
from ._results import (
    _INFO,
    CancelToken,
    Cost,
    ToolInfo,
    ToolResult,
    _check_cost,
    _check_limiters,
    _check_text_limit,
    _name_of,
)
from ._retries import DEFAULT_BACKOFF, DEFAULT_MAX_BACKOFF, DEFAULT_RETRIES
from ._stops import _arun_guarded

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


@overload
def tool(func: F, /) -> F: ...
@overload
def tool(
    *,
    name: str | None = None,
    limiters: Iterable[RateLimiter] = (),
    text_limit: int | None = None,
    cost: Cost | None = None,
) -> Callable[[F], F]: ...
def tool(
    func: F | None = None,
    /,
    *,
    name: str | None = None,
    limiters: Iterable[RateLimiter] = (),
    text_limit: int | None = None,
    cost: Cost | None = None,
) -> F | Callable[[F], F]:
    """Name a tool and attach its limiters, for :func:`run_tool` / :func:`arun_tool`.

    ``@tool``, or ``@tool(name="search_orders", limiters=[shop_limiter], text_limit=20_000)``.
    The function is returned unchanged (calling it directly bypasses the runner, its limiters
    and its retries); the runner reads the name (default: the function's ``__name__``), the
    limiters and the most characters of a success text (default: :data:`DEFAULT_TEXT_LIMIT`)
    from it. ``cost`` is called with each call's arguments and returns the units it takes of
    every limiter (``limiter.acquire(units=...)``), for example
    ``cost=lambda prompt: {"tokens": len(prompt) // 4}``; without it a call takes 1.
    """
    checked = _check_limiters(limiters)
    _check_text_limit(text_limit)
    priced = _check_cost(cost)

    def attach(target: F) -> F:
        setattr(
            target,
            _INFO,
            ToolInfo(name or _name_of(target), checked, text_limit=text_limit, cost=priced),
        )
        return target

    return attach if func is None else attach(func)


def run_tool(
    tool: Callable[..., Any],
    arguments: Mapping[str, Any] | None = None,
    *,
    name: str | None = None,
    limiters: Iterable[RateLimiter] | None = None,
    retries: int = DEFAULT_RETRIES,
    backoff: float = DEFAULT_BACKOFF,
    max_backoff: float = DEFAULT_MAX_BACKOFF,
    clock: Clock | None = None,
    cancel: CancelToken | None = None,
    text_limit: int | None = None,
    cost: Cost | None = None,
    str_fallback: bool = False,
) -> ToolResult:
    """Call ``tool`` with the ``arguments`` a model sent and return what the model reads.

    - Arguments that do not fit the signature (missing, unknown, not a mapping) give a
      correctable :class:`InvalidInputException` naming the parameter; the tool is not called.
    - A failure gives its ``explain_to_llm()`` text; anything outside the set becomes a
      :class:`SystemException` naming the tool. Correctable failures are logged at WARNING
      without a stack trace, uncorrectable ones at ERROR with it, under ``pytest_nucleo``.
    - A retry signal (:class:`UpstreamRetryException`) makes the runner call again, up to
      ``retries`` more times, waiting ``backoff x 2**n`` seconds (at least the signal's
      ``retry_after``, at most ``max_backoff``) on ``clock``; past that, or when the signal
      asks for more than ``max_backoff``, a :class:`RetriesExhaustedException`.
    - ``limiters`` (default: those of ``@tool``) admit each attempt and hear how it went;
      ``cost`` (default: that of ``@tool``, else 1) is called with the call's arguments and
      returns the units each attempt takes of them (a whole number, or budget names to whole
      numbers). A cost function that raises fails the call like the tool would.
    - ``cancel``: a :class:`CancelToken` checked before each attempt and each wait.
    - ``text_limit`` (default: that of ``@tool``, else :data:`DEFAULT_TEXT_LIMIT`): the most
      characters of the value's text the model reads; past it the model reads the head and
      the tail around a note (about 250 characters more) of how much was cut, telling it to
      narrow its request. ``value`` keeps it all.
    - ``str_fallback``: a value with no JSON form (an object of your own, a framework's image)
      reads as its ``str()`` instead of failing the call; the adapters set it, since the
      frameworks they hand values to convert such a value themselves.
    - Nothing escapes but ``KeyboardInterrupt`` and ``SystemExit``, raised as themselves also
      from inside an exception group (as anyio's and trio's task groups wrap them): any other
      exception a tool raises (a ``BaseException``, a ``GeneratorExit`` or a
      ``CancelledError`` of its own included), or its value raises while being serialized,
      becomes a failure.

    An ``async def`` tool is run with ``asyncio.run`` when no event loop is running here; under
    a running loop use :func:`arun_tool`.
    """
    call = _Call.prepare(
        tool, name, limiters, retries, backoff, max_backoff, clock, text_limit, cost
    )
    if call.facts.is_async:
        return run_sync(
            lambda: arun_tool(
                tool,
                arguments,
                name=call.name,
                limiters=call.limiters,
                retries=retries,
                backoff=backoff,
                max_backoff=max_backoff,
                clock=clock,
                cancel=cancel,
                text_limit=call.text_limit,
                cost=call.cost,
                str_fallback=str_fallback,
            ),
            refusal=f"{call.name} is an async tool and an event loop is running in this thread: "
            "use `await arun_tool(...)`",
        )
    call.str_fallback = str_fallback
    try:
        args, kwargs = _bind(call.facts, arguments)
    except InvalidInputException as mismatch:
        return call.failed(mismatch)
    except BaseException as exc:
        return call.failed(_unreadable_arguments(call.name, exc))
    return call.run(args, kwargs, cancel)


async def arun_tool(
    tool: Callable[..., Any],
    arguments: Mapping[str, Any] | None = None,
    *,
    name: str | None = None,
    limiters: Iterable[RateLimiter] | None = None,
    retries: int = DEFAULT_RETRIES,
    backoff: float = DEFAULT_BACKOFF,
    max_backoff: float = DEFAULT_MAX_BACKOFF,
    clock: Clock | None = None,
    timeout: float | None = None,
    cancel: CancelToken | None = None,
    text_limit: int | None = None,
    cost: Cost | None = None,
    str_fallback: bool = False,
) -> ToolResult:
    """:func:`run_tool` for asyncio, with the runner's own stops.

    ``timeout`` (seconds, on ``clock``) bounds the whole call, limiter waits and retries
    included: past it the call ends as :class:`JobTimeoutException` stating the budget.
    ``cancel.cancel()`` ends it as :class:`JobCancelledException`. A cancellation of the task
    awaiting ``arun_tool`` is passed on (``asyncio.CancelledError``), never turned into a
    result. A plain (sync) tool runs in a worker thread; when it is stopped, the thread runs on
    to its end but its result is dropped. A tool that raises while being stopped ends as the
    stop, with what it raised as the stop's ``__cause__``.
    """
    call = _Call.prepare(
        tool, name, limiters, retries, backoff, max_backoff, clock, text_limit, cost
    )
    check_seconds(timeout, "timeout")
    call.str_fallback = str_fallback
    try:
        args, kwargs = _bind(call.facts, arguments)
    except InvalidInputException as mismatch:
        return call.failed(mismatch)
    except BaseException as exc:
        return call.failed(_unreadable_arguments(call.name, exc))
    if cancel is not None and cancel.cancelled:
        return call.failed(JobCancelledException())
    if timeout is None and cancel is None:
        return await call.arun(args, kwargs)
    return await _arun_guarded(call, args, kwargs, timeout, cancel)


def run_sync(start: Callable[[], Awaitable[T]], *, refusal: str) -> T:
    """Run the coroutine ``start()`` makes from sync code; under a running event loop raise
    ``RuntimeError(refusal)`` instead, before the coroutine is made.

    ``asyncio.run`` rather than a framework's own ``run_sync``, which may leave its loop open
    (a ResourceWarning, an error under ``-W error``).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass  # no loop: the one case to go on (outside the handler, or every exception the
        # coroutine raises would carry this RuntimeError as its context)
    else:
        raise RuntimeError(refusal)
    return asyncio.run(_awaited(start()))


async def _awaited(awaitable: Awaitable[T]) -> T:
    return await awaitable


def _unreadable_arguments(name: str, exc: BaseException) -> SystemException:
    """The failure for arguments whose own code raised while they were read (a mapping whose
    iteration raises): not the model's doing, since it sends JSON, so a system error. A stop
    raised there propagates."""
    stop = stop_in(exc)
    if stop is not None:
        raise stop
    return SystemException(
        name, f"the arguments could not be read: {type(exc).__name__}", cause=exc
    )
