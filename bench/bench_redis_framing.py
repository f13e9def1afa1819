"""The store's hand-framed EVALSHA against redis-py's own ``Script`` and ``evalsha``, each
against a PING on a kept connection measured in the same run.

    python bench/bench_redis_framing.py [--rounds 15] [--number 300]

Needs redis-server on the PATH and the redis extra (redis-py with hiredis). It starts its own
redis-server on a free loopback port in a temporary folder, without persistence, and stops it
at the end.

The question it answers: ``RedisStore`` frames its commands itself (RESP, encoded once per
limiter, ``limits/_redis_framing.py``) and sends them on connections it keeps out of the
client's pool (``limits/_redis_connections.py``). The project's rule is to use redis-py's own
path unless a measurement says no, and its target for a Redis admission is 1.3x a PING. So,
on one ``redis.Redis`` client (TCP on loopback, replies parsed by hiredis), in one run:

* ``PING on a kept connection``: the baseline, a connection taken from the pool once and
  kept, ``send_command`` then ``read_response``;
* ``PING, client.ping()``: the same through the pool (taken and given back each call);
* ``store: acquire()``: the real store's admission through a ``RateLimiter`` on a
  ``RedisStore`` (on the server's clock, a limit never reached), its Python included;
* ``store: framed EVALSHA, store.run()``: the exact frame the store sent for that admission,
  sent as the store sends it (its kept connection, its stale check, its NOSCRIPT handling);
* ``redis-py: Script(keys, args)``: ``client.register_script(source)`` called with the same
  key and the same arguments (redis-py's ``Script``: ``EVALSHA``, loaded again on
  ``NOSCRIPT``), through the client's pool;
* ``redis-py: client.evalsha(...)``: ``client.evalsha(sha, 1, key, *args)``, through the pool;
* ``redis-py: evalsha packed on a kept connection``: the same command packed by redis-py's
  encoder on each call and sent on a kept connection: what the pool costs, apart from the
  packing.

Then the same for a ``redis.asyncio.Redis`` client (whose decisions the store already sends
through redis-py's ``execute_command``): ``await`` of a PING on a kept connection, of
``client.ping()``, of the store's ``aacquire()``, of the ``Script`` and of ``evalsha``.

Each round runs a batch of ``--number`` calls of each operation in turn, so every operation of
a round sees about the same load; a ratio is an operation's batch against the PING's batch of
the same round, and the figures are the median ratio over the rounds, with the least and the
greatest. Wall time per call, and this process's CPU time per call (``time.process_time``),
which other processes' load moves less. Nothing here asserts: read the ratios, and the load
average printed with them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
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
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, cast

import redis
import redis.asyncio
from redis.backoff import NoBackoff
from redis.retry import Retry

import pytest_nucleo as nucleo
from pytest_nucleo.limits import _redis

KEPT_PING = "PING on a kept connection"
TARGET = 1.3  # the project's target for a Redis admission, against a PING


# --- the operations ------------------------------------------------------------------------


def client(port: int) -> redis.Redis:
    return redis.Redis(host="127.0.0.1", port=port, socket_timeout=5.0, retry=Retry(NoBackoff(), 0))


def async_client(port: int) -> redis.asyncio.Redis:
    from redis.asyncio.retry import Retry as AsyncRetry

    return redis.asyncio.Redis(
        host="127.0.0.1", port=port, socket_timeout=5.0, retry=AsyncRetry(NoBackoff(), 0)
    )


def limiter(store: nucleo.RedisStore) -> nucleo.RateLimiter:
    # A window this short is never full: only the decision is measured, no wait, no refusal.
    return nucleo.RateLimiter(
        "bench", max_requests=1_000_000, window_seconds=1e-3, max_wait_seconds=0, store=store
    )


def admission_command(lim: nucleo.RateLimiter) -> tuple[str, str, list[bytes]]:
    """The script's digest, the key and the arguments of ``lim``'s admission, as its store
    sends them (one take, on the server's clock): what redis-py's rows send too."""
    keeper = cast(Any, lim)._keeper
    command = keeper._frames.command("reserve", "", "1")  # EVALSHA sha 1 key args...
    sha, _, key, *args = command[1:]
    return sha.decode(), key.decode(), args


def sync_operations(port: int) -> dict[str, Callable[[], object]]:
    plain = client(port)
    kept: Any = plain.connection_pool.get_connection()
    packed: Any = plain.connection_pool.get_connection()

    def kept_ping() -> object:
        kept.send_command("PING")
        return kept.read_response()

    store = nucleo.RedisStore(plain, prefix=uuid.uuid4().hex)
    lim = limiter(store)
    lim.acquire()  # the script loaded, the state made
    frame = cast(Any, lim)._keeper._last_admission[1]  # the frame the store sent
    sha, key, args = admission_command(lim)
    script = plain.register_script(_redis._STEP)
    assert script.sha == sha  # the same script, under the same digest

    def packed_evalsha() -> object:
        packed.send_command("EVALSHA", sha, 1, key, *args)
        return packed.read_response()

    return {
        KEPT_PING: kept_ping,
        "PING, client.ping()": plain.ping,
        "store: acquire()": lim.acquire,
        "store: framed EVALSHA, store.run()": lambda: store.run(frame),
        "redis-py: Script(keys, args)": lambda: script(keys=[key], args=args),
        "redis-py: client.evalsha(...)": lambda: plain.evalsha(sha, 1, key, *args),
        "redis-py: evalsha packed on a kept conn": packed_evalsha,
    }


async def async_operations(port: int) -> dict[str, Callable[[], Awaitable[object]]]:
    plain = async_client(port)
    kept: Any = await plain.connection_pool.get_connection()  # type: ignore[no-untyped-call]

    async def kept_ping() -> object:
        await kept.send_command("PING")
        return await kept.read_response()

    store = nucleo.RedisStore(plain, prefix=uuid.uuid4().hex)
    lim = limiter(store)
    await lim.aacquire()
    sha, key, args = admission_command(lim)
    script = plain.register_script(_redis._STEP)
    return {
        KEPT_PING: kept_ping,
        "PING, await client.ping()": plain.ping,
        "store: aacquire() (execute_command)": lim.aacquire,
        "redis-py: await Script(keys, args)": lambda: script(keys=[key], args=args),
        "redis-py: await client.evalsha(...)": lambda: plain.evalsha(sha, 1, key, *args),
    }


# --- timing ---------------------------------------------------------------------------------


Samples = dict[str, list[tuple[float, float]]]  # per round: (wall, CPU) per call, in us


def timed_sync(operations: dict[str, Callable[[], object]], rounds: int, number: int) -> Samples:
    samples: Samples = {name: [] for name in operations}
    for operation in operations.values():  # warm: connected, loaded
        for _ in range(20):
            operation()
    for _ in range(rounds):
        for name, operation in operations.items():
            start, cpu = time.perf_counter(), time.process_time()
            for _ in range(number):
                operation()
            wall, used = time.perf_counter() - start, time.process_time() - cpu
            samples[name].append((wall / number * 1e6, used / number * 1e6))
    return samples


async def timed_async(
    operations: dict[str, Callable[[], Awaitable[object]]], rounds: int, number: int
) -> Samples:
    samples: Samples = {name: [] for name in operations}
    for operation in operations.values():
        for _ in range(20):
            await operation()
    for _ in range(rounds):
        for name, operation in operations.items():
            start, cpu = time.perf_counter(), time.process_time()
            for _ in range(number):
                await operation()
            wall, used = time.perf_counter() - start, time.process_time() - cpu
            samples[name].append((wall / number * 1e6, used / number * 1e6))
    return samples


def report(title: str, samples: Samples) -> None:
    base = samples[KEPT_PING]
    print(title)
    print(
        f"  {'operation':40s} {'wall':>8s} {'vs PING: median':>16s} {'(min-max)':>13s}"
        f" {'CPU':>8s} {'vs PING':>8s} {'(min-max)':>13s}"
    )
    for name, rounds in samples.items():
        walls = [w / b[0] for (w, _), b in zip(rounds, base, strict=True)]
        cpus = [c / b[1] for (_, c), b in zip(rounds, base, strict=True)]
        print(
            f"  {name:40s} {statistics.median(w for w, _ in rounds):5.1f} us"
            f" {statistics.median(walls):15.2f}x {min(walls):5.2f}-{max(walls):5.2f}x"
            f" {statistics.median(c for _, c in rounds):5.1f} us"
            f" {statistics.median(cpus):7.2f}x {min(cpus):5.2f}-{max(cpus):5.2f}x"
        )


# --- the server -----------------------------------------------------------------------------


@contextlib.contextmanager
def redis_server(binary: str, port: int, folder: str) -> Iterator[subprocess.Popen[str]]:
    """A redis-server on ``port`` of loopback, without persistence, ready when entered,
    killed on exit."""
    server = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", folder],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        for line in server.stdout:
            if "Ready to accept connections" in line:
                break
        threading.Thread(target=server.stdout.read, daemon=True).start()
        yield server
    finally:
        server.kill()
        server.wait()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def parsed_by() -> str:
    from importlib.metadata import version

    from redis.utils import HIREDIS_AVAILABLE

    parser = f"hiredis {version('hiredis')}" if HIREDIS_AVAILABLE else "redis-py's own Python"
    return f"redis-py {version('redis')}, replies parsed by {parser}"


def load() -> str:
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds")
    parser.add_argument("--number", type=int, default=300, help="calls per batch")
    options = parser.parse_args()
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("redis-server is not installed (Debian/Ubuntu: apt-get install redis-server)")
    port = free_port()
    with tempfile.TemporaryDirectory() as folder, redis_server(binary, port, folder):
        print(load())
        print(f"{parsed_by()}; TCP on loopback")
        sync = timed_sync(sync_operations(port), options.rounds, options.number)
        report(
            f"Blocking client, {options.rounds} interleaved rounds of {options.number} calls:",
            sync,
        )

        async def measure() -> Samples:
            operations = await async_operations(port)
            return await timed_async(operations, options.rounds, options.number)

        report(
            f"asyncio client, {options.rounds} interleaved rounds of {options.number} calls:",
            asyncio.run(measure()),
        )
        print(load())
        print(f"  target: a Redis admission <= {TARGET}x a PING on a kept connection")


if __name__ == "__main__":
    main()
