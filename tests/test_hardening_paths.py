"""Each path that turns a failure into what the model reads stays total and bounded where an
adversarial tester found it was not: a provider SDK of another version (or a stand-in module
of its name), a success text holding lone surrogates, a cause chain of 100,000 links or a
message of megabytes under a log handler, and a stop wrapped in an exception group."""

from __future__ import annotations

import asyncio
import logging
import sys
import types
from collections.abc import Iterator

import pytest

import pytest_nucleo as nucleo
from pytest_nucleo._causes import MAX_CHAIN
from pytest_nucleo._runner._log import LOG_MESSAGE_LIMIT
from pytest_nucleo.adapters._core import ToolFailureText, success_text

# The tools below leak foreign exceptions on purpose.
pytestmark = pytest.mark.nucleo(expect_leaks=True)

# -- a provider SDK the support module cannot read ---------------------------------------------


def _error_of(package: str) -> type[Exception]:
    """An exception class that comes from ``package``, as the registry sees it."""
    return type("RateLimitError", (Exception,), {"__module__": f"{package}._exceptions"})


@pytest.fixture
def old_openai(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """openai as 0.28 was (no APIStatusError), or as a test double is: our support module is
    imported again against it."""
    stand_in = types.ModuleType("openai")
    stand_in.error = types.SimpleNamespace()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "openai", stand_in)
    monkeypatch.delitem(sys.modules, "pytest_nucleo._http._providers._openai", raising=False)
    return stand_in


def test_an_old_openai_falls_back_to_the_generic_reading(old_openai: types.ModuleType) -> None:
    error = _error_of("openai")("slow down")

    def tool() -> None:
        raise error

    result = nucleo.run_tool(tool)
    assert result.is_error
    assert isinstance(result.exception, nucleo.SystemException)
    assert isinstance(nucleo.unwrap(error), nucleo.SystemException)
    with pytest.raises(nucleo.SystemException):
        nucleo.llm_errors(tool)()
    assert not nucleo.is_not_found(error)


def test_a_support_module_that_cannot_be_imported_counts_as_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pytest_nucleo._http import _providers

    monkeypatch.setitem(_providers._SUPPORT, "acme_sdk", "_no_such_module")
    error = _error_of("acme_sdk")("boom")
    assert _providers.provider_answer(error) is None
    assert _providers.sdk_retries(error) == 0
    assert isinstance(nucleo.unwrap(error), nucleo.SystemException)


def test_a_support_module_that_raises_while_reading_counts_as_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pytest_nucleo._http import _providers

    broken = types.ModuleType("broken_support")

    def provider_answer(exc: BaseException) -> None:
        raise AttributeError("module 'openai' has no attribute 'APIStatusError'")

    broken.provider_answer = provider_answer  # type: ignore[attr-defined]
    broken.sdk_retries = provider_answer  # type: ignore[attr-defined]
    monkeypatch.setattr(_providers._REGISTRY, "find", lambda obj: broken)
    assert _providers.provider_answer(ValueError()) is None
    assert _providers.sdk_retries(ValueError()) == 0


# -- every text the model reads encodes as UTF-8 -----------------------------------------------

NOT_UTF8 = "report-\udcff.csv"  # what os.listdir gives for a name holding the byte 0xff


@pytest.mark.parametrize("value", [NOT_UTF8, [NOT_UTF8], {"name": NOT_UTF8}, NOT_UTF8 * 30_000])
def test_a_success_text_encodes_as_utf8(value: object) -> None:
    result = nucleo.run_tool(lambda: value)
    assert not result.is_error
    assert "\ufffd" in result.text
    result.text.encode("utf-8")
    success_text(value).encode("utf-8")


def test_a_failure_text_handed_to_a_framework_encodes_as_utf8() -> None:
    text = ToolFailureText(f"The file {NOT_UTF8} was not found.")
    assert str(text).encode("utf-8") == "The file report-\ufffd.csv was not found.".encode()


# -- the log copy of a failure is bounded ------------------------------------------------------


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.format(record)  # formats the traceback too, as a real handler does
        self.records.append(record)


@pytest.fixture
def records() -> Iterator[list[logging.LogRecord]]:
    handler = _Records()
    logger = logging.getLogger("pytest_nucleo.runner")
    logger.addHandler(handler)
    try:
        yield handler.records
    finally:
        logger.removeHandler(handler)


def _chain_length(exc: BaseException | None) -> int:
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return len(seen)


@pytest.mark.parametrize("links", [988, 100_000])
def test_a_long_chain_is_logged_without_recursion(
    records: list[logging.LogRecord], links: int
) -> None:
    def tool() -> None:
        error = ValueError("the first")
        for number in range(links):
            following = ValueError(f"link {number}")
            following.__cause__ = error
            error = following
        raise error

    result = nucleo.run_tool(tool)
    assert isinstance(result.exception, nucleo.SystemException)
    (record,) = records
    assert record.exc_info is not None
    assert _chain_length(record.exc_info[1]) <= MAX_CHAIN


def test_a_huge_message_is_cut_in_the_log_copy(records: list[logging.LogRecord]) -> None:
    def tool() -> None:
        raise ValueError("upstream said " + "x" * 1_000_000)

    nucleo.run_tool(tool)
    (record,) = records
    assert record.exc_info is not None
    logged = record.exc_info[1]
    assert logged is not None
    messages = [str(logged), str(logged.__cause__)]
    assert all(len(message) < LOG_MESSAGE_LIMIT + 100 for message in messages)
    assert "more characters cut" in str(logged.__cause__)
    assert len(record.getMessage()) < LOG_MESSAGE_LIMIT + 200


# -- a stop propagates however it is wrapped ---------------------------------------------------


def _grouped(stop: BaseException) -> BaseExceptionGroup[BaseException]:
    # As anyio's and trio's task groups raise it: a group inside a group.
    return BaseExceptionGroup("task group", [BaseExceptionGroup("inner", [ValueError(), stop])])


@pytest.mark.parametrize("stop", [KeyboardInterrupt(), SystemExit(3)])
def test_a_stop_inside_a_group_propagates_from_run_tool(stop: BaseException) -> None:
    def tool() -> None:
        raise _grouped(stop)

    with pytest.raises(type(stop)) as raised:
        nucleo.run_tool(tool)
    assert raised.value is stop


@pytest.mark.parametrize("stop", [KeyboardInterrupt(), SystemExit(3)])
def test_a_stop_inside_a_group_propagates_from_arun_tool(stop: BaseException) -> None:
    async def tool() -> None:
        raise _grouped(stop)

    with pytest.raises(type(stop)):
        asyncio.run(nucleo.arun_tool(tool))
    with pytest.raises(type(stop)):
        asyncio.run(nucleo.arun_tool(tool, timeout=10.0))


def test_a_stop_inside_a_group_propagates_from_llm_errors() -> None:
    @nucleo.llm_errors
    def tool() -> None:
        raise _grouped(KeyboardInterrupt())

    with pytest.raises(BaseExceptionGroup):
        tool()


def test_a_generator_exit_inside_a_group_is_a_failure() -> None:
    def tool() -> None:
        raise BaseExceptionGroup("task group", [GeneratorExit()])

    result = nucleo.run_tool(tool)
    assert isinstance(result.exception, nucleo.SystemException)


def test_a_stop_from_an_argument_mapping_propagates() -> None:
    class Stopping(dict[str, object]):
        def __iter__(self) -> Iterator[str]:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        nucleo.run_tool(lambda: None, Stopping())


def test_a_message_whose_str_raises_generator_exit_reads_as_unreadable() -> None:
    from pytest_nucleo._text._message import message_of, readable_message

    class Odd(Exception):
        def __str__(self) -> str:
            raise GeneratorExit

    assert readable_message(Odd()) is None
    assert message_of(Odd()) == "(the message of this Odd could not be read)"
