"""The injectable clock and the testing switch."""

from __future__ import annotations

import asyncio
import time

import pytest

import pytest_nucleo as nucleo
from pytest_nucleo import FakeClock, SystemClock


def test_fake_clock_moves_only_when_slept_on_or_advanced() -> None:
    clock = FakeClock(start=100.0)
    assert clock.monotonic() == 100.0
    clock.sleep(2.5)
    clock.advance(1.0)
    asyncio.run(clock.asleep(0.5))
    assert clock.monotonic() == 104.0
    assert clock.sleeps == [2.5, 0.5]


def test_fake_timers_fire_when_the_clock_passes_them() -> None:
    clock = FakeClock()
    fired: list[str] = []

    async def main() -> None:
        clock.call_later(10.0, lambda: fired.append("ten"))
        cancelled = clock.call_later(5.0, lambda: fired.append("five"))
        cancelled.cancel()
        clock.advance(9.9)
        await asyncio.sleep(0)
        assert fired == []
        clock.advance(0.1)
        await asyncio.sleep(0)

    asyncio.run(main())
    assert fired == ["ten"]


@pytest.mark.parametrize("wait", [float("nan"), float("inf"), -1.0])
def test_no_clock_waits_on_an_impossible_value(wait: float) -> None:
    with pytest.raises(ValueError, match="a wait must be a finite number of seconds >= 0"):
        FakeClock().sleep(wait)
    with pytest.raises(ValueError, match="a wait must be a finite number of seconds >= 0"):
        SystemClock().sleep(wait)


@pytest.mark.nucleo(real_waits=True)  # the switch as a process without the plugin has it
def test_the_testing_switch_turns_real_waiting_off_but_time_still_passes() -> None:
    clock = SystemClock()
    assert not nucleo.is_testing()
    nucleo.set_testing(True)
    try:
        assert nucleo.is_testing()
        before = clock.monotonic()
        clock.sleep(3600.0)  # would fail the no-sleep guard if it really slept
        asyncio.run(clock.asleep(3600.0))
        assert clock.monotonic() - before >= 7200.0
    finally:
        nucleo.set_testing(False)
    assert not nucleo.is_testing()


def test_the_system_clock_reads_monotonic_time_only(monkeypatch: pytest.MonkeyPatch) -> None:
    def wall_clock() -> float:
        raise AssertionError("the system clock read wall-clock time")

    monkeypatch.setattr(time, "time", wall_clock)
    clock = SystemClock()
    first = clock.monotonic()
    assert clock.monotonic() >= first
    assert isinstance(clock, nucleo.Clock)
    assert isinstance(FakeClock(), nucleo.Clock)
