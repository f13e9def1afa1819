"""The helpers that turn whatever a tool called into what the model reads, from its cause chain.

The chain is walked by ``_causes`` (each exception once, cycle-safe, at most ``MAX_CHAIN``).

Raising a buried exception again inside ``except`` would make Python set its ``__context__`` to
the handled exception, whose chain already leads back to it: a cycle that hides where it came
from. Before handing back (or raising) an exception found in a chain, the helpers therefore turn
its implicit context into an explicit cause; Python then attaches the handled exception as a
suppressed context, outside the walked chain. So ``raise unwrap(e)`` inside ``except`` keeps the
original cause and builds no cycle. Do not write ``raise unwrap(e) from e``: that *does* make a
cycle whenever ``unwrap`` returns something already inside ``e``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, ParamSpec, TypeVar, overload

from ._causes import STOPS, find_in_chain, is_a, iter_chain
from ._exceptions import (
    CorrectableRuntimeLLMException,
    ExternalServiceException,
    InvalidInputException,
    LLMReadableCheckedException,
    LLMReadableException,
    LLMReadableRuntimeException,
    ResourceNotFoundException,
    SystemException,
    UncorrectableRuntimeLLMException,
    UpstreamRetryException,
    UpstreamThrottleException,
)
from ._text._message import readable_message
from ._text._quote import fit_quote
from ._text._render import (
    BODY_LENGTH_LIMIT,
    VALUE_LIMIT,
    cut_end,
    one_line,
    render_value,
    shorten_long_runs,
    shorten_names,
)

DEFAULT_COMPONENT = "the tool"

P = ParamSpec("P")
R = TypeVar("R")
E = TypeVar("E", bound=BaseException)


def deepest_message(exc: BaseException) -> str:
    """The message of the deepest exception in the chain that has one, else its class name.

    A message that cannot be read (a ``__str__`` that raises or returns a non-string) counts
    as none."""
    members = list(iter_chain(exc))
    for member in reversed(members):
        if text := (_message(member) or "").strip():
            return text
    return type(members[-1]).__name__


def _message(exc: BaseException) -> str | None:
    """``readable_message``, also when ``__str__`` raises something that is not an
    ``Exception`` (a ``GeneratorExit``); a stop still propagates."""
    try:
        return readable_message(exc)
    except BaseException as error:
        if is_a(error, STOPS):
            raise
        return None


def _detached(found: E) -> E:
    """Prepare an exception found inside a chain to be raised again (see the module docstring)."""
    try:
        if found.__suppress_context__ is not True:
            found.__cause__ = found.__context__  # also sets __suppress_context__
    except Exception:  # a hostile class whose links cannot be read or set: raise it as it is
        pass
    return found


def _unreadable(exc: BaseException, component: str) -> SystemException:
    """The generic reading of an exception whose own code raised while it was read (a property
    on its links, a ``__str__`` that raises, a group whose members cannot be read): a
    system error, like any exception outside the set."""
    return SystemException(
        component,
        f"an exception of type {type(exc).__name__} that could not be read",
        cause=exc if is_a(exc, BaseException) else None,
    )


def foreign_failure(
    member: BaseException, component: str, service: str | None = None
) -> LLMReadableException | UpstreamRetryException | None:
    """What one exception of a provider SDK, another SDK or an HTTP client means, or None for
    any other.

    Each is recognised by the package its class comes from, through the provider, SDK and
    client registries (asked in that order), which import a package's support only once one of
    its exceptions exists. An SDK's own exception for an answer (botocore's ``ClientError``,
    slack_sdk's ``SlackApiError``) reads as that answer would.
    """
    from ._http._clients._recognise import client_failure
    from ._http._providers._rules import from_provider_error
    from ._http._sdks._failure import sdk_failure

    return (
        from_provider_error(member)
        or sdk_failure(member, component, service)
        or client_failure(member, component, service)
    )


def recognise_foreign(
    exc: BaseException, component: str = DEFAULT_COMPONENT, service: str | None = None
) -> BaseException:
    """``exc``, or what the first foreign exception in its chain means when the chain holds no
    LLM-readable exception or retry signal before it (an ``openai.RateLimitError`` becomes a
    RateLimitRetryException, an ``httpx2.ConnectError`` an ExternalServiceException, named
    after ``service`` when given, else after the request's host). The result's cause is
    ``exc``, so the whole original chain stays behind it."""
    for member in iter_chain(exc):
        if is_a(member, (LLMReadableException, UpstreamRetryException)):
            return exc
        try:
            found = foreign_failure(member, component, service)
        except Exception:  # a support module that cannot read it: the generic reading
            found = None
        if found is not None:
            found.__cause__ = exc
            return found
    return exc


def _raise_signal(exc: BaseException) -> None:
    signal = find_in_chain(exc, UpstreamRetryException)
    if signal is not None:
        raise signal if signal is exc else _detached(signal)


def unwrap(
    exc: BaseException, *, component: str = DEFAULT_COMPONENT, service: str | None = None
) -> LLMReadableCheckedException:
    """Keep the first LLM-readable exception in the chain of ``exc``; make anything else a
    :class:`SystemException` naming ``component``, whose technical message is the deepest
    message of the chain (what went wrong, not the wrapper's "job failed"; the class name when
    no member has a message).

    A checked one is returned; a runtime one (:class:`LLMReadableRuntimeException`) is raised
    as itself, and so is any retry signal (:class:`UpstreamRetryException`) in the chain, so a
    broad ``except`` never turns a retry into a failure. Use it as ``raise unwrap(e)``, or let
    :func:`llm_errors` do it for a whole function. When the failure came from a service call
    made with a parameter the model sent, use :func:`wrap_with_context` instead.

    A bare HTTP client or provider SDK error means what it says (see ``recognise_foreign``): a
    refused ``requests`` connection is an ExternalServiceException naming ``service`` (default:
    the request's host), an ``openai.RateLimitError`` a retry signal.

    It never raises anything else: an exception whose own code raises while it is read is a
    :class:`SystemException` too.
    """
    try:
        return _unwrap(exc, component, service)
    except (UpstreamRetryException, LLMReadableRuntimeException):
        raise
    except BaseException as error:
        if is_a(error, STOPS):
            raise
        return _unreadable(exc, component)


def _unwrap(exc: BaseException, component: str, service: str | None) -> LLMReadableCheckedException:
    exc = recognise_foreign(exc, component, service)
    _raise_signal(exc)
    found = find_in_chain(exc, LLMReadableException)
    if found is None:
        # The deepest message says what went wrong; the wrappers above it only where.
        return SystemException(component, deepest_message(exc), cause=exc)
    if found is not exc:
        _detached(found)
    if is_a(found, LLMReadableRuntimeException):
        raise found
    assert is_a(found, LLMReadableCheckedException)  # the only other family
    return found


def wrap_with_context(
    exc: BaseException,
    service_name: str,
    parameter_name: str,
    parameter_value: object,
    step: str,
) -> LLMReadableCheckedException:
    """Readdress a failed service call to what the model knows: the parameter it sent.

    When the first LLM-readable failure in the chain is correctable, it becomes an
    :class:`InvalidInputException` naming the parameter and its value, with the step and the
    buried model message as the rule (so a 404 on a fetch reaches the model as a parameter to
    fix). A throttle stays a throttle: an :class:`UpstreamThrottleException` naming the
    service and the step, with the server's wait (``retry_after``). Any other uncorrectable one, or a chain with nothing
    LLM-readable, becomes an :class:`ExternalServiceException` naming the service, with the
    step and the buried model message (or the deepest raw message).
    Retry signals in the chain are raised as themselves. The result's cause is ``exc``.
    For failures not tied to one parameter, use :func:`unwrap`.

    It never raises anything else: an exception whose own code raises while it is read (its
    ``is_correctable``, its links, its message) reads as a chain with nothing LLM-readable.
    """
    try:
        return _wrap_with_context(exc, service_name, parameter_name, parameter_value, step)
    except UpstreamRetryException:
        raise
    except BaseException as error:
        if is_a(error, STOPS):
            raise
    wrapped = ExternalServiceException(
        service_name, f"{step}: an exception of type {type(exc).__name__} that could not be read"
    )
    wrapped.__cause__ = exc
    return wrapped


def _wrap_with_context(
    exc: BaseException,
    service_name: str,
    parameter_name: str,
    parameter_value: object,
    step: str,
) -> LLMReadableCheckedException:
    exc = recognise_foreign(exc, service_name, service_name)
    _raise_signal(exc)
    found = find_in_chain(exc, LLMReadableException)
    wrapped: LLMReadableCheckedException

    # The buried message already names the service and ends with its own guidance: the
    # wrapper only says where it happened (and with which value), so nothing is said twice.
    def during(limit: int) -> str:
        return f"During {_at_most(step, limit)}"

    if found is not None and found.is_correctable:
        # Says which value the request was made with, not that the value is invalid: a 413
        # is the size of the request the tool built, not a fault of an identifier.
        def lead(limit: int) -> str:
            name, value = _at_most(parameter_name, limit), _value_at_most(parameter_value, limit)
            return f"{during(limit)}, with the parameter '{name}' = {value}: "

        rule = _correctable_rule(found)
        wrapped = InvalidInputException(
            parameter_name,
            parameter_value,
            f"{step}: {rule}",
            llm_message=_fitted(lead, rule, found),
        )
    elif isinstance(found, UpstreamThrottleException):
        # Still a throttle to the model, with the server's wait: "failed" would hide both.
        wrapped = UpstreamThrottleException(
            service_name,
            f"{step}: {found.llm_message}",
            found.retry_after,
            llm_message=_fitted(lambda limit: f"{during(limit)}: ", found.llm_message, found),
        )
    elif found is not None:
        wrapped = ExternalServiceException(
            service_name,
            f"{step}: {found.llm_message}",
            llm_message=_fitted(lambda limit: f"{during(limit)}: ", found.llm_message, found),
        )
    else:
        wrapped = ExternalServiceException(service_name, f"{step}: {deepest_message(exc)}")
    wrapped.__cause__ = exc
    return wrapped


_SHORTEST = 24
"""Characters a wrapped text shows at least of its step, its parameter and its value, and of
the service's name, when it must cut them to stay within its bound."""


def _fitted(lead: Callable[[int], str], buried: str, found: LLMReadableException) -> str:
    """A wrapper's text within the bound of a text before its hint line: ``lead(limit)``,
    what the wrapper says with its step, parameter and value each shown in at most ``limit``
    characters, then the ``buried`` text, which fit the bound alone. The lead is paid for by
    the buried text's quote, then its path; then by the service's name; last, the lead's own
    pieces are shown at their shortest."""
    services = _service_names(found)
    for limit, names in ((VALUE_LIMIT, []), (VALUE_LIMIT, services), (_SHORTEST, services)):
        text = _lead_then(lead(limit), buried, names)
        if len(text) <= BODY_LENGTH_LIMIT:
            break
    return text


def _lead_then(lead: str, buried: str, services: list[str]) -> str:
    room = BODY_LENGTH_LIMIT - len(lead)
    # The name before the path: a long word of a name is a run shorten_long_runs would cut
    # in its middle, and the name would no longer be found.
    buried = shorten_names(fit_quote(buried, room), services, room, _SHORTEST)
    return lead + shorten_long_runs(buried, room)


def _at_most(text: str, limit: int) -> str:
    """``text`` on one line, cut at its end to ``limit`` characters (with ``...``)."""
    return cut_end(one_line(text, VALUE_LIMIT), limit)


def _value_at_most(value: object, limit: int) -> str:
    """``value`` as the model sent it (see ``render_value``), ``limit`` characters of it and
    the note on how much was cut; JSON escapes can make those characters many more (a
    control character takes six), and then the rendering itself is cut."""
    return cut_end(render_value(value, limit), limit + _CUT_NOTE)


_CUT_NOTE = 40
"""Characters ``render_value`` adds to a value it cut: its quotes and its note on how much
("... (12345 more characters cut)")."""


def _service_names(found: LLMReadableException) -> list[str]:
    """The service names the buried text may show, as it shows them (one bounded line)."""
    names = (getattr(found, "service", None), getattr(found, "service_name", None))
    return list(
        dict.fromkeys(one_line(name, VALUE_LIMIT) for name in names if isinstance(name, str))
    )


def _correctable_rule(found: LLMReadableException) -> str:
    """What the model reads of a correctable failure that is about the parameter it sent.

    A 404 carrier's own advice is to check "the identifier": right for a fetch by id, wrong
    for the query of a search. About the parameter, the advice fits both.
    """
    advice = getattr(type(found), "_then", "")
    if (
        isinstance(found, ResourceNotFoundException)
        and getattr(found, "status_code", 0) == 404
        and isinstance(advice, str)
        and advice
        and advice in found.llm_message
    ):
        return found.llm_message.replace(advice, _NOT_FOUND_ADVICE)
    return found.llm_message


_NOT_FOUND_ADVICE = (
    "Try another value of the parameter, or use another tool to find one the service knows."
)


def unwrap_runtime(exc: BaseException, fallback_message: str) -> LLMReadableRuntimeException:
    """For code with no structure to raise: the runtime-family failure to raise for ``exc``.

    A runtime LLM-readable exception in the chain is returned as itself; a checked one becomes
    :class:`CorrectableRuntimeLLMException` or :class:`UncorrectableRuntimeLLMException` with the
    same model message; none gives ``UncorrectableRuntimeLLMException(fallback_message)``.
    Unlike :func:`unwrap`, retry signals are not raised: this code is not on the runner's
    retry path.
    """
    found = find_in_chain(exc, LLMReadableException)
    if isinstance(found, LLMReadableRuntimeException):
        return found if found is exc else _detached(found)
    converted: LLMReadableRuntimeException
    if found is None:
        converted = UncorrectableRuntimeLLMException(fallback_message)
    elif found.is_correctable:
        converted = CorrectableRuntimeLLMException(found.llm_message)
    else:
        converted = UncorrectableRuntimeLLMException(found.llm_message)
    converted.__cause__ = exc
    return converted


class _Translating:
    """Apply a translation to whatever escapes a block or a function (sync or async)."""

    def _translate(self, exc: Exception) -> BaseException:
        raise NotImplementedError

    def _for(self, func: Callable[..., Any]) -> _Translating:
        return self

    @overload
    def __call__(self, func: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]: ...
    @overload
    def __call__(self, func: Callable[P, R]) -> Callable[P, R]: ...
    def __call__(self, func: Callable[P, Any]) -> Callable[P, Any]:
        block = self._for(func)
        if inspect.iscoroutinefunction(func):

            @functools.wraps(func)
            async def run_async(*args: P.args, **kwargs: P.kwargs) -> Any:
                with block:
                    return await func(*args, **kwargs)

            return run_async

        @functools.wraps(func)
        def run(*args: P.args, **kwargs: P.kwargs) -> Any:
            with block:
                return func(*args, **kwargs)

        return run

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if not is_a(exc, Exception):
            # Success, or a KeyboardInterrupt / CancelledError, or a BaseExceptionGroup holding
            # one (an ExceptionGroup cannot): not ours to translate.
            return
        translated = self._translate(exc)
        if translated is not exc:
            raise translated


class _Unwrapping(_Translating):
    def __init__(self, component: str | None, service: str | None) -> None:
        self.component = component
        self.service = service

    def _for(self, func: Callable[..., Any]) -> _Translating:
        return _Unwrapping(self.component or getattr(func, "__name__", None), self.service)

    def _translate(self, exc: Exception) -> BaseException:
        return unwrap(exc, component=self.component or DEFAULT_COMPONENT, service=self.service)


class _ServiceCall(_Translating):
    def __init__(
        self, service_name: str, parameter_name: str, parameter_value: object, step: str
    ) -> None:
        self._context = (service_name, parameter_name, parameter_value, step)

    def _translate(self, exc: Exception) -> BaseException:
        return wrap_with_context(exc, *self._context)


@overload
def llm_errors(func: Callable[P, R], /) -> Callable[P, R]: ...
@overload
def llm_errors(*, component: str | None = None, service: str | None = None) -> _Translating: ...
def llm_errors(
    func: Callable[P, R] | None = None,
    /,
    *,
    component: str | None = None,
    service: str | None = None,
) -> Any:
    """Apply :func:`unwrap` to whatever escapes a function or a block, so no tool body needs
    ``try: ... except Exception as e: raise unwrap(e)``.

    ``@llm_errors`` (sync or async), ``@llm_errors(component="orders")``, or
    ``with llm_errors(component="orders"):``. Anything outside the set leaves as a
    :class:`SystemException` naming the component (the function's name by default, "the tool"
    for a block); LLM-readable exceptions and retry signals leave as themselves, causes intact.
    ``service`` names the upstream in the text of a bare HTTP client error (a refused
    ``requests`` connection, an aiohttp read timeout), which otherwise names the request's host
    or, when the error carries no request, the component.
    """
    block = _Unwrapping(component, service)
    return block if func is None else block(func)


def service_call(
    service_name: str, parameter_name: str, parameter_value: object, step: str
) -> _Translating:
    """Apply :func:`wrap_with_context` to whatever escapes one service call.

    ``with service_call("PubChem", "cid", cid, "compound fetch"): client.get_json(...)``: a
    404 inside becomes an InvalidInputException about ``cid``, an outage an
    ExternalServiceException about PubChem. Also usable as a decorator.
    """
    return _ServiceCall(service_name, parameter_name, parameter_value, step)
