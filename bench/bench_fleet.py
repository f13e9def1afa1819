"""Shared limiters on Redis: a decision against a bare round trip, and a fleet against one process.

    python bench/bench_fleet.py [--rtt-ms 2 5] [--repeats 15]

Needs redis-server on the PATH and the redis extra; ``limits`` (the bench extra) for its
columns. It starts its own redis-server on a free loopback port in a temporary folder,
without persistence, and stops it at the end.

Decision cost. One shared admission (``acquire()`` on a RedisStore, no other writer) and one
recorded success (``record_success()``), each against a bare ``PING`` through the same
redis-py client (``client.ping()``), measured in the same run, interleaved: the target is a
median ratio <= 1.5x each. A second baseline is stricter: a ``PING`` sent on one kept
connection of the same client, which is how the store sends its decisions (it keeps
connections instead of taking one from the pool per call). Beside them, a hit on ``limits``'
Redis moving window (a Lua script too, with no circuit, throttle or hold). The server's own
CPU time per operation (read from /proc) says how much of a decision is the script.

Fleet throughput. Decisions per second (``acquire()`` then ``record_success()``, two
decisions) on one limiter whose limit is never reached, shared by 8 processes, against the
same work in 1 process; the target is >= 6x. Processes start, connect and load the script
before the clock starts (a barrier), and the slowest process's time counts. Measured twice:

* plain loopback: client processes, the server and this benchmark share this machine's
  cores, so the fleet is bound by CPU, not by the round trip;
* a modelled network: the same runs through a proxy on loopback that holds every chunk it
  forwards, each way, for half of ``--rtt-ms`` (asyncio timers, so waiting costs no CPU;
  a round trip takes about the RTT plus the proxy's own forwarding). This models a fleet
  whose processes run on other machines than Redis, where one process is bound by its round
  trips; it is a model, not a network (no jitter, no bandwidth limit). Both the 1-process
  and the 8-process runs go through the same proxy.

Medians of several repeats; the machine is shared and noisy, so read the ratios, and the load
average printed with them.
"""

from __future__ import annotations

import argparse
import asyncio
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
from collections.abc import Callable
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

import pytest_nucleo as nucleo

NUMBER = 300  # operations per timed batch
FLEET = 8


def decisions_for(rtt_ms: float | None) -> int:
    """Decisions per process: about two seconds' worth when a round trip is modelled."""
    return 1_000 if rtt_ms is None else max(200, int(2_000 / rtt_ms) // 2 * 2)


def client(port: int) -> redis.Redis:
    return redis.Redis(host="127.0.0.1", port=port, socket_timeout=5.0, retry=Retry(NoBackoff(), 0))


def limiter(port: int, prefix: str) -> nucleo.RateLimiter:
    # A window this short never makes a caller wait: only the decision is measured.
    return nucleo.RateLimiter(
        "bench", max_requests=1_000_000, window_seconds=1e-3, max_wait_seconds=0,
        store=nucleo.RedisStore(client(port), prefix=prefix),
    )  # fmt: skip


def limits_hit(port: int) -> Callable[[], object] | None:
    """A hit on the ``limits`` library's Redis moving window (None without it)."""
    try:
        from limits import parse, storage, strategies
    except ImportError:
        return None
    window = strategies.MovingWindowRateLimiter(
        storage.RedisStorage(f"redis://127.0.0.1:{port}", socket_timeout=5.0)
    )
    item, key = parse("1000000/second"), uuid.uuid4().hex
    window.hit(item, key)
    return lambda: window.hit(item, key)


# --- decision cost -------------------------------------------------------------------------


def server_cpu_ns(pid: int) -> int | None:
    """The server's main thread's CPU time (Linux), which other processes' load moves less
    than wall time."""
    try:
        with open(f"/proc/{pid}/schedstat") as stat:
            return int(stat.read().split()[0])
    except OSError:
        return None


def decision_cost(port: int, server_pid: int, repeats: int) -> None:
    plain = client(port)
    kept: Any = plain.connection_pool.get_connection()

    def kept_ping() -> object:
        kept.send_command("PING")
        return kept.read_response()

    lim = limiter(port, uuid.uuid4().hex)
    lim.record_success(lim.acquire())  # the script is loaded by the first decision
    operations: dict[str, Callable[[], object]] = {
        "PING, client.ping()": plain.ping,
        "PING on one kept connection": kept_ping,
        "shared admission, acquire()": lim.acquire,
        "recorded success, record_success()": lim.record_success,
    }
    hit = limits_hit(port)
    if hit is not None:
        operations["limits moving window hit (Redis)"] = hit
    wall: dict[str, list[float]] = {name: [] for name in operations}
    cpu: dict[str, list[float]] = {name: [] for name in operations}
    for _ in range(repeats):
        for name, operation in operations.items():  # interleaved: each repeat sees one load
            before, start = server_cpu_ns(server_pid), time.perf_counter()
            for _ in range(NUMBER):
                operation()
            wall[name].append((time.perf_counter() - start) / NUMBER * 1e6)
            after = server_cpu_ns(server_pid)
            if before is not None and after is not None:
                cpu[name].append((after - before) / NUMBER / 1e3)
    ping, kept_name = "PING, client.ping()", "PING on one kept connection"

    def ratio(name: str, base: str) -> float:
        return statistics.median(a / b for a, b in zip(wall[name], wall[base], strict=True))

    print(f"Decision cost, median of {repeats} interleaved batches of {NUMBER}:")
    print(f"  {'operation':36s} {'wall':>9s} {'vs client.ping()':>17s} {'vs kept PING':>13s}"
          f" {'server CPU':>11s}")  # fmt: skip
    for name in operations:
        server = f"{statistics.median(cpu[name]):8.1f} us" if cpu[name] else "        -"
        print(
            f"  {name:36s} {statistics.median(wall[name]):6.1f} us {ratio(name, ping):16.2f}x"
            f" {ratio(name, kept_name):12.2f}x {server:>11s}"
        )
    print("  target: shared admission and recorded success <= 1.5x a PING through the client")
    plain.connection_pool.release(kept)


# --- fleet throughput ----------------------------------------------------------------------


def work(job: tuple[int, str, str, int, Any]) -> float:
    port, kind, prefix, decisions, barrier = job
    if kind == "limits":
        hit = limits_hit(port)
        assert hit is not None
        hit()
        barrier.wait()
        start = time.perf_counter()
        for _ in range(decisions):
            hit()
        return time.perf_counter() - start
    lim = limiter(port, prefix)
    lim.record_success(lim.acquire())  # connected, script loaded: before the clock starts
    barrier.wait()
    start = time.perf_counter()
    for _ in range(decisions // 2):
        lim.record_success(lim.acquire())
    return time.perf_counter() - start


def throughput(port: int, kind: str, processes: int, decisions: int, manager: Any) -> float:
    barrier = manager.Barrier(processes)
    prefix = uuid.uuid4().hex
    context = multiprocessing.get_context("spawn")
    with context.Pool(processes) as pool:
        spans = pool.map(work, [(port, kind, prefix, decisions, barrier)] * processes, 1)
    return processes * decisions / max(spans)


def fleet(port: int, rtt_ms: float | None, repeats: int, with_limits: bool) -> None:
    where = "plain loopback" if rtt_ms is None else f"through a proxy adding {rtt_ms:g} ms RTT"
    decisions = decisions_for(rtt_ms)
    kinds = ["RateLimiter on a RedisStore"] + (["limits moving window hit"] if with_limits else [])
    with multiprocessing.get_context("spawn").Manager() as manager:
        for label in kinds:
            kind = "limits" if label.startswith("limits") else "nucleo"
            ones, fleets, ratios = [], [], []
            for _ in range(repeats):
                one = throughput(port, kind, 1, decisions, manager)
                many = throughput(port, kind, FLEET, decisions, manager)
                ones.append(one)
                fleets.append(many)
                ratios.append(many / one)
            print(
                f"  {label:28s} {where:34s} {FLEET} processes {statistics.median(fleets):7.0f}/s"
                f"  1 process {statistics.median(ones):7.0f}/s"
                f"  ratio {statistics.median(ratios):5.2f}x  (runs: "
                + " ".join(f"{r:.2f}" for r in ratios)
                + ")"
            )


# --- the proxy that models a network -------------------------------------------------------


def proxy_main(upstream: int, one_way: float, ready: Any) -> None:
    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def deliver() -> None:
            while True:
                due, data = await queue.get()
                if not data:
                    break
                if due > loop.time():
                    await asyncio.sleep(due - loop.time())
                writer.write(data)
            writer.close()

        delivering = asyncio.create_task(deliver())
        try:
            while data := await reader.read(65536):
                queue.put_nowait((loop.time() + one_way, data))
        except ConnectionError:
            pass
        queue.put_nowait((0.0, b""))
        await delivering

    async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", upstream)
        for conn in (writer, up_writer):
            conn.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    async def serve() -> None:
        server = await asyncio.start_server(accepted, "127.0.0.1", 0)
        ready.send(server.sockets[0].getsockname()[1])
        async with server:
            await server.serve_forever()

    asyncio.run(serve())


def proxied(upstream: int, rtt_ms: float) -> tuple[int, Any]:
    context = multiprocessing.get_context("spawn")
    mine, theirs = context.Pipe()
    process = context.Process(
        target=proxy_main, args=(upstream, rtt_ms / 2000, theirs), daemon=True
    )
    process.start()
    if not mine.poll(30):
        process.kill()
        sys.exit("the latency proxy did not start")
    return int(mine.recv()), process


def rtt_us(port: int) -> float:
    ping = client(port).ping
    ping()
    start = time.perf_counter()
    for _ in range(50):
        ping()
    return (time.perf_counter() - start) / 50 * 1e6


# --- main ----------------------------------------------------------------------------------


def load() -> str:
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=15, help="batches per decision cost")
    parser.add_argument("--fleet-repeats", type=int, default=3, help="runs per fleet ratio")
    parser.add_argument(
        "--rtt-ms", type=float, nargs="*", default=[2.0, 5.0],
        help="round trips to model with the proxy (none: plain loopback only)",
    )  # fmt: skip
    options = parser.parse_args()
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
        proxies: list[Any] = []
        try:
            assert server.stdout is not None
            for line in server.stdout:
                if "Ready to accept connections" in line:
                    break
            threading.Thread(target=server.stdout.read, daemon=True).start()
            print(load())
            decision_cost(port, server.pid, options.repeats)
            print(load())
            with_limits = limits_hit(port) is not None
            print(f"Fleet throughput, decisions per second, median of {options.fleet_repeats}:")
            fleet(port, None, options.fleet_repeats, with_limits)
            print(load())
            for rtt in options.rtt_ms:
                proxy_port, process = proxied(port, rtt)
                proxies.append(process)
                print(f"  (a PING through the proxy: {rtt_us(proxy_port):.0f} us)")
                fleet(proxy_port, rtt, options.fleet_repeats, with_limits)
                print(load())
            print("  target: 8 processes >= 6x 1 process")
        finally:
            for process in proxies:
                process.kill()
            server.kill()
            server.wait()


if __name__ == "__main__":
    main()
