"""Assertions on how a call failed: the class, its correctability, and the text the model reads."""

from __future__ import annotations

import re
import sys
from types import TracebackType
from typing import Any, Generic, Protocol, TypeVar

import pytest

import pytest_nucleo
from pytest_nucleo import (
    LLMReadableException,
    SystemException,
    UpstreamRetryException,
    unwrap,
)
from pytest_nucleo._causes import iter_chain
from pytest_nucleo._text._secrets import redact


class LLMText(str):
    """A model-facing text. Compared with ``==`` against another string, a failure shows a
    line diff of the two texts (see the plugin's ``pytest_assertrepr_compare``)."""

    __slots__ = ()


def failure_set() -> list[str]:
    """The names of every class of the failure set a test can expect."""
    return sorted(
        name
        for name in pytest_nucleo.__all__
        if isinstance(cls := getattr(pytest_nucleo, name), type)
        and issubclass(cls, LLMReadableException)
    )


E = TypeVar("E", bound=LLMReadableException)
"""The class a test expects; ``Failure[E].exception`` is typed as it, as with ``pytest.raises``."""


class Failure(Generic[E]):
    """What a failed call left for the model; filled in when the ``fails_with`` block ends."""

    exception: E
    """The failure the block raised (set when the block ends)."""
    explanation: LLMText
    """The exact ``explain_to_llm()`` text: what the model reads."""
    llm_message: str
    """The failure's ``llm_message``: the model text without its hint line."""

    def _fill(self, exception: E) -> None:
        self.exception = exception
        self.explanation = LLMText(exception.explain_to_llm())
        self.llm_message = exception.llm_message

    def __repr__(self) -> str:
        filled = getattr(self, "exception", None)
        return f"<Failure {filled!r}>" if filled is not None else "<Failure (not yet failed)>"


def _check_expectation(expected: Any, correctable: Any, caller: str) -> None:
    if not (isinstance(expected, type) and issubclass(expected, LLMReadableException)):
        raise TypeError(
            f"{caller}() expects a class of the failure set, got {expected!r}. "
            f"The set: {', '.join(failure_set())}."
        )
    if correctable is not None and not isinstance(correctable, bool):
        raise TypeError(f"correctable must be True, False or None, got {correctable!r}")
    fixed = getattr(expected, "is_correctable", None)
    if correctable is not None and fixed is not None and fixed is not correctable:
        raise ValueError(
            f"{expected.__name__} is always {'correctable' if fixed else 'uncorrectable'}, so "
            f"correctable={correctable} can never match: drop it or expect another class"
        )


def _check_pattern(match: Any) -> re.Pattern[str] | None:
    if match is None or (isinstance(match, re.Pattern) and isinstance(match.pattern, str)):
        return match
    if not isinstance(match, str):
        raise TypeError(
            f"match must be a regular expression (a str or re.compile(...) of a str) searched "
            f"in the model text, got {match!r}"
        )
    try:
        return re.compile(match)
    except re.error as error:
        raise ValueError(
            f"match={match!r} is not a valid regular expression ({error}); to find the text "
            "as it is written, pass match=re.escape(...)"
        ) from None


def fake_problem(exc: BaseException) -> BaseException | None:
    """The fake upstream's own problem (an unmatched request, a sequence run out) that ``exc``
    comes from, whatever the tool made of it; else None."""
    # Only a loaded fake can have raised one; importing it here would pull respx in.
    fake = sys.modules.get("pytest_nucleo.testing._fake._upstream")
    if fake is None:
        return None
    problems = (fake.UnmatchedRequestError, fake.UnexpectedCallError)
    # The runner logs a masked copy of a failure, whose foreign levels are stand-ins of the
    # same module and name: those count too.
    names = {(kind.__module__, kind.__qualname__) for kind in problems}
    return next(
        (
            member
            for member in iter_chain(exc)
            if isinstance(member, problems)
            or (type(member).__module__, type(member).__qualname__) in names
        ),
        None,
    )


def _fake_problem(exc: BaseException) -> str | None:
    """The fake upstream's report of the problem ``exc`` comes from, or None."""
    problem = fake_problem(exc)
    if problem is None:
        return None
    if not isinstance(problem, AssertionError):  # a logged stand-in: its message is all it has
        return str(problem)
    from ._fake._upstream import problem_report

    return problem_report([problem])


def _technical(exc: BaseException) -> str:
    """The technical message and its cause, masked: it lands in test output and CI logs."""
    text = f"{type(exc).__name__}: {exc}"
    cause = exc.__cause__ or exc.__context__
    if cause is not None:
        text += f" (caused by {type(cause).__name__}: {cause})"
    return redact(text)


def _mismatch(
    got: BaseException | None, expected: type[LLMReadableException], correctable: bool | None
) -> str | None:
    """Why ``got`` does not meet the expectation, or None when it does."""
    name = expected.__name__
    if got is None:
        return f"Expected the call to fail with {name}, but it returned normally."
    if isinstance(got, UpstreamRetryException):
        return (
            f"Expected {name}, but a retry signal escaped: {type(got).__name__}. The runner "
            "retries the call on a signal and the model never sees one; a tool test should "
            "go through run_tool, or expect the failure the exhausted budget produces."
        )
    if not isinstance(got, LLMReadableException):
        seen = unwrap(got, component="the tool")
        fix = f"Raise {name} where this fails"
        # What @llm_errors makes of it is ``seen``: suggest the decorator only when that is
        # what the test expects; it turns most foreign exceptions into a SystemException.
        if _mismatch(seen, expected, correctable) is None:
            fix += f", or decorate the tool with @llm_errors, which turns it into {name}"
        return (
            f"Expected {name}, but the call raised {type(got).__name__}, which is outside the "
            f"failure set. The model would read it as:\n{seen.explain_to_llm()}\n"
            f"Technical cause: {_technical(got)}\n{fix}."
        )
    if isinstance(got, SystemException) and not issubclass(expected, SystemException):
        return (
            f"Expected {name}, but the failure reached the model as a SystemException, which "
            f"tells it only that something broke:\n{got.explain_to_llm()}\n"
            f"Technical cause: {_technical(got)}"
        )
    if not isinstance(got, expected):
        return (
            f"Expected {name}, but the call failed with {type(got).__name__}. "
            f"The model read:\n{got.explain_to_llm()}"
        )
    if correctable is not None and got.is_correctable is not correctable:
        return (
            f"Expected {'a correctable' if correctable else 'an uncorrectable'} {name}, but "
            f"{type(got).__name__} is {'correctable' if got.is_correctable else 'uncorrectable'}. "
            f"The model read:\n{got.explain_to_llm()}"
        )
    return None


class fails_with(Generic[E]):  # noqa: N801 - used like pytest.raises
    """Like ``pytest.raises``, for the failure set: checks the class, its correctability, and
    gives the text the model reads as ``.explanation``.

    ``with fails_with(InvalidInputException, correctable=True) as failure: tool(...)``.
    A foreign exception, or one that reached the model as a SystemException, fails with a
    message that says so and shows the technical cause. ``match`` is a regular expression
    searched (``re.search``) in the model text, as ``pytest.raises(match=...)`` searches the
    exception's message; to check the whole text, compare ``failure.explanation`` with a
    snapshot instead.
    """

    def __init__(
        self,
        expected: type[E],
        *,
        correctable: bool | None = None,
        match: str | re.Pattern[str] | None = None,
    ) -> None:
        __tracebackhide__ = True
        _check_expectation(expected, correctable, "fails_with")
        self.expected = expected
        """The class the block must raise (itself, not only somewhere in its cause chain)."""
        self.correctable = correctable
        """Whether the failure must be correctable; None: either."""
        self.match = _check_pattern(match)
        """The pattern the model text must contain (``re.search``), compiled; None: no check."""
        self.failure: Failure[E] = Failure()
        """What ``with fails_with(...) as failure`` gives: filled in when the block ends."""

    def __enter__(self) -> Failure[E]:
        return self.failure

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        __tracebackhide__ = True
        if exc is not None and not isinstance(exc, Exception):
            return False  # KeyboardInterrupt, CancelledError, pytest's own outcomes
        fake_problem = None if exc is None else _fake_problem(exc)
        if fake_problem is not None:
            # Without the chain: each exception in it would repeat the URL, the last the fix.
            raise pytest.fail.Exception(fake_problem, pytrace=False) from None
        problem = _mismatch(exc, self.expected, self.correctable)
        if problem is not None:
            pytest.fail(problem, pytrace=exc is not None)
        assert isinstance(exc, self.expected)
        self.failure._fill(exc)
        if self.match is not None and not self.match.search(self.failure.explanation):
            # Without the chain: the exception is the expected one, only its text is not.
            raise pytest.fail.Exception(
                f"{self.expected.__name__} was raised, but the model text does not match the "
                f"pattern.\nPattern: {self.match.pattern!r}\n"
                f"Model text:\n{self.failure.explanation}",
                pytrace=False,
            ) from None
        return True


class _ResultLike(Protocol):
    is_error: bool
    text: str
    exception: BaseException | None


def assert_error_result(
    result: _ResultLike, expected: type[E], *, correctable: bool | None = None
) -> Failure[E]:
    """``fails_with`` for a ``ToolResult`` from ``run_tool``: the result is an error of class
    ``expected`` and its text is exactly that exception's ``explain_to_llm()``."""
    __tracebackhide__ = True
    _check_expectation(expected, correctable, "assert_error_result")
    fake_problem = None if result.exception is None else _fake_problem(result.exception)
    if fake_problem is not None:
        pytest.fail(fake_problem, pytrace=False)
    if not result.is_error:
        pytest.fail(
            f"Expected an error result with {expected.__name__}, but the tool succeeded. "
            f"The model read:\n{result.text}",
            pytrace=False,
        )
    problem = _mismatch(result.exception, expected, correctable)
    if problem is not None:
        pytest.fail(problem, pytrace=False)
    assert isinstance(result.exception, expected)
    failure: Failure[E] = Failure()
    failure._fill(result.exception)
    if result.text != failure.explanation:
        pytest.fail(
            "The result's text is not its exception's explain_to_llm():\n"
            f"text:\n{result.text}\nexplain_to_llm():\n{failure.explanation}",
            pytrace=False,
        )
    return failure
