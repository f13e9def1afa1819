"""Every path from a failure to what the model reads is total over hostile objects: whatever an
exception's own code does when it is read (its links, its class, its message, its group's
members, a subclass of the set's own methods), and whatever a provider SDK's stand-in looks
like, nothing escapes but a stop, and no stop is swallowed, however it is wrapped."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pytest_nucleo as nucleo
from pytest_nucleo._chain import recognise_foreign
from pytest_nucleo._runner._results import ToolResult

# The tools below leak foreign exceptions on purpose.
pytestmark = pytest.mark.nucleo(expect_leaks=True)

STOPS = (KeyboardInterrupt, SystemExit)


def _raise(*_: object, **__: object) -> NoReturn:
    raise RuntimeError("hostile")


def _raise_exit(*_: object, **__: object) -> NoReturn:
    raise GeneratorExit


def _hostile_property(name: str, base: type[BaseException] = Exception) -> type[BaseException]:
    return type(f"Hostile{name.strip('_').title()}", (base,), {name: property(_raise)})


class RaisingGetattribute(Exception):
    def __getattribute__(self, name: str) -> Any:
        raise RuntimeError(f"no {name}")


class RaisingStr(Exception):
    __str__ = _raise_exit


class RaisingMembers(ExceptionGroup[Exception]):
    @property
    def exceptions(self) -> Any:
        raise RuntimeError("no members")


class RaisingExplain(nucleo.InvalidInputException):
    def explain_to_llm(self) -> str:  # type: ignore[misc]  # final: a hostile subclass
        raise RuntimeError("no text")


class RaisingCorrectable(nucleo.ExternalServiceException):
    @property
    def is_correctable(self) -> bool:  # type: ignore[override]
        raise RuntimeError("no answer")


def _from_package(package: str) -> BaseException:
    """An exception whose class says it comes from ``package`` (a provider SDK, a client):
    the registries read it through that package's support module."""
    kind = type("APIStatusError", (Exception,), {"__module__": f"{package}._exceptions"})
    error: BaseException = kind("stand-in")
    error.response = object()  # type: ignore[attr-defined]
    error.status_code = "x"  # type: ignore[attr-defined]
    return error


def _chain(links: int) -> BaseException:
    error: BaseException = ValueError("the first")
    for number in range(links):
        following = ValueError(f"link {number}")
        following.__cause__ = error
        error = following
    return error


def _builders() -> dict[str, Callable[[], BaseException]]:
    made: dict[str, Callable[[], BaseException]] = {
        name: (lambda name=name: _hostile_property(name)("hostile"))  # type: ignore[misc]
        for name in ("__cause__", "__context__", "__suppress_context__", "__traceback__")
    }
    made.update(
        {
            "__class__": lambda: _hostile_property("__class__")("hostile"),
            "__getattribute__": lambda: RaisingGetattribute("hostile"),
            "__str__ GeneratorExit": lambda: RaisingStr("hostile"),
            "group members": lambda: RaisingMembers("group", [ValueError("inside")]),
            "explain_to_llm": lambda: RaisingExplain("p", 1, "must be 2"),
            "is_correctable": lambda: RaisingCorrectable("Shop", "down"),
            "chain of 988": lambda: _chain(988),
            "huge message": lambda: ValueError("x" * 20_000),
            "surrogates": lambda: nucleo.CorrectableRuntimeLLMException("file-\udcff"),
            "wrapped hostile": lambda: _wrapped(RaisingStr("inner")),
        }
    )
    for package in ("openai", "anthropic", "google", "httpx", "requests", "botocore"):
        made[f"stand-in {package}"] = lambda package=package: _from_package(package)  # type: ignore[misc]
    return made


def _wrapped(inner: BaseException) -> BaseException:
    outer = RuntimeError("wrapper")
    outer.__cause__ = inner
    return outer


BUILDERS = _builders()


def _stop(kind: type[BaseException], nested: int) -> BaseException:
    """A stop as anyio's and trio's task groups raise it: inside ``nested`` groups."""
    stop: BaseException = kind()
    for _ in range(nested):
        stop = BaseExceptionGroup("task group", [ValueError("sibling"), stop])
    return stop


hostile = st.sampled_from(sorted(BUILDERS)).map(lambda name: BUILDERS[name])
stops = st.builds(
    lambda kind, nested: lambda: _stop(kind, nested),
    st.sampled_from(STOPS),
    st.integers(0, 3),
)


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)

    def emit(self, record: logging.LogRecord) -> None:
        self.format(record)  # builds the masked traceback, as a real handler does


@pytest.fixture(scope="module")
def log_handler() -> Iterator[logging.Handler]:
    handler = _Records()
    yield handler
    logging.getLogger("pytest_nucleo.runner").removeHandler(handler)


def _is_stop(error: BaseException) -> bool:
    return isinstance(error, STOPS) or (
        isinstance(error, BaseExceptionGroup)
        and any(_is_stop(member) for member in error.exceptions)
    )


def _readable(outcome: Callable[[], object], translating: bool = False) -> None:
    """``outcome()`` returns, or raises a failure of the set or a retry signal only; a block
    (``llm_errors``, ``service_call``) also lets an exception that is not an ``Exception``
    through as itself, as it lets a ``CancelledError`` through."""
    try:
        outcome()
    except (nucleo.LLMReadableException, nucleo.UpstreamRetryException):
        pass
    except BaseException as error:
        if not translating or issubclass(type(error), Exception):
            raise


def _check_result(result: ToolResult) -> None:
    assert isinstance(result, ToolResult)
    assert result.is_error
    assert type(result.text) is str
    result.text.encode("utf-8")
    assert result.exception is not None
    result.exception.explain_to_llm().encode("utf-8")


def _paths(make: Callable[[], BaseException], handler: logging.Handler, logged: bool) -> None:
    logger = logging.getLogger("pytest_nucleo.runner")
    if logged:
        logger.addHandler(handler)
    else:
        logger.removeHandler(handler)

    def tool() -> None:
        raise make()

    async def atool() -> None:
        raise make()

    _check_result(nucleo.run_tool(tool))
    _check_result(asyncio.run(nucleo.arun_tool(atool)))
    _readable(lambda: nucleo.unwrap(make()))
    _readable(lambda: nucleo.wrap_with_context(make(), "Shop", "order", {"a": 1}, "fetch"))
    _readable(nucleo.llm_errors(tool), translating=True)
    _readable(lambda: asyncio.run(nucleo.llm_errors(atool)()), translating=True)

    def in_service_call() -> None:
        with nucleo.service_call("Shop", "order", 7, "fetch"):
            tool()

    _readable(in_service_call, translating=True)
    assert isinstance(recognise_foreign(make()), BaseException)
    assert nucleo.is_not_found(make()) in (True, False)


@settings(max_examples=40, deadline=None)
@given(make=hostile, logged=st.booleans())
def test_no_hostile_exception_escapes_any_path(
    make: Callable[[], BaseException], logged: bool, log_handler: logging.Handler
) -> None:
    _paths(make, log_handler, logged)


@settings(max_examples=20, deadline=None)
@given(make=hostile, logged=st.booleans())
def test_no_hostile_cause_escapes_any_path(
    make: Callable[[], BaseException], logged: bool, log_handler: logging.Handler
) -> None:
    _paths(lambda: _wrapped(make()), log_handler, logged)


@settings(max_examples=20, deadline=None)
@given(make=stops, logged=st.booleans())
def test_no_stop_is_swallowed(
    make: Callable[[], BaseException], logged: bool, log_handler: logging.Handler
) -> None:
    logger = logging.getLogger("pytest_nucleo.runner")
    (logger.addHandler if logged else logger.removeHandler)(log_handler)

    def tool() -> None:
        raise make()

    async def atool() -> None:
        raise make()

    def in_service_call() -> None:
        with nucleo.service_call("Shop", "order", 7, "fetch"):
            tool()

    for path in (
        lambda: nucleo.run_tool(tool),
        lambda: asyncio.run(nucleo.arun_tool(atool)),
        lambda: asyncio.run(nucleo.arun_tool(atool, timeout=30.0)),
        nucleo.llm_errors(tool),
        lambda: asyncio.run(nucleo.llm_errors(atool)()),
        in_service_call,
    ):
        with pytest.raises((*STOPS, BaseExceptionGroup)) as raised:
            path()
        assert _is_stop(raised.value), path


class _HostileArguments(dict[str, object]):
    def __init__(self, raises: Callable[[], BaseException]) -> None:
        super().__init__(order=1)
        self.raises = raises

    def __iter__(self) -> Iterator[str]:
        raise self.raises()


@settings(max_examples=10, deadline=None)
@given(raises=st.sampled_from([RuntimeError, GeneratorExit, KeyboardInterrupt, SystemExit]))
def test_argument_mappings_whose_iteration_raises(raises: type[BaseException]) -> None:
    def tool(order: int) -> int:
        return order

    arguments = _HostileArguments(raises)
    if raises in STOPS:
        with pytest.raises(raises):
            nucleo.run_tool(tool, arguments)
        return
    _check_result(nucleo.run_tool(tool, arguments))
    _check_result(asyncio.run(nucleo.arun_tool(tool, arguments)))
    _readable(lambda: nucleo.wrap_with_context(ValueError("x"), "Shop", "q", arguments, "fetch"))
