"""Shared limiters on Redis: admission latency against a bare round trip, fleet throughput.

    python bench/bench_fleet.py          (needs redis-server on the PATH and the redis extra)

F1  one shared admission (``acquire()`` on a RedisStore, no other writer) and one recorded
    success (``record_success()``) vs a bare ``PING`` on the same client, measured in the same
    run; target median <= 1.5x each. Beside them, a hit on ``limits``' Redis moving window (the
    ``bench`` extra) against the same PING, for context.
F2  decisions per second (``acquire()`` then ``record_success()``, two decisions) of one
    limiter, whose limit is never reached, shared by 8 processes, against the same work done
    by 1 process; target >= 6x. Each decision is one script run on the server, so the fleet
    is bound by the server and by the cores its processes share.

It starts its own redis-server on a free loopback port in a temporary folder, without
persistence, and stops it at the end. Medians of several repeats; read the ratios.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

import pytest_nucleo as nucleo

REPEATS = 15
NUMBER = 500
FLEET = 8
DECISIONS_PER_PROCESS = 1_000


def client(port: int) -> redis.Redis:
    return redis.Redis(port=port, socket_timeout=2.0, retry=Retry(NoBackoff(), 0))


def limiter(port: int, prefix: str) -> nucleo.RateLimiter:
    # A window this short never makes a caller wait: only the decision is measured.
    return nucleo.RateLimiter(
        "bench", max_requests=1_000_000, window_seconds=1e-3, max_wait_seconds=0,
        store=nucleo.RedisStore(client(port), prefix=prefix),
    )  # fmt: skip


def median_us(stmt: Any) -> float:
    runs = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(NUMBER):
            stmt()
        runs.append((time.perf_counter() - start) / NUMBER)
    return statistics.median(runs) * 1e6


def f1(port: int) -> tuple[float, float, float]:
    ping = client(port).ping
    lim = limiter(port, uuid.uuid4().hex)
    lim.acquire()  # the script is loaded by the first decision; the rest are measured
    return median_us(ping), median_us(lim.acquire), median_us(lim.record_success)


def limits_hit(port: int) -> float | None:
    """A hit on the ``limits`` library's Redis moving window, in us (None without it)."""
    try:
        from limits import parse, storage, strategies
    except ImportError:
        return None
    window = strategies.MovingWindowRateLimiter(
        storage.RedisStorage(f"redis://127.0.0.1:{port}", socket_timeout=2.0)
    )
    item = parse("1000000/second")
    key = uuid.uuid4().hex
    window.hit(item, key)
    return median_us(lambda: window.hit(item, key))


def work(job: tuple[int, str, Any]) -> float:
    port, prefix, barrier = job
    lim = limiter(port, prefix)
    lim.acquire()
    barrier.wait()
    start = time.perf_counter()
    for _ in range(DECISIONS_PER_PROCESS // 2):
        lim.record_success(lim.acquire())
    return time.perf_counter() - start


def f2(port: int) -> tuple[float, float]:
    context = multiprocessing.get_context("spawn")
    rates = {}
    with context.Manager() as manager:
        for processes in (1, FLEET):
            barrier = manager.Barrier(processes)
            prefix = uuid.uuid4().hex
            with context.Pool(processes) as pool:
                spans = pool.map(work, [(port, prefix, barrier)] * processes, chunksize=1)
            rates[processes] = processes * DECISIONS_PER_PROCESS / max(spans)
    return rates[1], rates[FLEET]


def load() -> str:
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def main() -> None:
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("redis-server is not installed (Debian/Ubuntu: apt-get install redis-server)")
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        server = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", folder],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert server.stdout is not None
        for line in server.stdout:
            if "Ready to accept connections" in line:
                break
        threading.Thread(target=server.stdout.read, daemon=True).start()
        try:
            print(load())
            ping_us, admit_us, success_us = f1(port)
            print(
                f"F1 shared admission (acquire):  {admit_us:7.1f} us  vs PING {ping_us:6.1f} us"
                f"  ratio {admit_us / ping_us:4.2f}x  (target <= 1.5x)"
            )
            print(
                f"F1 recorded success          :  {success_us:7.1f} us  vs PING {ping_us:6.1f} us"
                f"  ratio {success_us / ping_us:4.2f}x  (target <= 1.5x)"
            )
            hit_us = limits_hit(port)
            if hit_us is not None:
                print(
                    f"   limits moving window (Redis) hit: {hit_us:7.1f} us"
                    f"  ratio to PING {hit_us / ping_us:4.2f}x"
                )
            one, fleet = f2(port)
            print(
                f"F2 decisions per second, one shared limiter: {FLEET} processes {fleet:8.0f}/s"
                f"  vs 1 process {one:8.0f}/s  ratio {fleet / one:4.2f}x  (target >= 6x)"
            )
            print(load())
        finally:
            server.kill()
            server.wait()


if __name__ == "__main__":
    main()
