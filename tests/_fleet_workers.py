"""What the processes of the fleet tests run: light to import (no pytest), so eight of them
start quickly under the spawn context.

Each task builds its own limiter on a RedisStore, as a worker process of an agent fleet would.
Time is the Redis server's, or, for tests that must move it (cooldowns, probe timeouts), a
fake time shared by every process through a ``multiprocessing`` value that the test moves.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from multiprocessing.sharedctypes import Synchronized
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

import pytest_nucleo as nucleo

_shared: dict[str, Any] = {}


class SharedClock:
    """A fake time every process reads alike. Waiting on it is a test error: the fleet tests
    set ``max_wait_seconds=0``, so a limiter refuses rather than waits."""

    def __init__(self, now: Synchronized[float]) -> None:
        self.now = now

    def monotonic(self) -> float:
        return float(self.now.value)

    def advance(self, seconds: float) -> None:
        with self.now.get_lock():
            self.now.value += seconds

    def sleep(self, seconds: float) -> None:
        raise AssertionError(f"a fleet worker would wait {seconds} s: use max_wait_seconds=0")

    async def asleep(self, seconds: float) -> None:
        self.sleep(seconds)

    def call_later(self, delay: float, callback: Callable[[], object]) -> Any:
        raise NotImplementedError


def start(now: Synchronized[float], barrier: Any) -> None:
    """The pool's initializer: the shared time and the barrier every task starts behind."""
    _shared["clock"] = SharedClock(now)
    _shared["barrier"] = barrier


def limiter(
    port: int, prefix: str, shared_time: bool, settings: dict[str, Any]
) -> nucleo.RateLimiter:
    client = redis.Redis(
        host="127.0.0.1", port=port, socket_timeout=5.0, retry=Retry(NoBackoff(), 0)
    )
    clock = _shared["clock"] if shared_time else None
    store = nucleo.RedisStore(client, prefix=prefix, clock=clock)
    return nucleo.RateLimiter("fleet", clock=clock, store=store, max_wait_seconds=0, **settings)


def ready(_: object) -> int:
    """Nothing: the pool runs it once so that its processes have started before the tests."""
    return os.getpid()


def _together() -> None:
    _shared["barrier"].wait()


def admit(job: tuple[int, str, bool, dict[str, Any], int]) -> tuple[int, int, list[str]]:
    """Try ``attempts`` admissions; report this process, how many were admitted, and the
    reasons of the refusals."""
    port, prefix, shared_time, settings, attempts = job
    lim = limiter(port, prefix, shared_time, settings)
    admitted, reasons = 0, []
    _together()
    for _ in range(attempts):
        try:
            permit = lim.acquire()
        except nucleo.LimiterRefusalException as exc:
            reasons.append(f"{exc.reason}:{round(exc.off_for)}")
        else:
            admitted += 1
            _shared["permit"] = permit
    return os.getpid(), admitted, reasons


def probe(job: tuple[int, str, bool, dict[str, Any], bool]) -> tuple[int, bool]:
    """Race for the probe; the winner reports its outcome (a failure when ``fail``)."""
    port, prefix, shared_time, settings, fail = job
    lim = limiter(port, prefix, shared_time, settings)
    _together()
    try:
        permit = lim.acquire()
    except nucleo.LimiterRefusalException as exc:
        if exc.reason not in ("probing", "open"):
            raise AssertionError(f"refused as {exc.reason!r}, not for the probe") from exc
        return os.getpid(), False
    if fail:
        lim.record_failure(nucleo.UpstreamFailure("Shop API", "still down", 503), permit)
    else:
        lim.record_success(permit)
    return os.getpid(), True


def fail(job: tuple[int, str, bool, dict[str, Any], int]) -> int:
    """Report ``count`` upstream failures as fast as possible."""
    port, prefix, shared_time, settings, count = job
    lim = limiter(port, prefix, shared_time, settings)
    failure = nucleo.UpstreamFailure("Shop API", "Service Unavailable", 503)
    _together()
    for _ in range(count):
        lim.record_failure(failure)
    return count


def hold_the_probe(
    job: tuple[int, str, dict[str, Any]], now: Synchronized[float], ready: Any
) -> None:
    """Take the probe, say so, then hang until killed (a crashed prober)."""
    port, prefix, settings = job
    start(now, None)
    lim = limiter(port, prefix, True, settings)
    lim.acquire()
    ready.set()
    asyncio.run(asyncio.Event().wait())  # forever: the test kills this process


def join_late(job: tuple[int, str, dict[str, Any]], answers: Any) -> None:
    """A process that starts mid-run (on the server's time): what it sees, then what it is
    admitted."""
    port, prefix, settings = job
    lim = limiter(port, prefix, False, settings)
    stats = lim.stats()
    admitted = 0
    for _ in range(3):
        try:
            lim.record_success(lim.acquire())
            admitted += 1
        except nucleo.LimiterRefusalException:
            pass
    answers.put((stats.failures, stats.throttle_level, admitted))
