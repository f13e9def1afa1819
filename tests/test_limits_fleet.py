"""Limiters shared by a fleet: eight processes on one Redis, and what happens when Redis fails.

Every test here runs against a real redis-server on a loopback port (``_redis_server.py``).
The fleet is a pool of eight processes started once (spawn context); each task builds its own
limiter, as a worker of an agent fleet would. Nothing sleeps: where time must pass, the
processes share a fake time that the test moves; elsewhere time is the Redis server's.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator
from typing import Any

import _fleet_workers as workers
import pytest
from _redis_server import RedisServer, unique_prefix

import pytest_nucleo as nucleo

PROCESSES = 8
CONTEXT = multiprocessing.get_context("spawn")
OUTAGE = nucleo.UpstreamFailure("Shop API", "Service Unavailable", 503)


class Fleet:
    """Eight processes, a time they share, and the port of the server they use."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.now = CONTEXT.Value("d", 1000.0)
        self.clock = workers.SharedClock(self.now)
        self._manager = CONTEXT.Manager()
        barrier = self._manager.Barrier(PROCESSES, timeout=60)
        self._pool = CONTEXT.Pool(PROCESSES, workers.start, (self.now, barrier))
        self._pool.map(workers.ready, range(PROCESSES * 4))  # started and imported, once

    def run(self, task: Callable[[Any], Any], jobs: list[Any]) -> list[Any]:
        assert len(jobs) == PROCESSES  # every task waits for the others behind the barrier
        return self._pool.map(task, jobs, chunksize=1)

    def close(self) -> None:
        self._pool.close()
        self._pool.join()
        self._manager.shutdown()


@pytest.fixture(scope="module")
def fleet(redis_server: RedisServer) -> Iterator[Fleet]:
    fleet = Fleet(redis_server.port)
    yield fleet
    fleet.close()


def shared(
    server: RedisServer, prefix: str, clock: nucleo.Clock | None = None, **settings: Any
) -> nucleo.RateLimiter:
    """This test process's own limiter in the fleet."""
    store = nucleo.RedisStore(server.client(), prefix=prefix, clock=clock)
    return nucleo.RateLimiter("fleet", clock=clock, store=store, max_wait_seconds=0, **settings)


# --- eight processes -----------------------------------------------------------------------------


def test_admissions_per_window_across_the_fleet_never_exceed_max_requests(
    fleet: Fleet, redis_server: RedisServer
) -> None:
    prefix = unique_prefix()
    settings = {"max_requests": 20, "window_seconds": 60}
    for _ in range(2):  # two windows, each admitting exactly its 20
        results = fleet.run(workers.admit, [(fleet.port, prefix, True, settings, 10)] * 8)
        assert len({pid for pid, _, _ in results}) == PROCESSES
        assert sum(admitted for _, admitted, _ in results) == 20
        assert {reason.split(":")[0] for _, _, reasons in results for reason in reasons} == {"wait"}
        fleet.clock.advance(60.0)
    stats = shared(redis_server, prefix, fleet.clock, **settings).stats()
    assert stats.refusals == 2 * 60


def test_one_retry_after_seen_by_one_process_holds_all_of_them(
    fleet: Fleet, redis_server: RedisServer
) -> None:
    prefix = unique_prefix()
    settings = {"max_requests": 1000, "window_seconds": 1}
    mine = shared(redis_server, prefix, **settings)  # on the server's time
    mine.record_failure(nucleo.UpstreamFailure("GitHub", "slow down", 429, 30.0), mine.acquire())
    results = fleet.run(workers.admit, [(fleet.port, prefix, False, settings, 3)] * 8)
    assert sum(admitted for _, admitted, _ in results) == 0
    reasons = [reason.split(":") for _, _, got in results for reason in got]
    assert len(reasons) == 24
    assert {why for why, _ in reasons} == {"held"}
    assert {int(off) for _, off in reasons} <= {29, 30}


def test_exactly_one_probe_among_eight_processes_20_times(
    fleet: Fleet, redis_server: RedisServer
) -> None:
    prefix = unique_prefix()
    settings = {
        "max_requests": 100,
        "window_seconds": 1,
        "max_throttle": 0.0,
        "failures_to_open": 1,
        "cooldown_seconds": 30,
        "max_cooldown_seconds": 30,
    }
    mine = shared(redis_server, prefix, fleet.clock, **settings)
    mine.record_failure(OUTAGE, mine.acquire())
    assert mine.state == "open"
    for _ in range(20):
        fleet.clock.advance(30.0)
        results = fleet.run(workers.probe, [(fleet.port, prefix, True, settings, True)] * 8)
        assert sum(admitted for _, admitted in results) == 1  # and it failed: open again
    stats = mine.stats()
    assert (stats.state, stats.failures) == ("open", 21)


def test_a_prober_killed_with_sigkill_stops_blocking_after_the_probe_timeout(
    fleet: Fleet, redis_server: RedisServer
) -> None:
    prefix = unique_prefix()
    settings = {
        "max_requests": 100,
        "window_seconds": 1,
        "max_throttle": 0.0,
        "failures_to_open": 1,
        "probe_timeout_seconds": 20,
    }
    mine = shared(redis_server, prefix, fleet.clock, **settings)
    mine.record_failure(OUTAGE, mine.acquire())
    fleet.clock.advance(30.0)
    ready = CONTEXT.Event()
    prober = CONTEXT.Process(
        target=workers.hold_the_probe, args=((fleet.port, prefix, settings), fleet.now, ready)
    )
    prober.start()
    try:
        assert ready.wait(timeout=60), "the prober never took the probe"
    finally:
        prober.kill()  # SIGKILL: it never reports back
        prober.join()
    assert prober.exitcode == -9
    blocked = fleet.run(workers.probe, [(fleet.port, prefix, True, settings, False)] * 8)
    assert sum(admitted for _, admitted in blocked) == 0
    fleet.clock.advance(20.0)
    # Exactly one new probe, which fails (so the others cannot slip in after a success).
    results = fleet.run(workers.probe, [(fleet.port, prefix, True, settings, True)] * 8)
    assert sum(admitted for _, admitted in results) == 1
    stats = mine.stats()
    assert (stats.state, stats.failures, stats.cooldown_seconds) == ("open", 2, 60.0)


def test_1500_concurrent_failures_are_all_counted(fleet: Fleet, redis_server: RedisServer) -> None:
    prefix = unique_prefix()
    settings = {"max_requests": 10, "window_seconds": 1, "failures_to_open": 100_000}
    counts = [188] * 7 + [184]
    done = fleet.run(workers.fail, [(fleet.port, prefix, False, settings, n) for n in counts])
    assert sum(done) == 1500
    stats = shared(redis_server, prefix, **settings).stats()
    assert stats.failures == 1500
    assert stats.last_failure == nucleo.UpstreamFailure("Shop API", "Service Unavailable", 503)


def test_a_process_that_starts_mid_run_joins_the_state_without_resetting_it(
    fleet: Fleet, redis_server: RedisServer
) -> None:
    prefix = unique_prefix()
    settings = {"max_requests": 20, "window_seconds": 600}
    results = fleet.run(workers.admit, [(fleet.port, prefix, False, settings, 2)] * 8)
    assert sum(admitted for _, admitted, _ in results) == 16
    mine = shared(redis_server, prefix, **settings)
    for _ in range(3):
        mine.record_failure(OUTAGE)
    answers = CONTEXT.Queue()
    late = CONTEXT.Process(target=workers.join_late, args=((fleet.port, prefix, settings), answers))
    late.start()
    failures, level, admitted = answers.get(timeout=60)
    late.join()
    assert (failures, level, admitted) == (3, 3.0, 3)  # it saw the fleet's state, and 4 slots
    stats = mine.stats()
    # Its three successes count for the fleet: 3 of them take 0.2 off the level.
    assert (stats.failures, stats.throttle_level, stats.successes) == (3, 2.8, 3)
    mine.acquire()  # the 20th
    with pytest.raises(nucleo.LimiterRefusalException):
        mine.acquire()
