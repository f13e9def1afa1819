"""Redis faults a shared limiter must tell apart: a client Redis refuses (a wrong password, an
ACL user without the commands), state flushed away, and an outage with the circuit open.

Against real redis-servers on loopback ports (``_redis_server.py``), each test's own, so it is
free to change the server's password, flush it, stop it or start it again. Nothing sleeps:
decisions run on a FakeClock given to the store and the limiter.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _redis_server import RedisServer, unique_prefix

import pytest_nucleo as nucleo
from pytest_nucleo import (
    FakeClock,
    LimiterRefusalException,
    RateLimiter,
    RedisScriptError,
    RedisStore,
)

OUTAGE = nucleo.UpstreamFailure("Shop API", "Service Unavailable", 503)


@pytest.fixture
def own_redis(redis_server: RedisServer, tmp_path: Path) -> Iterator[RedisServer]:
    """A server of this test's own, free to stop, flush or lock."""
    server = RedisServer(redis_server.binary, str(tmp_path))
    server.start()
    yield server
    server.stop()


def refusal(call: Any) -> LimiterRefusalException:
    with pytest.raises(LimiterRefusalException) as caught:
        call()
    return caught.value


# --- a client Redis refuses is a fault of the deployment, not an outage --------------------------


@pytest.mark.parametrize("fail_open", [True, False])
@pytest.mark.parametrize("credentials", ["wrong password", "no password"])
def test_a_wrong_password_is_raised_whatever_fail_open_says(
    own_redis: RedisServer,
    caplog: pytest.LogCaptureFixture,
    fail_open: bool,
    credentials: str,
) -> None:
    import redis.exceptions

    own_redis.client().config_set("requirepass", "the-right-one")
    password = {"password": "a-wrong-one"} if credentials == "wrong password" else {}
    clock = FakeClock()
    store = RedisStore(
        own_redis.client(**password), prefix=unique_prefix(), fail_open=fail_open, clock=clock
    )
    lim = RateLimiter("shop", max_requests=5, window_seconds=60, clock=clock, store=store)
    with caplog.at_level(logging.WARNING, logger="pytest_nucleo"):
        with pytest.raises(RedisScriptError, match="password or user is wrong") as raised:
            lim.acquire()
        clock.advance(5.0)  # past the recheck: still raised, never decided alone
        with pytest.raises(RedisScriptError, match="whatever fail_open says"):
            lim.record_success()
    assert isinstance(raised.value.__cause__, redis.exceptions.AuthenticationError)
    assert "fix the credentials given to the redis client" in str(raised.value)
    assert not caplog.records  # no "unreachable" warning: this is no outage
    assert lim._keeper.fallbacks == 0


def test_an_acl_user_without_the_commands_is_raised_sync_and_async(
    own_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    import redis.exceptions

    admin = own_redis.client()
    # A user that may read and write keys but run no script.
    admin.acl_setuser(
        "agents", enabled=True, passwords=["+secret"], keys=["*"], commands=["+@all", "-@scripting"]
    )
    clock = FakeClock()
    store = RedisStore(
        own_redis.client(username="agents", password="secret"), prefix=unique_prefix(), clock=clock
    )
    lim = RateLimiter("shop", max_requests=5, window_seconds=60, clock=clock, store=store)
    with (
        caplog.at_level(logging.WARNING, logger="pytest_nucleo"),
        pytest.raises(RedisScriptError, match="lacks the commands") as raised,
    ):
        lim.acquire()
    assert isinstance(raised.value.__cause__, redis.exceptions.NoPermissionError)
    assert "another type" not in str(raised.value)  # not mistaken for a WRONGTYPE key
    assert not caplog.records

    async def main() -> None:
        client = own_redis.async_client(username="agents", password="secret")
        try:
            alim = RateLimiter(
                "shop", max_requests=5, window_seconds=60, clock=clock,
                store=RedisStore(client, prefix=unique_prefix(), clock=clock),
            )  # fmt: skip
            with pytest.raises(RedisScriptError, match="lacks the commands"):
                await alim.aacquire()
        finally:
            await client.aclose()

    asyncio.run(main())
    # Granted the scripts, the same user works.
    admin.acl_setuser("agents", commands=["+@scripting"])
    lim.record_success(lim.acquire())
    assert (lim.stats().successes, lim.stats().fallbacks) == (1, 0)


def test_refused_credentials_are_told_from_an_outage_by_the_store() -> None:
    import redis
    import redis.exceptions as errors

    store = RedisStore(redis.Redis(socket_timeout=1.0), prefix="app")
    denied: tuple[Exception, ...] = (
        errors.AuthenticationError("invalid username-password pair"),
        errors.AuthenticationWrongNumberOfArgsError("wrong number of arguments for 'auth'"),
        errors.NoPermissionError("this user has no permissions to run the 'evalsha' command"),
        errors.ResponseError("WRONGPASS invalid username-password pair or user is disabled."),
        errors.ResponseError("NOPERM this user has no permissions to access one of the keys"),
    )
    for exc in denied:
        assert store.denied(exc), exc
    outages: tuple[Exception, ...] = (
        errors.ConnectionError("Connection refused"),
        errors.TimeoutError("Timeout reading from socket"),
        errors.ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value"),
        errors.OutOfMemoryError("OOM command not allowed when used memory > 'maxmemory'."),
    )
    for exc in outages:
        assert not store.denied(exc), exc


# --- a flushed state: its window rebuilt full ----------------------------------------------------


def test_a_flushall_mid_window_does_not_admit_a_second_budget(
    own_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    # Two processes of a fleet (a store and a client each), 20 calls a minute between them.
    clock, prefix = FakeClock(), unique_prefix()

    def process() -> RateLimiter:
        store = RedisStore(own_redis.client(), prefix=prefix, clock=clock)
        return RateLimiter(
            "shop", max_requests=20, window_seconds=60, max_wait_seconds=0, clock=clock,
            store=store,
        )  # fmt: skip

    a, b = process(), process()
    for _ in range(10):
        a.record_success(a.acquire())
        b.record_success(b.acquire())
    assert refusal(a.acquire).reason == "wait"
    clock.advance(10.0)
    own_redis.client().flushall()  # the window goes, with the circuit and the counts
    admitted, refusals = 0, []
    with caplog.at_level(logging.WARNING, logger="pytest_nucleo"):
        for _ in range(20):  # both try for the rest of the window
            for lim in (a, b):
                try:
                    lim.record_success(lim.acquire())
                    admitted += 1
                except LimiterRefusalException as refused:
                    refusals.append(refused)
    assert {refused.reason for refused in refusals} == {"wait"}
    assert all(49.0 < refused.off_for <= 60.0 for refused in refusals)
    # The call that found the state gone, then nothing until one window has passed: 21 in the
    # window at worst, not 40.
    assert admitted == 1
    vanished = [r.getMessage() for r in caplog.records if "vanished" in r.getMessage()]
    assert len(vanished) == 1
    assert "its window full until one window has passed" in vanished[0]
    clock.advance(60.0)
    for _ in range(10):
        a.record_success(a.acquire())
        b.record_success(b.acquire())
    assert refusal(b.acquire).reason == "wait"
    stats = a.stats()
    assert (stats.state, stats.successes, stats.fallbacks) == ("closed", 21, 0)


def test_a_process_that_never_knew_the_state_starts_it_empty(own_redis: RedisServer) -> None:
    # A new limiter on a new key has no calls to protect: nothing is filled.
    clock = FakeClock()
    lim = RateLimiter(
        "shop", max_requests=3, window_seconds=60, max_wait_seconds=0, clock=clock,
        store=RedisStore(own_redis.client(), prefix=unique_prefix(), clock=clock),
    )  # fmt: skip
    for _ in range(3):
        lim.record_success(lim.acquire())
    assert refusal(lim.acquire).reason == "wait"


# --- an outage with the fleet's circuit open ----------------------------------------------------


def test_an_outage_keeps_an_open_circuit_open_and_its_failures_are_told_on_rejoining(
    own_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    import os
    import signal

    clock, prefix = FakeClock(), unique_prefix()
    settings: dict[str, Any] = {
        "max_requests": 100, "window_seconds": 1, "max_throttle": 0.0, "failures_to_open": 1,
        "cooldown_seconds": 30, "max_wait_seconds": 0, "clock": clock,
    }  # fmt: skip

    def process() -> RateLimiter:
        client = own_redis.client(socket_timeout=0.2)
        store = RedisStore(client, prefix=prefix, clock=clock, recheck_seconds=60)
        return RateLimiter("shop", store=store, **settings)

    workers = [process() for _ in range(4)]
    first = workers[0]
    first.record_failure(OUTAGE, first.acquire())  # the fleet's circuit opens
    for lim in workers:
        assert refusal(lim.acquire).reason == "open"  # each sees it open, for 30 s
    assert own_redis.process is not None
    os.kill(own_redis.process.pid, signal.SIGSTOP)  # alive, but answers nothing
    try:
        clock.advance(1.0)
        with caplog.at_level(logging.WARNING, logger="pytest_nucleo"):
            refusal(first.acquire)
        assert "keeps the circuit open, as last seen, for the 29 seconds left" in caplog.text
        for _ in range(3):  # the first second of the outage: nothing goes out
            for lim in workers:
                refused = refusal(lim.acquire)
                assert (refused.reason, refused.last_failure) == ("open", OUTAGE)
                assert 28.0 < refused.off_for <= 29.0
        clock.advance(29.0)  # the cooldown each saw ends: one probe each, which fails
        for lim in workers:
            lim.record_failure(OUTAGE, lim.acquire())
            assert refusal(lim.acquire).reason == "open"  # open again, alone
        assert [lim.stats().fallbacks for lim in workers] == [7, 6, 6, 6]
    finally:
        os.kill(own_redis.process.pid, signal.SIGCONT)
    clock.advance(60.0)  # Redis is tried again
    for lim in workers:
        lim.release()  # answered: the four failures seen alone are told
    stats = first.stats()
    assert (stats.failures, stats.last_failure) == (5, OUTAGE)


def test_an_outage_with_the_circuit_closed_still_admits_alone(own_redis: RedisServer) -> None:
    clock = FakeClock()
    store = RedisStore(own_redis.client(), prefix=unique_prefix(), clock=clock, recheck_seconds=60)
    lim = RateLimiter(
        "shop", max_requests=5, window_seconds=60, max_wait_seconds=0, clock=clock, store=store
    )
    lim.record_success(lim.acquire())
    own_redis.stop()
    for _ in range(3):
        lim.record_success(lim.acquire())  # fail_open: its own window, its own closed circuit
    assert lim.stats().fallbacks == 6


def test_an_asyncio_client_keeps_the_circuit_open_and_tells_its_failures_too(
    own_redis: RedisServer,
) -> None:
    import os
    import signal

    clock, prefix = FakeClock(), unique_prefix()

    async def main() -> None:
        client = own_redis.async_client(socket_timeout=0.2)
        try:
            lim = RateLimiter(
                "shop", max_requests=100, window_seconds=1, max_throttle=0.0,
                failures_to_open=1, cooldown_seconds=30, max_wait_seconds=0, clock=clock,
                store=RedisStore(client, prefix=prefix, clock=clock, recheck_seconds=60),
            )  # fmt: skip
            await lim.arecord_failure(OUTAGE, await lim.aacquire())
            with pytest.raises(LimiterRefusalException):
                await lim.aacquire()  # seen open
            assert own_redis.process is not None
            os.kill(own_redis.process.pid, signal.SIGSTOP)
            try:
                with pytest.raises(LimiterRefusalException) as refused:
                    await lim.aacquire()
                assert refused.value.reason == "open"
                clock.advance(30.0)
                await lim.arecord_failure(OUTAGE, await lim.aacquire())  # the probe, alone
            finally:
                os.kill(own_redis.process.pid, signal.SIGCONT)
            clock.advance(60.0)
            await lim.arelease()  # answered: the failure seen alone is told before the next
            await lim.arelease()
            assert (await lim.astats()).failures == 2
        finally:
            await client.aclose()

    asyncio.run(main())


def test_a_flushall_fills_every_budget_of_a_limiter(own_redis: RedisServer) -> None:
    clock = FakeClock()
    lim = RateLimiter(
        "llm", max_requests=10, window_seconds=60, budgets=[nucleo.Budget("tokens", 1000, 30)],
        max_wait_seconds=0, clock=clock,
        store=RedisStore(own_redis.client(), prefix=unique_prefix(), clock=clock),
    )  # fmt: skip
    lim.record_success(lim.acquire(units={"tokens": 100}))
    own_redis.client().flushall()
    lim.record_success(lim.acquire(units={"tokens": 100}))  # finds it gone: both refilled
    refused = refusal(lambda: lim.acquire(units={"requests": 0, "tokens": 1}))
    assert (refused.reason, refused.off_for) == ("wait", 30.0)  # the tokens' window
    assert refusal(lambda: lim.acquire(units={"tokens": 0})).off_for == 60.0  # the requests'
    clock.advance(60.0)
    lim.record_success(lim.acquire(units={"tokens": 1000}))
