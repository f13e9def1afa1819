"""What a call produces, low enough that every piece of the runner imports it: the
:class:`ToolResult` the model reads, the :class:`RetriesExhaustedException` that ends a spent
retry budget, the :class:`CancelToken` that stops a call, the :class:`ToolInfo` that ``@tool``
attaches (and the checks of its fields), and the success text: a value serialized and bounded.

The failure texts come from ``pytest_nucleo._exceptions``; the runner that produces these is
``_call`` (its budget ``_retries``), and the ``tool`` decorator that attaches a ``ToolInfo`` is in
``_tools``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime
import decimal
import enum
import functools
import json
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import PurePath
from typing import Any

from pytest_nucleo._exceptions import LLMReadableException, UncorrectableLLMException
from pytest_nucleo._text._render import VALUE_LIMIT, encodable, next_step, one_line, seconds
from pytest_nucleo.limits._limiter import RateLimiter
from pytest_nucleo.limits._units import Units

DEFAULT_TEXT_LIMIT = 50_000
"""Most characters of a tool's value the model reads (about 12,000 tokens); past it the
middle is cut, and a note of about 250 characters says how much and how to ask for less.
Set per tool with ``@tool(text_limit=...)`` or ``run_tool(..., text_limit=...)``."""


class RetriesExhaustedException(UncorrectableLLMException):
    """Raised by the runner: a tool kept raising a retry signal and the retry budget ran out,
    or the signal asked for a wait longer than the runner's cap.

    ``kind`` is the signal's kind ("rate limit", "overload", "transient error"), ``attempts``
    how many calls were made, ``retry_after`` the wait the last signal asked for (None when it
    asked for none), ``max_delay`` the longest the runner waits between attempts, set when the
    call was given up because that wait was longer. The text states the wait the service asked
    for, however the call ended. The signal itself is the ``__cause__``; the model never reads
    it.
    """

    # Set by the constructor (through _keep); declared so that type checkers see them.
    component: str
    """The tool, as the runner names it."""
    kind: str
    """The retry signal's kind."""
    attempts: int
    """How many calls were made."""
    retry_after: float | None
    """The wait the last signal asked for, or None."""
    max_delay: float | None
    """The longest the runner waits between attempts, set when ``retry_after`` exceeded it."""

    def __init__(
        self,
        component: str,
        kind: str,
        attempts: int,
        retry_after: float | None = None,
        max_delay: float | None = None,
    ) -> None:
        name = one_line(component, VALUE_LIMIT)
        what = one_line(kind, VALUE_LIMIT)
        tries = "once" if attempts == 1 else f"{attempts} times"
        if retry_after is not None and max_delay is not None and retry_after > max_delay:
            technical = (
                f"{name}: {what} signal asked for {seconds(retry_after)}, over the runner's "
                f"cap of {seconds(max_delay)}, after {attempts} attempt(s)"
            )
            text = (
                f"The tool {name} hit a temporary upstream problem ({what}), and the service "
                f"asked for a longer pause than the tool waits, so the call was given up after "
                f"being tried {tries}. {next_step(retry_after)}"
            )
        elif attempts == 1:  # no retries allowed: there were no waits, nor other attempts
            technical = f"{name}: {what} signal after 1 attempt, no retries allowed"
            text = (
                f"The tool {name} hit a temporary upstream problem ({what}), and the call was "
                f"not retried. {next_step(retry_after)}"
            )
        else:
            technical = f"{name}: {what} signal after {attempts} attempt(s), retry budget spent"
            text = (
                f"The tool {name} hit a temporary upstream problem ({what}) on every attempt: "
                f"it was tried {tries}, with waits in between, and never succeeded. "
                f"{next_step(retry_after)}"
            )
        super().__init__(technical, llm_message=text)
        self._keep(
            component=component,
            kind=kind,
            attempts=attempts,
            retry_after=retry_after,
            max_delay=max_delay,
        )


@dataclasses.dataclass(frozen=True, slots=True)
class ToolResult:
    """The outcome of one tool call, as the model will see it.

    ``is_error`` marks a failure; ``text`` is what the model reads (the serialized value, or the
    failure's ``explain_to_llm()``); ``value`` is what the tool returned (None on failure);
    ``exception`` the LLM-readable failure (None on success).
    """

    is_error: bool
    """Whether the call failed."""
    text: str
    """What the model reads: the serialized value, or the failure's ``explain_to_llm()``."""
    value: Any = None
    """What the tool returned; None on failure."""
    exception: LLMReadableException | None = None
    """The LLM-readable failure; None on success."""


class CancelToken:
    """Ask the runner to stop a call: pass ``cancel=token`` to :func:`arun_tool` (or
    :func:`run_tool`) and call :meth:`cancel` from any thread or task.

    An async call is interrupted at once and ends as :class:`JobCancelledException`. A sync
    call cannot be interrupted mid-body (Python cannot stop a thread): :func:`run_tool` checks
    the token before each attempt and before each wait between attempts. One token may serve
    many calls; once cancelled it stays cancelled.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._subscribers: list[Callable[[], None]] = []

    @property
    def cancelled(self) -> bool:
        """Whether :meth:`cancel` was called."""
        return self._event.is_set()

    def cancel(self) -> None:
        """Stop the calls that use this token, from any thread or task; calling it again does
        nothing."""
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            subscribers, self._subscribers = self._subscribers, []
        for notify in subscribers:
            notify()

    def _subscribe(
        self, loop: asyncio.AbstractEventLoop, callback: Callable[[], None]
    ) -> Callable[[], None]:
        """Run ``callback`` in ``loop`` once cancelled; return a function that unsubscribes."""

        def notify() -> None:
            if not loop.is_closed():
                loop.call_soon_threadsafe(callback)

        with self._lock:
            if not self._event.is_set():
                self._subscribers.append(notify)
                return functools.partial(self._unsubscribe, notify)
        loop.call_soon(callback)
        return lambda: None

    def _unsubscribe(self, notify: Callable[[], None]) -> None:
        with self._lock, contextlib.suppress(ValueError):
            self._subscribers.remove(notify)

    def __repr__(self) -> str:
        return f"CancelToken(cancelled={self.cancelled})"


@dataclasses.dataclass(frozen=True, slots=True)
class ToolInfo:
    """What ``@tool`` attached to a function: the name the model knows it by, its limiters,
    its most characters of a success text (None: :data:`DEFAULT_TEXT_LIMIT`) and what a call
    costs its limiters (``cost``, called with the call's arguments)."""

    name: str
    """The name the model knows the tool by."""
    limiters: tuple[RateLimiter, ...] = ()
    """The limiters asked before each call."""
    text_limit: int | None = None
    """The most characters of a value's text the model reads (a cut one gets a note besides);
    None: :data:`DEFAULT_TEXT_LIMIT`."""
    cost: Cost | None = None
    """What a call costs its limiters, called with the call's arguments; None: one request."""

    @staticmethod
    def of(target: object) -> ToolInfo | None:
        """What ``@tool`` attached to ``target`` (through ``functools.partial``), or None."""
        info = getattr(_unwrapped(target), _INFO, None)
        return info if isinstance(info, ToolInfo) else None


_INFO = "__nucleo_tool__"

Cost = Callable[..., Units]
"""What a call takes of its limiters, computed from the call's arguments (see ``@tool``)."""


def _check_cost(cost: Cost | None) -> Cost | None:
    if cost is not None and not callable(cost):
        raise TypeError(
            f"cost must be a function of the tool's arguments returning the units a call "
            f"takes (a whole number, or budget names to whole numbers); got a "
            f"{type(cost).__name__}"
        )
    return cost


def _check_limiters(limiters: Iterable[RateLimiter]) -> tuple[RateLimiter, ...]:
    if isinstance(limiters, RateLimiter):
        raise TypeError("limiters must be a list of RateLimiter, not a single one: use [limiter]")
    if isinstance(limiters, str | bytes) or not isinstance(limiters, Iterable):
        raise TypeError(
            f"limiters must be a list of RateLimiter instances, such as [limiter]; got "
            f"{type(limiters).__name__}"
        )
    checked = tuple(limiters)
    for limiter in checked:
        if not isinstance(limiter, RateLimiter):
            raise TypeError(
                f"limiters must be RateLimiter instances; got a {type(limiter).__name__}"
            )
    return checked


def _check_text_limit(text_limit: int | None) -> None:
    if text_limit is not None and not (
        isinstance(text_limit, int) and not isinstance(text_limit, bool) and text_limit >= 1
    ):
        raise ValueError(
            f"text_limit must be a whole number of characters >= 1, or None for the default "
            f"of {DEFAULT_TEXT_LIMIT:,}; got {text_limit!r}"
        )


def _unwrapped(target: object) -> object:
    """The function under any ``functools.partial`` layers."""
    while isinstance(target, functools.partial):
        target = target.func
    return target


def _name_of(target: object) -> str:
    info = ToolInfo.of(target)
    if info is not None:
        return info.name
    target = _unwrapped(target)
    named = getattr(target, "__name__", None)
    return named if isinstance(named, str) else type(target).__name__


# --- success text ----------------------------------------------------------------------------


def _jsonable(value: object) -> object:
    """``default=`` for json.dumps: the few common types JSON lacks, each in one fixed form."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    dump = getattr(value, "model_dump", None)  # pydantic v2 models, without importing pydantic
    if callable(dump) and not isinstance(value, type):
        return dump(mode="json")
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal | uuid.UUID | PurePath):
        return str(value)
    if isinstance(value, set | frozenset):
        return sorted(value, key=_serialize)
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, Sequence) and not isinstance(value, str | bytes | bytearray):
        return list(value)
    raise _NoJSONForm(f"a value of type {type(value).__name__} has no JSON form")


class _NoJSONForm(TypeError):
    """A success value the runner has no text for (an image, a framework's own object)."""


def _serialize(value: object) -> str:
    """The success text: a string as it is, anything else as sorted-key, non-ASCII-kept JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=_jsonable)


def _bounded_success(text: str, limit: int) -> str:
    """``text`` when it fits ``limit``; else its head and tail around a note saying how much
    was cut and how to get the rest. Only the two windows are copied. Lone surrogates become
    U+FFFD, so the text encodes as UTF-8."""
    if len(text) <= limit:
        return encodable(text)
    tail_size = limit // 4  # the end of a listing or a log matters, its head more
    head, tail = text[: limit - tail_size], text[len(text) - tail_size :]
    cut = len(text) - len(head) - len(tail)
    note = (
        f"[{cut:,} of its {len(text):,} characters cut from the middle of this result (this "
        f"tool shows at most {limit:,}), so only its beginning and its end are shown. To see "
        "the part you need, call the tool again with a narrower request (a filter, a smaller "
        "page or range).]"
    )
    return encodable(f"{head}\n\n{note}\n\n{tail}" if tail else f"{head}\n\n{note}")
