"""Limiter admission and refusal costs, as ratios against baselines measured in the same run.

    python bench/bench_limits.py

R1  sync admission on a closed circuit (acquire + record_success) vs an uncontended
    ``with threading.Lock():`` block; target median <= 12x.
R2  the same with ``await aacquire()`` vs an uncontended ``async with asyncio.Lock():``;
    target median <= 6x.
R3  a refusal by an open circuit, as the model-facing ToolResult from run_tool; target median
    <= 15 us. Then 10,000 refusals: traceback depth and traced memory must not grow.

Medians of several repeats; the machine is shared and noisy, so read the ratios, not the
absolute times. Timing lives here only, never in the test suite.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import statistics
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


def r1() -> tuple[float, float]:
    lock = threading.Lock()

    def baseline() -> None:
        with lock:
            pass

    limiter = closed_limiter()
    acquire, success = limiter.acquire, limiter.record_success

    def admission() -> None:
        success(acquire())

    return median_ns(baseline, 200_000), median_ns(admission, 200_000)


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


def main() -> None:
    # Refusals are logged at ERROR with their stack; send them nowhere, as a quiet app would.
    logging.getLogger("pytest_nucleo").propagate = False

    lock_ns, sync_ns = r1()
    print(
        f"R1 sync admission + success : {sync_ns:8.0f} ns  vs threading.Lock {lock_ns:6.0f} ns"
        f"  ratio {sync_ns / lock_ns:5.1f}x  (target <= 12x)"
    )
    alock_ns, async_ns = r2()
    print(
        f"R2 async admission + success: {async_ns:8.0f} ns  vs asyncio.Lock   {alock_ns:6.0f} ns"
        f"  ratio {async_ns / alock_ns:5.1f}x  (target <= 6x)"
    )
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


if __name__ == "__main__":
    main()
