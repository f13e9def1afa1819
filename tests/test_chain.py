"""Cause-chain walks and the wrapping helpers (unwrap, wrap_with_context, unwrap_runtime)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

import pytest_nucleo as nucleo
from pytest_nucleo._causes import MAX_CHAIN, iter_chain
from pytest_nucleo._chain import deepest_message


def raised(build: Callable[[], object]) -> BaseException:
    """Run ``build`` and return what it raised, with the chain Python gave it."""
    try:
        build()
    except BaseException as exc:
        return exc
    raise AssertionError("expected an exception")


def buried_two_levels(inner: BaseException) -> BaseException:
    def build() -> None:
        try:
            try:
                raise inner
            except BaseException as exc:
                raise OSError("read failed") from exc
        except OSError as exc:
            raise RuntimeError("client call failed") from exc

    return raised(build)


def only_in_context(inner: BaseException) -> BaseException:
    def build() -> None:
        try:
            raise inner
        except BaseException:
            raise RuntimeError("cleanup failed")  # noqa: B904 - implicit context on purpose

    return raised(build)


def not_found() -> nucleo.ResourceNotFoundException:
    return nucleo.ResourceNotFoundException("compound", "999")


# --- walking -------------------------------------------------------------------------------


def test_walk_follows_cause_then_context_and_skips_suppressed_context() -> None:
    outer = only_in_context(ValueError("inner"))
    assert [type(e) for e in iter_chain(outer)] == [RuntimeError, ValueError]

    def suppressed() -> None:
        try:
            raise ValueError("hidden")
        except ValueError:
            raise RuntimeError("clean") from None

    assert [type(e) for e in iter_chain(raised(suppressed))] == [RuntimeError]


def test_walk_visits_group_members() -> None:
    group = ExceptionGroup("many", [ValueError("a"), not_found()])
    assert [type(e).__name__ for e in iter_chain(group)] == [
        "ExceptionGroup",
        "ValueError",
        "ResourceNotFoundException",
    ]


def test_walk_survives_a_cause_cycle() -> None:
    first, second = RuntimeError("first"), RuntimeError("second")
    first.__cause__, second.__cause__ = second, first
    assert list(iter_chain(first)) == [first, second]


def test_walk_is_bounded() -> None:
    head = current = RuntimeError("0")
    for n in range(1, 10_000):
        current.__cause__ = RuntimeError(str(n))
        current = current.__cause__
    assert len(list(iter_chain(head))) == MAX_CHAIN


def test_deepest_message_and_class_name_fallback() -> None:
    assert deepest_message(buried_two_levels(KeyError("eta"))) == "'eta'"
    assert deepest_message(buried_two_levels(ConnectionResetError())) == "read failed"
    assert deepest_message(ConnectionResetError()) == "ConnectionResetError"


# --- unwrap --------------------------------------------------------------------------------


def test_unwrap_keeps_a_readable_buried_two_levels_deep() -> None:
    inner = not_found()
    assert nucleo.unwrap(buried_two_levels(inner)) is inner


def test_unwrap_finds_a_readable_reached_only_through_context() -> None:
    inner = not_found()
    assert nucleo.unwrap(only_in_context(inner)) is inner


def test_unwrap_finds_a_readable_inside_an_exception_group() -> None:
    inner = not_found()
    wrapper = RuntimeError("batch failed")
    wrapper.__cause__ = ExceptionGroup("parallel lookups", [TimeoutError("slow"), inner])
    assert nucleo.unwrap(wrapper) is inner


def test_unwrap_makes_anything_else_a_system_exception() -> None:
    outer = buried_two_levels(KeyError("eta"))
    result = nucleo.unwrap(outer, component="order_tool")
    assert type(result) is nucleo.SystemException
    assert result.component == "order_tool"
    assert result.__cause__ is outer
    assert result.llm_message == (
        "A system error occurred in order_tool. The operation could not be completed."
    )
    assert result.technical_message == "'eta'"  # the deepest message: what went wrong


class ExecutionException(Exception):
    """A foreign framework's wrapper, as a job runner raises it around the real failure."""


def test_unwrap_of_a_foreign_wrapper_carries_the_deepest_message() -> None:
    wrapper = ExecutionException("job failed")
    wrapper.__cause__ = ConnectionError("pool exhausted")
    result = nucleo.unwrap(wrapper, component="orders")
    assert result.technical_message == "pool exhausted"
    assert str(result) == "orders: pool exhausted"


def test_unwrap_of_an_exception_without_a_message_gives_its_class_name() -> None:
    result = nucleo.unwrap(ExecutionException(), component="orders")
    assert result.technical_message == "ExecutionException"
    assert str(result) == "orders: ExecutionException"


def test_unwrap_raises_a_runtime_readable_as_itself() -> None:
    inner = nucleo.CorrectableRuntimeLLMException("pick another result")
    with pytest.raises(nucleo.CorrectableRuntimeLLMException) as info:
        nucleo.unwrap(buried_two_levels(inner))
    assert info.value is inner


def test_unwrap_survives_a_cause_cycle() -> None:
    first, second = RuntimeError("first"), RuntimeError("second")
    first.__cause__, second.__cause__ = second, first
    assert type(nucleo.unwrap(first)) is nucleo.SystemException


@pytest.mark.parametrize(
    "signal",
    [
        nucleo.RateLimitRetryException("429", retry_after=3),
        nucleo.OverloadRetryException("overloaded"),
        nucleo.TransientErrorRetryException("reset"),
    ],
)
def test_unwrap_and_wrap_reraise_a_buried_retry_signal(
    signal: nucleo.UpstreamRetryException,
) -> None:
    # A readable sits *above* the signal: the signal still wins, a retry is never a failure.
    def build() -> None:
        try:
            try:
                raise signal
            except nucleo.UpstreamRetryException as exc:
                raise nucleo.ExternalServiceException("S", "call failed") from exc
        except nucleo.ExternalServiceException as exc:
            raise Exception("broad wrapper") from exc

    outer = raised(build)
    with pytest.raises(nucleo.UpstreamRetryException) as info:
        nucleo.unwrap(outer)
    assert info.value is signal
    with pytest.raises(nucleo.UpstreamRetryException) as info:
        nucleo.wrap_with_context(outer, "S", "q", "x", "search")
    assert info.value is signal


# --- raising the result inside except --------------------------------------------------------


def test_raise_unwrap_inside_except_keeps_the_cause_and_builds_no_cycle() -> None:
    transport = ConnectionError("connection reset")
    inner = not_found()

    def build() -> None:
        try:
            try:
                try:
                    raise transport
                except ConnectionError as exc:
                    raise inner from exc
            except nucleo.ResourceNotFoundException as exc:
                raise RuntimeError("wrapper") from exc
        except RuntimeError as e:
            raise nucleo.unwrap(e)  # noqa: B904 - the idiom under test

    result = raised(build)
    assert result is inner
    assert result.__cause__ is transport
    assert list(iter_chain(result)) == [inner, transport]


def test_raise_unwrap_keeps_an_implicit_context_as_the_cause() -> None:
    lookup = KeyError("00000099")
    inner = not_found()

    def build() -> None:
        try:
            try:
                try:
                    raise lookup
                except KeyError:
                    raise inner  # noqa: B904 - implicit context on purpose
            except nucleo.ResourceNotFoundException as exc:
                raise RuntimeError("wrapper") from exc
        except RuntimeError as e:
            raise nucleo.unwrap(e)  # noqa: B904

    result = raised(build)
    assert result is inner
    assert result.__cause__ is lookup
    assert list(iter_chain(result)) == [inner, lookup]


# --- wrap_with_context ---------------------------------------------------------------------


def test_wrap_readdresses_a_correctable_failure_to_the_parameter() -> None:
    outer = buried_two_levels(not_found())
    wrapped = nucleo.wrap_with_context(outer, "PubChem", "cid", "999", "compound fetch")
    assert type(wrapped) is nucleo.InvalidInputException
    assert (wrapped.parameter_name, wrapped.invalid_value) == ("cid", "999")
    assert wrapped.validation_rule == (
        'compound fetch: No compound was found with the identifier "999". Check the identifier,'
        " try another one, or use another tool to find the right one."
    )
    assert wrapped.__cause__ is outer


def test_wrap_names_the_service_for_an_uncorrectable_failure() -> None:
    inner = nucleo.UnauthorizedException("PubChem", "API key expired")
    wrapped = nucleo.wrap_with_context(only_in_context(inner), "PubChem", "cid", "1", "fetch")
    assert type(wrapped) is nucleo.ExternalServiceException
    assert wrapped.service_name == "PubChem"
    assert wrapped.error_details == f"fetch: {inner.llm_message}"


def test_wrap_uses_the_deepest_raw_message_when_nothing_is_readable() -> None:
    wrapped = nucleo.wrap_with_context(
        buried_two_levels(ConnectionRefusedError("connection refused")),
        "PubChem",
        "q",
        "x",
        "search",
    )
    assert type(wrapped) is nucleo.ExternalServiceException
    assert wrapped.error_details == "search: connection refused"


def test_wrap_uses_the_class_name_when_no_message_exists() -> None:
    wrapped = nucleo.wrap_with_context(TimeoutError(), "PubChem", "q", "x", "search")
    assert wrapped.error_details == "search: TimeoutError"


def test_wrap_finds_a_correctable_inside_a_group() -> None:
    group = ExceptionGroup("batch", [TimeoutError("slow"), not_found()])
    wrapped = nucleo.wrap_with_context(group, "PubChem", "cid", "999", "batch fetch")
    assert type(wrapped) is nucleo.InvalidInputException


class StrRaises(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no message today")


class StrReturnsANumber(Exception):
    def __str__(self) -> str:
        return 42  # type: ignore[return-value]


BROKEN_MESSAGES = [StrRaises, StrReturnsANumber]


@pytest.mark.parametrize("broken", BROKEN_MESSAGES)
def test_the_helpers_are_total_over_a_broken_message(broken: type[Exception]) -> None:
    alone, buried = broken(), buried_two_levels(broken())
    assert deepest_message(alone) == broken.__name__
    assert deepest_message(buried) == "read failed"
    assert nucleo.unwrap(alone).technical_message == broken.__name__
    wrapped = nucleo.wrap_with_context(alone, "PubChem", "cid", "1", "fetch")
    assert str(wrapped) == f"PubChem: fetch: {broken.__name__}"
    assert type(nucleo.unwrap_runtime(alone, "it broke")) is nucleo.UncorrectableRuntimeLLMException


# --- unwrap_runtime ------------------------------------------------------------------------


def test_unwrap_runtime_returns_a_runtime_readable_as_itself() -> None:
    inner = nucleo.UncorrectableRuntimeLLMException("PubChem is down")
    assert nucleo.unwrap_runtime(buried_two_levels(inner), "fallback") is inner


@pytest.mark.parametrize(
    ("checked", "expected"),
    [
        (not_found(), nucleo.CorrectableRuntimeLLMException),
        (nucleo.ExternalServiceException("S", "down"), nucleo.UncorrectableRuntimeLLMException),
    ],
)
def test_unwrap_runtime_converts_a_checked_readable_keeping_its_message(
    checked: nucleo.LLMReadableCheckedException, expected: type[Exception]
) -> None:
    outer = buried_two_levels(checked)
    result = nucleo.unwrap_runtime(outer, "fallback")
    assert type(result) is expected
    assert str(result) == result.llm_message == checked.llm_message
    assert result.is_correctable is checked.is_correctable
    assert result.__cause__ is outer


def test_unwrap_runtime_falls_back_when_nothing_is_readable() -> None:
    outer = buried_two_levels(KeyError("x"))
    result = nucleo.unwrap_runtime(outer, "PubChem search failed")
    assert type(result) is nucleo.UncorrectableRuntimeLLMException
    assert str(result) == "PubChem search failed"
    assert result.__cause__ is outer


def test_unwrap_runtime_does_not_rescue_retry_signals() -> None:
    outer = buried_two_levels(nucleo.OverloadRetryException("busy"))
    result = nucleo.unwrap_runtime(outer, "search failed")
    assert type(result) is nucleo.UncorrectableRuntimeLLMException


# --- llm_errors and service_call -----------------------------------------------------------


def test_llm_errors_decorator_turns_a_bug_into_a_system_exception() -> None:
    @nucleo.llm_errors
    def get_order(number: str) -> str:
        """Fetch an order."""
        return {"a": "b"}[number]

    assert get_order.__name__ == "get_order"
    assert get_order.__doc__ == "Fetch an order."
    assert get_order("a") == "b"
    with pytest.raises(nucleo.SystemException) as info:
        get_order("zz")
    assert info.value.component == "get_order"
    assert isinstance(info.value.__cause__, KeyError)


def test_llm_errors_lets_readables_and_signals_through_untouched() -> None:
    inner = not_found()

    @nucleo.llm_errors(component="orders")
    def tool(kind: str) -> None:
        if kind == "readable":
            raise RuntimeError("wrapper") from inner
        raise RuntimeError("wrapper") from nucleo.RateLimitRetryException("slow down")

    with pytest.raises(nucleo.ResourceNotFoundException) as info:
        tool("readable")
    assert info.value is inner
    with pytest.raises(nucleo.RateLimitRetryException):
        tool("signal")


def test_llm_errors_as_a_context_manager() -> None:
    with pytest.raises(nucleo.SystemException) as info, nucleo.llm_errors(component="block"):
        raise ValueError("bad")
    assert info.value.component == "block"
    with pytest.raises(nucleo.SystemException) as info, nucleo.llm_errors():
        raise ValueError("bad")
    assert info.value.component == "the tool"


def test_llm_errors_on_an_async_function() -> None:
    @nucleo.llm_errors
    async def search(query: str) -> list[str]:
        await asyncio.sleep(0)
        raise LookupError(query)

    with pytest.raises(nucleo.SystemException) as info:
        asyncio.run(search("benzene"))
    assert info.value.component == "search"


def test_llm_errors_does_not_touch_cancellation_or_interrupts() -> None:
    with pytest.raises(KeyboardInterrupt), nucleo.llm_errors():
        raise KeyboardInterrupt
    with pytest.raises(asyncio.CancelledError), nucleo.llm_errors():
        raise asyncio.CancelledError


def test_service_call_readdresses_what_escapes_it() -> None:
    with (
        pytest.raises(nucleo.InvalidInputException) as info,
        nucleo.service_call("PubChem", "cid", "999", "compound fetch"),
    ):
        raise not_found()
    assert info.value.parameter_name == "cid"

    @nucleo.service_call("PubChem", "query", "benzene", "search")
    def search() -> None:
        raise ConnectionRefusedError("connection refused")

    with pytest.raises(nucleo.ExternalServiceException) as failure:
        search()
    assert failure.value.error_details == "search: connection refused"
