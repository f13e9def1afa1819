"""The failure set: every exception a model may read, and the retry signals it never reads.

```
LLMReadableException                      base of everything the model may read
├─ LLMReadableCheckedException            the structured family tools raise
│  ├─ CorrectableLLMException             is_correctable = True
│  │  ├─ InvalidInputException(parameter_name, invalid_value, validation_rule)
│  │  ├─ ResourceNotFoundException(resource_type, identifier)
│  │  └─ GuardrailException(message)
│  └─ UncorrectableLLMException           is_correctable = False
│     ├─ ExternalServiceException(service_name, error_details, cause=None)
│     │  └─ UpstreamThrottleException(service_name, error_details, retry_after=None)
│     ├─ UnauthorizedException(service_name, reason)
│     ├─ PermissionDeniedException(message)
│     ├─ SystemException(component, technical_message, cause=None)
│     └─ runtime-raised: JobCancelledException, JobTimeoutException(budget),
│        ContextOverflowException, PromptNotFoundException(key)
└─ LLMReadableRuntimeException            message-only family, for callbacks and lambdas
   ├─ CorrectableRuntimeLLMException(message)
   └─ UncorrectableRuntimeLLMException(message)
      └─ runtime-raised: QuotaExhaustedException(provider, account, model=None, detail=None),
         SpendCapExceededException(message), ModelNotFoundException(model_id),
         ProviderRefusalException(model, category=None, explanation=None)

UpstreamRetryException                    retry signals, never shown to a model
├─ RateLimitRetryException
├─ OverloadRetryException
└─ TransientErrorRetryException
```

Every exception has two messages: ``str(exc)`` is the technical one, for logs and developers;
``exc.llm_message`` is plain, actionable text for the model. ``exc.explain_to_llm()`` is the
model message, a newline, and one hint line chosen only by ``is_correctable``.

Constructor arguments are kept as attributes of the same names and, but for the retry
signals (whose ``args`` is their message alone, as for a plain exception), as ``exc.args``;
every exception pickles with its fields and its cause. A cause that could not be rebuilt on
loading (it does not pickle, or its constructor does not take its own ``args``) travels as a
plain ``Exception`` stand-in keeping its class name and message. Each level of a chain is checked
once, so pickling costs time in proportion to the chain's length.
"""

from __future__ import annotations

import math
import pickle
import re
import reprlib
import sys
from typing import Any, ClassVar, final

from ._text._message import described
from ._text._render import VALUE_LIMIT, clean_block, next_step, one_line, render_value, seconds
from ._text._secrets import redact


def check_seconds(value: float | None, name: str = "retry_after") -> None:
    """Refuse a wait or budget that is not a finite number of seconds >= 0 (None is allowed)."""
    if value is not None and not (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    ):
        raise ValueError(f"{name} must be a finite number of seconds >= 0, or None; got {value!r}")


CORRECTABLE_HINT = "[This error may be correctable - you can retry with different parameters or try a different approach]"
UNCORRECTABLE_HINT = "[This error is not correctable - consider an alternative approach]"


class _MaskedRepr(reprlib.Repr):
    """A bounded repr that masks each string before cutting it: cut first, and the middle cut
    could take away the start a key is recognised by while its rest stays shown."""

    def repr_str(self, x: str, level: int) -> str:
        return super().repr_str(redact(x), level)

    def repr_instance(self, x: object, level: int) -> str:
        try:
            shown = redact(repr(x))
        except Exception:  # as reprlib does for a repr that raises
            return super().repr_instance(x, level)
        if len(shown) <= self.maxother:
            return shown
        head = (self.maxother - 3) // 2  # cut the middle out, as reprlib does
        return f"{shown[:head]}...{shown[len(shown) - (self.maxother - 3 - head) :]}"


_repr = _MaskedRepr()  # keyword arguments only arrived in Python 3.12
_repr.maxstring = _repr.maxother = 80


def _portable(cause: BaseException | None) -> BaseException | None:
    """The cause itself when a pickle of it can be loaded again, else a plain stand-in keeping
    its class name and message."""
    if cause is None or _rebuilds(cause):
        return cause
    return Exception(redact(described(cause)))


def _rebuilds(exc: BaseException) -> bool:
    """Whether ``exc`` alone, without its cause, survives a pickle round trip.

    Only this one level is tried: its own cause is checked when it is pickled in turn. Trying
    the whole chain at every level would pickle it again at each one, a cost that doubled with
    every level.
    """
    try:
        reduced = _one_level(exc)
        if isinstance(reduced, str):  # a global's name: pickled by reference
            return True
        loaded = pickle.loads(pickle.dumps(reduced))
        loaded[0](*loaded[1])
    except Exception:
        return False
    return True


def _one_level(exc: BaseException) -> Any:
    """What pickling ``exc`` would reduce it to, leaving out the cause our classes add."""
    if isinstance(exc, LLMReadableException | UpstreamRetryException):
        reduce = type(exc).__reduce__
        if reduce is LLMReadableException.__reduce__ or reduce is UpstreamRetryException.__reduce__:
            return exc._reduced_without_cause()
    return exc.__reduce_ex__(pickle.DEFAULT_PROTOCOL)


def _clause(text: str) -> str:
    """One clean line without its closing period, for embedding in a sentence of ours."""
    return one_line(text).rstrip(" .")


class LLMReadableException(Exception):
    """Base of every failure the model may read. Raise one of its concrete subclasses.

    Tools raise the checked family (:class:`CorrectableLLMException`,
    :class:`UncorrectableLLMException` and their subclasses); code that only has a message,
    such as a callback, raises :class:`CorrectableRuntimeLLMException` or
    :class:`UncorrectableRuntimeLLMException`.
    """

    is_correctable: ClassVar[bool]
    """True when the model may fix its arguments and call again; a fact of the class."""

    _fields: tuple[str, ...] = ()

    def __init__(self, message: str, *, llm_message: str | None = None) -> None:
        if type(self) in _ABSTRACT:
            raise TypeError(
                f"{type(self).__name__} is a family, not a failure: raise one of its subclasses "
                "(CorrectableLLMException, UncorrectableLLMException, or a concrete class such as "
                "InvalidInputException)"
            )
        super().__init__(message)
        self._message = clean_block(message)
        self.llm_message = clean_block(message if llm_message is None else llm_message)
        """The model-facing message, cleaned; ``explain_to_llm()`` adds the hint line to it."""

    def _keep(self, **fields: Any) -> None:
        """Store constructor arguments as attributes and as ``args``, in constructor order."""
        self.__dict__.update(fields)
        self._fields = tuple(fields)
        self.args = tuple(fields.values())

    @property
    def cause(self) -> BaseException | None:
        """The ``cause`` given to the constructor (ExternalServiceException, SystemException),
        or what the exception was raised ``from``: its ``__cause__``, where the logs and the
        helpers read it."""
        return self.__cause__

    @cause.setter
    def cause(self, value: BaseException | None) -> None:
        # A subclass may store its own cause argument the plain way: it lands on __cause__.
        self.__cause__ = value
        if value is None:
            # Assigning __cause__ suppresses the implicit __context__, even for None; a cause of
            # None means "none given", so the exception being handled stays in the chain.
            self.__suppress_context__ = False

    @final
    def explain_to_llm(self) -> str:
        """The text the model reads: the model message, a newline, the retry hint line."""
        hint = CORRECTABLE_HINT if self.is_correctable else UNCORRECTABLE_HINT
        return f"{self.llm_message}\n{hint}"

    def __str__(self) -> str:
        return self._message

    def __repr__(self) -> str:
        if self._fields:
            shown = ", ".join(f"{name}={_repr.repr(getattr(self, name))}" for name in self._fields)
        else:
            shown = _repr.repr(self._message)
        return redact(f"{type(self).__name__}({shown})")

    def _reduced_without_cause(self) -> tuple[Any, ...]:
        return (type(self), self.args, dict(self.__dict__))

    def __reduce__(self) -> tuple[Any, ...]:
        reduced = self._reduced_without_cause()
        reduced[2]["__cause__"] = _portable(self.__cause__)
        return reduced


class LLMReadableCheckedException(LLMReadableException):
    """The structured family tools raise; see :class:`LLMReadableRuntimeException` for the other."""


class CorrectableLLMException(LLMReadableCheckedException):
    """The call was wrong: the model may fix its arguments and call again.

    Prefer a concrete subclass (:class:`InvalidInputException`,
    :class:`ResourceNotFoundException`, :class:`GuardrailException`); raise this one directly
    with a technical message and a model message only when none of them fits.
    """

    is_correctable = True
    """True: the model may fix its arguments and call again."""


class UncorrectableLLMException(LLMReadableCheckedException):
    """The tool cannot do this right now, whatever the input: the model should try another way.

    Prefer a concrete subclass (:class:`ExternalServiceException`, :class:`SystemException`, ...).
    """

    is_correctable = False
    """False: the model should try another way."""


_ENDS_WITH_ADDRESS = re.compile(r"\w+://\S+$")


def _sentence(rule: str) -> str:
    """The rule as the end of a sentence: with a final period unless it ends one already
    (inside a closing bracket or quote too), or ends with an address a period would seem
    part of."""
    closed = rule.rstrip(")]'\"")
    if not closed or closed[-1] in ".!?" or _ENDS_WITH_ADDRESS.search(rule):
        return rule
    return f"{rule}."


class InvalidInputException(CorrectableLLMException):
    """An argument broke a rule: bad syntax, a blank field, a value out of range.

    Write ``validation_rule`` as the way to get it right ("must be 8 digits"). The model reads
    the parameter, the value it sent (one line, bounded, secrets masked) and the rule; the
    technical message leaves the value out. For a well-formed identifier that names nothing,
    raise :class:`ResourceNotFoundException` instead. ``llm_message`` replaces the model text
    (the HTTP carriers use it to quote what the server said).
    """

    # Set by the constructor (through _keep); declared so that type checkers see them.
    parameter_name: str
    """The parameter the model got wrong, as the tool names it."""
    invalid_value: object
    """The value the model sent (the model reads it bounded and masked)."""
    validation_rule: str
    """The way to get it right, e.g. "must be 8 digits"."""

    def __init__(
        self,
        parameter_name: str,
        invalid_value: object,
        validation_rule: str,
        *,
        llm_message: str | None = None,
    ) -> None:
        rule = one_line(validation_rule)
        super().__init__(
            # The rule in brackets, not after a colon: "'api_key': must be..." reads as a
            # credential pair to the log's masking, which would swallow the rule's first word.
            f"Invalid input for parameter '{one_line(parameter_name, VALUE_LIMIT)}' ({rule})",
            llm_message=llm_message
            or (
                f"The parameter '{one_line(parameter_name, VALUE_LIMIT)}' got "
                f"{render_value(invalid_value)}, which is not valid: {_sentence(rule)}"
            ),
        )
        self._keep(
            parameter_name=parameter_name,
            invalid_value=invalid_value,
            validation_rule=validation_rule,
        )


class ResourceNotFoundException(CorrectableLLMException):
    """A well-formed identifier names nothing: a fetch by id that finds no record.

    Not for malformed identifiers (:class:`InvalidInputException`), searches that find nothing
    (return an empty result) or outages (:class:`ExternalServiceException`).
    ``llm_message`` replaces the model text.
    """

    # Set by the constructor (through _keep); declared so that type checkers see them.
    resource_type: str
    """What kind of thing was looked up ("order", "compound")."""
    identifier: object
    """The identifier that names nothing."""

    def __init__(
        self, resource_type: str, identifier: object, *, llm_message: str | None = None
    ) -> None:
        kind = one_line(resource_type, VALUE_LIMIT)
        shown = render_value(identifier)
        super().__init__(
            f"{kind} not found: {shown}",
            llm_message=llm_message
            or (
                f"No {kind} was found with the identifier {shown}. Check the identifier, try "
                "another one, or use another tool to find the right one."
            ),
        )
        self._keep(resource_type=resource_type, identifier=identifier)


class GuardrailException(CorrectableLLMException):
    """A guardrail refused the call; ``message`` says why and what would be accepted."""

    # Set by the constructor (through _keep); declared so that type checkers see them.
    message: str
    """Why the guardrail refused the call, and what it would accept."""

    def __init__(self, message: str) -> None:
        reason = one_line(message)
        super().__init__(
            f"Guardrail refused the call: {reason}",
            llm_message=f"A guardrail refused this call: {reason}",
        )
        self._keep(message=message)


class ExternalServiceException(UncorrectableLLMException):
    """A service the tool depends on is down, answered with a server error, or was unreachable.

    Pass the raw failure as ``cause`` (it stays on ``__cause__`` for the logs). A status that
    came back is mapped for you by the HTTP client base; for throttling raise
    :class:`UpstreamThrottleException`.
    """

    # Set by the constructor (through _keep); declared so that type checkers see them.
    service_name: str
    """The service as the model should read its name."""
    error_details: str
    """What went wrong; the technical message and the model's text are both built from it."""

    def __init__(
        self,
        service_name: str,
        error_details: str,
        cause: BaseException | None = None,
        *,
        llm_message: str | None = None,
    ) -> None:
        service = one_line(service_name, VALUE_LIMIT)
        details = _clause(error_details)
        super().__init__(
            f"{service}: {details}",
            llm_message=llm_message
            or f"The external service {service} failed: {details}. {next_step(None)}",
        )
        if cause is not None:  # assigning None would also suppress an implicit __context__
            self.__cause__ = cause
        self._keep(service_name=service_name, error_details=error_details)


class UpstreamThrottleException(ExternalServiceException):
    """The service says we are calling it too fast (429, or a throttle answer on another status).

    ``retry_after`` is how many seconds it asked us to wait, when it said.
    """

    # Set by the constructor (through _keep); declared so that type checkers see them.
    retry_after: float | None
    """Seconds the service asked us to wait before another call, or None when it did not say."""

    def __init__(
        self,
        service_name: str,
        error_details: str,
        retry_after: float | None = None,
        *,
        llm_message: str | None = None,
    ) -> None:
        check_seconds(retry_after)
        service = one_line(service_name, VALUE_LIMIT)
        super().__init__(
            service_name,
            error_details,
            llm_message=llm_message
            or (
                f"The external service {service} is throttling our requests (too many requests): "
                f"{_clause(error_details)}. {next_step(retry_after, throttled=True)}"
            ),
        )
        self._keep(service_name=service_name, error_details=error_details, retry_after=retry_after)


class UnauthorizedException(UncorrectableLLMException):
    """The service rejected our credentials. ``reason`` must never contain the credentials.

    For a person who lacks access under the application's own rules, raise
    :class:`PermissionDeniedException`. ``llm_message`` replaces the model text.
    """

    # Set by the constructor (through _keep); declared so that type checkers see them.
    service_name: str
    """The service whose credentials were rejected."""
    reason: str
    """Why they were rejected, as the service or the tool said it (never the credentials)."""

    def __init__(self, service_name: str, reason: str, *, llm_message: str | None = None) -> None:
        service = one_line(service_name, VALUE_LIMIT)
        why = _clause(reason)
        super().__init__(
            f"{service} rejected our credentials: {why}",
            llm_message=llm_message
            or (
                f"The service {service} rejected the tool's credentials: {why}. Only the user "
                "can fix this: tell them the tool needs valid credentials; the model cannot "
                "supply them."
            ),
        )
        self._keep(service_name=service_name, reason=reason)


class PermissionDeniedException(UncorrectableLLMException):
    """The person the work runs for lacks access, by the application's own rules.

    For credentials a service rejected, raise :class:`UnauthorizedException`.
    """

    # Set by the constructor (through _keep); declared so that type checkers see them.
    message: str
    """Why access was denied, in the application's words."""

    def __init__(self, message: str) -> None:
        why = _clause(message)
        super().__init__(
            f"Permission denied: {why}",
            llm_message=(
                f"Permission denied: {why}. The person this work runs for lacks access under "
                "the application's rules; tell the user."
            ),
        )
        self._keep(message=message)


class SystemException(UncorrectableLLMException):
    """An unexpected internal error, a bug. The model learns only that something broke.

    The technical message and the cause go to the log; the model reads the fixed text
    "A system error occurred in <component>. The operation could not be completed."
    Anything raised outside the set reaches the model as one of these.
    """

    # Set by the constructor (through _keep); declared so that type checkers see them.
    component: str
    """The part of the tool that failed (the model reads only that a system error occurred)."""
    technical_message: str
    """What went wrong, for the logs only."""

    def __init__(
        self, component: str, technical_message: str, cause: BaseException | None = None
    ) -> None:
        name = one_line(component, VALUE_LIMIT)
        super().__init__(
            f"{name}: {technical_message}",
            llm_message=f"A system error occurred in {name}. The operation could not be completed.",
        )
        if cause is not None:  # assigning None would also suppress an implicit __context__
            self.__cause__ = cause
        self._keep(component=component, technical_message=technical_message)


class JobCancelledException(UncorrectableLLMException):
    """Raised by the runtime: the call was cancelled before it finished."""

    def __init__(self) -> None:
        super().__init__(
            "The job was cancelled",
            llm_message="The call was cancelled before it finished, so it produced no result.",
        )
        self._keep()


class JobTimeoutException(UncorrectableLLMException):
    """Raised by the runtime: the call ran past its time budget, in seconds."""

    # Set by the constructor (through _keep); declared so that type checkers see them.
    budget: float
    """The time the job was allowed, in seconds."""

    def __init__(self, budget: float) -> None:
        if not (math.isfinite(budget) and budget >= 0):
            raise ValueError(f"budget must be a finite number of seconds >= 0; got {budget!r}")
        super().__init__(
            f"The job exceeded its time budget of {seconds(budget)}",
            llm_message=(
                f"The call was stopped because it ran past its time budget of {seconds(budget)}, "
                "so it produced no result."
            ),
        )
        self._keep(budget=budget)


class ContextOverflowException(UncorrectableLLMException):
    """Raised by the runtime: the conversation does not fit the model's window after compaction."""

    def __init__(self) -> None:
        super().__init__(
            "The conversation exceeds the model's context window even after compaction",
            llm_message=(
                "The work was stopped because the conversation no longer fits the model's "
                "context window, even after compaction."
            ),
        )
        self._keep()


class PromptNotFoundException(UncorrectableLLMException):
    """Raised by the runtime: no prompt source holds the key."""

    # Set by the constructor (through _keep); declared so that type checkers see them.
    key: str
    """The key of the prompt that was not found."""

    def __init__(self, key: str) -> None:
        shown = render_value(key)
        super().__init__(
            f"No prompt found for key {shown}",
            llm_message=f"The work was stopped because no prompt is registered under the key {shown}.",
        )
        self._keep(key=key)


class LLMReadableRuntimeException(LLMReadableException):
    """The message-only family, for code that has only a message: callbacks, lambdas, hooks.

    ``str(exc) == exc.llm_message ==`` the message given (cleaned: no ``\\r``, no control
    characters, secrets masked, bounded). Tool code with structure raises the checked family.
    """

    # Set by the constructor (through _keep); declared so that type checkers see them.
    message: str
    """The message as given (``llm_message`` is the same, cleaned)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self._keep(message=message)


class CorrectableRuntimeLLMException(LLMReadableRuntimeException):
    """A correctable failure raised from code with only a message to give."""

    is_correctable = True
    """True: the model may fix its arguments and call again."""


class UncorrectableRuntimeLLMException(LLMReadableRuntimeException):
    """An uncorrectable failure raised from code with only a message to give."""

    is_correctable = False
    """False: the model should try another way."""


class QuotaExhaustedException(UncorrectableRuntimeLLMException):
    """Raised by the runtime: the model provider's account has run out of money or quota."""

    # Set by the constructor (through _keep); declared so that type checkers see them.
    provider: str
    """The model provider whose quota is used up."""
    account: str
    """The account or project whose quota it is."""
    model: str | None
    """The model the quota is for, when the provider said."""
    detail: str | None
    """What the provider said about the quota, when it did."""

    def __init__(
        self, provider: str, account: str, model: str | None = None, detail: str | None = None
    ) -> None:
        text = f"The model provider {one_line(provider, VALUE_LIMIT)} has no quota left"
        if model is not None:
            text += f" for model {one_line(model, VALUE_LIMIT)}"
        text += f" on the account {one_line(account, VALUE_LIMIT)}"
        text += f": {_clause(detail)}." if detail else "."
        super().__init__(text)
        self._keep(provider=provider, account=account, model=model, detail=detail)


class SpendCapExceededException(UncorrectableRuntimeLLMException):
    """Raised by the runtime: the work was refused under its workflow's spend cap.

    Like every runtime-family failure, ``str(exc) == exc.llm_message ==`` the message given.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self._keep(message=message)


class ModelNotFoundException(UncorrectableRuntimeLLMException):
    """Raised by the runtime: the model catalog holds no model with this id."""

    # Set by the constructor (through _keep); declared so that type checkers see them.
    model_id: str
    """The model the provider does not know."""

    def __init__(self, model_id: str) -> None:
        super().__init__(f"The model catalog holds no model with the id {render_value(model_id)}.")
        self._keep(model_id=model_id)


class ProviderRefusalException(UncorrectableRuntimeLLMException):
    """Raised by the runtime: the provider declined the call.

    Carries ``model``, ``category`` and ``explanation`` for a caller that resubmits elsewhere.
    """

    # Set by the constructor (through _keep); declared so that type checkers see them.
    model: str
    """The model that refused."""
    category: str | None
    """The category of the refusal, when the provider gave one."""
    explanation: str | None
    """The provider's explanation of the refusal, when it gave one."""

    def __init__(
        self, model: str, category: str | None = None, explanation: str | None = None
    ) -> None:
        text = f"The provider of model {one_line(model, VALUE_LIMIT)} refused the call"
        if category is not None:
            text += f" (category: {one_line(category, VALUE_LIMIT)})"
        text += f": {one_line(explanation)}" if explanation else "."
        super().__init__(text)
        self._keep(model=model, category=category, explanation=explanation)


class UpstreamRetryException(Exception):
    """A retry signal: the runner retries the call by itself, with backoff. Never model-facing.

    Raise a subclass under a tool when the failure is transient and the same call should simply
    be tried again (:class:`RateLimitRetryException`, :class:`OverloadRetryException`,
    :class:`TransientErrorRetryException`). ``retry_after`` is a suggested delay in seconds. A
    failure the model should hear about is an :class:`ExternalServiceException` instead.
    ``unwrap`` and ``wrap_with_context`` re-raise a signal found in a cause chain as itself.
    """

    kind: ClassVar[str] = "retry"
    """The kind of signal in words, as the runner's texts and logs name it."""

    def __init__(self, message: str = "", *, retry_after: float | None = None) -> None:
        check_seconds(retry_after)
        super().__init__(message)
        self.message = message
        """What happened, for logs (never model-facing)."""
        self.retry_after = retry_after
        """The suggested delay in seconds before the retry; None: the runner's backoff decides."""

    def _reduced_without_cause(self) -> tuple[Any, ...]:
        return (
            _rebuild_signal,
            (type(self), self.message, self.retry_after),
            dict(self.__dict__),
        )

    def __reduce__(self) -> tuple[Any, ...]:
        reduced = self._reduced_without_cause()
        reduced[2]["__cause__"] = _portable(self.__cause__)
        return reduced

    def __repr__(self) -> str:
        return redact(
            f"{type(self).__name__}({_repr.repr(self.message)}, retry_after={self.retry_after!r})"
        )


def _rebuild_signal(
    cls: type[UpstreamRetryException], message: str, retry_after: float | None
) -> UpstreamRetryException:
    return cls(message, retry_after=retry_after)


class RateLimitRetryException(UpstreamRetryException):
    """Retry signal: rate limited; wait (``retry_after`` when known) and try the same call."""

    kind = "rate limit"
    """``"rate limit"``."""


class OverloadRetryException(UpstreamRetryException):
    """Retry signal: the service is overloaded; back off and try the same call."""

    kind = "overload"
    """``"overload"``."""


class TransientErrorRetryException(UpstreamRetryException):
    """Retry signal: a transient error; try the same call again."""

    kind = "transient error"
    """``"transient error"``."""


_ABSTRACT = (LLMReadableException, LLMReadableCheckedException, LLMReadableRuntimeException)

# hypothesis' st.from_type learns these classes when hypothesis is loaded too. Its entry point
# only imports pytest_nucleo._hypothesis, so that `import hypothesis` costs nothing in a
# process that never uses the failure set; if this module comes second, it registers them.
_hypothesis_entry = sys.modules.get("pytest_nucleo._hypothesis")
if _hypothesis_entry is not None:
    _hypothesis_entry.failure_set_loaded()
