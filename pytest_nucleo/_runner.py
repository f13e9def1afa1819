"""The boundary that runs tools: what the model reads for a call, and the retry signals.

:func:`run_tool` and :func:`arun_tool` take a tool (any callable, sync or async) and the
arguments a model sent, and return a :class:`ToolResult`: on success the value and its
deterministic text, on failure the exception and its ``explain_to_llm()`` text. Nothing a tool
raises escapes as an exception, except what must not be swallowed: ``KeyboardInterrupt``,
``SystemExit``, and a cancellation of the caller's own task. Any other ``BaseException`` a tool
raises (``GeneratorExit``, a ``CancelledError`` of its own, a custom subclass) is a bug of the
tool and becomes a :class:`SystemException`, in :func:`run_tool` and :func:`arun_tool` alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime
import decimal
import enum
import functools
import inspect
import json
import logging
import math
import sys
import threading
import traceback
import uuid
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import PurePath
from typing import Any, TypeVar, overload

from ._chain import find_in_chain, iter_chain, recognise_foreign, unwrap
from ._clock import SYSTEM_CLOCK, Clock
from ._exceptions import (
    InvalidInputException,
    JobCancelledException,
    JobTimeoutException,
    LLMReadableException,
    LLMReadableRuntimeException,
    SystemException,
    UncorrectableLLMException,
    UpstreamRetryException,
    check_seconds,
)
from ._http._retry_after import RETRY_AFTER_CAP
from ._text._message import described, message_of
from ._text._render import VALUE_LIMIT, clean_block, next_step, one_line, seconds
from ._text._secrets import redact
from .limits._failure import UpstreamFailure
from .limits._limiter import Permit, RateLimiter, Units
from .limits._refusal import LimiterRefusalException

logger = logging.getLogger("pytest_nucleo.runner")
# A library adds no handler but NullHandler: the application decides where records go.
logging.getLogger("pytest_nucleo").addHandler(logging.NullHandler())

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

DEFAULT_RETRIES = 3
DEFAULT_BACKOFF = 0.5
DEFAULT_MAX_BACKOFF = 30.0
_DEFAULTS = (DEFAULT_RETRIES, DEFAULT_BACKOFF, DEFAULT_MAX_BACKOFF)

DEFAULT_TEXT_LIMIT = 50_000
"""Most characters of a tool's value the model reads (about 12,000 tokens); past it the
middle is cut, and a note of about 250 characters says how much and how to ask for less.
Set per tool with ``@tool(text_limit=...)`` or ``run_tool(..., text_limit=...)``."""

_NEVER_CAUGHT = (KeyboardInterrupt, SystemExit)
"""What the runner lets through from a tool: the user or the process asked to stop."""


class RetriesExhaustedException(UncorrectableLLMException):
    """Raised by the runner: a tool kept raising a retry signal and the retry budget ran out,
    or the signal asked for a wait longer than the runner's cap.

    ``kind`` is the signal's kind ("rate limit", "overload", "transient error"), ``attempts``
    how many calls were made, ``retry_after`` the wait the last signal asked for (set only when
    it exceeded ``max_delay``, the longest the runner waits between attempts). The signal
    itself is the ``__cause__``; the model never reads it.
    """

    # Set by the constructor (through _keep); declared so that type checkers see them.
    component: str
    """The tool, as the runner names it."""
    kind: str
    """The retry signal's kind."""
    attempts: int
    """How many calls were made."""
    retry_after: float | None
    """The wait the last signal asked for, set only when it exceeded ``max_delay``."""
    max_delay: float | None
    """The longest the runner waits between attempts, set with ``retry_after``."""

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
        if retry_after is not None and max_delay is not None:
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
                f"not retried. {next_step(None)}"
            )
        else:
            technical = f"{name}: {what} signal after {attempts} attempt(s), retry budget spent"
            text = (
                f"The tool {name} hit a temporary upstream problem ({what}) on every attempt: "
                f"it was tried {tries}, with waits in between, and never succeeded. {next_step(None)}"
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
    left = 0
    for group in iter_chain(exc):  # a group's members are visited too
        if not isinstance(group, BaseExceptionGroup) or isinstance(
            group.__context__, asyncio.CancelledError
        ):
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


def _is_async(target: object) -> bool:
    target = _unwrapped(target)
    if inspect.iscoroutinefunction(target):
        return True
    if inspect.isfunction(target) or inspect.ismethod(target) or isinstance(target, type):
        return False
    return inspect.iscoroutinefunction(type(target).__call__)


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
    was cut and how to get the rest. Only the two windows are copied."""
    if len(text) <= limit:
        return text
    tail_size = limit // 4  # the end of a listing or a log matters, its head more
    head, tail = text[: limit - tail_size], text[len(text) - tail_size :]
    cut = len(text) - len(head) - len(tail)
    note = (
        f"[{cut:,} of its {len(text):,} characters cut from the middle of this result (this "
        f"tool shows at most {limit:,}), so only its beginning and its end are shown. To see "
        "the part you need, call the tool again with a narrower request (a filter, a smaller "
        "page or range).]"
    )
    return f"{head}\n\n{note}\n\n{tail}" if tail else f"{head}\n\n{note}"


# --- logging ---------------------------------------------------------------------------------


class _RedactedRecord(logging.LogRecord):
    """A record whose formatted traceback has its secrets masked (built only if formatted)."""

    _redacted: str | None = None

    @property
    def exc_text(self) -> str | None:
        if self._redacted is None and self.exc_info and self.exc_info[1] is not None:
            formatted = "".join(traceback.format_exception(self.exc_info[1]))
            self._redacted = redact(formatted.rstrip("\n"))
        return self._redacted

    @exc_text.setter
    def exc_text(self, value: str | None) -> None:
        if value is not None:
            self._redacted = redact(value)


_STAND_INS: weakref.WeakKeyDictionary[type[BaseException], type[Exception]] = (
    weakref.WeakKeyDictionary()
)


def _stand_in_class(original: type[BaseException]) -> type[Exception]:
    """An ``Exception`` class named like ``original``, so a logged copy reads like it."""
    made = _STAND_INS.get(original)
    if made is None:
        made = _STAND_INS[original] = type(
            original.__name__,
            (Exception,),
            {"__module__": original.__module__, "__qualname__": original.__qualname__},
        )
    return made


def _for_the_log(exc: BaseException, copies: dict[int, BaseException]) -> BaseException:
    """A copy of ``exc`` and its whole chain whose messages carry no secret.

    Handlers that rebuild a traceback from the exception object (rich's, for one) print each
    level's ``str()`` themselves, past any masking of the formatted text: a foreign level
    becomes a stand-in of the same class name with its message masked; one of the package's
    own keeps its class and fields (the report reads them). Tracebacks are kept, so the log
    still shows where it happened.
    """
    done = copies.get(id(exc))
    if done is not None:
        return done
    copy: BaseException
    if isinstance(exc, LLMReadableException | UpstreamRetryException):
        copy = BaseException.__new__(type(exc))
        copy.__dict__.update(exc.__dict__)
        copy.args = exc.args
    else:
        copy = _stand_in_class(type(exc))(redact(message_of(exc)))
    copies[id(exc)] = copy
    copy.__traceback__ = exc.__traceback__
    copy.__suppress_context__ = exc.__suppress_context__
    if exc.__cause__ is not None:
        copy.__cause__ = _for_the_log(exc.__cause__, copies)
    if exc.__context__ is not None:
        copy.__context__ = _for_the_log(exc.__context__, copies)
    return copy


def _log_failure(name: str, failure: LLMReadableException) -> None:
    if failure.is_correctable:
        # Correctable failures are the normal back-and-forth with the model: no stack trace.
        if _heard(logging.WARNING):
            logger.warning(
                "tool %s failed (correctable): %s",
                name,
                str(failure),
                extra={"nucleo_failure": failure},  # for the pytest plugin's strict mode
            )
        return
    if not _heard(logging.ERROR):
        return
    # Never the original object: whatever handler is installed reads the copy.
    logged = _for_the_log(failure, {})
    record = _RedactedRecord(
        logger.name,
        logging.ERROR,
        __file__,
        0,
        "tool %s failed: %s",
        (name, str(failure)),
        (type(logged), logged, logged.__traceback__),
        "run_tool",
    )
    logger.handle(record)


def _heard(level: int) -> bool:
    """Whether a record of ``level`` from the runner's logger would reach anything: a filter of
    the logger, or a handler on its way up that is not a ``NullHandler`` (the package's own,
    which an application that routes nowhere leaves alone). A failure is logged on every call
    that fails, a refusal of an open circuit in a few microseconds; building a record, and the
    redacted copy of the failure it carries, for no reader would cost several times that.
    Some readers take records before any handler (Sentry's logging integration replaces
    ``Logger.callHandlers``): when logging's own record path is not logging's, every record
    that passes the level is built."""
    if not logger.isEnabledFor(level):
        return False
    kind = type(logger)
    if logger.filters or not (_standard(kind.handle) and _standard(kind.callHandlers)):
        return True
    found = False
    current: logging.Logger | None = logger
    while current is not None:
        for handler in current.handlers:
            found = True
            if level >= handler.level and type(handler) is not logging.NullHandler:
                return True
        current = current.parent if current.propagate else None
    return not found  # no handler at all: logging's last resort writes the record to stderr


def _standard(method: Callable[..., Any]) -> bool:
    """Whether ``method`` of the runner logger's class is the logging module's own."""
    return getattr(method, "__module__", None) == "logging"


# --- arguments -------------------------------------------------------------------------------

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _listing(signature: inspect.Signature) -> str:
    shown = []
    for parameter in signature.parameters.values():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            shown.append("any other named parameter")
        elif parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            shown.append(f"{parameter.name} (optional, a list)")
        elif parameter.default is inspect.Parameter.empty:
            shown.append(f"{parameter.name} (required)")
        else:
            shown.append(f"{parameter.name} (optional)")
    return ", ".join(shown) if shown else "none"


def _missing(parameter: str, signature: inspect.Signature) -> InvalidInputException:
    failure = InvalidInputException(
        parameter, None, f"is required; the tool's parameters are: {_listing(signature)}"
    )
    # "got null" would be wrong: the model sent nothing at all for this parameter.
    failure.llm_message = clean_block(
        f"The required parameter '{one_line(parameter, VALUE_LIMIT)}' is missing. Call the tool "
        f"again with a value for it; the tool's parameters are: {_listing(signature)}."
    )
    return failure


def _bind(facts: _Facts, arguments: object) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Fit the model's arguments to the tool's signature, or raise InvalidInputException."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise InvalidInputException(
            "arguments",
            arguments,
            "must be a JSON object mapping each parameter name to its value",
        )
    for key in arguments:
        if not isinstance(key, str):
            raise InvalidInputException(
                "arguments", key, "parameter names must be strings, as in a JSON object"
            )
    signature = facts.signature
    if signature is None:
        return (), dict(arguments)
    if facts.simple:
        # Only named parameters: every name known and every required one present is a fit.
        for key, value in arguments.items():
            if key not in facts.names:
                raise InvalidInputException(
                    key,
                    value,
                    f"this tool has no parameter named '{key}'; its parameters are: "
                    f"{_listing(signature)}",
                )
        for name in facts.required:
            if name not in arguments:
                raise _missing(name, signature)
        return (), dict(arguments)
    parameters = signature.parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    for key, value in arguments.items():
        known = parameters.get(key)
        if (known is None or known.kind is inspect.Parameter.VAR_KEYWORD) and not takes_any:
            raise InvalidInputException(
                key,
                value,
                f"this tool has no parameter named '{key}'; its parameters are: "
                f"{_listing(signature)}",
            )
    star = next(
        (p for p in parameters.values() if p.kind is inspect.Parameter.VAR_POSITIONAL), None
    )
    spread = star is not None and star.name in arguments
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for parameter in parameters.values():
        name = parameter.name
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            if spread:
                items = arguments[name]
                if not isinstance(items, list | tuple):
                    raise InvalidInputException(name, items, "must be a list")
                args.extend(items)
        elif parameter.kind is inspect.Parameter.VAR_KEYWORD:
            continue
        elif name in arguments:
            if parameter.kind is inspect.Parameter.POSITIONAL_ONLY or (
                spread and parameter.kind in _POSITIONAL
            ):
                args.append(arguments[name])
            else:
                kwargs[name] = arguments[name]
        elif parameter.default is inspect.Parameter.empty:
            raise _missing(name, signature)
        elif parameter.kind is inspect.Parameter.POSITIONAL_ONLY or (
            spread and parameter.kind in _POSITIONAL
        ):
            args.append(parameter.default)  # keeps later positional values in their places
    if takes_any:
        kwargs.update(
            (key, value)
            for key, value in arguments.items()
            if key not in parameters or parameters[key].kind is inspect.Parameter.VAR_KEYWORD
        )
    try:
        signature.bind(*args, **kwargs)
    except TypeError as mismatch:
        raise InvalidInputException(
            "arguments", dict(arguments), f"they do not fit the tool's parameters ({mismatch})"
        ) from None
    return tuple(args), kwargs


@dataclasses.dataclass(frozen=True, slots=True)
class _Facts:
    """What the runner needs to know of a tool, worked out once per tool."""

    signature: inspect.Signature | None
    is_async: bool
    simple: bool  # only named parameters (no positional-only, no *args, no **kwargs)
    names: frozenset[str]
    required: tuple[str, ...]


_FACTS: weakref.WeakKeyDictionary[Any, _Facts] = weakref.WeakKeyDictionary()


def _facts(target: Callable[..., Any]) -> _Facts:
    """The tool's facts; cached, since a signature costs more than a whole refusal."""
    try:
        return _FACTS[target]
    except (KeyError, TypeError):
        pass
    try:
        signature: inspect.Signature | None = inspect.signature(target)
    except (TypeError, ValueError):  # some builtins have none: pass arguments as given
        signature = None
    parameters = signature.parameters.values() if signature is not None else ()
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    facts = _Facts(
        signature=signature,
        is_async=_is_async(target),
        simple=signature is not None and all(p.kind in named for p in parameters),
        names=frozenset(p.name for p in parameters),
        required=tuple(p.name for p in parameters if p.default is inspect.Parameter.empty),
    )
    with contextlib.suppress(TypeError):  # not weakly referenceable or not hashable
        _FACTS[target] = facts
    return facts


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


_Permits = list[tuple[RateLimiter, Permit]]


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
        if attempt >= self.retries:
            return self.exhausted(name, signal, attempt + 1)
        delay = min(self.backoff * 2.0**attempt, self.max_backoff)
        if signal.retry_after is not None:
            if signal.retry_after > self.max_backoff:
                return self.exhausted(name, signal, attempt + 1, signal.retry_after)
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
        self,
        name: str,
        signal: UpstreamRetryException,
        attempts: int,
        retry_after: float | None = None,
    ) -> RetriesExhaustedException:
        failure = RetriesExhaustedException(
            name,
            signal.kind,
            attempts,
            retry_after,
            self.max_backoff if retry_after is not None else None,
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
    from ._http._providers import sdk_retries  # imports no SDK: one of its errors exists already

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
        _log_failure(self.name, failure)
        return ToolResult(True, failure.explain_to_llm(), None, failure)

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

    @staticmethod
    def release(permits: _Permits) -> None:
        for limiter, permit in permits:
            limiter.release(permit)

    @staticmethod
    async def arelease(permits: _Permits) -> None:
        for limiter, permit in permits:
            await limiter.arelease(permit)

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
        failure, wait = self.news(permits, exc)
        for limiter, permit in permits:
            if failure is None:
                limiter.release(permit, retry_after=wait)
            else:
                limiter.record_failure(failure, permit)
        return self.next_step(exc, attempt)

    async def aafter_error(
        self, permits: _Permits, exc: BaseException, attempt: int
    ) -> ToolResult | float:
        """:meth:`after_error`, telling the limiters with their awaitable methods."""
        exc = recognise_foreign(exc, self.name)
        failure, wait = self.news(permits, exc)
        for limiter, permit in permits:
            if failure is None:
                await limiter.arelease(permit, retry_after=wait)
            else:
                await limiter.arecord_failure(failure, permit)
        return self.next_step(exc, attempt)

    @staticmethod
    def news(permits: _Permits, exc: BaseException) -> tuple[UpstreamFailure | None, float | None]:
        """What the limiters hear of a failed attempt: the upstream's failure, or nothing but
        a retry signal's suggested wait."""
        failure = UpstreamFailure.from_exception(exc) if permits else None
        signal = find_in_chain(exc, UpstreamRetryException)
        # A signal's suggested wait holds the limiters too: no other call goes out before it
        # (capped like a parsed Retry-After, so a wild value cannot switch a tool off for days).
        wait = None
        if signal is not None and signal.retry_after is not None:
            wait = min(signal.retry_after, RETRY_AFTER_CAP)
        if failure is not None and wait is not None and (failure.retry_after or 0.0) < wait:
            failure = dataclasses.replace(failure, retry_after=wait)
        return failure, wait

    def next_step(self, exc: BaseException, attempt: int) -> ToolResult | float:
        signal = find_in_chain(exc, UpstreamRetryException)
        if signal is None:
            return self.failed(self.readable(exc))
        outcome = self.budget.after(self.name, signal, attempt)
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
            return self.failed(self.readable(exc))
        while True:
            if cancel is not None and cancel.cancelled:
                return self.failed(JobCancelledException())
            permits: _Permits = []
            try:
                for limiter in self.limiters:
                    permits.append((limiter, limiter.acquire(units)))
            except LimiterRefusalException as refusal:
                self.release(permits)
                return self.failed(refusal)
            except BaseException:
                self.release(permits)
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
                self.release(permits)
                raise
            except BaseException as exc:
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
            return self.failed(self.readable(exc))
        while True:
            permits: _Permits = []
            try:
                for limiter in self.limiters:
                    permits.append((limiter, await limiter.aacquire(units)))
            except LimiterRefusalException as refusal:
                await self.arelease(permits)
                return self.failed(refusal)
            except BaseException:
                await self.arelease(permits)
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
                await self.arelease(permits)
                raise
            except BaseException as exc:
                task = asyncio.current_task()
                if task is not None:
                    for _ in range(_requests_left_by_task_groups(exc, task)):
                        task.uncancel()
                if task is None or task.cancelling():
                    # This task is being cancelled (the runner's timeout or token, or the
                    # caller's own cancellation): the stop is the outcome, whatever the tool
                    # raised on its way out (a "Statement closed" from its cleanup, say).
                    await self.arelease(permits)
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

    async def arun_guarded(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        timeout: float | None,
        cancel: CancelToken | None,
    ) -> ToolResult:
        loop = asyncio.get_running_loop()
        inner = loop.create_task(self.arun(args, kwargs))
        stopped: list[str] = []

        def stop_for(reason: str) -> None:
            # Cancel at once, so a stop that came first wins even if the call would finish
            # in the same loop iteration.
            if not inner.done() and not stopped:
                stopped.append(reason)
                inner.cancel()

        timer = (
            self.clock.call_later(timeout, functools.partial(stop_for, "timeout"))
            if timeout is not None
            else None
        )
        unsubscribe = (
            cancel._subscribe(loop, functools.partial(stop_for, "cancel"))
            if cancel is not None
            else None
        )
        try:
            # Awaiting the task passes a cancellation of the caller's own task on to the call.
            result = await inner
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if not stopped or (task is not None and task.cancelling()):
                raise  # the caller's task was cancelled: never swallow that
        finally:
            if timer is not None:
                timer.cancel()
            if unsubscribe is not None:
                unsubscribe()
        if not stopped:
            return result
        failure: LLMReadableException
        if stopped[0] == "timeout":
            assert timeout is not None
            failure = JobTimeoutException(timeout)
        else:
            failure = JobCancelledException()
        if self.raised_while_stopped is not None:
            # Logged as the stop's cause, so the record blames the stop, not the tool.
            failure.__cause__ = self.raised_while_stopped
        return self.failed(failure)


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
    - Nothing escapes but ``KeyboardInterrupt`` and ``SystemExit``: any other exception a tool
      raises (a ``BaseException`` or a ``CancelledError`` of its own included), or its value
      raises while being serialized, becomes a failure.

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
    if cancel is not None and cancel.cancelled:
        return call.failed(JobCancelledException())
    if timeout is None and cancel is None:
        return await call.arun(args, kwargs)
    return await call.arun_guarded(args, kwargs, timeout, cancel)


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
