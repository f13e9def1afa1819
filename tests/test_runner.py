"""The runner: what the model reads for a call, on a fake clock."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import enum
import functools
import json
import logging
import threading
import tracemalloc
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo import (
    CORRECTABLE_HINT,
    UNCORRECTABLE_HINT,
    CancelToken,
    FakeClock,
    RateLimiter,
    ToolResult,
    arun_tool,
    run_tool,
)
from pytest_nucleo.testing import text_problems

SECRET = "sk-live-0123456789abcdefABCDEF"


class Http429(nucleo.UpstreamThrottleException):
    """Stands in for the HTTP issue's carrier."""

    status_code = 429


def get_order(order_number: str, *, include_items: bool = False) -> dict[str, Any]:
    if not order_number.isdigit():
        raise nucleo.InvalidInputException("order_number", order_number, "must be 8 digits")
    if order_number == "00000500":
        raise KeyError(f"eta (token={SECRET})")
    return {"number": order_number, "status": "expédiée", "items": [] if include_items else None}


# --- success ---------------------------------------------------------------------------------


def test_success_is_serialized_deterministically(llm_snapshot: SnapshotAssertion) -> None:
    class Colour(enum.Enum):
        RED = "red"

    @dataclasses.dataclass
    class Line:
        sku: str
        qty: int

    value = {
        "zeta": 1,
        "alpha": ["é", None, True, 1.5],
        "tags": {"b", "a"},
        "when": datetime.date(2026, 11, 30),
        "colour": Colour.RED,
        "line": Line("A-1", 2),
        "pair": (1, 2),
    }
    result = run_tool(lambda: value, {})
    assert result == ToolResult(False, result.text, value, None)
    assert result.text == llm_snapshot
    assert result.text.startswith('{"alpha": ["é", null, true, 1.5], "colour": "red"')


@pytest.mark.parametrize(
    ("value", "text"),
    [("plain text\nas is", "plain text\nas is"), (None, "null"), (42, "42"), ([], "[]")],
)
def test_strings_are_returned_as_is_and_the_rest_as_json(value: object, text: str) -> None:
    assert run_tool(lambda: value).text == text


@pytest.mark.nucleo(expect_leaks=True)
def test_a_value_that_cannot_be_serialized_is_a_bug_of_the_tool(
    caplog: pytest.LogCaptureFixture,
) -> None:
    result = run_tool(lambda: object(), name="weird")
    assert result.is_error
    assert isinstance(result.exception, nucleo.SystemException)
    assert result.text.startswith("A system error occurred in weird.")
    assert str(result.exception).endswith(
        "cannot be serialized for the model: a value of type object has no JSON form"
    )
    assert [r.levelno for r in caplog.records] == [logging.ERROR]


class RaisingModel:
    """Looks like a pydantic model whose serializer fails, quoting its configuration."""

    def model_dump(self, mode: str) -> dict[str, Any]:
        raise RuntimeError(f"cannot dump Settings(api_key={SECRET!r})")


class Connection:
    def __deepcopy__(self, memo: dict[int, Any]) -> Connection:
        raise RuntimeError(f"a live connection cannot be copied (api_key={SECRET})")


@dataclasses.dataclass
class HoldsAConnection:
    connection: Connection = dataclasses.field(default_factory=Connection)


class BrokenMapping(Mapping[str, str]):
    def __getitem__(self, key: str) -> str:
        raise LookupError(f"mapping view lost (api_key={SECRET})")

    def __iter__(self) -> Iterator[str]:
        raise LookupError(f"mapping view lost (api_key={SECRET})")

    def __len__(self) -> int:
        return 1


class Drawn:
    def __str__(self) -> str:
        return "a chart of 3 orders"


@pytest.mark.nucleo(expect_leaks=True)
def test_with_str_fallback_a_value_with_no_json_form_reads_as_its_str() -> None:
    assert run_tool(lambda: Drawn()).is_error  # the plain runner keeps its documented text
    result = run_tool(lambda: Drawn(), str_fallback=True)
    assert (result.is_error, result.text) == (False, "a chart of 3 orders")
    assert isinstance(result.value, Drawn)
    bounded = run_tool(lambda: Drawn(), str_fallback=True, text_limit=10)
    assert bounded.text.startswith("a chart \n\n[9 of its 19 characters cut from the middle")
    async_result = asyncio.run(arun_tool(lambda: Drawn(), str_fallback=True))
    assert async_result.text == "a chart of 3 orders"
    # Serialization that raises for another reason is still the tool's bug.
    assert run_tool(lambda: RaisingModel(), str_fallback=True).is_error


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize(
    "value", [RaisingModel(), HoldsAConnection(), BrokenMapping()], ids=["model", "copy", "mapping"]
)
def test_a_value_whose_serialization_raises_is_a_bug_of_the_tool(value: object) -> None:
    result = run_tool(lambda: value, name="settings")
    assert isinstance(result.exception, nucleo.SystemException)
    assert result.text.startswith("A system error occurred in settings.")
    assert "cannot be serialized" in str(result.exception)
    for shown in (str(result.exception), repr(result.exception), *result.exception.args):
        assert SECRET not in str(shown)


def test_a_long_success_text_is_cut_in_the_middle_and_says_how_to_narrow(
    llm_snapshot: SnapshotAssertion,
) -> None:
    @nucleo.tool(text_limit=120)
    def list_logs() -> str:
        return "".join(f"line {n:04d}\n" for n in range(100))  # 1,000 characters

    result = run_tool(list_logs)
    full = list_logs()
    assert result.value == full  # the value keeps it all
    head, _, rest = result.text.partition("\n\n[")
    note, _, tail = rest.rpartition("]\n\n")
    assert (head, tail) == (full[:90], full[-30:])
    assert "880 of its 1,000 characters cut" in note
    assert "narrower request" in note
    assert result.text == llm_snapshot


def test_the_runner_option_replaces_the_decorators_limit() -> None:
    @nucleo.tool(text_limit=120)
    def rows() -> list[int]:
        return list(range(1000))

    assert len(run_tool(rows, text_limit=10_000).text) == len(json.dumps(list(range(1000))))
    narrow = run_tool(rows, text_limit=40)
    assert narrow.text.startswith("[0, 1, 2, 3, 4, 5, 6, 7, 8,")
    assert narrow.text.endswith(".]\n\n 998, 999]")
    assert narrow.value == list(range(1000))
    awaited = asyncio.run(arun_tool(rows, text_limit=40))
    assert awaited.text == narrow.text


def test_the_default_bound_holds_a_huge_text_without_copying_it() -> None:
    huge = "x" * 20_000_000
    tracemalloc.start()
    try:
        result = run_tool(lambda: huge)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.value is huge
    assert nucleo.DEFAULT_TEXT_LIMIT == 50_000
    assert nucleo.DEFAULT_TEXT_LIMIT < len(result.text) < nucleo.DEFAULT_TEXT_LIMIT + 400
    assert peak < 1_000_000  # the two windows, not another 20 MB


@pytest.mark.parametrize("bad", [0, -5, 2.5, True, "100"])
def test_an_impossible_text_limit_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="text_limit must be a whole number of characters >= 1"):
        nucleo.tool(text_limit=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="text_limit must be a whole number of characters >= 1"):
        run_tool(lambda: "ok", text_limit=bad)  # type: ignore[arg-type]


# --- failures --------------------------------------------------------------------------------


@pytest.mark.nucleo(expect_leaks=True)
def test_a_foreign_exception_reaches_the_model_as_a_system_exception(
    llm_snapshot: SnapshotAssertion, caplog: pytest.LogCaptureFixture
) -> None:
    result = run_tool(get_order, {"order_number": "00000500"})
    assert result.is_error
    assert result.value is None
    assert isinstance(result.exception, nucleo.SystemException)
    assert result.exception.component == "get_order"
    assert isinstance(result.exception.__cause__, KeyError)
    assert result.text == (
        "A system error occurred in get_order. The operation could not be completed.\n"
        + UNCORRECTABLE_HINT
    )
    assert result.text == llm_snapshot
    [record] = caplog.records
    assert record.levelno == logging.ERROR
    assert record.name == "pytest_nucleo.runner"
    assert record.exc_info is not None
    # A copy of the failure, its cause a masked stand-in: a handler reading the object itself
    # (rich's tracebacks) finds no secret either.
    logged = record.exc_info[1]
    assert type(logged) is nucleo.SystemException
    assert logged is not result.exception
    assert logged.explain_to_llm() == result.text
    assert type(logged.__cause__).__name__ == "KeyError"
    assert SECRET[3:] not in str(logged.__cause__)
    assert "KeyError" in caplog.text  # the stack trace, cause included, goes to the log
    assert SECRET[3:] not in caplog.text
    assert SECRET[3:] not in record.getMessage()


def test_a_correctable_failure_is_logged_at_warning_without_a_stack(
    llm_snapshot: SnapshotAssertion, caplog: pytest.LogCaptureFixture
) -> None:
    result = run_tool(get_order, {"order_number": "12-AB"})
    assert result.is_error
    assert isinstance(result.exception, nucleo.InvalidInputException)
    assert result.text.endswith(CORRECTABLE_HINT)
    assert result.text == llm_snapshot
    [record] = caplog.records
    assert record.levelno == logging.WARNING
    assert record.exc_info is None
    assert "Traceback" not in caplog.text
    assert "12-AB" not in record.getMessage()  # the technical message leaves the value out


def test_a_runtime_family_failure_reaches_the_model_as_itself() -> None:
    def callback() -> None:
        raise nucleo.CorrectableRuntimeLLMException("R-17 has no price; ask for another result.")

    result = run_tool(callback)
    assert type(result.exception) is nucleo.CorrectableRuntimeLLMException
    assert result.text.startswith("R-17 has no price")


def test_a_readable_failure_buried_in_a_foreign_one_is_kept() -> None:
    def tool_body() -> None:
        try:
            raise nucleo.ResourceNotFoundException("order", "00000099")
        except nucleo.ResourceNotFoundException as exc:
            raise RuntimeError("lookup failed") from exc

    result = run_tool(tool_body)
    assert isinstance(result.exception, nucleo.ResourceNotFoundException)


def test_keyboard_interrupt_is_never_swallowed() -> None:
    def interrupted() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_tool(interrupted)


class StrRaises(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no message today")


class StrReturnsANumber(Exception):
    def __str__(self) -> str:
        return 42  # type: ignore[return-value]


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("kind", [StrRaises, StrReturnsANumber])
def test_an_exception_whose_message_cannot_be_read_is_still_a_result(
    kind: type[Exception], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR)
    for result in (
        run_tool(raises_sync(kind), name="lookup"),
        asyncio.run(arun_tool(raises_async(kind), name="lookup")),
    ):
        assert isinstance(result.exception, nucleo.SystemException)
        assert str(result.exception) == f"lookup: {kind.__name__}"
    assert "tool lookup failed" in caplog.text  # the log record was formatted too


class Abort(BaseException):
    """A library's own BaseException, as some test frameworks and greenlet libraries raise."""


def raises_sync(kind: type[BaseException]) -> Any:
    def tool_body() -> None:
        raise kind()

    return tool_body


def raises_async(kind: type[BaseException]) -> Any:
    async def tool_body() -> None:
        raise kind()

    return tool_body


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("kind", [asyncio.CancelledError, GeneratorExit, Abort])
def test_a_base_exception_of_the_tools_own_is_a_bug_in_both_runners(
    kind: type[BaseException],
) -> None:
    sync_result = run_tool(raises_sync(kind), name="lookup")
    threaded = asyncio.run(arun_tool(raises_sync(kind), name="lookup"))
    awaited = asyncio.run(arun_tool(raises_async(kind), name="lookup"))
    for result in (sync_result, threaded, awaited):
        assert isinstance(result.exception, nucleo.SystemException)
        assert isinstance(result.exception.__cause__, kind)
        assert result.text.startswith("A system error occurred in lookup.")


def test_a_task_group_failing_after_its_body_is_the_tools_failure_not_a_stop() -> None:
    # On Python 3.11 (and 3.12 before 3.12.3) such a group leaves a cancellation request on
    # the task it ran in, as if the caller had cancelled it: the runner read a stop.
    async def tool() -> None:
        async def fail_later() -> None:
            await asyncio.sleep(0)  # one turn of the loop: the group's body has ended by then
            raise nucleo.ResourceNotFoundException("order", "42")

        async with asyncio.TaskGroup() as group:
            group.create_task(fail_later())

    async def both_runners() -> list[ToolResult]:
        return [await arun_tool(tool), await arun_tool(tool, timeout=60)]

    for result in [run_tool(tool), *asyncio.run(both_runners())]:
        assert isinstance(result.exception, nucleo.ResourceNotFoundException)
        assert result.text.startswith('No order was found with the identifier "42".')


def test_the_callers_cancellation_still_wins_over_a_task_groups_failure() -> None:
    # The caller cancels while the group waits for its task, whose cleanup fails: the group
    # raises that failure, and the caller's cancellation must still reach the caller.
    async def tool() -> None:
        async def fail_on_cancel() -> None:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                raise ValueError("cleanup failed") from None

        async with asyncio.TaskGroup() as group:
            group.create_task(fail_on_cancel())

    async def cancelled_caller() -> None:
        call = asyncio.create_task(arun_tool(tool))
        for _ in range(3):  # the call starts, enters the group, waits for its task
            await asyncio.sleep(0)
        call.cancel()
        await call

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(cancelled_caller())


def test_an_async_tool_runs_in_the_callers_task() -> None:
    # So what the caller set up for its task (an anyio cancel scope's shield, a context
    # variable the tool sets) holds for the tool.
    async def tool() -> bool:
        return asyncio.current_task() is caller

    async def main() -> ToolResult:
        nonlocal caller
        caller = asyncio.current_task()
        return await arun_tool(tool)

    caller: asyncio.Task[Any] | None = None
    assert asyncio.run(main()).value is True


@pytest.mark.parametrize("kind", [KeyboardInterrupt, SystemExit])
def test_the_process_stopping_is_let_through_by_both_runners(kind: type[BaseException]) -> None:
    with pytest.raises(kind):
        run_tool(raises_sync(kind))
    with pytest.raises(kind):
        asyncio.run(arun_tool(raises_async(kind)))


# --- arguments -------------------------------------------------------------------------------


def test_a_missing_argument_is_the_models_mistake(llm_snapshot: SnapshotAssertion) -> None:
    called = []

    def tool_body(order_number: str, limit: int = 10) -> None:
        called.append(order_number)

    result = run_tool(tool_body, {"limit": 5})
    assert called == []
    assert isinstance(result.exception, nucleo.InvalidInputException)
    assert result.exception.parameter_name == "order_number"
    assert result.exception.is_correctable
    assert result.text == llm_snapshot


def test_an_unknown_argument_is_the_models_mistake(llm_snapshot: SnapshotAssertion) -> None:
    result = run_tool(get_order, {"order_numbr": "00000042"})
    assert isinstance(result.exception, nucleo.InvalidInputException)
    assert result.exception.parameter_name == "order_numbr"
    assert "order_number (required), include_items (optional)" in result.text
    assert result.text == llm_snapshot


def test_arguments_that_are_not_a_mapping_are_the_models_mistake(
    llm_snapshot: SnapshotAssertion,
) -> None:
    result = run_tool(get_order, ["00000042"])  # type: ignore[arg-type]
    assert isinstance(result.exception, nucleo.InvalidInputException)
    assert result.exception.parameter_name == "arguments"
    assert result.text == llm_snapshot


@pytest.mark.nucleo(expect_leaks=True)
def test_a_type_error_inside_the_tool_is_still_a_bug() -> None:
    def tool_body(count: int) -> int:
        return len(count)  # type: ignore[arg-type]

    result = run_tool(tool_body, {"count": 3})
    assert isinstance(result.exception, nucleo.SystemException)


def test_positional_only_and_var_parameters_are_bound_by_name() -> None:
    def tool_body(a: int, /, b: int = 2, *rest: int, c: int, **extra: int) -> list[Any]:
        return [a, b, rest, c, extra]

    assert run_tool(tool_body, {"a": 1, "c": 3}).value == [1, 2, (), 3, {}]
    assert run_tool(tool_body, {"a": 1, "rest": [7, 8], "c": 3, "z": 9}).value == [
        1,
        2,
        (7, 8),
        3,
        {"z": 9},
    ]
    bad = run_tool(tool_body, {"a": 1, "rest": 7, "c": 3})
    assert isinstance(bad.exception, nucleo.InvalidInputException)
    assert bad.exception.parameter_name == "rest"


def test_non_string_keys_are_refused() -> None:
    result = run_tool(get_order, {1: "x"})  # type: ignore[dict-item]
    assert isinstance(result.exception, nucleo.InvalidInputException)
    assert result.exception.parameter_name == "arguments"


@pytest.mark.nucleo(expect_leaks=True)
def test_tool_names_come_from_the_decorator_the_function_or_the_callable() -> None:
    @nucleo.tool(name="orders.fetch")
    def fetch() -> None:
        raise ValueError("boom")

    class Lookup:
        def __call__(self) -> None:
            raise ValueError("boom")

    def components(target: Any) -> str:
        exception = run_tool(target).exception
        assert isinstance(exception, nucleo.SystemException)
        return exception.component

    assert components(fetch) == "orders.fetch"
    assert components(functools.partial(get_order, "00000500")) == "get_order"
    assert components(Lookup()) == "Lookup"
    assert run_tool(fetch, name="override").text.startswith("A system error occurred in override.")


# --- retry signals ---------------------------------------------------------------------------


def flaky(failures: list[BaseException]) -> Any:
    def tool_body() -> str:
        if failures:
            raise failures.pop(0)
        return "ok"

    return tool_body


def test_retry_signals_are_retried_with_backoff_on_the_clock() -> None:
    clock = FakeClock()
    signals: list[BaseException] = [nucleo.TransientErrorRetryException("blip") for _ in range(3)]
    result = run_tool(flaky(signals), clock=clock)
    assert result.text == "ok"
    assert clock.sleeps == [0.5, 1.0, 2.0]


def test_a_suggested_delay_is_honoured() -> None:
    clock = FakeClock()
    signals: list[BaseException] = [nucleo.RateLimitRetryException("429", retry_after=7)]
    assert run_tool(flaky(signals), clock=clock).text == "ok"
    assert clock.sleeps == [7.0]


def test_tool_info_reads_what_the_decorator_attached() -> None:
    limiter = nucleo.RateLimiter("shop", max_requests=1, window_seconds=1.0)

    @nucleo.tool(name="orders.fetch", limiters=[limiter])
    def fetch(number: str) -> str:
        return number

    assert nucleo.ToolInfo.of(fetch) == nucleo.ToolInfo("orders.fetch", (limiter,))
    assert nucleo.ToolInfo.of(functools.partial(fetch, "1")) == nucleo.ToolInfo.of(fetch)
    assert nucleo.ToolInfo.of(lambda: None) is None


def test_a_signals_suggested_delay_holds_the_tools_limiters() -> None:
    clock = FakeClock()
    limiter = nucleo.RateLimiter("shop", max_requests=100, window_seconds=1.0, clock=clock)
    signals: list[BaseException] = [nucleo.RateLimitRetryException("429", retry_after=20)]
    gave_up = run_tool(flaky(signals), limiters=[limiter], clock=clock, retries=0)
    assert isinstance(gave_up.exception, nucleo.RetriesExhaustedException)
    assert clock.sleeps == []
    # The server asked for 20 s: the next call through the same limiter waits for them.
    assert run_tool(flaky([]), limiters=[limiter], clock=clock).text == "ok"
    assert clock.sleeps == [20.0]
    assert limiter.stats().failures == 0  # a retry signal is no upstream failure


def test_a_signals_wait_beyond_the_limiters_patience_is_a_held_refusal(
    llm_snapshot: SnapshotAssertion,
) -> None:
    clock = FakeClock()
    limiter = nucleo.RateLimiter("shop", max_requests=100, window_seconds=1.0, clock=clock)
    signals: list[BaseException] = [nucleo.RateLimitRetryException("429", retry_after=10**7)]
    run_tool(flaky(signals), limiters=[limiter], clock=clock, retries=0)
    refused = run_tool(flaky([]), limiters=[limiter], clock=clock)
    assert isinstance(refused.exception, nucleo.LimiterRefusalException)
    assert refused.exception.reason == "held"
    assert refused.exception.off_for == nucleo.RETRY_AFTER_CAP  # a wild wait is capped
    assert "No upstream failure was recorded" not in refused.text
    assert refused.text == llm_snapshot


def test_a_signal_raised_from_a_response_lends_it_its_wait() -> None:
    clock = FakeClock()
    limiter = nucleo.RateLimiter("shop", max_requests=100, window_seconds=1.0, clock=clock)

    def tool_body() -> None:
        answer = nucleo.http_exception("Shop", "/orders", 503, b"overloaded")  # no Retry-After
        raise nucleo.OverloadRetryException("overloaded", retry_after=15) from answer

    run_tool(tool_body, limiters=[limiter], clock=clock, retries=0)
    assert limiter.stats().last_failure == nucleo.UpstreamFailure("Shop", "overloaded", 503, 15.0)
    assert run_tool(flaky([]), limiters=[limiter], clock=clock).text == "ok"
    assert clock.sleeps == [15.0]


def test_a_signal_asking_longer_than_its_response_wins() -> None:
    clock = FakeClock()
    limiter = nucleo.RateLimiter("shop", max_requests=100, window_seconds=1.0, clock=clock)

    def tool_body() -> None:
        answer = nucleo.http_exception("Shop", "/orders", 429, b"slow", {"Retry-After": "5"})
        raise nucleo.RateLimitRetryException("429", retry_after=30) from answer

    run_tool(tool_body, limiters=[limiter], clock=clock, retries=0)
    assert run_tool(flaky([]), limiters=[limiter], clock=clock).text == "ok"
    assert clock.sleeps == [30.0]


def test_past_the_budget_the_call_fails_naming_the_signal(
    llm_snapshot: SnapshotAssertion, caplog: pytest.LogCaptureFixture
) -> None:
    clock = FakeClock()
    signals: list[BaseException] = [
        nucleo.OverloadRetryException(f"overloaded {SECRET}") for _ in range(5)
    ]
    result = run_tool(flaky(signals), name="search_compounds", clock=clock)
    assert isinstance(result.exception, nucleo.RetriesExhaustedException)
    assert result.exception.kind == "overload"
    assert result.exception.attempts == 4  # the first call and 3 retries
    assert isinstance(result.exception.__cause__, nucleo.OverloadRetryException)
    assert clock.sleeps == [0.5, 1.0, 2.0]
    assert "overloaded" not in result.text  # the model never sees the signal itself
    assert result.text == llm_snapshot
    assert [r.levelno for r in caplog.records] == [logging.ERROR]
    assert SECRET[3:] not in caplog.text


def test_a_suggested_delay_beyond_the_cap_is_reported_not_slept(
    llm_snapshot: SnapshotAssertion,
) -> None:
    clock = FakeClock()
    signals: list[BaseException] = [nucleo.RateLimitRetryException("429", retry_after=3600)]
    result = run_tool(flaky(signals), name="search_compounds", clock=clock, max_backoff=30)
    assert isinstance(result.exception, nucleo.RetriesExhaustedException)
    assert result.exception.retry_after == 3600
    assert clock.sleeps == []
    assert result.text == llm_snapshot


def test_the_budget_and_backoff_are_options() -> None:
    clock = FakeClock()
    signals: list[BaseException] = [nucleo.TransientErrorRetryException() for _ in range(9)]
    result = run_tool(flaky(signals), clock=clock, retries=5, backoff=1, max_backoff=4)
    assert isinstance(result.exception, nucleo.RetriesExhaustedException)
    assert clock.sleeps == [1.0, 2.0, 4.0, 4.0, 4.0]
    no_retry = run_tool(flaky([nucleo.TransientErrorRetryException()]), clock=clock, retries=0)
    assert isinstance(no_retry.exception, nucleo.RetriesExhaustedException)
    assert no_retry.exception.attempts == 1


def test_a_signal_not_retried_says_so_without_waits_or_other_attempts(
    llm_snapshot: SnapshotAssertion,
) -> None:
    signals: list[BaseException] = [nucleo.RateLimitRetryException("429")]
    result = run_tool(flaky(signals), name="search_compounds", clock=FakeClock(), retries=0)
    assert "and the call was not retried." in result.text
    assert "waits" not in result.text
    assert "every attempt" not in result.text
    assert result.text == llm_snapshot


def test_a_known_wait_is_kept_however_the_retries_end(llm_snapshot: SnapshotAssertion) -> None:
    # The provider said how long to wait; a text without it leaves the model guessing.
    not_retried = run_tool(
        flaky([nucleo.RateLimitRetryException("429", retry_after=20)]),
        name="search_compounds",
        clock=FakeClock(),
        retries=0,
    )
    assert isinstance(not_retried.exception, nucleo.RetriesExhaustedException)
    assert not_retried.exception.retry_after == 20
    assert not_retried.exception.max_delay is None  # within the cap: not why it ended
    assert "about 20 seconds" in not_retried.text
    assert not_retried.text == llm_snapshot(name="not retried")
    clock = FakeClock()
    spent = run_tool(
        flaky([nucleo.RateLimitRetryException("429", retry_after=2) for _ in range(5)]),
        name="search_compounds",
        clock=clock,
        retries=2,
    )
    assert clock.sleeps == [2.0, 2.0]
    assert isinstance(spent.exception, nucleo.RetriesExhaustedException)
    assert "about 2 seconds" in spent.text
    assert text_problems(spent.text, retry_after=2) == []
    assert spent.text == llm_snapshot(name="retries spent")


def test_a_signal_wrapped_by_the_helpers_is_still_retried() -> None:
    clock = FakeClock()
    calls = []

    @nucleo.llm_errors
    def tool_body() -> str:
        calls.append(1)
        if len(calls) == 1:
            with nucleo.service_call("S", "q", "x", "search"):
                try:
                    raise nucleo.RateLimitRetryException("slow")
                except nucleo.RateLimitRetryException as exc:
                    raise RuntimeError("client failed") from exc
        return "ok"

    assert run_tool(tool_body, clock=clock).text == "ok"
    assert len(calls) == 2


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"retries": -1}, "retries must be a whole number >= 0"),
        ({"backoff": float("nan")}, "backoff must be a finite number"),
        ({"backoff": 5, "max_backoff": 1}, "max_backoff (1) must be >= backoff (5)"),
    ],
)
def test_impossible_options_are_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run_tool(get_order, {}, **options)


# --- limiters through the runner -------------------------------------------------------------


def test_the_runner_signals_limiters_on_success_and_on_upstream_failure() -> None:
    clock = FakeClock()
    lim = RateLimiter("github", max_requests=100, window_seconds=1, clock=clock)
    answers: list[BaseException] = [Http429("GitHub", "API rate limit exceeded", retry_after=5)]

    @nucleo.tool(limiters=[lim])
    def search(query: str) -> str:
        with nucleo.service_call("GitHub", "query", query, "issue search"):
            if answers:
                raise answers.pop(0)
        return "[]"

    first = run_tool(search, {"query": "is:open"})
    assert type(first.exception) is nucleo.UpstreamThrottleException  # wrapped, no status
    stats = lim.stats()
    assert stats.failures == 1
    assert stats.last_failure == nucleo.UpstreamFailure(
        "GitHub", "API rate limit exceeded", 429, 5.0
    )
    assert run_tool(search, {"query": "is:open"}).text == "[]"
    assert clock.sleeps == [5.0]  # the server's Retry-After was honoured
    assert lim.stats().successes == 1


@pytest.mark.nucleo(expect_leaks=True)
def test_failures_that_are_not_the_upstreams_are_not_counted() -> None:
    clock = FakeClock()
    lim = RateLimiter("github", max_requests=100, window_seconds=1, clock=clock)
    tool_body = nucleo.tool(limiters=[lim])(get_order)
    run_tool(tool_body, {"order_number": "12-AB"})
    run_tool(tool_body, {"order_number": "00000500"})
    run_tool(tool_body, {"bad": 1})
    stats = lim.stats()
    assert (stats.failures, stats.successes) == (0, 0)


def test_a_refusal_is_the_tools_result_and_the_tool_is_not_called(
    llm_snapshot: SnapshotAssertion, caplog: pytest.LogCaptureFixture
) -> None:
    clock = FakeClock()
    lim = RateLimiter(
        "github", max_requests=5, window_seconds=60, clock=clock, failures_to_open=1, max_throttle=0
    )
    lim.record_failure(nucleo.UpstreamFailure("GitHub", "Service Unavailable", 503))
    calls = []

    @nucleo.tool(limiters=[lim])
    def search() -> str:
        calls.append(1)
        return "[]"

    results = [run_tool(search) for _ in range(3)]
    assert calls == []
    assert all(isinstance(r.exception, nucleo.LimiterRefusalException) for r in results)
    assert results[0].text == llm_snapshot
    assert lim.stats().failures == 1  # the runner did not count its own refusals
    assert {r.levelno for r in caplog.records} == {logging.ERROR}


def test_a_refusal_by_a_second_limiter_gives_the_first_its_probe_back() -> None:
    clock = FakeClock()
    first = RateLimiter(
        "a", max_requests=5, window_seconds=1, clock=clock, failures_to_open=1, max_throttle=0
    )
    second = RateLimiter(
        "b",
        max_requests=5,
        window_seconds=1,
        clock=clock,
        failures_to_open=1,
        max_throttle=0,
        cooldown_seconds=100,
    )
    for lim in (first, second):
        lim.record_failure(nucleo.UpstreamFailure("S", "down", 503))
    clock.advance(30.0)
    result = run_tool(lambda: "ok", limiters=[first, second])
    assert isinstance(result.exception, nucleo.LimiterRefusalException)
    assert result.exception.limiter_name == "b"
    first.record_success(first.acquire())  # the probe place was freed
    assert first.state == "closed"


def test_limiters_given_to_the_runner_replace_the_decorators() -> None:
    clock = FakeClock()
    attached = RateLimiter("attached", max_requests=5, window_seconds=1, clock=clock)
    given = RateLimiter("given", max_requests=5, window_seconds=1, clock=clock)
    tool_body = nucleo.tool(limiters=[attached])(lambda: "ok")
    run_tool(tool_body, limiters=[given])
    assert (attached.stats().successes, given.stats().successes) == (0, 1)
    with pytest.raises(TypeError, match="a list of RateLimiter"):
        nucleo.tool(limiters=given)  # type: ignore[arg-type]


# --- async: the runner's own stops ------------------------------------------------------------


def test_arun_tool_runs_async_and_plain_tools() -> None:
    async def fetch(cid: str) -> dict[str, str]:
        return {"cid": cid}

    def plain(cid: str) -> str:
        return threading.current_thread().name

    async def main() -> tuple[ToolResult, ToolResult, ToolResult]:
        return (
            await arun_tool(fetch, {"cid": "2244"}),
            await arun_tool(plain, {"cid": "2244"}),
            await arun_tool(fetch, {}),
        )

    ok, threaded, missing = asyncio.run(main())
    assert ok.text == '{"cid": "2244"}'
    assert threaded.text != threading.current_thread().name  # ran in a worker thread
    assert isinstance(missing.exception, nucleo.InvalidInputException)


def test_async_retries_wait_on_the_clock() -> None:
    clock = FakeClock()
    signals: list[BaseException] = [nucleo.TransientErrorRetryException() for _ in range(2)]
    plain = flaky(signals)

    async def tool_body() -> str:
        return plain()  # type: ignore[no-any-return]

    assert asyncio.run(arun_tool(tool_body, clock=clock)).text == "ok"
    assert clock.sleeps == [0.5, 1.0]


def start_and(clock: FakeClock, after_start: Any, **options: Any) -> tuple[ToolResult, list[str]]:
    """Run a tool that blocks until cancelled; ``after_start(task)`` acts once it is running."""
    seen: list[str] = []

    async def lookup(cid: str) -> str:
        seen.append("started")
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        return "never"

    async def main() -> ToolResult:
        task = asyncio.create_task(arun_tool(lookup, {"cid": "2244"}, clock=clock, **options))
        while not seen:
            await asyncio.sleep(0)
        await after_start(task)
        return await task

    return asyncio.run(main()), seen


def test_past_its_timeout_an_async_call_is_a_job_timeout(
    llm_snapshot: SnapshotAssertion, caplog: pytest.LogCaptureFixture
) -> None:
    clock = FakeClock()

    async def almost_then_past(task: asyncio.Task[ToolResult]) -> None:
        clock.advance(29.5)
        for _ in range(5):
            await asyncio.sleep(0)
        assert not task.done()
        clock.advance(0.5)

    result, seen = start_and(clock, almost_then_past, timeout=30)
    assert isinstance(result.exception, nucleo.JobTimeoutException)
    assert result.exception.budget == 30
    assert "30 seconds" in result.text
    assert result.text == llm_snapshot
    assert seen == ["started", "cancelled"]  # the interrupted call was unwound, not abandoned
    assert [r.levelno for r in caplog.records] == [logging.ERROR]


def test_the_timeout_covers_waits_between_retries() -> None:
    clock = FakeClock()

    async def always_overloaded() -> None:
        raise nucleo.OverloadRetryException(retry_after=20)

    result = asyncio.run(arun_tool(always_overloaded, clock=clock, timeout=30))
    assert isinstance(result.exception, nucleo.JobTimeoutException)


def test_a_call_the_runner_was_asked_to_cancel_is_a_job_cancelled(
    llm_snapshot: SnapshotAssertion,
) -> None:
    clock = FakeClock()
    token = CancelToken()

    async def cancel_it(task: asyncio.Task[ToolResult]) -> None:
        token.cancel()

    result, seen = start_and(clock, cancel_it, cancel=token, timeout=30)
    assert isinstance(result.exception, nucleo.JobCancelledException)
    assert result.text == llm_snapshot
    assert seen == ["started", "cancelled"]


def test_cancelling_from_another_thread_works() -> None:
    clock = FakeClock()
    token = CancelToken()

    async def cancel_it(task: asyncio.Task[ToolResult]) -> None:
        worker = threading.Thread(target=token.cancel)
        worker.start()
        worker.join()

    result, _ = start_and(clock, cancel_it, cancel=token)
    assert isinstance(result.exception, nucleo.JobCancelledException)


def test_a_token_cancelled_before_the_call_means_the_tool_is_not_called() -> None:
    token = CancelToken()
    token.cancel()
    calls: list[int] = []

    async def tool_body() -> None:
        calls.append(1)

    result = asyncio.run(arun_tool(tool_body, cancel=token))
    assert isinstance(result.exception, nucleo.JobCancelledException)
    sync_result = run_tool(lambda: calls.append(1), cancel=token)
    assert isinstance(sync_result.exception, nucleo.JobCancelledException)
    assert calls == []


def test_run_tool_checks_the_token_between_attempts() -> None:
    token = CancelToken()

    def tool_body() -> None:
        token.cancel()
        raise nucleo.TransientErrorRetryException()

    result = run_tool(tool_body, cancel=token, clock=FakeClock())
    assert isinstance(result.exception, nucleo.JobCancelledException)


@pytest.mark.parametrize("options", [{}, {"timeout": 30}, {"cancel": CancelToken()}])
def test_an_outer_cancellation_is_never_swallowed(options: dict[str, Any]) -> None:
    clock = FakeClock()
    lim = RateLimiter(
        "s", max_requests=5, window_seconds=1, clock=clock, failures_to_open=1, max_throttle=0
    )
    lim.record_failure(nucleo.UpstreamFailure("S", "down", 503))
    clock.advance(30.0)  # the next call is the probe

    async def cancel_the_caller(task: asyncio.Task[ToolResult]) -> None:
        task.cancel()

    with pytest.raises(asyncio.CancelledError):
        start_and(clock, cancel_the_caller, limiters=[lim], **options)
    lim.record_success(lim.acquire())  # the cancelled probe gave its place back
    assert lim.state == "closed"


@pytest.mark.nucleo(expect_leaks=True)
def test_a_cancelled_error_raised_by_the_tool_itself_is_a_bug_of_the_tool() -> None:
    async def tool_body() -> None:
        raise asyncio.CancelledError  # e.g. a future some other code cancelled

    result = asyncio.run(arun_tool(tool_body))
    assert isinstance(result.exception, nucleo.SystemException)


def test_run_tool_runs_an_async_tool_when_no_loop_is_running() -> None:
    async def fetch() -> str:
        return "ok"

    assert run_tool(fetch).text == "ok"

    async def inside_a_loop() -> None:
        with pytest.raises(RuntimeError, match="use `await arun_tool"):
            run_tool(fetch)

    asyncio.run(inside_a_loop())


def test_an_impossible_timeout_is_refused() -> None:
    with pytest.raises(ValueError, match="timeout must be a finite number"):
        asyncio.run(arun_tool(get_order, {}, timeout=float("inf")))


# --- a tool that raises while the runner stops it --------------------------------------------

STATEMENT_CLOSED_TOOL = """
import asyncio
from pytest_nucleo import FakeClock, arun_tool


async def lookup(cid: str) -> str:
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        # A database driver's cleanup, failing as the call is torn down.
        raise RuntimeError("Statement closed")
    return "never"


def run_past_its_timeout():
    clock = FakeClock()

    async def main():
        task = asyncio.create_task(arun_tool(lookup, {"cid": "2244"}, clock=clock, timeout=30))
        for _ in range(5):
            await asyncio.sleep(0)
        clock.advance(30)
        return await task

    return asyncio.run(main())
"""


def test_a_tool_raising_while_timed_out_is_a_timeout_caused_by_what_it_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    namespace: dict[str, Any] = {}
    exec(STATEMENT_CLOSED_TOOL, namespace)  # the same tool the strict run below uses
    result = namespace["run_past_its_timeout"]()
    assert isinstance(result.exception, nucleo.JobTimeoutException)
    assert result.text == nucleo.JobTimeoutException(30).explain_to_llm()
    cause = result.exception.__cause__
    assert isinstance(cause, RuntimeError)
    assert str(cause) == "Statement closed"
    # One record, and its failure is the timeout: the outcome, not a bug of the tool.
    logged = [r.exc_info[1] if r.exc_info else None for r in caplog.records]
    assert [type(failure) for failure in logged] == [type(result.exception)]
    assert [str(failure) for failure in logged] == [str(result.exception)]
    assert "SystemException" not in caplog.text


def test_strict_mode_sees_no_leak_in_a_tool_raising_while_timed_out(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        STATEMENT_CLOSED_TOOL
        + """

def test_the_timeout_is_the_outcome():
    assert run_past_its_timeout().is_error
"""
    )
    strict = pytester.runpytest("--nucleo-strict")
    strict.assert_outcomes(passed=1)
    assert "leaked" not in strict.stdout.str()
    assert strict.ret == 0


def test_a_tool_raising_while_cancelled_by_a_token_is_a_job_cancelled() -> None:
    token = CancelToken()

    async def lookup() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            raise RuntimeError("Statement closed") from None

    async def main() -> ToolResult:
        task = asyncio.create_task(arun_tool(lookup, cancel=token))
        for _ in range(5):
            await asyncio.sleep(0)
        token.cancel()
        return await task

    result = asyncio.run(main())
    assert isinstance(result.exception, nucleo.JobCancelledException)
    assert isinstance(result.exception.__cause__, RuntimeError)


def test_a_tool_raising_as_its_caller_is_cancelled_lets_the_cancellation_through() -> None:
    async def lookup() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            raise RuntimeError("Statement closed") from None

    async def main() -> None:
        task = asyncio.create_task(arun_tool(lookup))
        for _ in range(5):
            await asyncio.sleep(0)
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main())


@pytest.mark.parametrize("limiters", [3, "shop"])
def test_limiters_that_are_no_list_are_refused_saying_what_to_pass(limiters: Any) -> None:
    def lookup() -> str:
        return "ok"

    with pytest.raises(TypeError, match=r"limiters must be a list of RateLimiter instances"):
        nucleo.tool(limiters=limiters)(lookup)
    with pytest.raises(TypeError, match=r"such as \[limiter\]"):
        nucleo.run_tool(lookup, limiters=limiters)
