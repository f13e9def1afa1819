"""The Redis store itself: keys, expiry, time, asyncio clients, and Redis failing mid-run.

Against a real redis-server on a loopback port (``_redis_server.py``); the tests that stop,
pause or flush a server start their own, so other tests never see it fail.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _forking import child_forked_while_held
from _redis_server import RedisServer, unique_prefix
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo import (
    FakeClock,
    LimiterRefusalException,
    RateLimiter,
    RedisScriptError,
    RedisStore,
)

OUTAGE = nucleo.UpstreamFailure("Shop API", "Service Unavailable", 503)
SLOW_DOWN = nucleo.UpstreamFailure("GitHub", "slow down", 429, 30.0)


@pytest.fixture
def own_redis(redis_server: RedisServer, tmp_path: Path) -> Iterator[RedisServer]:
    """A server of this test's own, free to stop, pause or flush."""
    server = RedisServer(redis_server.binary, str(tmp_path))
    server.start()
    yield server
    if server.process is not None:
        os.kill(server.process.pid, signal.SIGCONT)  # in case the test left it paused
    server.stop()


def on(server: RedisServer, prefix: str, clock: FakeClock, **options: Any) -> RedisStore:
    return RedisStore(
        server.client(**options.pop("client", {})), prefix=prefix, clock=clock, **options
    )


# --- keys and expiry ---------------------------------------------------------------------------


def test_state_lives_under_prefix_and_name_and_expires(redis_server: RedisServer) -> None:
    prefix, client = unique_prefix(), redis_server.client()
    lim = RateLimiter(
        "geo",
        max_requests=1,
        window_seconds=1,
        max_throttle=0.0,
        cooldown_seconds=1,
        max_cooldown_seconds=2,
        probe_timeout_seconds=1,
        max_wait_seconds=0,
        quiet_seconds=0,
        store=RedisStore(client, prefix=prefix),
    )
    lim.record_success(lim.acquire())
    assert client.keys(f"{prefix}:*") == [f"{prefix}:geo".encode()]
    # Kept for twice the longest span any rule looks at (here the 2 s cooldown cap), no more:
    # an idle limiter leaves nothing behind.
    assert 0 < client.pttl(f"{prefix}:geo") <= 4000


def test_two_limiters_with_different_names_or_prefixes_never_share_state(
    redis_server: RedisServer,
) -> None:
    client, clock = redis_server.client(), FakeClock()
    prefix = unique_prefix()

    def limiter(name: str, where: str) -> RateLimiter:
        store = RedisStore(client, prefix=where, clock=clock)
        return RateLimiter(name, max_requests=1, window_seconds=60, max_wait_seconds=0, store=store)

    first = limiter("b:c", prefix)
    first.acquire()
    first.record_failure(OUTAGE)
    # Another name, another prefix, and the one pair that would collide if keys were joined
    # naively ("p" + "b:c" against "p:b" + "c"): all start from nothing.
    for other in (limiter("b", prefix), limiter("b:c", prefix + "x"), limiter("c", f"{prefix}:b")):
        other.acquire()
        assert other.stats().failures == 0
    assert limiter("b:c", prefix).stats().failures == 1  # the same pair: the same state


def test_a_limiter_that_starts_joins_the_state_and_never_resets_it(
    redis_server: RedisServer,
) -> None:
    prefix, clock = unique_prefix(), FakeClock()
    settings: dict[str, Any] = {"max_requests": 2, "window_seconds": 60, "max_wait_seconds": 0}
    first = RateLimiter(
        "geo", store=RedisStore(redis_server.client(), prefix=prefix, clock=clock), **settings
    )
    first.acquire()
    first.record_failure(OUTAGE)
    second = RateLimiter(
        "geo", store=RedisStore(redis_server.client(), prefix=prefix, clock=clock), **settings
    )
    assert (second.stats().failures, second.throttle_level) == (1, 1.0)
    second.acquire()
    assert refusal(second.acquire).reason == "wait"  # the window holds both processes' calls
    assert first.stats().refusals == 1


def refusal(call: Any) -> LimiterRefusalException:
    with pytest.raises(LimiterRefusalException) as caught:
        call()
    return caught.value


# --- one round trip ------------------------------------------------------------------------------


def test_each_decision_is_one_script_call_and_a_flushed_script_is_loaded_again(
    own_redis: RedisServer,
) -> None:
    clock = FakeClock()
    client = own_redis.client()
    lim = RateLimiter(
        "shop", max_requests=3, window_seconds=60, max_wait_seconds=0,
        store=on(own_redis, unique_prefix(), clock),
    )  # fmt: skip
    lim.record_success(lim.acquire())  # the first call loads the script (NOSCRIPT, then LOAD)
    client.config_resetstat()
    lim.record_success(lim.acquire())
    lim.record_failure(OUTAGE, lim.acquire())
    assert refusal(lim.acquire).reason == "wait"
    lim.release(None, retry_after=1.0)
    calls = {
        name.removeprefix("cmdstat_"): stats["calls"]
        for name, stats in client.info("commandstats").items()
    }
    # Six decisions, six round trips: EVALSHA, and the commands it runs on the server.
    assert calls.pop("evalsha") == 6
    assert set(calls) <= {"hmget", "hget", "hset", "hdel", "pexpire", "config|resetstat", "info"}
    client.script_flush()  # a restarted or flushed server has forgotten the script
    lim.release()
    stats = lim.stats()
    assert (stats.successes, stats.failures, stats.refusals, stats.fallbacks) == (2, 1, 1, 0)


def test_a_repeated_decision_is_sent_again_only_with_the_same_takes_and_permit(
    redis_server: RedisServer,
) -> None:
    # On the server's clock the store sends a repeated admission or success as it sent the
    # last one; a decision with other takes or another permit must still say so.
    lim = RateLimiter(
        "shop", max_requests=4, window_seconds=60, max_wait_seconds=0, recovery_step=1.0,
        successes_per_step=1, store=RedisStore(redis_server.client(), prefix=unique_prefix()),
    )  # fmt: skip
    lim.acquire()
    lim.acquire(2)
    assert refusal(lambda: lim.acquire(2)).reason == "wait"  # 3 of 4 taken: 2 sent as 2
    lim.record_failure(OUTAGE)
    lim.record_success(7)  # a permit of no circuit's epoch: no recovery
    assert lim.stats().throttle_level == 1.0
    lim.record_success(None)  # current: one step off
    assert lim.stats().throttle_level == 0.0


def test_on_the_stores_clock_every_decision_carries_its_own_time(redis_server: RedisServer) -> None:
    clock = FakeClock()
    lim = RateLimiter(
        "shop", max_requests=1, window_seconds=10, max_wait_seconds=0, quiet_seconds=60,
        store=on(redis_server, unique_prefix(), clock),
    )  # fmt: skip
    lim.record_success(lim.acquire())
    assert refusal(lim.acquire).reason == "wait"
    clock.advance(11.0)  # the first take has left the window, if the time sent moved on
    lim.record_success(lim.acquire())
    lim.record_failure(OUTAGE)
    lim.record_success()
    assert lim.stats().throttle_level == 1.0
    clock.advance(60.0)  # quiet since the failure, if the time sent moved on
    lim.record_success()
    assert lim.stats().throttle_level == 0.0


def test_a_client_that_decodes_responses_serves_as_well(redis_server: RedisServer) -> None:
    clock = FakeClock()
    store = RedisStore(
        redis_server.client(decode_responses=True), prefix=unique_prefix(), clock=clock
    )
    lim = RateLimiter("shop", max_requests=5, window_seconds=60, max_wait_seconds=0, store=store)
    lim.record_failure(SLOW_DOWN, lim.acquire())
    held = refusal(lim.acquire)
    assert (held.reason, held.last_failure) == ("held", SLOW_DOWN)
    stats = lim.stats()
    assert (stats.failures, stats.refusals, stats.last_failure) == (1, 1, SLOW_DOWN)


def test_both_of_redis_py_s_reply_parsers_read_every_reply_alike(own_redis: RedisServer) -> None:
    # The redis extra brings hiredis, redis-py's C parser, which redis-py then picks; without
    # it redis-py parses in Python. Every kind of reply the script gives, through each.
    import redis
    from redis._parsers import _HiredisParser, _RESP2Parser
    from redis.utils import HIREDIS_AVAILABLE

    if not HIREDIS_AVAILABLE:
        pytest.skip("hiredis is not installed: pip install -e '.[test]' (the redis extra)")
    stuck = nucleo.UpstreamFailure("GitHub", "slow down", 429, 120.0)
    admin = own_redis.client()

    def transcript(parser: type) -> list[object]:
        clock, prefix = FakeClock(), unique_prefix()
        pool = redis.ConnectionPool(
            host="127.0.0.1", port=own_redis.port, socket_timeout=2.0, parser_class=parser
        )
        store = RedisStore(redis.Redis(connection_pool=pool), prefix=prefix, clock=clock)
        lim = RateLimiter("shop", max_requests=2, window_seconds=60, max_wait_seconds=90,
                          clock=clock, store=store)  # fmt: skip
        first, second = lim.acquire(), lim.acquire()  # admitted at once
        third = lim.acquire()  # admitted, after a wait for the first take's window to end
        lim.record_failure(stuck, third)
        held = refusal(lim.acquire)  # the refusal's reply carries the last failure
        lim.record_success(first)
        admin.script_flush()  # the next decision loads it again (NOSCRIPT)
        lim.release(second, retry_after=1.0)
        stats = lim.stats()  # a reading
        admin.set(f"{prefix}:other", "another program's value")
        other = RateLimiter("other", max_requests=2, window_seconds=60, store=store)
        with pytest.raises(RedisScriptError, match="WRONGTYPE"):  # the server's error reply
            other.acquire()
        # (redis-py 8 speaks RESP3 by default: its Python parser for RESP3 stands in then.)
        used = {isinstance(kept[0]._parser, _HiredisParser) for kept in store._kept.idle}
        assert used == {parser is _HiredisParser}
        pool.disconnect()
        return [
            first, second, third, clock.sleeps, held.reason, held.last_failure,
            held.explain_to_llm(), stats.successes, stats.failures, stats.refusals,
            stats.last_failure, stats.fallbacks,
        ]  # fmt: skip

    by_hiredis, in_python = transcript(_HiredisParser), transcript(_RESP2Parser)
    admin.close()
    assert by_hiredis == in_python
    assert by_hiredis[3:6] == [[60.0], "held", stuck]
    assert by_hiredis[7:] == [1, 1, 1, stuck, 0]


# --- time ----------------------------------------------------------------------------------------


def test_hosts_whose_clocks_differ_agree_on_the_servers_time(redis_server: RedisServer) -> None:
    # Two hosts: local clocks a day apart. Decisions run on the Redis server's clock.
    prefix = unique_prefix()
    here, there = FakeClock(0.0), FakeClock(86_400.0)
    a = RateLimiter(
        "gh",
        max_requests=10,
        window_seconds=1,
        clock=here,
        store=RedisStore(redis_server.client(), prefix=prefix),
    )
    b = RateLimiter(
        "gh",
        max_requests=10,
        window_seconds=1,
        clock=there,
        max_wait_seconds=0,
        store=RedisStore(redis_server.client(), prefix=prefix),
    )
    a.record_failure(SLOW_DOWN, a.acquire())
    held = refusal(b.acquire)
    assert held.reason == "held"
    assert 29.0 < held.off_for <= 30.0  # the server's 30 s, not a day more or less
    assert here.sleeps == there.sleeps == []


# --- asyncio clients ----------------------------------------------------------------------------


@pytest.mark.parametrize("parser", ["hiredis", "python"])
def test_an_asyncio_client_serves_the_awaitable_methods_and_arun_tool(
    redis_server: RedisServer, parser: str
) -> None:
    # On redis-py's asyncio parsers: hiredis's (the redis extra's), and its own in Python.
    import redis.asyncio
    from redis._parsers import _AsyncHiredisParser, _AsyncRESP2Parser
    from redis.utils import HIREDIS_AVAILABLE

    if parser == "hiredis" and not HIREDIS_AVAILABLE:
        pytest.skip("hiredis is not installed: pip install -e '.[test]' (the redis extra)")
    prefix, clock = unique_prefix(), FakeClock()
    parser_class = _AsyncHiredisParser if parser == "hiredis" else _AsyncRESP2Parser

    async def main() -> None:
        pool = redis.asyncio.ConnectionPool(
            host="127.0.0.1", port=redis_server.port, socket_timeout=2.0, parser_class=parser_class
        )
        # (redis-py 8 speaks RESP3 by default: its Python parser for RESP3 stands in then.)
        used = pool.make_connection()._parser
        assert isinstance(used, _AsyncHiredisParser) == (parser == "hiredis")
        client = redis.asyncio.Redis(connection_pool=pool)
        try:
            await use(client)
        finally:
            await client.aclose()
            await pool.disconnect()

    async def use(client: Any) -> None:
        lim = RateLimiter(
            "gh",
            max_requests=2,
            window_seconds=60,
            clock=clock,
            max_wait_seconds=0,
            store=RedisStore(client, prefix=prefix, clock=clock),
        )

        @nucleo.tool(limiters=[lim])
        async def search(query: str) -> str:
            return query

        assert (await nucleo.arun_tool(search, {"query": "a"})).text == "a"
        await lim.arecord_failure(OUTAGE, await lim.aacquire())
        third = await nucleo.arun_tool(search, {"query": "b"})
        assert isinstance(third.exception, LimiterRefusalException)
        stats = await lim.astats()
        assert (stats.successes, stats.failures, stats.refusals) == (1, 1, 1)
        with pytest.raises(TypeError, match="keeps its state through an asyncio Redis client"):
            lim.acquire()
        await lim.arelease(None, retry_after=5.0)

    asyncio.run(main())


# --- Redis failing mid-run ------------------------------------------------------------------------


def test_redis_stopped_mid_run_degrades_logs_and_rejoins(
    own_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    clock = FakeClock()
    lim = RateLimiter(
        "shop",
        max_requests=5,
        window_seconds=60,
        clock=clock,
        store=on(own_redis, unique_prefix(), clock),
    )

    @nucleo.tool(limiters=[lim])
    def order(n: int) -> int:
        return n

    assert nucleo.run_tool(order, {"n": 1}).text == "1"
    own_redis.stop()
    with caplog.at_level(logging.WARNING, logger="pytest_nucleo"):
        # Fail-open: the tool still runs, on this process's own window; nothing blames the shop.
        assert nucleo.run_tool(order, {"n": 2}).text == "2"
        assert nucleo.run_tool(order, {"n": 3}).text == "3"
    outage = [r for r in caplog.records if "unreachable" in r.getMessage()]
    assert len(outage) == 1  # once per outage, not per call
    assert outage[0].levelname == "WARNING"
    assert "admits calls on this process's own window" in outage[0].getMessage()
    stats = lim.stats()
    assert (stats.fallbacks, stats.failures) == (4, 0)  # 2 calls: admission and outcome each

    own_redis.start()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="pytest_nucleo"):
        assert nucleo.run_tool(order, {"n": 4}).text == "4"  # not yet: Redis is rechecked...
        clock.advance(1.0)  # ...once a second
        assert nucleo.run_tool(order, {"n": 5}).text == "5"
    messages = [r.getMessage() for r in caplog.records]
    assert any("Redis answers again" in m for m in messages)
    assert any("vanished" in m for m in messages)  # the restarted server kept nothing
    assert lim.stats().successes == 1  # the shared state: the call made after rejoining
    assert lim.stats().fallbacks == 6


def test_redis_that_stops_answering_is_an_outage_after_the_socket_timeout(
    own_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    clock = FakeClock()
    lim = RateLimiter(
        "shop",
        max_requests=5,
        window_seconds=60,
        clock=clock,
        store=on(own_redis, unique_prefix(), clock, client={"socket_timeout": 0.2}),
    )
    lim.record_success(lim.acquire())
    assert own_redis.process is not None
    os.kill(own_redis.process.pid, signal.SIGSTOP)  # alive, but answers nothing
    with caplog.at_level(logging.WARNING, logger="pytest_nucleo"):
        lim.record_success(lim.acquire())
    assert any("TimeoutError" in r.getMessage() for r in caplog.records)
    os.kill(own_redis.process.pid, signal.SIGCONT)
    clock.advance(1.0)
    lim.record_success(lim.acquire())
    assert lim.stats().successes == 2  # back on the shared state, which survived the pause


def test_fail_closed_refuses_while_redis_is_unreachable(
    own_redis: RedisServer, llm_snapshot: SnapshotAssertion
) -> None:
    clock = FakeClock()
    lim = RateLimiter(
        "shop",
        max_requests=5,
        window_seconds=60,
        clock=clock,
        store=on(own_redis, unique_prefix(), clock, fail_open=False),
    )

    @nucleo.tool(limiters=[lim])
    def order(n: int) -> int:
        return n

    own_redis.stop()
    result = nucleo.run_tool(order, {"n": 1})
    assert isinstance(result.exception, LimiterRefusalException)
    assert result.exception.reason == "unreachable"
    assert nucleo.UpstreamFailure.from_exception(result.exception) is None  # not the shop's
    assert result.text == llm_snapshot
    assert "the service it calls has not failed" in result.text


def test_flushall_mid_run_rebuilds_a_closed_circuit_and_logs_it(
    own_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    clock = FakeClock()
    lim = RateLimiter(
        "shop",
        max_requests=5,
        window_seconds=60,
        clock=clock,
        max_throttle=0.0,
        failures_to_open=1,
        store=on(own_redis, unique_prefix(), clock),
    )
    lim.record_failure(OUTAGE, lim.acquire())
    assert refusal(lim.acquire).reason == "open"
    own_redis.client().flushall()
    with caplog.at_level(logging.WARNING, logger="pytest_nucleo"):
        lim.record_success(lim.acquire())  # admitted: the state was rebuilt, closed
    vanished = [r for r in caplog.records if "vanished" in r.getMessage()]
    assert len(vanished) == 1
    assert "rebuilt as a closed circuit" in vanished[0].getMessage()
    stats = lim.stats()
    assert (stats.state, stats.failures, stats.successes, stats.fallbacks) == ("closed", 0, 1, 0)


# --- connections --------------------------------------------------------------------------------


def test_threads_share_the_stores_connections_one_per_decision_in_flight(
    redis_server: RedisServer,
) -> None:
    import threading

    store = RedisStore(redis_server.client(), prefix=unique_prefix())
    lim = RateLimiter("shop", max_requests=10_000, window_seconds=60, store=store)
    start = threading.Barrier(8)

    def calls() -> None:
        start.wait()
        for _ in range(50):
            lim.record_success(lim.acquire())

    threads = [threading.Thread(target=calls) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stats = lim.stats()
    assert (stats.successes, stats.fallbacks) == (400, 0)
    assert 1 <= len(store._kept.idle) <= 8  # kept for the next decisions, never more than in flight


def test_stores_on_one_client_share_its_kept_connections(redis_server: RedisServer) -> None:
    # A pool of two connections and twenty stores (one per limiter, as an application might
    # build them): each store keeping its own connection would run the pool out by the third.
    client = redis_server.client(max_connections=2)
    limiters = [
        RateLimiter("shop", max_requests=100, window_seconds=60,
                    store=RedisStore(client, prefix=unique_prefix()))
        for _ in range(20)
    ]  # fmt: skip
    for lim in limiters:
        lim.record_success(lim.acquire())
    assert [(lim.stats().successes, lim.stats().fallbacks) for lim in limiters] == [(1, 0)] * 20
    assert client.ping()  # the pool's other connection is still free for the app's commands


def test_a_kept_connection_the_server_closed_is_opened_again_not_read_as_an_outage(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    # The client retries nothing: only the store's own check can spare the decision.
    client = redis_server.client()
    store = RedisStore(client, prefix=unique_prefix())
    lim = RateLimiter("shop", max_requests=100, window_seconds=60, store=store)
    lim.record_success(lim.acquire())
    assert len(store._kept.idle) == 1
    # Every other connection closed by the server, as a restart or its idle timeout would.
    assert client.client_kill_filter(_type="normal", skipme=True) >= 1
    with caplog.at_level(logging.WARNING, logger="pytest_nucleo"):
        lim.record_success(lim.acquire())
    assert (lim.stats().successes, lim.stats().fallbacks) == (2, 0)
    assert not caplog.records


def test_a_forked_child_opens_its_own_connections(redis_server: RedisServer) -> None:
    # In a fresh interpreter, so the fork happens with no other thread running.
    code = (
        "import os, sys\n"
        "import redis\n"
        "import pytest_nucleo as nucleo\n"
        f"client = redis.Redis(host='127.0.0.1', port={redis_server.port}, socket_timeout=2.0)\n"
        f"store = nucleo.RedisStore(client, prefix={unique_prefix()!r})\n"
        "lim = nucleo.RateLimiter('shop', max_requests=100, window_seconds=60, store=store)\n"
        "lim.record_success(lim.acquire())\n"
        "parents = list(store._kept.idle)\n"
        "child = os.fork()\n"
        "if child == 0:\n"
        "    lim.record_success(lim.acquire())\n"
        "    os._exit(0 if all(c not in store._kept.idle for c in parents) else 3)\n"
        "_, status = os.waitpid(child, 0)\n"
        "lim.record_success(lim.acquire())\n"
        "print(os.waitstatus_to_exitcode(status), lim.stats().successes, lim.stats().fallbacks)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["0", "3", "0"]


@pytest.mark.parametrize(
    ("lock", "child"),
    [
        # The lock that finds a client's kept connections: a store built in the child takes it.
        (
            "_redis._kept_lock",
            """
            lim = nucleo.RateLimiter('new', max_requests=100, window_seconds=60,
                                     store=nucleo.RedisStore(client, prefix=prefix))
            lim.record_success(lim.acquire())
            stats = lim.stats()
            os._exit(0 if (stats.successes, stats.fallbacks) == (1, 0) else 3)
            """,
        ),
        # A shared limiter's own: its outage bookkeeping, and forgetting it.
        (
            "shared._keeper._lock",
            """
            shared.reset()
            shared.record_success(shared.acquire())
            stats = shared.stats()
            os._exit(0 if (stats.successes, stats.fallbacks) == (2, 0) else 3)
            """,
        ),
    ],
    ids=["store", "limiter"],
)
def test_a_child_forked_while_another_thread_held_a_lock_is_not_stuck_on_it(
    redis_server: RedisServer, lock: str, child: str
) -> None:
    setup = f"""
        import redis
        import pytest_nucleo as nucleo
        from pytest_nucleo.limits import _redis
        client = redis.Redis(host='127.0.0.1', port={redis_server.port}, socket_timeout=2.0)
        prefix = {unique_prefix()!r}
        shared = nucleo.RateLimiter('shared', max_requests=100, window_seconds=60,
                                    store=nucleo.RedisStore(client, prefix=prefix))
        shared.record_success(shared.acquire())
    """
    child_forked_while_held(setup, lock, child)


# --- a script error is a bug, not an outage ----------------------------------------------------


def test_a_key_of_another_type_is_raised_as_an_error_not_read_as_an_outage(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    import redis.exceptions

    prefix, client, clock = unique_prefix(), redis_server.client(), FakeClock()
    client.set(f"{prefix}:shop", "another program's value")  # WRONGTYPE for the script
    lim = RateLimiter(
        "shop", max_requests=5, window_seconds=60, clock=clock,
        store=RedisStore(client, prefix=prefix, clock=clock),
    )  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="pytest_nucleo"):
        with pytest.raises(
            RedisScriptError, match=r"Redis refused its decision on the key"
        ) as raised:
            lim.acquire()
        with pytest.raises(RedisScriptError, match="WRONGTYPE"):  # the next one too: no fallback
            lim.record_success()
    assert "a value of another type under that key" in str(raised.value)
    assert isinstance(raised.value.__cause__, redis.exceptions.ResponseError)
    assert not caplog.records  # no "unreachable" warning
    client.delete(f"{prefix}:shop")
    lim.record_success(lim.acquire())
    assert (lim.stats().successes, lim.stats().fallbacks) == (1, 0)


def test_a_script_that_fails_on_the_server_is_raised_sync_and_async(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_nucleo.limits import _redis

    # A script with a bug: a Lua error on the server, as a typo in the real one would give.
    monkeypatch.setattr(_redis, "_STEP", "local broken = nil; return broken.field")
    clock = FakeClock()
    lim = RateLimiter(
        "shop", max_requests=5, window_seconds=60, clock=clock,
        store=RedisStore(redis_server.client(), prefix=unique_prefix(), clock=clock),
    )  # fmt: skip
    with pytest.raises(RedisScriptError, match="attempt to index"):
        lim.acquire()  # NOSCRIPT first: loaded, then run, then raised

    async def main() -> None:
        client = redis_server.async_client()
        try:
            alim = RateLimiter(
                "shop", max_requests=5, window_seconds=60, clock=clock,
                store=RedisStore(client, prefix=unique_prefix(), clock=clock),
            )  # fmt: skip
            with pytest.raises(RedisScriptError, match="attempt to index"):
                await alim.arecord_success()
        finally:
            await client.aclose()

    asyncio.run(main())


# --- bad input and the extra ---------------------------------------------------------------------


def test_a_store_says_what_was_wrong_with_its_settings(redis_server: RedisServer) -> None:
    import redis

    client = redis_server.client()
    with pytest.raises(
        ValueError, match="prefix must be a non-empty string naming the application"
    ):
        RedisStore(client, prefix=" ")
    with pytest.raises(
        TypeError, match=r"needs a redis\.Redis or a redis\.asyncio\.Redis client; got a dict"
    ):
        RedisStore({}, prefix="app")
    with pytest.raises(
        ValueError, match=r"socket_timeout is None: give it a finite number of seconds"
    ):
        RedisStore(redis.Redis(port=redis_server.port, socket_timeout=None), prefix="app")
    with pytest.raises(ValueError, match="recheck_seconds=0 is impossible"):
        RedisStore(client, prefix="app", recheck_seconds=0)
    with pytest.raises(TypeError, match="fail_open must be True or False"):
        RedisStore(client, prefix="app", fail_open="no")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="store must be a limiter store such as RedisStore"):
        RateLimiter("x", max_requests=1, window_seconds=1, store=client)


def test_the_core_imports_without_redis_and_the_store_says_what_to_install() -> None:
    code = (
        "import sys\n"
        "sys.modules['redis'] = None\n"  # as if it were not installed
        "import pytest_nucleo as nucleo\n"
        "names = [getattr(nucleo, name) for name in nucleo.__all__]\n"
        "lim = nucleo.RateLimiter('x', max_requests=1, window_seconds=1)\n"
        "lim.record_success(lim.acquire())\n"
        "try:\n"
        "    nucleo.RedisStore(object(), prefix='app')\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert (
        result.stdout.strip()
        == "RedisStore needs the redis client: pip install 'pytest-nucleo[redis]'"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, pytest_nucleo; print('redis' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert loaded.stdout.strip() == "False"


# --- the adapters, unchanged --------------------------------------------------------------------


def test_the_adapters_wrapper_runs_a_shared_limiter_sync_and_async(
    redis_server: RedisServer,
) -> None:
    from pytest_nucleo.adapters._core import through_runner

    prefix, clock = unique_prefix(), FakeClock()
    delivered: list[str] = []

    def deliver(result: nucleo.ToolResult) -> str:
        delivered.append(result.text)
        return "refused"

    sync_limiter = RateLimiter(
        "orders",
        max_requests=1,
        window_seconds=60,
        max_wait_seconds=0,
        store=RedisStore(redis_server.client(), prefix=prefix, clock=clock),
    )

    @nucleo.tool(limiters=[sync_limiter])
    def get_order(number: str) -> str:
        return number

    wrapped = through_runner(get_order, deliver)
    assert (wrapped("1"), wrapped("2")) == ("1", "refused")

    async def main() -> tuple[object, object]:
        client = redis_server.async_client()
        try:
            shared = RateLimiter(
                "orders",
                max_requests=1,
                window_seconds=60,
                max_wait_seconds=0,
                store=RedisStore(client, prefix=prefix + "-async", clock=clock),
            )

            @nucleo.tool(limiters=[shared])
            async def aget_order(number: str) -> str:
                return number

            awrapped = through_runner(aget_order, deliver)
            return await awrapped("3"), await awrapped("4")
        finally:
            await client.aclose()

    assert asyncio.run(main()) == ("3", "refused")
    assert len(delivered) == 2
    assert all("more often than its rate limit allows" in text for text in delivered)


# --- without redis-server ------------------------------------------------------------------------


@pytest.mark.parametrize(("ci", "outcome"), [("", "skipped"), ("1", "errors")])
def test_without_redis_server_the_tests_skip_saying_how_to_install_it_but_fail_under_ci(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ci: str, outcome: str
) -> None:
    tests = Path(__file__).resolve().parent
    pytester.makeconftest(
        f"import sys\nsys.path.insert(0, {str(tests)!r})\nfrom _redis_server import redis_server\n"
    )
    pytester.makepyfile("def test_shared(redis_server):\n    pass\n")
    monkeypatch.setenv("PATH", str(pytester.path))  # no redis-server on it
    monkeypatch.setenv("CI", ci)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # a quick session: none needed
    result = pytester.runpytest_subprocess("-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(**{outcome: 1})
    result.stdout.fnmatch_lines(["*redis-server is not installed*apt-get install redis-server*"])
