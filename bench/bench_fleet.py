"""Shared limiters on Redis: a decision against a bare round trip, and a fleet against one process.

    python bench/bench_fleet.py [--rtt-ms 2 5] [--repeats 15] [--runs 10] [--fleet-repeats 5]
    python bench/bench_fleet.py --instructions

Needs redis-server on the PATH and the redis extra; ``limits`` (the bench extra) for its
columns. It starts its own redis-server on a free loopback port in a temporary folder,
without persistence, and stops it at the end.

Decision cost. One shared admission (``acquire()`` on a RedisStore, no other writer) and one
recorded success (``record_success()``), each against a bare ``PING`` sent on one kept
connection of the same redis-py client, which is how the store sends its decisions (it keeps
connections instead of taking one from the pool per call), measured in the same run,
interleaved: the target is an admission <= 1.3x a PING, the median ratio of the wall clock
over the rounds, and the median of ten runs (``--runs 10``: each run measures again, on
limiters and connections of its own, and a line gives each run's ratios and their median).
Beside it, a ``PING`` through the client (``client.ping()``, which takes a connection from the
pool and gives it back each time), two scripts sent with an admission's arguments, one that
does nothing (the least any decision made by a script costs) and one that only reads the
server's clock and the state and writes it back (an admission's floor, before any rule), and
a hit on ``limits``' Redis moving window (a Lua script too, with no circuit, throttle or hold).
Each batch is timed three ways: the wall clock, this process's CPU time
(``time.process_time``, the client's side: redis-py, the store, the kernel's work for its
socket) and the server's CPU time (its main thread's, from /proc, or from ``INFO CPU`` where
/proc cannot be read), which says how much of a decision is the script. The ratios to the kept
``PING`` are per round, printed as min / median / max, the wall's and the CPU's (client and
server together) side by side. A last line gives the limiter's and the store's own Python
per decision, each reply given at once.

Window size. A shared admission on a window of 10 against one on a window of 10,000, both
nearly full (each admission forgets the oldest take and adds one): the target is about 1x,
as for the in-process limiter (``bench_limits.py``).

Live limiters. A shared admission on one of 10 limiters against one of 1,000, each taken in
turn, all on one store: each limiter's state is a key of its own, which the server finds by
its name; the target is at most 1.1x, as in process (the ratio per round, min / median / max,
in wall time, and the client's and the server's CPU time beside it).

Fleet throughput. Decisions per second (``acquire()`` then ``record_success()``, two
decisions) on one limiter whose limit is never reached, shared by 8 processes, against the
same work in 1 process; the target is >= 6x. Processes start, connect and load the script
before the clock starts (a barrier), and the slowest process's time counts. Measured twice:

* plain loopback: client processes, the server and this benchmark share this machine's
  cores, so the fleet is bound by CPU, not by the round trip (each row says the CPU time a
  decision takes, alone and in the fleet, and how busy the fleet kept the cores);
* a modelled network: the same runs on clients whose connections hold every request and every
  reply for half of ``--rtt-ms`` (``time.sleep``: waiting costs no CPU, and the delay is
  precise to a fraction of a millisecond), so each round trip takes the RTT more. This models
  a fleet whose processes run on other machines than Redis, where one process is bound by its
  round trips; it is a model, not a network (no jitter, no bandwidth limit, no kernel or
  proxy work for the delay). Both the 1-process and the 8-process runs use the same clients.
  (A forwarding proxy on loopback was tried first: under this machine's load its own
  forwarding, on a shared core, made a 2 ms round trip take 6 to 13 ms.)

``--instructions`` counts instead the server's CPU instructions per decision (redis-server run
under valgrind's callgrind, counting only while the operations run): a PING, the two scripts
above, an admission that runs no rule, a shared admission and a recorded success; then the
process's own Python of a PING, an admission and a success, each reply given at once (this
process run under callgrind, with and without the operations). Instructions do not drift with
the machine's load, so they show what a change saves; they are not the target's measure, which
is the round trip's wall time (a PING's is mostly the kernel's work, which callgrind does not
count).

Medians of several repeats; the machine is shared and noisy, so read the ratios, and the load
average printed with them (``/proc/loadavg``, at the start and at the end of each part).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import itertools
import multiprocessing
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

import pytest_nucleo as nucleo

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_limits import load  # the same line, printed by both benches

NUMBER = 300  # operations per timed batch
FLEET = 8
KEPT_PING, EMPTY_SCRIPT = "PING on one kept connection", "an empty script, EVALSHA"
LEAST_SCRIPT = "clock, state read and written back"
NO_RULES_ADMISSION = "no-rule admission, acquire()"


def decisions_for(rtt_ms: float) -> int:
    """Decisions per process: a quarter of a second's worth or more on loopback, about a
    second's when a round trip is modelled."""
    return 4_000 if not rtt_ms else max(200, int(1_000 / rtt_ms) // 2 * 2)


class Distant(redis.Connection):
    """A connection to a Redis ``one_way`` seconds away: each request and each reply is held
    that long (asleep, with no CPU), as a network would hold it."""

    one_way = 0.0

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        time.sleep(self.one_way)
        super().send_packed_command(command, check_health)  # type: ignore[no-untyped-call]

    def read_response(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().read_response(*args, **kwargs)
        finally:
            time.sleep(self.one_way)


def pool(port: int, distant: bool = False) -> redis.ConnectionPool:
    return redis.ConnectionPool(
        host="127.0.0.1", port=port, socket_timeout=5.0, retry=Retry(NoBackoff(), 0),
        connection_class=Distant if distant else redis.Connection,
    )  # fmt: skip


def client(port: int, distant: bool = False) -> redis.Redis:
    return redis.Redis(connection_pool=pool(port, distant))


def limiter(
    port: int, prefix: str, distant: bool = False, script: str | None = None
) -> nucleo.RateLimiter:
    """The limiter measured; with ``script``, its store runs that script in place of its own
    (a stand-in: it must answer as the store's script does)."""
    store = nucleo.RedisStore(client(port, distant), prefix=prefix)
    if script is not None:  # before the limiter binds the store, which packs the digest once
        store._script, store._sha = script, hashlib.sha1(script.encode()).hexdigest()
    # A window this short never makes a caller wait: only the decision is measured.
    return nucleo.RateLimiter(
        "bench", max_requests=1_000_000, window_seconds=1e-3, max_wait_seconds=0, store=store
    )


def limits_hit(port: int, distant: bool = False) -> Callable[[], object] | None:
    """A hit on the ``limits`` library's Redis moving window (None without it)."""
    try:
        from limits import parse, storage, strategies
    except ImportError:
        return None
    window = strategies.MovingWindowRateLimiter(
        storage.RedisStorage(f"redis://127.0.0.1:{port}", connection_pool=pool(port, distant))
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


class ServerCPU:
    """The server's CPU time in ns: its main thread's from /proc, or, where /proc cannot be
    read, the main thread's (or the whole server's, before Redis 7) from ``INFO CPU``, read on
    a connection of its own (microseconds there; the reading itself is outside the batches)."""

    def __init__(self, port: int, pid: int) -> None:
        self.pid = pid
        self.info = client(port) if server_cpu_ns(pid) is None else None

    def __call__(self) -> int:
        if self.info is None:
            return server_cpu_ns(self.pid) or 0
        cpu = self.info.info("cpu")
        user = cpu.get("used_cpu_user_main_thread", cpu["used_cpu_user"])
        system = cpu.get("used_cpu_sys_main_thread", cpu["used_cpu_sys"])
        return int((float(user) + float(system)) * 1e9)


# A script that does nothing: the least any decision made by a script costs.
EMPTY = "return 1"

# What an admission must do by the store's design: read the server's clock and the limiter's
# state (its fields and a window's head), write both back, and answer. No rule runs.
LEAST = """
local now = redis.call('TIME')
local read = redis.call('HMGET', KEYS[1], 's', 'b:bench')
redis.call('HSET', KEYS[1], 's', read[1] or string.rep('\\0', 128),
           'b:bench', read[2] or string.rep('\\0', 48))
return now[1] .. ' 0'
"""


# An admission that runs no rule, made through the limiter as a real one is: the clock and the
# state read, a window head of 24 takes moved on by one take (its oldest read and dropped,
# one added) and written back, and the permit answered. A floor under any admission of this
# design through this client: what the rules and the window's upkeep add is the rest.
NO_RULES = """
local key, field = KEYS[1], ARGV[4]
local t = redis.call('TIME')
local now = t[1] + t[2] / 1e6
local read = redis.call('HMGET', key, 's', field)
if not (read[1] and read[2]) then
  redis.call('HSET', key, 's', string.rep('\\0', 128),
             field, struct.pack('<dddd', 24, 0, 0, 24 * 16) .. string.rep('\\0', 24 * 16))
  return '2000 0'
end
local _, epoch = struct.unpack('<dd', read[1])
local head = read[2]
local total, first, past, length = struct.unpack('<dddd', head)
local oldest = struct.unpack('<d', head, 33)  -- read, as an admission reads it to forget it
local newest = struct.unpack('<d', head, #head - 15)
redis.call('HSET', key, field, struct.pack('<ddddc0dd', total, first, past, length,
                                          string.sub(head, 49), math.max(now, newest), 1))
return string.format('%d %d', 2001, epoch)
"""


def script_call(plain: redis.Redis, kept: Any, source: str) -> Callable[[], object]:
    """A call of the script ``source`` on the connection ``kept``, with as many arguments, of
    the same sizes, as the store sends for an admission, packed once as the store packs its
    decisions."""
    sha = plain.script_load(source)
    arguments = ("reserve", b"\0" * 104, b"\0" * 16, "b:bench", "", "1")
    frame = kept.pack_command("EVALSHA", sha, 1, f"bench-{sha[:8]}", *arguments)

    def call() -> object:
        kept.send_packed_command(frame)
        return kept.read_response()

    return call


def decision_operations(port: int) -> dict[str, Callable[[], object]]:
    """A PING on a kept connection, the two scripts on it, an admission that runs no rule, a
    shared admission and a recorded success: what a decision is measured by, in time or in
    instructions."""
    plain = client(port)
    kept: Any = plain.connection_pool.get_connection()

    def kept_ping() -> object:
        kept.send_command("PING")
        return kept.read_response()

    lim = limiter(port, uuid.uuid4().hex)
    lim.record_success(lim.acquire())  # the script is loaded by the first decision
    stand_in = limiter(port, uuid.uuid4().hex, script=NO_RULES)
    stand_in.acquire()  # the state made
    return {
        KEPT_PING: kept_ping,
        EMPTY_SCRIPT: script_call(plain, kept, EMPTY),
        LEAST_SCRIPT: script_call(plain, kept, LEAST),
        NO_RULES_ADMISSION: stand_in.acquire,
        "shared admission, acquire()": lim.acquire,
        "recorded success, record_success()": lim.record_success,
    }


def answered_at_once(connection: Any, decide: Callable[[], object]) -> Callable[[], None]:
    """``decide`` run once against Redis, then its connection faked: nothing is sent and each
    reply is the one Redis gave, at once. The returned function gives the connection back."""
    read = connection.read_response
    replies: list[Any] = []

    def answered(*args: Any, **kwargs: Any) -> Any:
        replies.append(read(*args, **kwargs))
        return replies[0]

    connection.read_response = answered
    decide()  # answered by Redis, the reply kept
    connection.send_packed_command = lambda *args, **kwargs: None
    connection.read_response = lambda *args, **kwargs: replies[0]

    def restore() -> None:
        del connection.send_packed_command, connection.read_response

    return restore


def limiter_on_its_connection(port: int) -> tuple[nucleo.RateLimiter, Any]:
    """A limiter whose state exists (as in every reply :func:`answered_at_once` keeps), and
    the connection its store keeps."""
    lim = limiter(port, uuid.uuid4().hex)
    lim.record_success(lim.acquire())
    return lim, cast(Any, lim.store)._kept.idle[-1][0]


OWN_PYTHON = {
    "ping": KEPT_PING,
    "admission": "shared admission, acquire()",
    "success": "recorded success, record_success()",
}
"""What --instructions counts of the process's own Python, by the name --own-python takes."""


def run_own_python(port: int, which: str, count: int) -> None:
    """``count`` of ``which`` (one of :data:`OWN_PYTHON`), each answered at once, for
    --instructions: a PING's packing and sending, or the limiter's and the store's Python."""
    if which == "ping":
        connection: Any = client(port).connection_pool.get_connection()

        def decide() -> object:
            connection.send_command("PING")
            return connection.read_response()

    else:
        lim, connection = limiter_on_its_connection(port)
        decide = lim.acquire if which == "admission" else lim.record_success
    answered_at_once(connection, decide)
    for _ in range(count):
        decide()


def own_python_instructions(port: int, which: str, count: int = 10_000) -> float:
    """The instructions of ``which``'s own Python, under callgrind: a run of ``count`` less a
    run of none, divided by ``count``."""

    def counted(n: int) -> int:
        command = [
            "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
            sys.executable, __file__, "--own-python", str(port), which, str(n),
        ]  # fmt: skip
        output = subprocess.run(command, capture_output=True, text=True, check=True).stderr
        return int(re.search(r"refs:\s*([\d,]+)", output).group(1).replace(",", ""))  # type: ignore[union-attr]

    return (counted(count) - counted(0)) / count


def without_round_trip(port: int, count: int = 20_000) -> tuple[float, float]:
    """The limiter's and the store's own Python per admission and per recorded success, in
    us, the store's check of its kept connection included: the connection answers each
    decision at once, with the reply Redis gave to the same decision."""
    lim, connection = limiter_on_its_connection(port)
    costs = []
    for decide in (lim.acquire, lim.record_success):
        restore = answered_at_once(connection, decide)
        start = time.perf_counter()
        for _ in range(count):
            decide()
        costs.append((time.perf_counter() - start) / count * 1e6)
        restore()
    return costs[0], costs[1]


class Timed:
    """Operations timed in turns, batches of NUMBER calls: per batch and per call, the wall
    clock's, this process's CPU and the server's CPU, in microseconds."""

    def __init__(
        self, operations: dict[str, Callable[[], object]], server: ServerCPU, repeats: int
    ) -> None:
        self.wall: dict[str, list[float]] = {name: [] for name in operations}
        self.client: dict[str, list[float]] = {name: [] for name in operations}
        self.server: dict[str, list[float]] = {name: [] for name in operations}
        for _ in range(repeats):  # the operations in turns, so each repeat sees one load
            for name, operation in operations.items():
                before, cpu, start = server(), time.process_time(), time.perf_counter()
                for _ in range(NUMBER):
                    operation()
                wall, cpu = time.perf_counter() - start, time.process_time() - cpu
                self.wall[name].append(wall / NUMBER * 1e6)
                self.client[name].append(cpu / NUMBER * 1e6)
                self.server[name].append((server() - before) / NUMBER / 1e3)

    def median(self, times: dict[str, list[float]], name: str) -> float:
        return statistics.median(times[name])

    def ratios(self, name: str, base: str) -> list[float]:
        """The wall clock's ratio of ``name`` to ``base``, per round."""
        return [a / b for a, b in zip(self.wall[name], self.wall[base], strict=True)]

    def cpu_ratios(self, name: str, base: str) -> list[float]:
        """The CPU's ratio, the client's and the server's together, per round."""
        ours = [a + b for a, b in zip(self.client[name], self.server[name], strict=True)]
        theirs = [a + b for a, b in zip(self.client[base], self.server[base], strict=True)]
        return [a / b for a, b in zip(ours, theirs, strict=True)]


def spread(ratios: list[float]) -> str:
    """Ratios as min / median / max."""
    return f"{min(ratios):4.2f} / {statistics.median(ratios):4.2f} / {max(ratios):4.2f}"


ADMISSION, SUCCESS = "shared admission, acquire()", "recorded success, record_success()"


def decision_cost(
    port: int, server: ServerCPU, repeats: int, table: bool = True
) -> tuple[float, float]:
    """The decision costs (the table, when ``table``); the admission's and the success's median
    ratio to a PING on a kept connection, in wall time."""
    operations = {"PING, client.ping()": client(port).ping, **decision_operations(port)}
    hit = limits_hit(port)
    if hit is not None:
        operations["limits moving window hit (Redis)"] = hit
    timed = Timed(operations, server, repeats)
    ping, kept = "PING, client.ping()", KEPT_PING
    results = (
        statistics.median(timed.ratios(ADMISSION, kept)),
        statistics.median(timed.ratios(SUCCESS, kept)),
    )
    if not table:
        return results
    print(f"Decision cost, median of {repeats} interleaved batches of {NUMBER}:")
    print(f"  {parsed_by()}")
    print(
        f"  {'operation':36s} {'wall':>9s} {'client CPU':>11s} {'server CPU':>11s}"
        f" {'vs client.ping()':>17s}   vs kept PING: wall min / median / max, CPU median"
    )
    for name in operations:
        wall, own, its = (
            timed.median(times, name) for times in (timed.wall, timed.client, timed.server)
        )
        cpu = statistics.median(timed.cpu_ratios(name, kept))
        print(
            f"  {name:36s} {wall:6.1f} us {own:8.1f} us {its:8.1f} us"
            f" {statistics.median(timed.ratios(name, ping)):16.2f}x"
            f"   {spread(timed.ratios(name, kept))}, {cpu:4.2f}x"
        )
    admission, success = without_round_trip(port)
    print(
        f"  the limiter's and store's own Python, each reply at once: admission {admission:.1f}"
        f" us, success {success:.1f} us"
    )
    print(
        "  target: a shared admission <= 1.3x a PING on a kept connection (the wall's median"
        " ratio, the median of ten runs: --runs 10)"
    )
    return results


def window_sizes(port: int, server: ServerCPU, repeats: int) -> None:
    """A shared admission on a window of 10 against one on a window of 10,000, both nearly
    full: the limiter's clock moves a second per admission and its window spans the last
    ``max_requests`` - 1 of them, so each admission forgets the oldest take and adds one (the
    common case, no wait). On a FakeClock given to the store, as the tests drive it."""

    def nearly_full(size: int) -> Callable[[], object]:
        clock = nucleo.FakeClock(1_000.0)
        lim = nucleo.RateLimiter(
            f"window-{size}", max_requests=size, window_seconds=size - 0.5, max_throttle=0.0,
            max_wait_seconds=0, clock=clock,
            store=nucleo.RedisStore(client(port), prefix=uuid.uuid4().hex, clock=clock),
        )  # fmt: skip

        def admit() -> object:
            clock.advance(1.0)
            return lim.acquire()

        for _ in range(size):  # filled: from now on each admission drops one and adds one
            admit()
        return admit

    operations = {"window of 10": nearly_full(10), "window of 10,000": nearly_full(10_000)}
    title = "Window size, a shared admission on a nearly full window"
    compared(title, operations, "10,000 vs 10", server, repeats, "about 1x")


def live_limiters(port: int, server: ServerCPU, repeats: int) -> None:
    """A shared admission on one of 10 live limiters against one of 1,000, taken in turn, all
    on one store: each limiter's state is a key of its own on the server."""
    store = nucleo.RedisStore(client(port), prefix=uuid.uuid4().hex)

    def made(name: str) -> nucleo.RateLimiter:  # as limiter() makes the measured one
        return nucleo.RateLimiter(
            name, max_requests=1_000_000, window_seconds=1e-3, max_wait_seconds=0, store=store
        )

    def in_turn(count: int) -> Callable[[], object]:
        limiters = [made(f"live-{count}-{n}") for n in range(count)]
        for lim in limiters:  # each state made before the clock starts
            lim.acquire()
        turn = itertools.cycle(limiters)
        return lambda: next(turn).acquire()

    operations = {"10 live limiters": in_turn(10), "1,000 live limiters": in_turn(1_000)}
    title = "Live limiters, a shared admission on each in turn"
    compared(title, operations, "1,000 vs 10", server, repeats, "at most 1.1x")


def compared(
    title: str, operations: dict[str, Callable[[], object]], label: str, server: ServerCPU,
    repeats: int, target: str,
) -> None:  # fmt: skip
    """Two operations timed in turns, and the second's cost against the first's: the wall
    clock's ratio per round (min / median / max), the client's and the server's CPU beside."""
    timed = Timed(operations, server, repeats)
    print(f"{title}, median of {repeats}:")
    for name in operations:
        print(
            f"  {name:36s} {timed.median(timed.wall, name):6.1f} us  client CPU"
            f" {timed.median(timed.client, name):6.1f} us  server CPU"
            f" {timed.median(timed.server, name):6.1f} us"
        )
    small, large = operations
    client_cpu = timed.median(timed.client, large) / timed.median(timed.client, small)
    server_cpu = timed.median(timed.server, large) / timed.median(timed.server, small)
    print(
        f"  {label}: {statistics.median(timed.ratios(large, small)):.2f}x wall (min / median /"
        f" max {spread(timed.ratios(large, small))}), {client_cpu:.2f}x client CPU,"
        f" {server_cpu:.2f}x server CPU  (target: {target})"
    )


# --- fleet throughput ----------------------------------------------------------------------


def work(job: tuple[int, str, str, int, float, Any]) -> tuple[float, float]:
    """One process's share of a fleet run: its wall time and its own CPU time for its
    decisions, in seconds."""
    port, kind, prefix, decisions, rtt_ms, barrier = job
    Distant.one_way = rtt_ms / 2000
    distant = rtt_ms > 0
    if kind == "limits":
        hit = limits_hit(port, distant)
        assert hit is not None
        hit()
        barrier.wait()
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(decisions):
            hit()
        return time.perf_counter() - start, time.process_time() - cpu
    lim = limiter(port, prefix, distant)
    lim.record_success(lim.acquire())  # connected, script loaded: before the clock starts
    barrier.wait()
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(decisions // 2):
        lim.record_success(lim.acquire())
    return time.perf_counter() - start, time.process_time() - cpu


def throughput(
    workers: Any, port: int, kind: str, processes: int, rtt_ms: float, manager: Any,
    server_pid: int,
) -> tuple[float, float | None]:  # fmt: skip
    """Decisions per second of ``processes`` of the pool's workers (each job waits at the
    barrier for the others, so no worker takes two), and the CPU time in us a decision took,
    the clients' and the server's together (None where the server's cannot be read)."""
    barrier = manager.Barrier(processes)
    decisions = decisions_for(rtt_ms)
    job = (port, kind, uuid.uuid4().hex, decisions, rtt_ms, barrier)
    before = server_cpu_ns(server_pid)
    results: list[tuple[float, float]] = workers.map(work, [job] * processes, 1)
    after = server_cpu_ns(server_pid)
    rate = processes * decisions / max(span for span, _ in results)
    if before is None or after is None:
        return rate, None
    clients = sum(cpu for _, cpu in results) * 1e9
    return rate, (clients + after - before) / (processes * decisions) / 1e3


def fleet(port: int, rtt_ms: float, repeats: int, with_limits: bool, server_pid: int) -> None:
    where = f"with {rtt_ms:g} ms more per round trip" if rtt_ms else "plain loopback"
    kinds = ["RateLimiter on a RedisStore"] + (["limits moving window hit"] if with_limits else [])
    context = multiprocessing.get_context("spawn")
    cores = os.cpu_count() or 1
    with context.Manager() as manager, context.Pool(FLEET) as workers:
        for label in kinds:
            kind = "limits" if label.startswith("limits") else "nucleo"
            ones, fleets, ratios, costs, busy = [], [], [], [], []
            for _ in range(repeats):  # 1 and 8 in turn, so each pair sees about one load
                one, cost = throughput(workers, port, kind, 1, rtt_ms, manager, server_pid)
                many, fleet_cost = throughput(
                    workers, port, kind, FLEET, rtt_ms, manager, server_pid
                )
                ones.append(one)
                fleets.append(many)
                ratios.append(many / one)
                if cost is not None and fleet_cost is not None:
                    costs.append((cost, fleet_cost))
                    busy.append(many * fleet_cost / 1e6 / cores)
            print(
                f"  {label:28s} {where:34s} {FLEET} processes {statistics.median(fleets):7.0f}/s"
                f"  1 process {statistics.median(ones):7.0f}/s"
                f"  ratio {statistics.median(ratios):5.2f}x  (runs: "
                + " ".join(f"{r:.2f}" for r in ratios)
                + ")"
            )
            if costs and not rtt_ms:
                # A fleet that keeps every core busy is bound by CPU: more processes cannot
                # make more decisions a second, whatever the store.
                alone = statistics.median(cost for cost, _ in costs)
                shared = statistics.median(fleet_cost for _, fleet_cost in costs)
                print(
                    f"    CPU per decision, clients and server: {alone:.1f} us alone, "
                    f"{shared:.1f} us in the fleet, whose {FLEET} processes kept the {cores} "
                    f"cores {statistics.median(busy):.0%} busy"
                )


# --- a modelled network ----------------------------------------------------------------


def rtt_us(port: int, rtt_ms: float) -> float:
    """A PING's round trip, in us, on a client ``rtt_ms`` away."""
    Distant.one_way = rtt_ms / 2000
    ping = client(port, distant=True).ping
    ping()
    start = time.perf_counter()
    for _ in range(50):
        ping()
    return (time.perf_counter() - start) / 50 * 1e6


# --- main ----------------------------------------------------------------------------------


# --- server instructions -------------------------------------------------------------------


def server_instructions(binary: str, count: int = 1_000) -> None:
    """--instructions: each operation's instructions on the server, averaged over ``count``,
    counted by callgrind only from a zeroing to a dump around the operations."""
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("--instructions needs valgrind (Debian/Ubuntu: apt-get install valgrind)")
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "callgrind.out")
        callgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        with redis_server([*callgrind, binary], port, folder) as server:
            counts = {
                name: _counted(server.pid, out, operation, count)
                for name, operation in decision_operations(port).items()
            }
    ping, empty = counts[KEPT_PING], counts[EMPTY_SCRIPT]
    print(f"Server instructions per operation, mean of {count} (callgrind):")
    for name, value in counts.items():
        decision = name not in (KEPT_PING, EMPTY_SCRIPT)
        beyond = f"  {value - empty:+8.0f} beyond the empty script" if decision else ""
        print(f"  {name:36s} {value:9.0f}  {value / ping:6.1f}x a PING{beyond}")
    # The process's own part, on a server run as usual: each reply given at once.
    port = free_port()
    with tempfile.TemporaryDirectory() as folder, redis_server([binary], port, folder):
        own = {which: own_python_instructions(port, which) for which in OWN_PYTHON}
    print("The process's own Python per operation, each reply at once (callgrind):")
    for which, value in own.items():
        print(f"  {OWN_PYTHON[which]:36s} {value:9.0f}  {value / own['ping']:6.1f}x a PING")


def _counted(pid: int, out: str, operation: Callable[[], object], count: int) -> float:
    for _ in range(50):  # warm: connected, script loaded, the window in its steady state
        operation()
    subprocess.run(["callgrind_control", "--zero", str(pid)], check=True, capture_output=True)
    for _ in range(count):
        operation()
    before = set(os.listdir(os.path.dirname(out)))
    subprocess.run(["callgrind_control", "--dump", str(pid)], check=True, capture_output=True)
    (dump,) = set(os.listdir(os.path.dirname(out))) - before
    with open(os.path.join(os.path.dirname(out), dump)) as file:
        for line in file:
            if line.startswith("summary:"):
                return int(line.split()[1]) / count
    raise RuntimeError(f"no summary line in callgrind's dump {dump}")


@contextlib.contextmanager
def redis_server(command: list[str], port: int, folder: str) -> Iterator[subprocess.Popen[str]]:
    """A redis-server (``command``: its binary, behind valgrind's for --instructions) on
    ``port`` of loopback, without persistence, ready when entered, killed on exit."""
    server = subprocess.Popen(
        [*command, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
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


def parsed_by() -> str:
    """Which of redis-py's reply parsers the figures were measured with: every round trip,
    the PING's too, pays for its reply's parsing."""
    from importlib.metadata import version

    from redis.utils import HIREDIS_AVAILABLE

    parser = f"hiredis {version('hiredis')}" if HIREDIS_AVAILABLE else "redis-py's own Python"
    return f"redis-py {version('redis')}, replies parsed by {parser}"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=15, help="batches per decision cost")
    parser.add_argument(
        "--instructions", action="store_true", help="instructions per decision, server and process"
    )
    parser.add_argument(
        "--runs", type=int, default=1, help="runs of the decision cost (the target's: 10)"
    )
    parser.add_argument(
        "--fleet-repeats", type=int, default=5, help="runs per fleet ratio (0: decision cost only)"
    )
    parser.add_argument(
        "--rtt-ms", type=float, nargs="*", default=[2.0, 5.0],
        help="round trips to model (none: plain loopback only)",
    )  # fmt: skip
    if sys.argv[1:2] == ["--own-python"]:  # one counted run of --instructions
        run_own_python(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
        return
    options = parser.parse_args()
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("redis-server is not installed (Debian/Ubuntu: apt-get install redis-server)")
    if options.instructions:
        server_instructions(binary)
        return
    port = free_port()
    with tempfile.TemporaryDirectory() as folder, redis_server([binary], port, folder) as server:
        print(load())
        cpu = ServerCPU(port, server.pid)
        runs = [decision_cost(port, cpu, options.repeats)]
        for _ in range(options.runs - 1):
            runs.append(decision_cost(port, cpu, options.repeats, table=False))
        if options.runs > 1:
            admissions, successes = zip(*runs, strict=True)
            print(
                f"  {options.runs} runs, vs a kept PING (wall): admission "
                + " ".join(f"{r:.2f}" for r in admissions)
                + f", median {statistics.median(admissions):.2f}x; success "
                + " ".join(f"{r:.2f}" for r in successes)
                + f", median {statistics.median(successes):.2f}x  (target: admission <= 1.3x)"
            )
            print(load())
        window_sizes(port, cpu, options.repeats)
        live_limiters(port, cpu, options.repeats)
        print(load())
        if not options.fleet_repeats:
            return
        with_limits = limits_hit(port) is not None
        print(f"Fleet throughput, decisions per second, median of {options.fleet_repeats}:")
        fleet(port, 0.0, options.fleet_repeats, with_limits, server.pid)
        print(load())
        for rtt in options.rtt_ms:
            print(f"  (a PING on a client {rtt:g} ms away: {rtt_us(port, rtt):.0f} us)")
            fleet(port, rtt, options.fleet_repeats, with_limits, server.pid)
            print(load())
        print("  target: 8 processes >= 6x 1 process")


if __name__ == "__main__":
    main()
