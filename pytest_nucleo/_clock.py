"""Time for the runner and the limiters: one injectable clock, monotonic only.

Every wait and every deadline in the package goes through a :class:`Clock`, so tests drive time
with a :class:`FakeClock` and never sleep. Time is read from ``time.monotonic()`` only: wall-clock
time jumps with NTP corrections and a breaker that mixed both clocks was once off by the local
UTC offset.

:func:`set_testing` turns real waiting off for the :class:`SystemClock` (the default clock): a
sleep then returns at once and moves that clock's reading forward by the time it would have
slept, so limiter windows still elapse and nothing piles up. Deadlines (a runner ``timeout``)
stay real: they bound a call, they are not a wait.

:class:`FakeClock` lives in the runtime core because it imports nothing test-only and tool
authors need it in their own tests.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import threading
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from pytest_nucleo._forks import hold_over_forks

__all__ = ["Clock", "FakeClock", "SystemClock", "TimerHandle", "is_testing", "set_testing"]


class TimerHandle(Protocol):
    """What :meth:`Clock.call_later` returns: a timer that can be cancelled."""

    def cancel(self) -> None:
        """Stop the timer: its callback will not run."""


@runtime_checkable
class Clock(Protocol):
    """Monotonic time, waits and deadlines. Implement it to drive time your own way.

    ``sleep`` and ``asleep`` are waits (the limiters and the runner's backoff use them);
    ``call_later`` arms a deadline (the runner's ``timeout``) and must be called from the
    thread running the event loop, which also runs the callback.
    """

    def monotonic(self) -> float:
        """Seconds on a clock that never goes backwards; only differences mean anything."""
        ...

    def sleep(self, seconds: float) -> None:
        """Block the calling thread for ``seconds``."""
        ...

    async def asleep(self, seconds: float) -> None:
        """Suspend the calling task for ``seconds``."""
        ...

    def call_later(self, delay: float, callback: Callable[[], object]) -> TimerHandle:
        """Run ``callback`` in the running event loop once ``delay`` seconds have passed."""
        ...


def _check_wait(seconds: float) -> None:
    # asyncio.sleep(nan) and asyncio.sleep(1e10) block forever: refuse them loudly instead.
    if not (isinstance(seconds, int | float) and math.isfinite(seconds) and seconds >= 0):
        raise ValueError(f"a wait must be a finite number of seconds >= 0; got {seconds!r}")


class _TestingSwitch:
    """Process-wide state of the testing switch (see :func:`set_testing`). One instance, with
    slots: a limiter's admission reads its ``offset`` with every clock reading, and an
    attribute of an instance with slots is read faster than one of a class."""

    __slots__ = ("enabled", "lock", "offset")

    def __init__(self) -> None:
        self.enabled = False
        self.offset = 0.0  # seconds the SystemClock skipped while testing; never decreases
        self.lock = threading.Lock()


_Testing = _TestingSwitch()


hold_over_forks(lambda: _Testing.lock)


def set_testing(enabled: bool) -> None:
    """Turn real waiting off (``True``) or on again (``False``) for every :class:`SystemClock`.

    While on, a limiter that would wait for a window slot and the runner's backoff between
    retries return at once, and the system clock's reading moves forward by the skipped time,
    so windows and cooldowns elapse as if the wait had happened. Like stamina's
    ``set_testing``: flip it in a fixture of your suite. A :class:`FakeClock` is not affected,
    and neither are deadlines (``arun_tool(..., timeout=...)``).
    """
    _Testing.enabled = bool(enabled)


def is_testing() -> bool:
    """Whether :func:`set_testing` has turned real waiting off."""
    return _Testing.enabled


_monotonic = time.monotonic


class SystemClock:
    """The real clock: ``time.monotonic``, ``time.sleep``, ``asyncio.sleep`` and the loop's timers.

    Honours :func:`set_testing`. All instances share one reading, so limiters on different
    instances agree on the time.
    """

    def monotonic(self) -> float:
        """Seconds from ``time.monotonic``, plus the time skipped under :func:`set_testing`."""
        return _monotonic() + _Testing.offset

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds``; under :func:`set_testing`, skip the wait and move this clock forward."""
        _check_wait(seconds)
        if _Testing.enabled:
            with _Testing.lock:
                _Testing.offset += seconds
            return
        time.sleep(seconds)

    async def asleep(self, seconds: float) -> None:
        """Await ``seconds``; under :func:`set_testing`, skip the wait and move this clock forward."""
        _check_wait(seconds)
        if _Testing.enabled:
            with _Testing.lock:
                _Testing.offset += seconds
            await asyncio.sleep(0)
            return
        await asyncio.sleep(seconds)

    def call_later(self, delay: float, callback: Callable[[], object]) -> TimerHandle:
        """Run ``callback`` on the running event loop after ``delay`` seconds."""
        _check_wait(delay)
        return asyncio.get_running_loop().call_later(delay, callback)

    def __repr__(self) -> str:
        return "SystemClock()"


SYSTEM_CLOCK = SystemClock()
"""The clock used when none is given."""


class _NoOffset:
    """What a clock other than the system clock adds to its own reading: nothing."""

    __slots__ = ("offset",)

    def __init__(self) -> None:
        self.offset = 0.0


_NO_OFFSET = _NoOffset()


def split_reading(clock: Clock) -> tuple[Callable[[], float], _TestingSwitch | _NoOffset]:
    """``clock.monotonic()`` in two parts, a function and an object whose ``offset`` is added to
    what it returns, read without a call of a Python method between: for a system clock (whose
    ``monotonic`` is not overridden) ``time.monotonic`` and the testing switch's offset, the
    sum :meth:`SystemClock.monotonic` returns; for any other clock, its own ``monotonic`` and
    no offset. A limiter reads the clock on every admission, and the call of that method
    costs as much as the reading itself."""
    if type(clock).monotonic is SystemClock.monotonic:
        return _monotonic, _Testing
    return clock.monotonic, _NO_OFFSET


class _FakeTimer:
    __slots__ = ("callback", "cancelled", "loop")

    def __init__(self, callback: Callable[[], object], loop: asyncio.AbstractEventLoop) -> None:
        self.callback = callback
        self.loop = loop
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    """A clock for tests: time stands still until something sleeps on it or calls :meth:`advance`.

    ``sleep(s)`` and ``await asleep(s)`` return at once and move the clock forward by ``s``
    (``asleep`` also yields to the event loop once), so code that waits on it runs instantly
    and deterministically. Every wait is recorded in :attr:`sleeps`. Timers armed with
    :meth:`call_later` (the runner's ``timeout``) fire when the clock is moved past them.
    Concurrent sleepers each move the clock by their own wait: only the total is meaningful
    then. Thread-safe.
    """

    def __init__(self, start: float = 0.0) -> None:
        if not math.isfinite(start):
            raise ValueError(f"start must be a finite number of seconds; got {start!r}")
        self._now = float(start)
        self._sleeps: list[float] = []
        self._timers: list[tuple[float, int, _FakeTimer]] = []
        self._order = itertools.count()
        self._lock = threading.Lock()

    def monotonic(self) -> float:
        """The fake time, in seconds: it moves only by :meth:`advance` and the sleeps."""
        return self._now

    @property
    def sleeps(self) -> list[float]:
        """Every wait asked of this clock, in order (a copy)."""
        with self._lock:
            return list(self._sleeps)

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds`` and fire the timers that fall due."""
        _check_wait(seconds)
        due: list[_FakeTimer] = []
        with self._lock:
            self._now += seconds
            while self._timers and self._timers[0][0] <= self._now:
                due.append(heapq.heappop(self._timers)[2])
        for timer in due:
            if not timer.cancelled and not timer.loop.is_closed():
                timer.loop.call_soon_threadsafe(_fire, timer)

    def sleep(self, seconds: float) -> None:
        """Record the wait in :attr:`sleeps` and advance the time by it, at once."""
        _check_wait(seconds)
        with self._lock:
            self._sleeps.append(seconds)
        self.advance(seconds)

    async def asleep(self, seconds: float) -> None:
        """As :meth:`sleep`, then yield to the event loop once."""
        self.sleep(seconds)
        await asyncio.sleep(0)

    def call_later(self, delay: float, callback: Callable[[], object]) -> TimerHandle:
        """Run ``callback`` on the running loop when the fake time reaches ``delay`` seconds from
        now."""
        _check_wait(delay)
        timer = _FakeTimer(callback, asyncio.get_running_loop())
        with self._lock:
            heapq.heappush(self._timers, (self._now + delay, next(self._order), timer))
        self.advance(0)  # a zero delay is due at once
        return timer

    def __repr__(self) -> str:
        return f"FakeClock(now={self._now!r})"


def _fire(timer: _FakeTimer) -> None:
    if not timer.cancelled:
        timer.callback()
