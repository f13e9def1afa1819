"""Limiter admission and refusal costs, as ratios against baselines measured in the same run.

    python bench/bench_limits.py

R1  sync admission on a closed circuit, one budget (acquire + record_success) vs an
    uncontended ``with threading.Lock():`` block; target median <= 6x. Then the same
    admission with a window of 10 against one of 10,000 ``max_requests`` (8,000 takes inside
    it), and on one of 10 against one of 1,000 live limiters (taken in turn): both ratios
    should stay near 1.
R2  the same with ``await aacquire()`` vs an uncontended ``async with asyncio.Lock():``;
    target median <= 4x.
Beside them, the nearest operation of other libraries, against the same lock: a call through
pybreaker's CircuitBreaker, a hit on ``limits``' in-memory moving window, pyrate-limiter's
``try_acquire``, and (async) ``async with`` aiolimiter's AsyncLimiter. They do less or
other than a RateLimiter (no circuit, or no window); they are context, not targets.
R3  a refusal by an open circuit, as the model-facing ToolResult from run_tool; target median
    <= 15 us. Then 10,000 refusals: traceback depth and traced memory must not grow.

``--instructions`` counts instead the CPU instructions of R1's two operations under valgrind
(callgrind), which a loaded machine does not move: each run once with 20,000 operations and
once with none, the difference divided by 20,000 (needs valgrind on the PATH).

Medians of several repeats; the machine is shared and noisy, so read the ratios, not the
absolute times; the load average is printed with them. Timing lives here only, never in the
test suite. The comparisons need the ``bench`` extra (``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import asyncio
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
from collections.abc import Callable

import pytest_nucleo as nucleo

REPEATS = 15


def median_ns(stmt: Callable[[], object], number: int) -> float:
    runs = timeit.repeat(stmt, number=number, repeat=REPEATS)
    return statistics.median(runs) / number * 1e9


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


def r1() -> tuple[float, float]:
    return median_ns(lock_baseline(), 200_000), median_ns(admission(closed_limiter()), 200_000)


def r2() -> tuple[float, float]:
    limiter = closed_limiter()
    number = 50_000

    async def measure() -> tuple[float, float]:
        lock = asyncio.Lock()

        async def baseline() -> None:
            for _ in range(number):
                async with lock:
                    pass

        async def admission() -> None:
            aacquire, success = limiter.aacquire, limiter.record_success
            for _ in range(number):
                success(await aacquire())

        base, ours = [], []
        for _ in range(REPEATS):
            start = time.perf_counter()
            await baseline()
            base.append(time.perf_counter() - start)
            start = time.perf_counter()
            await admission()
            ours.append(time.perf_counter() - start)
        return (
            statistics.median(base) / number * 1e9,
            statistics.median(ours) / number * 1e9,
        )

    return asyncio.run(measure())


def r1_window() -> tuple[float, float]:
    """One admission with 10 takes in the window against one with 8,000 of 10,000."""
    small = nucleo.RateLimiter("small", max_requests=10, window_seconds=1e-6)
    large = nucleo.RateLimiter("large", max_requests=10_000, window_seconds=3600)
    for _ in range(8_000):
        large.acquire()
    number = 100  # 15 repeats: 1,500 more takes, still under the 10,000
    return median_ns(admission(small), number), median_ns(admission(large), number)


def r1_live() -> tuple[float, float]:
    """Admissions on 10 limiters in turn against 1,000 in turn (all alive)."""

    def in_turn(count: int) -> Callable[[], None]:
        admits = [
            admission(nucleo.RateLimiter(f"live-{i}", max_requests=1000, window_seconds=1e-6))
            for i in range(count)
        ]
        turn = itertools.cycle(admits)
        return lambda: next(turn)()

    few, many = in_turn(10), in_turn(1_000)
    return median_ns(few, 100_000), median_ns(many, 100_000)


def others() -> dict[str, float]:
    """The nearest sync operation of other libraries, in ns (missing ones left out)."""
    found: dict[str, float] = {}
    try:
        import pybreaker

        breaker = pybreaker.CircuitBreaker(fail_max=5, reset_timeout=60)
        found["pybreaker CircuitBreaker.call"] = median_ns(lambda: breaker.call(int), 50_000)
    except ImportError:
        pass
    try:
        from limits import parse, storage, strategies

        window = strategies.MovingWindowRateLimiter(storage.MemoryStorage())
        item = parse("1000000/second")
        found["limits moving window (memory) hit"] = median_ns(
            lambda: window.hit(item, "bench"), 20_000
        )
    except ImportError:
        pass
    try:
        from pyrate_limiter import Duration, Limiter, Rate

        pyrate = Limiter(Rate(10**9, Duration.SECOND))
        found["pyrate-limiter try_acquire"] = median_ns(lambda: pyrate.try_acquire("b"), 5_000)
    except ImportError:
        pass
    return found


def aiolimiter_ns() -> float | None:
    try:
        from aiolimiter import AsyncLimiter
    except ImportError:
        return None
    number = 20_000

    async def measure() -> float:
        limiter = AsyncLimiter(10**9, 1)
        runs = []
        for _ in range(REPEATS):
            start = time.perf_counter()
            for _ in range(number):
                async with limiter:
                    pass
            runs.append(time.perf_counter() - start)
        return statistics.median(runs) / number * 1e9

    return asyncio.run(measure())


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


def r3() -> tuple[float, float, list[int], list[int]]:
    call = open_tool()
    assert call().is_error  # type: ignore[attr-defined]
    package_logger = logging.getLogger("pytest_nucleo")
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
    return with_logging, silent, depths, readings


def run_operation(which: str, count: int) -> None:
    """``count`` of R1's ``which`` operation ("lock" or "admission"), for --instructions."""
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


def load() -> str:
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def main() -> None:
    # Refusals are logged at ERROR with their stack; send them nowhere, as a quiet app would.
    logging.getLogger("pytest_nucleo").propagate = False
    print(load())

    lock_ns, sync_ns = r1()
    print(
        f"R1 sync admission + success : {sync_ns:8.0f} ns  vs threading.Lock {lock_ns:6.0f} ns"
        f"  ratio {sync_ns / lock_ns:5.1f}x  (target <= 6x)"
    )
    small_ns, large_ns = r1_window()
    print(
        f"R1 window of 10 vs 10,000   : {small_ns:8.0f} ns  vs {large_ns:6.0f} ns (8,000 takes)"
        f"  ratio {large_ns / small_ns:5.2f}x  (target ~1)"
    )
    few_ns, many_ns = r1_live()
    print(
        f"R1 10 vs 1,000 live limiters: {few_ns:8.0f} ns  vs {many_ns:6.0f} ns"
        f"  ratio {many_ns / few_ns:5.2f}x  (target ~1)"
    )
    for name, ns in others().items():
        print(f"   {name:34s}: {ns:8.0f} ns  ratio to the lock {ns / lock_ns:5.1f}x")
    alock_ns, async_ns = r2()
    print(
        f"R2 async admission + success: {async_ns:8.0f} ns  vs asyncio.Lock   {alock_ns:6.0f} ns"
        f"  ratio {async_ns / alock_ns:5.1f}x  (target <= 4x)"
    )
    aio = aiolimiter_ns()
    if aio is not None:
        name = "aiolimiter async with AsyncLimiter"
        print(f"   {name:34s}: {aio:8.0f} ns  ratio to asyncio.Lock {aio / alock_ns:5.1f}x")
    logged_us, silent_us, depths, memory = r3()
    print(
        f"R3 refusal as a ToolResult  : {logged_us:8.2f} us with its ERROR record built and "
        f"handled (NullHandler); {silent_us:.2f} us with the package logger above ERROR"
        "  (target <= 15 us)"
    )
    print(
        "R3 0 / 10,000 / 20,000 refusals: traceback depth "
        + " / ".join(str(d) for d in depths)
        + "; traced memory "
        + " / ".join(f"{m / 1024:.1f} KiB" for m in memory)
    )
    print(load())


if __name__ == "__main__":
    if sys.argv[1:2] == ["--operation"]:
        run_operation(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1:2] == ["--instructions"]:
        lock, admit = instructions("lock"), instructions("admission")
        print(
            f"R1 instructions: admission + success {admit:8.0f} vs threading.Lock {lock:6.0f}"
            f"  ratio {admit / lock:5.1f}x"
        )
    else:
        main()
