"""What every adapter shares: run a tool through the runner, hand failures to a framework.

An adapter wraps a tool function once. The wrapper keeps the function's name, docstring and
signature (frameworks build their argument schema from it), runs every call through
:func:`run_tool` / :func:`arun_tool` (argument checks, limiters, retry signals, logging, and the
SystemException text for anything outside the set) with the options the user gave the adapter
(:class:`RunnerOptions`), hands a success to the adapter's ``on_success(result)`` and a failure
to its ``on_failure(result)``, which raises or returns whatever the framework's error channel is.

A framework's own error type, the one its tools raise to send the model a message (MCP's
``ToolError``, LangChain's ``ToolException``, pydantic-ai's ``ModelRetry`` and ``ToolFailed``),
is read as that message (:func:`reading_own_errors`): the model reads at least what the plain
framework would send, never the SystemException text.

What a success reads as is decided once, here (:func:`success_text_unless`): the runner's text
(a string as it is, anything else as sorted-key JSON, bounded by ``text_limit``), so a value
reaches the model in the same shape under every framework, unless the framework has a native
form for it (an image, a file, its own result object), which it then converts itself.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NoReturn, TypedDict, TypeVar

from pytest_nucleo._clock import Clock
from pytest_nucleo._exceptions import (
    CorrectableRuntimeLLMException,
    InvalidInputException,
    LLMReadableException,
    LLMReadableRuntimeException,
    UncorrectableRuntimeLLMException,
    check_seconds,
)
from pytest_nucleo._runner._binding import _missing
from pytest_nucleo._runner._log import _log_failure
from pytest_nucleo._runner._results import (
    DEFAULT_TEXT_LIMIT,
    CancelToken,
    ToolResult,
    _bounded_success,
    _check_limiters,
    _check_text_limit,
    _name_of,
    _NoJSONForm,
    _serialize,
)
from pytest_nucleo._runner._retries import (
    DEFAULT_BACKOFF,
    DEFAULT_MAX_BACKOFF,
    DEFAULT_RETRIES,
    _check_options,
)
from pytest_nucleo._runner._tools import arun_tool, run_sync, run_tool
from pytest_nucleo._text._render import encodable
from pytest_nucleo.limits._limiter import RateLimiter

T = TypeVar("T")

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)

OnFailure = Callable[[ToolResult], Any]
OnSuccess = Callable[[ToolResult], Any]
ReadOwnError = Callable[[BaseException], LLMReadableRuntimeException | None]
"""The failure an exception of the framework's own type for a message to the model means
(:func:`own_error_failure`), or None for any other exception."""


class ToolFailureText(str):
    """A failed call's result where the framework has no error flag the model reads (the
    OpenAI Agents SDK, LlamaIndex): a ``str`` of exactly the text the model reads, plus the
    failure it explains, so your code can test ``isinstance(output, ToolFailureText)`` and
    read ``.exception``.
    """

    exception: LLMReadableException | None
    """The failure the text explains; None when there was no exception to keep (a
    framework's own error turned into text)."""

    def __new__(cls, text: str, exception: LLMReadableException | None = None) -> ToolFailureText:
        # The common exit of the failure texts handed to a framework: encodable as UTF-8.
        made = super().__new__(cls, encodable(text))
        made.exception = exception
        return made

    def __reduce__(self) -> tuple[Any, ...]:
        # Keep the type and the failure through copy and pickle (frameworks deep-copy items).
        return (type(self), (str(self), self.exception))


class RunnerOptions(TypedDict, total=False):
    """The runner's per-tool options, as every adapter takes them (all optional).

    ``name`` is the name the model calls the tool by and the one its failure texts use;
    ``limiters``, ``retries``, ``backoff``, ``max_backoff``, ``clock``, ``cancel`` and
    ``text_limit`` mean what they mean for :func:`~pytest_nucleo.run_tool`; ``timeout`` bounds
    each call as for :func:`~pytest_nucleo.arun_tool` (a sync tool with a timeout runs in a
    worker thread under the framework's async path).
    """

    name: str
    """The name the model calls the tool by, and the one its failure texts use."""
    limiters: Iterable[RateLimiter]
    """The rate limiters asked before each call, as for :func:`~pytest_nucleo.run_tool`."""
    retries: int
    """Attempts after the first on a retry signal, as for :func:`~pytest_nucleo.run_tool`."""
    backoff: float
    """The first wait between attempts, in seconds, doubled each time."""
    max_backoff: float
    """The longest wait between attempts, in seconds."""
    timeout: float
    """Seconds each call may take, as for :func:`~pytest_nucleo.arun_tool`."""
    cancel: CancelToken
    """A :class:`~pytest_nucleo.CancelToken` that stops the call."""
    clock: Clock
    """The clock the runner waits on (a :class:`~pytest_nucleo.FakeClock` in tests)."""
    text_limit: int
    """The most characters of a success text."""


RUNNER_OPTIONS = tuple(RunnerOptions.__annotations__)


def check_runner_options(options: Mapping[str, Any], where: str) -> RunnerOptions:
    """``options`` checked once, when the tool is wrapped: an unknown name or a bad value is
    refused then, not at the model's first call."""
    unknown = sorted(set(options) - set(RUNNER_OPTIONS))
    if unknown:
        raise TypeError(
            f"{where} got an unknown option {', '.join(map(repr, unknown))}; the runner's "
            f"options are: {', '.join(RUNNER_OPTIONS)}"
        )
    checked: dict[str, Any] = dict(options)
    name = checked.get("name")
    if name is not None and not (isinstance(name, str) and name.strip()):
        raise ValueError(f"name must be a non-empty string; got {name!r}")
    if "limiters" in checked:
        limiters = checked["limiters"]
        if not isinstance(limiters, Iterable):
            raise TypeError(
                f"limiters must be a list of RateLimiter; got a {type(limiters).__name__}"
            )
        checked["limiters"] = _check_limiters(limiters)
    _check_options(
        checked.get("retries", DEFAULT_RETRIES),
        checked.get("backoff", DEFAULT_BACKOFF),
        checked.get("max_backoff", DEFAULT_MAX_BACKOFF),
    )
    check_seconds(checked.get("timeout"), "timeout")
    _check_text_limit(checked.get("text_limit"))
    cancel = checked.get("cancel")
    if cancel is not None and not isinstance(cancel, CancelToken):
        raise TypeError(
            f"cancel must be a pytest_nucleo.CancelToken; got a {type(cancel).__name__}"
        )
    clock = checked.get("clock")
    if clock is not None and not isinstance(clock, Clock):
        raise TypeError(
            "clock must be a Clock (monotonic, sleep, asleep and call_later: a SystemClock, a "
            f"FakeClock or your own); got a {type(clock).__name__}"
        )
    return checked  # type: ignore[return-value]  # the keys were checked above


class RaisedFailure(Exception):
    """The runner's failure on its way through a framework whose tools report a failure by
    raising (a callback, middleware or hook of the adapter's then answers it): it carries the
    runner's :class:`ToolResult`, and its message is the text, so even a handler of the user's
    own that sends ``str(error)`` sends the right one."""

    def __init__(self, result: ToolResult) -> None:
        super().__init__(result.text)
        self.result = result


def raise_failure(result: ToolResult) -> NoReturn:
    """``on_failure`` raising :class:`RaisedFailure`."""
    raise RaisedFailure(result)


def passing_value(result: ToolResult) -> Any:
    """``on_success`` handing the tool's value to the framework unchanged."""
    return result.value


def success_text_unless(native: Callable[[object], bool]) -> OnSuccess:
    """``on_success`` handing the framework the runner's text, or the value itself when
    ``native(value)`` says the framework has its own form for it (an image, a file)."""

    def deliver(result: ToolResult) -> Any:
        return result.value if native(result.value) else result.text

    return deliver


def success_text(value: object, text_limit: int | None = None) -> str:
    """The runner's text for a success ``value`` outside a call (a part of what a tool
    returned): a string as it is, anything else as sorted-key JSON (``str()`` for a value with
    no JSON form), cut in the middle past ``text_limit``."""
    try:
        text = _serialize(value)
    except _NoJSONForm:
        text = str(value)
    return _bounded_success(text, DEFAULT_TEXT_LIMIT if text_limit is None else text_limit)


def own_error_failure(
    exc: BaseException, *, correctable: bool = True
) -> LLMReadableRuntimeException | None:
    """The failure of the set a framework's own error means: its message, word for word (cleaned
    and masked like every text), or None for an empty message.

    Correctable unless the framework's type says the failure is final (pydantic-ai's
    ``ToolFailed``): such an error says only what went wrong, in the tool author's words, and
    the plain framework sends just those; the model may act on them (other arguments, another
    way), and "may be correctable" is the hint that claims the least. An empty message says
    nothing; the runner then treats the error as any foreign one.
    """
    message = str(exc)
    if not message.strip():
        return None
    kind = CorrectableRuntimeLLMException if correctable else UncorrectableRuntimeLLMException
    return kind(message)


def catching(
    func: Callable[..., Any],
    kinds: type[Exception] | tuple[type[Exception], ...],
    handle: Callable[[Exception], Any],
) -> Callable[..., Any]:
    """``func`` (sync or async, like ``func``) with an exception of ``kinds`` it raises given
    to ``handle``, inside the ``except`` clause: what ``handle`` returns is the call's result,
    what it raises (a bare ``raise`` for the exception itself) is the call's exception."""
    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def acall(*args: Any, **kwargs: Any) -> Any:
            try:
                return await func(*args, **kwargs)
            except kinds as exc:
                return handle(exc)

        return acall

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except kinds as exc:
            return handle(exc)

    return call


def reading_own_errors(func: Callable[..., Any], read: ReadOwnError) -> Callable[..., Any]:
    """``func`` (sync or async) with the framework's own error read as the failure ``read``
    says (:func:`own_error_failure`) before the runner sees it, the error kept as the cause.
    Other exceptions pass unchanged."""

    def reread(exc: Exception) -> NoReturn:
        failure = read(exc)
        if failure is None:
            raise  # inside catching's except clause: exc itself, as it was raised
        raise failure from exc

    return catching(func, Exception, reread)


@dataclasses.dataclass(frozen=True, slots=True)
class _PassedOn:
    """An exception of the framework's own control flow the tool raised (an interrupt that
    asks a human, a stop), on its way past the runner as a value: the runner neither logs it
    nor turns it into a failure, and it is raised again, unchanged, once out of the runner."""

    exception: Exception


def _passing_on(func: Callable[..., Any], kinds: tuple[type[Exception], ...]) -> Callable[..., Any]:
    """``func`` (sync or async) returning a raised exception of ``kinds`` as a :class:`_PassedOn`."""
    return catching(func, kinds, _PassedOn)


def through_runner(
    func: Callable[..., Any],
    on_failure: OnFailure,
    *,
    on_success: OnSuccess = passing_value,
    options: RunnerOptions | None = None,
    context: bool = False,
    called_name: Callable[[Callable[..., Any], dict[str, Any]], str | None] | None = None,
    own_error: ReadOwnError | None = None,
    passes: tuple[type[Exception], ...] = (),
) -> Callable[..., Any]:
    """A wrapper of ``func`` (sync or async, like ``func``) that runs it through the runner.

    Frameworks call it with the model's arguments by name; code (and the Agents SDK) may pass
    them by position too, as to ``func`` itself. ``options`` are the runner's
    (:func:`check_runner_options` them first); with a ``timeout`` the wrapper of a sync
    ``func`` is async, since only :func:`arun_tool` can stop a call. With ``context`` the
    wrapper's first positional argument is the framework's context object, passed on to
    ``func`` as its first argument and hidden from the runner (it checks the model's
    arguments only). ``called_name``, given the wrapper and the named arguments of a call (it may take out
    what the framework passed for it alone), returns the name the framework called the tool by
    when that can differ from the wrapper's own (a name given to the framework's decorator),
    or None; the failure texts then use it. ``own_error`` reads the framework's own error type
    (see :func:`reading_own_errors`). ``passes``: the framework's own control flow (an
    interrupt for a human, a stop), exceptions that reach the framework unchanged, never a
    failure the model reads."""
    opts: dict[str, Any] = dict(options or {})
    name = opts.pop("name", None) or _name_of(func)
    timeout = opts.pop("timeout", None)
    try:
        parameters = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):  # no signature to read: arguments go by name only
        parameters = []
    if context and parameters:
        parameters = parameters[1:]
    positional = [p.name for p in parameters if p.kind in _POSITIONAL]
    star = next((p.name for p in parameters if p.kind is inspect.Parameter.VAR_POSITIONAL), None)

    def by_name(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        # Only positions are resolved here: every named argument, known or not, goes to the
        # runner, which answers one that does not fit with a correctable failure. Extra
        # positions fill a *args parameter, as a list (how the model would send them).
        named = dict(zip(positional, args, strict=False))
        extra = list(args[len(positional) :])
        if extra:
            if star is None:
                raise TypeError(
                    f"{_name_of(func)}() takes {len(positional)} positional arguments but "
                    f"{len(args)} were given"
                )
            named[star] = extra
        twice = sorted(named.keys() & kwargs.keys())
        if twice:
            raise TypeError(f"{_name_of(func)}() got multiple values for {', '.join(twice)}")
        return {**named, **kwargs}

    runnable = func if own_error is None else reading_own_errors(func, own_error)
    if passes:
        runnable = _passing_on(runnable, passes)

    def target(args: tuple[Any, ...]) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        if not context:
            return runnable, args
        if not args:
            raise TypeError(f"{name}() takes the framework's context as its first argument")
        # The runner reads the tool's name, options and signature through a partial.
        return functools.partial(runnable, args[0]), args[1:]

    def outcome(result: ToolResult) -> Any:
        if result.is_error:
            return on_failure(result)
        if type(result.value) is _PassedOn:
            raise result.value.exception
        return on_success(result)

    wrapper: Callable[..., Any]
    if inspect.iscoroutinefunction(func) or timeout is not None:

        @functools.wraps(func)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            tool, rest = target(args)
            called = called_name(wrapper, kwargs) if called_name else None
            result = await arun_tool(
                tool,
                by_name(rest, kwargs),
                name=called or name,
                timeout=timeout,
                str_fallback=True,
                **opts,
            )
            return outcome(result)

        wrapper = run_async
    else:

        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            tool, rest = target(args)
            called = called_name(wrapper, kwargs) if called_name else None
            arguments = by_name(rest, kwargs)
            result = run_tool(tool, arguments, name=called or name, str_fallback=True, **opts)
            return outcome(result)

        wrapper = run
    # Frameworks register a tool under its __name__: make it the runner's name (the adapter's
    # name=, else @tool(name=...)), the one the failure texts use, so the model sees one name.
    wrapper.__name__ = name
    return wrapper


def sync_entry(wrapper: Callable[..., Any]) -> Callable[..., Any]:
    """A sync function running an async ``wrapper`` to its end, for a framework's sync path
    (not under a running event loop, where the framework's async path is the one to use)."""

    @functools.wraps(wrapper)
    def run(*args: Any, **kwargs: Any) -> Any:
        return run_sync(
            lambda: wrapper(*args, **kwargs),
            refusal=f"{wrapper.__name__} runs under a timeout: call it through the framework's "
            "async path (ainvoke) under a running event loop",
        )

    return run


# -- what several adapters need from the runner, in one place --------------------------------

tool_name = _name_of
"""The name the runner gives a tool (``@tool(name=...)``, else ``__name__``): the name the
SystemException text uses, so an adapter registers the tool under the same one."""

log_failure = _log_failure
"""Log a failure the runner never saw (rejected by the framework first) as the runner would."""


def schema_failure(
    signature: inspect.Signature, errors: Sequence[Mapping[str, Any]]
) -> InvalidInputException:
    """The correctable failure for arguments a framework's schema rejected before the runner
    saw them (pydantic's ``errors()``): the first error, naming its top-level parameter, in the
    runner's own words for a missing one, with any nested location in the rule."""
    if not errors:
        return InvalidInputException(
            "arguments", None, "must be a JSON object whose fields match the tool's parameters"
        )
    first = errors[0]
    location = tuple(first.get("loc", ()))
    parameter = str(location[0]) if location else "arguments"
    if first.get("type") == "missing" and len(location) == 1:
        return _missing(parameter, signature)
    rule = str(first.get("msg", "is not valid"))
    if len(location) > 1:
        rule = f"{rule} (at {'.'.join(str(part) for part in location[1:])})"
    return InvalidInputException(parameter, first.get("input"), rule)
