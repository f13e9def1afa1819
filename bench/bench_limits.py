"""Limiter admission and refusal costs, as ratios against baselines measured in the same run.

    python bench/bench_limits.py [--rounds 15]
    python bench/bench_limits.py --instructions

Sync admission on a closed circuit, one budget (``record_success(acquire())``, what a caller
pays per call) vs a bare ``lock.acquire(); lock.release()`` pair of an uncontended
``threading.Lock``, each one call of a function per operation; target: median <= 8x. (The
target was 6x a ``with lock:`` block, which costs about 1.8x the bare pair: the with-block's
ratio to the pair is printed too, so the two can be compared.) Then the same admission with a
window of 10 against one of 10,000 ``max_requests`` (8,000 takes inside it), and on one of 10
against one of 1,000 live limiters (taken in turn): the first ratio should stay near 1, the
second at most 1.1x.

Async admission, the same awaited as ``arun_tool`` does it
(``await arecord_success(await aacquire())``) vs an uncontended ``async with asyncio.Lock():``,
beside aiolimiter's ``async with AsyncLimiter`` against the same lock in the same rounds;
target: our median ratio at most aiolimiter's (the quotient of the two, per round, <= 1).

Beside the sync admission, the nearest operation of other libraries, against the same bare
pair: a call through pybreaker's CircuitBreaker, a hit on ``limits``' in-memory moving window,
pyrate-limiter's ``try_acquire``. They do less or other than a RateLimiter (no circuit, or no
window); they are context, not targets.

A refusal by an open circuit, as the model-facing ToolResult from run_tool; goal: median
<= 15 us. Timed three ways: with a handler that takes the ERROR record (its emit does
nothing, so the record and its redacted copy of the failure are built and handled, nothing
written); with the package's NullHandler alone (records routed nowhere, so none is built);
with the package logger above ERROR. Then 10,000 refusals: traceback depth and traced memory
must not grow.

``--instructions`` counts instead the CPU instructions of the sync and async admissions and
of their baselines under valgrind (callgrind), which a loaded machine does not move: each run
once with 20,000 operations and once with none, the difference divided by 20,000 (needs
valgrind on the PATH).

How it is timed. Each measure and its baseline run in turns, a batch of each per round
(baseline, operation, baseline, ...), so a change of load in the middle of the run moves both
alike; each ratio is taken per round and printed as its median, with the least and the
greatest (min / median / max). Two clocks time every batch: this process's CPU time
(``time.process_time``: the time slices the machine gives other processes are not the
operation's cost) and the wall clock (``time.perf_counter``); the ratios are the CPU time's,
the wall clock's median beside them. The garbage collector stays on, as in an application
(``timeit`` would turn it off); the live-limiter line counts the collections during its
rounds. The machine is shared and noisy: read the ratios, not the absolute times, with the
load average (``/proc/loadavg``) printed at the start and at the end. Timing lives here only,
never in the test suite. The comparisons need the ``bench`` extra (``pip install -e
'.[bench]'``).
"""

from __future__ import annotations

import argparse
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
import tracemalloc
from collections.abc import Callable, Coroutine
from typing import Any

import pytest_nucleo as nucleo

ROUNDS = 15
CPU, WALL = time.process_time, time.perf_counter

Batch = tuple[float, float]
"""A batch's time per operation in ns: the process's CPU time, and the wall clock's."""


def batch(operation: Callable[[], object], number: int) -> Batch:
    """``operation`` called ``number`` times in a row (the loop timeit runs)."""
    repeat = itertools.repeat(None, number)
    cpu, wall = CPU(), WALL()
    for _ in repeat:
        operation()
    wall, cpu = WALL() - wall, CPU() - cpu
    return cpu / number * 1e9, wall / number * 1e9


def median_ns(operation: Callable[[], object], number: int) -> float:
    """The median CPU time of a call of ``operation``, in ns, over ROUNDS batches."""
    return statistics.median(batch(operation, number)[0] for _ in range(ROUNDS))


def in_turns(*operations: Callable[[], object], number: int) -> list[list[Batch]]:
    """Each operation's batches, the operations in turns for ROUNDS rounds."""
    batches: list[list[Batch]] = [[] for _ in operations]
    for _ in range(ROUNDS):
        for times, operation in zip(batches, operations, strict=True):
            times.append(batch(operation, number))
    return batches


class Ratio:
    """One measure against its baseline, from batches timed in turns: the median times, and
    the ratio per round (CPU time) as its least, median and greatest, the wall's median."""

    def __init__(self, ours: list[Batch], base: list[Batch]) -> None:
        self.ours_ns = statistics.median(cpu for cpu, _ in ours)
        self.base_ns = statistics.median(cpu for cpu, _ in base)
        self.per_round = [a[0] / b[0] for a, b in zip(ours, base, strict=True)]
        self.wall = statistics.median(a[1] / b[1] for a, b in zip(ours, base, strict=True))

    @property
    def median(self) -> float:
        return statistics.median(self.per_round)

    def spread(self) -> str:
        rounds = self.per_round
        return f"{min(rounds):5.2f} / {statistics.median(rounds):5.2f} / {max(rounds):5.2f}"


def line(name: str, ratio: Ratio, base: str, target: str = "") -> str:
    return (
        f"{name:36s}: {ratio.ours_ns:7.0f} ns vs {base:14s} {ratio.base_ns:5.0f} ns  ratio"
        f" {ratio.median:5.2f}x (min / median / max {ratio.spread()}; wall {ratio.wall:5.2f}x)"
        f"  {target}"
    ).rstrip()


def load() -> str:
    """The load average, as /proc/loadavg gives it (with the running and total tasks)."""
    try:
        with open("/proc/loadavg") as file:
            return "load average (/proc/loadavg): " + file.read().strip()
    except OSError:
        return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def closed_limiter(name: str = "bench") -> nucleo.RateLimiter:
    # A window this short never makes a caller wait: only the bookkeeping is measured.
    return nucleo.RateLimiter(name, max_requests=1000, window_seconds=1e-6)


def bare_pair() -> Callable[[], None]:
    lock = threading.Lock()

    def baseline() -> None:
        lock.acquire()
        lock.release()

    return baseline


def with_block() -> Callable[[], None]:
    lock = threading.Lock()

    def block() -> None:
        with lock:
            pass

    return block


def admission(limiter: nucleo.RateLimiter) -> Callable[[], None]:
    acquire, success = limiter.acquire, limiter.record_success

    def admit() -> None:
        success(acquire())

    return admit


def sync_admission() -> tuple[Ratio, Ratio]:
    """The admission, and a with-block, each against the bare pair."""
    base, ours, block = in_turns(
        bare_pair(), admission(closed_limiter()), with_block(), number=20_000
    )
    return Ratio(ours, base), Ratio(block, base)


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


def aiolimiter_entries() -> AsyncOperation | None:
    """``async with`` aiolimiter's AsyncLimiter (None without it)."""
    try:
        from aiolimiter import AsyncLimiter
    except ImportError:
        return None
    limiter = AsyncLimiter(10**9, 1)

    async def entries(number: int) -> None:
        for _ in range(number):
            async with limiter:
                pass

    return entries


def async_in_turns(*operations: AsyncOperation, number: int) -> list[list[Batch]]:
    """:func:`in_turns` on one event loop."""

    async def measure() -> list[list[Batch]]:
        batches: list[list[Batch]] = [[] for _ in operations]
        for _ in range(ROUNDS):
            for times, operation in zip(batches, operations, strict=True):
                cpu, wall = CPU(), WALL()
                await operation(number)
                wall, cpu = WALL() - wall, CPU() - cpu
                times.append((cpu / number * 1e9, wall / number * 1e9))
        return batches

    return asyncio.run(measure())


def async_admission() -> tuple[Ratio, Ratio | None, list[float] | None]:
    """Our async admission and aiolimiter's entry, each against the asyncio lock in the same
    rounds, and the quotient of the two ratios per round."""
    aio = aiolimiter_entries()
    operations = [async_lock_baseline(), async_admission_of(closed_limiter())]
    if aio is not None:
        operations.append(aio)
    base, ours, *theirs = async_in_turns(*operations, number=10_000)
    mine = Ratio(ours, base)
    if not theirs:
        return mine, None, None
    other = Ratio(theirs[0], base)
    return mine, other, [a / b for a, b in zip(mine.per_round, other.per_round, strict=True)]


def window_sizes() -> Ratio:
    """An admission on a window of 10 (nearly empty) against one on a window of 10,000 that
    holds 8,000 takes."""
    small = nucleo.RateLimiter("small", max_requests=10, window_seconds=1e-6)
    large = nucleo.RateLimiter("large", max_requests=10_000, window_seconds=3600)
    for _ in range(8_000):
        large.acquire()
    # 100 a batch: the rounds take 1,500 more, still under the 10,000.
    small_batches, large_batches = in_turns(admission(small), admission(large), number=100)
    return Ratio(large_batches, small_batches)


def live_limiters() -> tuple[Ratio, int]:
    """Admissions on 10 limiters in turn against 1,000 in turn (all alive), and the garbage
    collections made during the rounds. The loop calls each limiter's methods as an
    application does, with nothing of its own per limiter (a closure per limiter, as this
    benchmark once made, is memory the measure reads beside each limiter's)."""

    def in_turn(count: int) -> Callable[[], None]:
        limiters = [closed_limiter(f"live-{count}-{i}") for i in range(count)]
        turn = itertools.cycle(limiters)

        def admit() -> None:
            limiter = next(turn)
            limiter.record_success(limiter.acquire())

        return admit

    collections = [0]

    def counted(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            collections[0] += 1

    few, many = in_turn(10), in_turn(1_000)
    gc.callbacks.append(counted)
    try:
        few_batches, many_batches = in_turns(few, many, number=20_000)
    finally:
        gc.callbacks.remove(counted)
    return Ratio(many_batches, few_batches), collections[0]


def others() -> dict[str, Ratio]:
    """The nearest sync operation of other libraries, each timed in turns with the bare pair
    (missing libraries left out)."""
    found: dict[str, Ratio] = {}
    try:
        import pybreaker

        breaker = pybreaker.CircuitBreaker(fail_max=5, reset_timeout=60)
        base, ours = in_turns(bare_pair(), lambda: breaker.call(int), number=20_000)
        found["pybreaker CircuitBreaker.call"] = Ratio(ours, base)
    except ImportError:
        pass
    try:
        from limits import parse, storage, strategies

        window = strategies.MovingWindowRateLimiter(storage.MemoryStorage())
        item = parse("1000000/second")
        base, ours = in_turns(bare_pair(), lambda: window.hit(item, "bench"), number=5_000)
        found["limits moving window (memory) hit"] = Ratio(ours, base)
    except ImportError:
        pass
    try:
        from pyrate_limiter import Duration, Limiter, Rate

        pyrate = Limiter(Rate(10**9, Duration.SECOND))
        base, ours = in_turns(bare_pair(), lambda: pyrate.try_acquire("b"), number=5_000)
        found["pyrate-limiter try_acquire"] = Ratio(ours, base)
    except ImportError:
        pass
    return found


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
    "lock": "a bare lock pair",
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
    operation = bare_pair() if which == "lock" else admission(closed_limiter())
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
            f"instructions, {OPERATIONS[operation]:26s}: {ours:8.0f} vs {OPERATIONS[base]:16s}"
            f" {theirs:6.0f}  ratio {ours / theirs:5.2f}x"
        )


def main() -> None:
    # Refusals are logged at ERROR with their stack; send them nowhere, as a quiet app would.
    logging.getLogger("pytest_nucleo").propagate = False
    print(load())
    print(
        f"{ROUNDS} rounds, each measure in turns with its baseline; ratios of this process's "
        "CPU time per round, min / median / max, and the wall clock's median"
    )
    sync, block = sync_admission()
    print(
        "baseline: a bare lock.acquire(); lock.release() pair of a threading.Lock, one call of "
        f"a function per operation, as each measure is; a with-block costs {block.median:.2f}x "
        f"it (min / median / max {block.spread()})"
    )
    print(line("sync admission + success", sync, "the bare pair", "(target <= 8x)"))
    for name, ratio in others().items():
        print(line(f"  {name}", ratio, "the bare pair"))
    mine, theirs, quotients = async_admission()
    print(line("async admission + success", mine, "asyncio.Lock"))
    if theirs is not None and quotients is not None:
        print(line("  aiolimiter async with AsyncLimiter", theirs, "asyncio.Lock"))
        spread = (
            f"{min(quotients):5.2f} / {statistics.median(quotients):5.2f} / {max(quotients):5.2f}"
        )
        print(
            f"{'  ours / aiolimiter, per round':36s}: {statistics.median(quotients):5.2f}x"
            f" (min / median / max {spread})  (target <= 1: at most aiolimiter's ratio)"
        )
    sizes = window_sizes()
    print(
        f"{'window of 10 vs of 10,000':36s}: {sizes.base_ns:7.0f} ns vs {sizes.ours_ns:7.0f} ns"
        f" (8,000 takes in it)  ratio {sizes.median:5.2f}x (min / median / max"
        f" {sizes.spread()}; wall {sizes.wall:5.2f}x)  (target ~1)"
    )
    live, collections = live_limiters()
    print(
        f"{'10 vs 1,000 live limiters':36s}: {live.base_ns:7.0f} ns vs {live.ours_ns:7.0f} ns"
        f"  ratio {live.median:5.2f}x (min / median / max {live.spread()}; wall"
        f" {live.wall:5.2f}x)  (target <= 1.1x); garbage collections in its rounds: {collections}"
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
        sys.exit()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="rounds per ratio")
    parser.add_argument(
        "--instructions", action="store_true", help="CPU instructions instead (valgrind)"
    )
    options = parser.parse_args()
    ROUNDS = options.rounds
    if options.instructions:
        print(load())
        print_instructions()
        print(load())
    else:
        main()
