"""The runner's log: its logger (``pytest_nucleo.runner``, which users configure), the record of
a failed call, and the copies of a failure a handler reads, with every secret masked.

:func:`_log_failure` is called by the call's lifecycle (``_call``) for every failure it returns;
the retry budget (``_retries``) logs its waits on the same logger.
"""

from __future__ import annotations

import logging
import traceback
import weakref
from collections.abc import Callable
from typing import Any

from pytest_nucleo._causes import MAX_CHAIN, STOPS, attribute, is_a
from pytest_nucleo._exceptions import LLMReadableException, UpstreamRetryException
from pytest_nucleo._text._message import message_of
from pytest_nucleo._text._secrets import redact

logger = logging.getLogger("pytest_nucleo.runner")


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


LOG_MESSAGE_LIMIT = 10_000
"""Most characters of a foreign exception's message the log copy keeps (cut before it is
masked, with a note saying how much was cut): a 100 MB message must not cost seconds of
masking in every failed call that is logged."""


def _log_message(exc: BaseException) -> str:
    """The masked message of ``exc`` for its log copy, at most :data:`LOG_MESSAGE_LIMIT`
    characters of it (with a note on the rest)."""
    try:
        text = message_of(exc)
    except BaseException as error:  # a __str__ that raises a GeneratorExit, say
        if is_a(error, STOPS):
            raise
        text = f"(the message of this {type(exc).__name__} could not be read)"
    if len(text) <= LOG_MESSAGE_LIMIT:
        return redact(text)
    cut = len(text) - LOG_MESSAGE_LIMIT
    return f"{redact(text[:LOG_MESSAGE_LIMIT])}... ({cut} more characters cut)"


def _copy_of(exc: BaseException) -> BaseException:
    """One level of the log copy, without its links (see :func:`_for_the_log`)."""
    if is_a(exc, (LLMReadableException, UpstreamRetryException)):
        try:
            copy = BaseException.__new__(type(exc))
            copy.__dict__.update(exc.__dict__)
            copy.args = exc.args
            return copy
        except Exception:  # a class of the set whose own state cannot be read or copied
            pass
    return _stand_in_class(type(exc))(_log_message(exc))


def _for_the_log(exc: BaseException) -> BaseException:
    """A copy of ``exc`` and its chain whose messages carry no secret.

    Handlers that rebuild a traceback from the exception object (rich's, for one) print each
    level's ``str()`` themselves, past any masking of the formatted text: a foreign level
    becomes a stand-in of the same class name with its message masked; one of the package's
    own keeps its class and fields (the report reads them). Tracebacks are kept, so the log
    still shows where it happened.

    Built without recursion and bounded as the chain walk is: at most ``MAX_CHAIN`` levels
    are copied (a chain of 100,000 links is cut there), and a link whose attribute raises is
    left out.
    """
    copies: dict[int, BaseException] = {}
    links: list[tuple[BaseException, BaseException | None, BaseException | None]] = []
    stack = [exc]
    while stack:
        current = stack.pop()
        if id(current) in copies:
            continue
        if len(copies) >= MAX_CHAIN:
            break
        copy = copies[id(current)] = _copy_of(current)
        try:
            copy.__traceback__ = attribute(current, "__traceback__")
        except TypeError:  # a __traceback__ property that gives no traceback
            copy.__traceback__ = None
        copy.__suppress_context__ = attribute(current, "__suppress_context__") is True
        cause, context = attribute(current, "__cause__"), attribute(current, "__context__")
        cause = cause if is_a(cause, BaseException) else None
        context = context if is_a(context, BaseException) else None
        links.append((current, cause, context))
        stack.extend(link for link in (context, cause) if link is not None)
    for original, cause, context in links:
        copy = copies[id(original)]
        # A link past the bound is left out: the copy's chain ends there.
        copy.__cause__ = copies.get(id(cause)) if cause is not None else None
        copy.__context__ = copies.get(id(context)) if context is not None else None
        copy.__suppress_context__ = attribute(original, "__suppress_context__") is True
    return copies[id(exc)]


def _log_failure(name: str, failure: LLMReadableException) -> None:
    if attribute(failure, "is_correctable") is True:
        # Correctable failures are the normal back-and-forth with the model: no stack trace.
        if _heard(logging.WARNING):
            logger.warning(
                "tool %s failed (correctable): %s",
                name,
                _log_message(failure),
                extra={"nucleo_failure": failure},  # for the pytest plugin's strict mode
            )
        return
    if not _heard(logging.ERROR):
        return
    # Never the original object: whatever handler is installed reads the copy.
    logged = _for_the_log(failure)
    record = _RedactedRecord(
        logger.name,
        logging.ERROR,
        __file__,
        0,
        "tool %s failed: %s",
        (name, _log_message(failure)),
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
