"""Limiter admission and refusal costs, as ratios against baselines measured in the same run.

    python bench/bench_limits.py
    python bench/bench_limits.py --instructions

Sync admission on a closed circuit, one budget (``record_success(acquire())``, what a caller
pays per call) vs an uncontended ``with threading.Lock():`` block; goal: median <= 6x. Then
the same admission with a window of 10 against one of 10,000 ``max_requests`` (8,000 takes
inside it), and on one of 10 against one of 1,000 live limiters (taken in turn): both ratios
should stay near 1.

Async admission, the same awaited as ``arun_tool`` does it
(``await arecord_success(await aacquire())``) vs an uncontended ``async with asyncio.Lock():``;
goal: median <= 4x.

Beside them, the nearest operation of other libraries, against the same lock: a call through
pybreaker's CircuitBreaker, a hit on ``limits``' in-memory moving window, pyrate-limiter's
``try_acquire``, and (async) ``async with`` aiolimiter's AsyncLimiter. They do less or
other than a RateLimiter (no circuit, or no window); they are context, not goals.

A refusal by an open circuit, as the model-facing ToolResult from run_tool; goal: median
<= 15 us. Timed three ways: with a handler that takes the ERROR record (its emit does
nothing, so the record and its redacted copy of the failure are built and handled, nothing
written); with the package's NullHandler alone (records routed nowhere, so none is built);
with the package logger above ERROR. Then 10,000 refusals: traceback depth and traced memory
must not grow.

``--instructions`` counts instead the CPU instructions of the sync and async admissions and
of their locks under valgrind (callgrind), which a loaded machine does not move: each run once
with 20,000 operations and once with none, the difference divided by 20,000 (needs valgrind
on the PATH).

Each operation and its baseline are timed in turns (baseline, operation, baseline, ...), so
a change of load in the middle of the run moves both alike; medians of the repeats. Times are
the measuring thread's CPU time (``time.thread_time``): on a machine shared with other work,
the time slices given to other processes are not the operation's cost (on a quiet machine the
two are the same). The machine is shared and noisy: read the ratios, not the absolute times;
the load average is printed with them. Timing lives here only, never in the test suite. The comparisons need the
``bench`` extra (``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import itertools
import logging
import os
import re
import statistics
import subprocess
import sys
import threading
import time
import timeit
import tracemalloc
from collections.abc import Callable, Coroutine
from typing import Any

import pytest_nucleo as nucleo

REPEATS = 15
TIMER = time.thread_time  # CPU time: see the module's docstring


def median_ns(stmt: Callable[[], object], number: int) -> float:
    runs = timeit.Timer(stmt, timer=TIMER).repeat(number=number, repeat=REPEATS)
    return statistics.median(runs) / number * 1e9


def paired_ns(
    baseline: Callable[[], object], stmt: Callable[[], object], number: int
) -> tuple[float, float]:
    """Median ns of ``baseline`` and of ``stmt``, timed in turns."""
    base, ours = [], []
    for _ in range(REPEATS):
        base.append(timeit.Timer(baseline, timer=TIMER).timeit(number))
        ours.append(timeit.Timer(stmt, timer=TIMER).timeit(number))
    return statistics.median(base) / number * 1e9, statistics.median(ours) / number * 1e9


def closed_limiter() -> nucleo.RateLimiter:
    # A window this short never makes a caller wait: only the bookkeeping is measured.
    return nucleo.RateLimiter("bench", max_requests=1000, window_seconds=1e-6)


def lock_baseline() -> Callable[[], None]:
    lock = threading.Lock()

    def baseline() -> None:
        with lock:
            pass

    return baseline


def admission(limiter: nucleo.RateLimiter) -> Callable[[], None]:
    acquire, success = limiter.acquire, limiter.record_success

    def admit() -> None:
        success(acquire())

    return admit


def sync_admission() -> tuple[float, float]:
    return paired_ns(lock_baseline(), admission(closed_limiter()), 20_000)


AsyncOperation = Callable[[int], Coroutine[Any, Any, None]]
"""A coroutine function running its operation so many times."""


def async_lock_baseline() -> AsyncOperation:
    lock = asyncio.Lock()

    async def baseline(number: int) -> None:
        for _ in range(number):
            async with lock:
                pass

    return baseline


def async_admission_of(limiter: nucleo.RateLimiter) -> AsyncOperation:
    aacquire, asuccess = limiter.aacquire, limiter.arecord_success

    async def admissions(number: int) -> None:
        for _ in range(number):
            await asuccess(await aacquire())

    return admissions


def async_paired_ns(
    baseline: AsyncOperation, operation: AsyncOperation, number: int
) -> tuple[float, float]:
    """Median ns of ``baseline`` and of ``operation``, run in turns on one event loop."""

    async def measure() -> tuple[float, float]:
        base, ours = [], []
        for _ in range(REPEATS):
            start = TIMER()
            await baseline(number)
            base.append(TIMER() - start)
            start = TIMER()
            await operation(number)
            ours.append(TIMER() - start)
        return statistics.median(base) / number * 1e9, statistics.median(ours) / number * 1e9

    return asyncio.run(measure())


def async_admission() -> tuple[float, float]:
    return async_paired_ns(async_lock_baseline(), async_admission_of(closed_limiter()), 10_000)


def window_sizes() -> tuple[float, float]:
    """An admission on a window of 10 (nearly empty) against one on a window of 10,000 that
    holds 8,000 takes."""
    small = nucleo.RateLimiter("small", max_requests=10, window_seconds=1e-6)
    large = nucleo.RateLimiter("large", max_requests=10_000, window_seconds=3600)
    for _ in range(8_000):
        large.acquire()
    number = 100  # 15 repeats: 1,500 more takes, still under the 10,000
    return paired_ns(admission(small), admission(large), number)


def live_limiters() -> tuple[float, float]:
    """Admissions on 10 limiters in turn against 1,000 in turn (all alive)."""

    def in_turn(count: int) -> Callable[[], None]:
        admits = [
            admission(nucleo.RateLimiter(f"live-{i}", max_requests=1000, window_seconds=1e-6))
            for i in range(count)
        ]
        turn = itertools.cycle(admits)
        return lambda: next(turn)()

    return paired_ns(in_turn(10), in_turn(1_000), 20_000)


def others() -> dict[str, tuple[float, float]]:
    """The nearest sync operation of other libraries, in ns, each timed in turns with the lock
    (missing libraries left out)."""
    found: dict[str, tuple[float, float]] = {}
    try:
        import pybreaker

        breaker = pybreaker.CircuitBreaker(fail_max=5, reset_timeout=60)
        found["pybreaker CircuitBreaker.call"] = paired_ns(
            lock_baseline(), lambda: breaker.call(int), 20_000
        )
    except ImportError:
        pass
    try:
        from limits import parse, storage, strategies

        window = strategies.MovingWindowRateLimiter(storage.MemoryStorage())
        item = parse("1000000/second")
        found["limits moving window (memory) hit"] = paired_ns(
            lock_baseline(), lambda: window.hit(item, "bench"), 5_000
        )
    except ImportError:
        pass
    try:
        from pyrate_limiter import Duration, Limiter, Rate

        pyrate = Limiter(Rate(10**9, Duration.SECOND))
        found["pyrate-limiter try_acquire"] = paired_ns(
            lock_baseline(), lambda: pyrate.try_acquire("b"), 5_000
        )
    except ImportError:
        pass
    return found


def aiolimiter_ns() -> tuple[float, float] | None:
    """``async with`` aiolimiter's AsyncLimiter, timed in turns with the asyncio lock."""
    try:
        from aiolimiter import AsyncLimiter
    except ImportError:
        return None
    limiter = AsyncLimiter(10**9, 1)

    async def entries(number: int) -> None:
        for _ in range(number):
            async with limiter:
                pass

    return async_paired_ns(async_lock_baseline(), entries, 10_000)


def open_tool(clock: nucleo.Clock | None = None) -> Callable[[], object]:
    limiter = nucleo.RateLimiter(
        "bench",
        max_requests=10,
        window_seconds=1,
        failures_to_open=1,
        max_throttle=0,
        cooldown_seconds=3600,
        clock=clock,
    )
    limiter.record_failure(nucleo.UpstreamFailure("Bench API", "Service Unavailable", 503))

    @nucleo.tool(limiters=[limiter])
    def search() -> str:
        raise AssertionError("an open circuit must not call the tool")

    return lambda: nucleo.run_tool(search)


def depth(exc: BaseException | None) -> int:
    tb = exc.__traceback__ if exc is not None else None
    count = 0
    while tb is not None:
        count, tb = count + 1, tb.tb_next
    return count


class _Discarding(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        pass


def refusals() -> tuple[float, float, float, list[int], list[int]]:
    call = open_tool()
    assert call().is_error  # type: ignore[attr-defined]
    package_logger = logging.getLogger("pytest_nucleo")
    handler = _Discarding()
    package_logger.addHandler(handler)
    try:
        handled = median_ns(call, 5_000) / 1000
    finally:
        package_logger.removeHandler(handler)
    with_logging = median_ns(call, 5_000) / 1000
    package_logger.setLevel(logging.CRITICAL)  # an application that silences the package
    try:
        silent = median_ns(call, 5_000) / 1000
    finally:
        package_logger.setLevel(logging.NOTSET)

    # Memory on a clock that stands still: on the system clock, each second of remaining
    # cooldown is a new text in the (bounded, 512-entry) refusal text cache.
    call = open_tool(nucleo.FakeClock())
    first_depth = depth(call().exception)  # type: ignore[attr-defined]
    gc.collect()
    tracemalloc.start()
    for _ in range(1_000):  # warm caches up before the first reading
        call()
    readings, depths = [], [first_depth]
    for _ in range(2):
        gc.collect()
        readings.append(tracemalloc.get_traced_memory()[0])
        for _ in range(10_000):
            last = call()
        depths.append(depth(last.exception))  # type: ignore[attr-defined]
        del last
    gc.collect()
    readings.append(tracemalloc.get_traced_memory()[0])
    tracemalloc.stop()
    return handled, with_logging, silent, depths, readings


OPERATIONS = {
    "lock": "threading.Lock",
    "admission": "sync admission + success",
    "async-lock": "asyncio.Lock",
    "async-admission": "async admission + success",
}
"""What --instructions counts, by the name --operation takes."""


def run_operation(which: str, count: int) -> None:
    """``count`` of the ``which`` operation (one of :data:`OPERATIONS`), for --instructions."""
    if which.startswith("async-"):
        run = (
            async_lock_baseline() if which == "async-lock" else async_admission_of(closed_limiter())
        )
        asyncio.run(run(count + 1))
        return
    operation = lock_baseline() if which == "lock" else admission(closed_limiter())
    operation()
    for _ in range(count):
        operation()


def instructions(which: str, count: int = 20_000) -> float:
    def counted(n: int) -> int:
        command = [
            "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
            sys.executable, __file__, "--operation", which, str(n),
        ]  # fmt: skip
        output = subprocess.run(command, capture_output=True, text=True, check=True).stderr
        return int(re.search(r"refs:\s*([\d,]+)", output).group(1).replace(",", ""))  # type: ignore[union-attr]

    return (counted(count) - counted(0)) / count


def print_instructions() -> None:
    # Two at a time: the counts do not depend on the load, only the waiting does.
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        counts = dict(zip(OPERATIONS, pool.map(instructions, OPERATIONS), strict=True))
    for base, operation in (("lock", "admission"), ("async-lock", "async-admission")):
        ours, theirs = counts[operation], counts[base]
        print(
            f"instructions, {OPERATIONS[operation]:26s}: {ours:8.0f} vs {OPERATIONS[base]:15s}"
            f" {theirs:6.0f}  ratio {ours / theirs:5.2f}x"
        )


def load() -> str:
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def ratio_line(name: str, ours: float, base: str, theirs: float, goal: str) -> str:
    return (
        f"{name:36s}: {ours:8.0f} ns  vs {base:15s} {theirs:6.0f} ns  ratio {ours / theirs:5.2f}x"
        f"  {goal}"
    )


def main() -> None:
    # Refusals are logged at ERROR with their stack; send them nowhere, as a quiet app would.
    logging.getLogger("pytest_nucleo").propagate = False
    print(load())

    lock_ns, sync_ns = sync_admission()
    print(
        ratio_line("sync admission + success", sync_ns, "threading.Lock", lock_ns, "(goal <= 6x)")
    )
    for name, (lock_ns, ns) in others().items():
        print(ratio_line(f"  {name}", ns, "threading.Lock", lock_ns, ""))
    alock_ns, async_ns = async_admission()
    print(
        ratio_line("async admission + success", async_ns, "asyncio.Lock", alock_ns, "(goal <= 4x)")
    )
    aio = aiolimiter_ns()
    if aio is not None:
        alock_ns, ns = aio
        print(ratio_line("  aiolimiter async with AsyncLimiter", ns, "asyncio.Lock", alock_ns, ""))
    small_ns, large_ns = window_sizes()
    print(
        f"{'window of 10 vs of 10,000':36s}: {small_ns:8.0f} ns  vs {large_ns:6.0f} ns"
        f" (8,000 takes in it)  ratio {large_ns / small_ns:5.2f}x  (goal ~1)"
    )
    few_ns, many_ns = live_limiters()
    print(
        f"{'10 vs 1,000 live limiters':36s}: {few_ns:8.0f} ns  vs {many_ns:6.0f} ns"
        f"  ratio {many_ns / few_ns:5.2f}x  (goal ~1)"
    )
    handled_us, logged_us, silent_us, depths, memory = refusals()
    print(
        f"{'refusal as a ToolResult':36s}: {handled_us:8.2f} us with its ERROR record built and "
        f"handled (a handler that discards it); {logged_us:.2f} us with the NullHandler alone; "
        f"{silent_us:.2f} us with the package logger above ERROR  (goal <= 15 us)"
    )
    print(
        "0 / 10,000 / 20,000 refusals: traceback depth "
        + " / ".join(str(d) for d in depths)
        + "; traced memory "
        + " / ".join(f"{m / 1024:.1f} KiB" for m in memory)
    )
    print(load())


if __name__ == "__main__":
    if sys.argv[1:2] == ["--operation"]:
        run_operation(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1:2] == ["--instructions"]:
        print(load())
        print_instructions()
    else:
        main()
