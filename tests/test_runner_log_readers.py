"""The runner builds a failure's log record only when something would read it.

A failure is logged on every call that fails; an application that sends the package's records
nowhere (its NullHandler alone, or handlers above the level) pays nothing for them, and any
reader (a filter, a handler, logging's last resort) gets the record as before.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

import pytest_nucleo as nucleo
from pytest_nucleo._runner import _log

PACKAGE = logging.getLogger("pytest_nucleo")


def broken() -> None:
    raise nucleo.ExternalServiceException("Shop", "HTTP 503")


def wrong() -> None:
    raise nucleo.InvalidInputException("number", "x", "must be digits")


@pytest.fixture
def records_built(monkeypatch: pytest.MonkeyPatch) -> list[logging.LogRecord]:
    """Each uncorrectable failure's record, as the runner builds it."""
    built: list[logging.LogRecord] = []

    class Counted(_log._RedactedRecord):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            built.append(self)

    monkeypatch.setattr(_log, "_RedactedRecord", Counted)
    return built


@pytest.fixture
def routed_nowhere(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Call it in the test's body: the package's records then stop at its own logger, whose
    only handler is the NullHandler (the plugin's watch of the runner's records is taken off,
    and pytest's capture, which it attaches to each phase's non-propagating loggers)."""

    def route() -> None:
        monkeypatch.setattr(PACKAGE, "propagate", False)
        monkeypatch.setattr(_log.logger, "handlers", [])
        own = [h for h in PACKAGE.handlers if type(h) is logging.NullHandler]
        assert len(own) == 1
        monkeypatch.setattr(PACKAGE, "handlers", own)

    return route


def _run_with_a_handler(
    level: int, monkeypatch: pytest.MonkeyPatch, tool: Callable[[], None] = broken
) -> list[logging.LogRecord]:
    """Run ``tool`` with a handler of ``level`` on the package's logger; what it got."""
    seen: list[logging.LogRecord] = []
    handler = logging.Handler(level)
    monkeypatch.setattr(handler, "emit", seen.append)
    PACKAGE.addHandler(handler)
    try:
        nucleo.run_tool(tool)
    finally:
        PACKAGE.removeHandler(handler)
    return seen


def test_no_record_is_built_when_only_the_null_handler_would_get_it(
    routed_nowhere: Callable[[], None], records_built: list[logging.LogRecord]
) -> None:
    routed_nowhere()
    result = nucleo.run_tool(broken)
    assert result.is_error
    assert records_built == []


def test_a_handler_above_error_does_not_make_the_runner_build_a_record(
    routed_nowhere: Callable[[], None],
    records_built: list[logging.LogRecord],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    routed_nowhere()
    seen = _run_with_a_handler(logging.CRITICAL, monkeypatch)
    assert records_built == []
    assert seen == []


def test_a_handler_that_takes_errors_gets_the_record_with_its_stack(
    routed_nowhere: Callable[[], None],
    records_built: list[logging.LogRecord],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    routed_nowhere()
    [record] = _run_with_a_handler(logging.ERROR, monkeypatch)
    assert records_built == [record]
    assert record.levelno == logging.ERROR
    assert record.getMessage() == "tool broken failed: Shop: HTTP 503"
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], nucleo.ExternalServiceException)


def test_a_filter_on_the_runners_logger_sees_the_record(
    routed_nowhere: Callable[[], None], records_built: list[logging.LogRecord]
) -> None:
    routed_nowhere()
    filtered: list[logging.LogRecord] = []

    def keep(record: logging.LogRecord) -> bool:
        filtered.append(record)
        return True

    _log.logger.addFilter(keep)
    try:
        nucleo.run_tool(broken)
    finally:
        _log.logger.removeFilter(keep)
    assert len(filtered) == 1
    assert filtered == records_built


def test_with_no_handler_at_all_the_last_resort_still_writes_the_failure(
    routed_nowhere: Callable[[], None],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    routed_nowhere()
    monkeypatch.setattr(PACKAGE, "handlers", [])
    nucleo.run_tool(broken)
    assert "tool broken failed: Shop: HTTP 503" in capsys.readouterr().err


def test_a_correctable_failure_is_logged_only_when_a_handler_takes_warnings(
    routed_nowhere: Callable[[], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    routed_nowhere()
    made: list[logging.LogRecord] = []
    make = _log.logger.makeRecord

    def counted(*args: object, **kwargs: object) -> logging.LogRecord:
        record = make(*args, **kwargs)  # type: ignore[arg-type]
        made.append(record)
        return record

    monkeypatch.setattr(_log.logger, "makeRecord", counted)
    nucleo.run_tool(wrong)
    assert made == []
    [record] = _run_with_a_handler(logging.WARNING, monkeypatch, wrong)
    assert made == [record]
    assert record.levelno == logging.WARNING
    assert record.exc_info is None


def test_a_reader_that_wraps_call_handlers_still_gets_every_failure(
    routed_nowhere: Callable[[], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    # As Sentry's logging integration does: it replaces Logger.callHandlers and turns records
    # into events whatever handlers there are, so an application with no handler of its own
    # still reports tool failures.
    routed_nowhere()
    taken: list[tuple[str, int]] = []
    original = logging.Logger.callHandlers

    def reporting(self: logging.Logger, record: logging.LogRecord) -> None:
        taken.append((record.name, record.levelno))
        original(self, record)

    monkeypatch.setattr(logging.Logger, "callHandlers", reporting)
    nucleo.run_tool(broken)
    nucleo.run_tool(wrong)
    assert taken == [
        ("pytest_nucleo.runner", logging.ERROR),
        ("pytest_nucleo.runner", logging.WARNING),
    ]


def test_a_logger_class_of_its_own_still_gets_every_failure(
    routed_nowhere: Callable[[], None],
    records_built: list[logging.LogRecord],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    routed_nowhere()
    handled: list[logging.LogRecord] = []

    class Watching(logging.Logger):
        def handle(self, record: logging.LogRecord) -> None:
            handled.append(record)
            super().handle(record)

    monkeypatch.setattr(_log.logger, "__class__", Watching)
    nucleo.run_tool(broken)
    assert handled == records_built
    assert len(handled) == 1
