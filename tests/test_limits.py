"""Rate limiters: all on a fake clock, nothing sleeps.

The rules are the same wherever a limiter keeps its state, so every test of them runs against
both stores: in the process, and in Redis (a real redis-server on a loopback port, see
``_redis_server.py``). Tests of what does not depend on the store run once.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _forking import child_forked_while_held
from _redis_server import unique_prefix
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo import FakeClock, LimiterRefusalException, RateLimiter, UpstreamFailure

ROOT = Path(__file__).resolve().parent.parent

# Store-independent: texts, settings, reading what the server said, subprocess scenarios.
ONE_STORE = {
    "test_refusal_text_for_an_open_circuit",
    "test_refusal_text_while_a_probe_is_in_flight",
    "test_refusal_text_for_a_retry_after_beyond_the_cap",
    "test_refusal_text_for_a_window_wait_beyond_the_cap",
    "test_a_refusal_readdressed_by_wrap_with_context_is_not_an_upstream_failure",
    "test_refusal_pickles_with_its_fields",
    "test_the_carrier_with_a_status_is_found_through_wrap_with_context",
    "test_an_http_carrier_is_quoted_by_what_its_server_said",
    "test_a_failure_without_a_response_has_no_status",
    "test_odd_carrier_attributes_are_ignored",
    "test_impossible_settings_say_what_to_change",
    "test_a_limiter_needs_a_name_and_a_real_clock",
    "test_limiter_scenario_is_the_same_in_every_time_zone",
    "test_admissions_are_forgotten_once_out_of_the_window",
    "test_units_that_make_no_sense_say_what_to_pass",
    "test_impossible_budgets_say_what_to_change",
    "test_budgets_must_be_a_list_of_budgets",
    "test_refusal_text_for_a_take_no_budget_can_hold",
    "test_a_too_large_refusal_pickles_with_its_budget",
    "test_a_cost_must_be_callable",
    "test_a_child_forked_while_another_thread_held_a_lock_is_not_stuck_on_it",
}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "store" in metafunc.fixturenames and metafunc.function.__name__ not in ONE_STORE:
        metafunc.parametrize("store", ["local", "redis"], indirect=True)


@pytest.fixture(autouse=True)
def store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Where the limiters of a test keep their state: ``RateLimiter`` here builds them there.

    On Redis the store runs on the limiter's own clock, so the fake clock drives the shared
    state exactly as it drives the in-process one."""
    kind: str = getattr(request, "param", "local")
    if kind == "redis":
        client = request.getfixturevalue("redis_server").client()
        prefix = unique_prefix()
        real = nucleo.RateLimiter

        def shared(
            name: str, *, clock: nucleo.Clock | None = None, **settings: float
        ) -> RateLimiter:
            on = clock if clock is not None else nucleo.SystemClock()
            where = nucleo.RedisStore(client, prefix=prefix, clock=on)
            return real(name, clock=clock, store=where, **settings)  # type: ignore[arg-type]

        monkeypatch.setattr(sys.modules[__name__], "RateLimiter", shared)
        yield kind
        client.close()
        return
    yield kind


class Http429(nucleo.UpstreamThrottleException):
    """Stands in for the HTTP issue's carrier: a throttle answer that knows its status."""

    status_code = 429


class Http503(nucleo.ExternalServiceException):
    status_code = 503


GITHUB_429 = UpstreamFailure("GitHub", "API rate limit exceeded for installation", 429, 60.0)
OUTAGE = UpstreamFailure("GitHub", "Service Unavailable", 503)


def limiter(clock: FakeClock, **settings: float) -> RateLimiter:
    options: dict[str, float] = {"max_requests": 2, "window_seconds": 10.0} | settings
    return RateLimiter("github", clock=clock, **options)  # type: ignore[arg-type]


def open_circuit(lim: RateLimiter, failure: UpstreamFailure = OUTAGE) -> None:
    while lim.state == "closed":
        lim.record_failure(failure)


def refusal(call: Callable[[], object]) -> LimiterRefusalException:
    with pytest.raises(LimiterRefusalException) as caught:
        call()
    return caught.value


# --- the sliding window and its throttle --------------------------------------------------------


def test_window_admits_max_requests_then_waits_on_the_clock() -> None:
    clock = FakeClock()
    lim = limiter(clock)
    for _ in range(2):
        lim.acquire()
    assert clock.sleeps == []
    lim.acquire()  # the window is full: wait until the oldest admission leaves it
    assert clock.sleeps == [10.0]
    assert clock.monotonic() == 10.0


def test_failures_widen_the_window_and_successes_narrow_it_again() -> None:
    clock = FakeClock()
    lim = limiter(clock, max_wait_seconds=1000.0)
    for n in range(1, 12):
        lim.record_failure(OUTAGE)
        assert lim.throttle_level == min(n, 9.0)
    assert lim.effective_window_seconds == 100.0  # 10 x (1 + 9)

    # Slow-down: two admissions, then the third waits the widened window.
    lim.acquire()
    lim.acquire()
    lim.acquire()
    assert clock.sleeps == [100.0]

    # Recovery: -0.2 per 3 successes while failures are recent.
    levels = []
    for _ in range(9):
        lim.record_success()
        levels.append(lim.throttle_level)
    assert levels == [9.0, 9.0, 8.8, 8.8, 8.8, 8.6, 8.6, 8.6, 8.4]
    assert lim.effective_window_seconds == pytest.approx(94.0)


def test_recovery_is_quicker_after_five_quiet_minutes() -> None:
    clock = FakeClock()
    lim = limiter(clock)
    for _ in range(4):
        lim.record_failure(OUTAGE)
    clock.advance(299.0)
    lim.record_success()
    assert lim.throttle_level == 4.0  # not yet quiet: one success of three
    clock.advance(1.0)
    levels = []
    for _ in range(5):
        lim.record_success()
        levels.append(lim.throttle_level)
    assert levels == [3.0, 2.0, 1.0, 0.0, 0.0]
    assert lim.effective_window_seconds == 10.0


def test_slowing_down_and_recovering_are_configurable() -> None:
    clock = FakeClock()
    lim = limiter(
        clock, failure_step=0.5, max_throttle=2.0, recovery_step=0.5, successes_per_step=1
    )
    for _ in range(5):
        lim.record_failure(OUTAGE)
    assert lim.throttle_level == 2.0
    lim.record_success()
    assert lim.throttle_level == 1.5
    assert lim.effective_window_seconds == 25.0


# --- the circuit ---------------------------------------------------------------------------------


def test_circuit_opens_on_the_third_failure_at_maximum_throttle() -> None:
    clock = FakeClock()
    lim = limiter(clock, max_requests=1000)
    for _ in range(9):  # 0 -> 9: the maximum
        lim.record_failure(OUTAGE, lim.acquire())
    for _ in range(2):
        lim.record_failure(OUTAGE, lim.acquire())
        assert lim.state == "closed"
    lim.record_failure(OUTAGE, lim.acquire())
    assert lim.state == "open"
    assert lim.stats().failures == 12
    exc = refusal(lim.acquire)
    assert exc.reason == "open"
    assert exc.off_for == 30.0


def test_a_success_resets_the_count_at_maximum() -> None:
    clock = FakeClock()
    lim = limiter(clock, max_requests=1000, max_throttle=1.0)
    lim.record_failure(OUTAGE)
    lim.record_failure(OUTAGE)
    lim.record_failure(OUTAGE)
    lim.record_success()
    lim.record_failure(OUTAGE)
    lim.record_failure(OUTAGE)
    assert lim.state == "closed"
    lim.record_failure(OUTAGE)
    assert lim.state == "open"


def test_cooldown_doubles_while_probes_fail_up_to_its_cap() -> None:
    clock = FakeClock()
    lim = limiter(clock, max_throttle=0.0, failures_to_open=1, max_cooldown_seconds=100.0)
    lim.record_failure(OUTAGE, lim.acquire())
    cooldowns = []
    for _ in range(4):
        cooldown = lim.stats().cooldown_seconds
        cooldowns.append(cooldown)
        clock.advance(cooldown - 0.5)
        assert refusal(lim.acquire).off_for == pytest.approx(0.5)
        clock.advance(0.5)
        probe = lim.acquire()
        assert lim.state == "half-open"
        lim.record_failure(OUTAGE, probe)
        assert lim.state == "open"
    assert cooldowns == [30.0, 60.0, 100.0, 100.0]

    clock.advance(100.0)
    lim.record_success(lim.acquire())
    assert lim.state == "closed"
    assert lim.stats().cooldown_seconds == 30.0  # back to the start once a probe succeeded


def test_the_default_cooldown_cap_is_one_hour() -> None:
    clock = FakeClock()
    lim = limiter(clock, max_throttle=0.0, failures_to_open=1)
    lim.record_failure(OUTAGE, lim.acquire())
    for _ in range(10):
        clock.advance(lim.stats().cooldown_seconds)
        lim.record_failure(OUTAGE, lim.acquire())
    assert lim.stats().cooldown_seconds == 3600.0


def test_half_open_admits_one_probe_and_its_success_closes_the_circuit() -> None:
    clock = FakeClock()
    lim = limiter(clock)
    open_circuit(lim)
    clock.advance(30.0)
    probe = lim.acquire()
    second = refusal(lim.acquire)
    assert second.reason == "probing"
    assert lim.state == "half-open"
    lim.record_success(probe)
    assert lim.state == "closed"
    lim.acquire()


def test_a_probe_that_never_reports_back_expires() -> None:
    clock = FakeClock()
    lim = limiter(clock, probe_timeout_seconds=20.0)
    open_circuit(lim)
    clock.advance(30.0)
    lost = lim.acquire()
    clock.advance(19.0)
    assert refusal(lim.acquire).off_for == pytest.approx(1.0)
    clock.advance(1.0)
    replacement = lim.acquire()  # the lost probe no longer holds the circuit
    lim.record_success(lost)  # reports far too late: the replacement decides
    assert lim.state == "half-open"
    lim.record_success(replacement)
    assert lim.state == "closed"


def test_a_probe_ending_without_news_of_the_upstream_frees_its_place() -> None:
    clock = FakeClock()
    lim = limiter(clock)
    open_circuit(lim)
    clock.advance(30.0)
    lim.release(lim.acquire())  # e.g. the model's arguments were wrong: nothing learned
    assert lim.state == "half-open"
    lim.record_success(lim.acquire())
    assert lim.state == "closed"


def test_outcomes_of_calls_admitted_before_the_circuit_opened_do_not_move_it() -> None:
    clock = FakeClock()
    lim = limiter(clock, max_requests=1000, max_throttle=0.0, failures_to_open=1)
    early = lim.acquire()
    lim.record_failure(OUTAGE, lim.acquire())
    assert lim.state == "open"
    lim.record_success(early)
    assert lim.state == "open"
    clock.advance(30.0)
    probe = lim.acquire()
    lim.record_failure(OUTAGE, early)  # late news of an old call: counted, circuit unmoved
    assert lim.state == "half-open"
    assert lim.stats().failures == 2
    lim.record_success(probe)
    assert lim.state == "closed"


def test_exactly_one_probe_among_50_threads() -> None:
    clock = FakeClock()
    lim = limiter(clock)
    open_circuit(lim)
    clock.advance(30.0)
    barrier = threading.Barrier(50, timeout=10)
    admitted: list[nucleo.Permit] = []
    refused: list[LimiterRefusalException] = []

    def caller() -> None:
        barrier.wait()
        try:
            admitted.append(lim.acquire())
        except LimiterRefusalException as exc:
            refused.append(exc)

    threads = [threading.Thread(target=caller) for _ in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(admitted) == 1
    assert len(refused) == 49
    assert {exc.reason for exc in refused} == {"probing"}


def test_exactly_one_probe_among_50_tasks() -> None:
    clock = FakeClock()
    lim = limiter(clock)
    open_circuit(lim)
    clock.advance(30.0)

    async def caller(start: asyncio.Event) -> bool:
        await start.wait()
        try:
            await lim.aacquire()
        except LimiterRefusalException:
            return False
        return True

    async def main() -> list[bool]:
        start = asyncio.Event()
        tasks = [asyncio.create_task(caller(start)) for _ in range(50)]
        await asyncio.sleep(0)
        start.set()
        return await asyncio.gather(*tasks)

    assert sorted(asyncio.run(main())) == [False] * 49 + [True]


def test_a_description_leaves_blank_parts_out(llm_snapshot: SnapshotAssertion) -> None:
    assert UpstreamFailure("", "", 500).describe() == "HTTP 500"
    assert UpstreamFailure("Shop", "  ", 500).describe() == "HTTP 500 from Shop"
    assert UpstreamFailure("", "down", 503).describe() == 'HTTP 503, saying "down"'
    assert UpstreamFailure("", "", None).describe() == (
        "a failure of the service with no HTTP status"
    )
    lim = RateLimiter("shop", max_requests=30, window_seconds=60, clock=FakeClock())
    open_circuit(lim, UpstreamFailure("", "", 500))
    assert refusal(lim.acquire).explain_to_llm() == llm_snapshot


# --- Retry-After -------------------------------------------------------------------------------


def test_retry_after_is_honoured_no_call_is_admitted_before_it_elapses() -> None:
    clock = FakeClock()
    lim = limiter(clock, max_requests=100)
    lim.record_failure(UpstreamFailure("GitHub", "slow down", 429, 20.0), lim.acquire())
    lim.acquire()
    assert clock.sleeps == [20.0]
    assert clock.monotonic() == 20.0
    lim.acquire()
    assert clock.sleeps == [20.0]


def test_a_retry_after_beyond_the_cap_is_refused_not_slept() -> None:
    clock = FakeClock()
    lim = limiter(clock, max_requests=100)
    lim.record_failure(UpstreamFailure("GitHub", "API rate limit exceeded", 429, 120.0))
    exc = refusal(lim.acquire)
    assert exc.reason == "held"  # the server asked for the pause
    assert exc.off_for == 120.0
    assert clock.sleeps == []
    clock.advance(100.0)
    lim.acquire()  # 20 s left: within the cap, so it waits them out
    assert clock.sleeps == [20.0]


@pytest.mark.parametrize("report", ["record_failure", "release", "from_exception"])
def test_a_wild_retry_after_holds_the_limiter_no_longer_than_the_cap(report: str) -> None:
    clock = FakeClock()
    lim = limiter(clock, max_requests=100)
    if report == "record_failure":
        lim.record_failure(UpstreamFailure("GitHub", "slow down", 429, 1e9), lim.acquire())
    elif report == "release":
        lim.release(lim.acquire(), retry_after=1e9)
    else:
        carrier = nucleo.UpstreamThrottleException("GitHub", "slow down", retry_after=1e9)
        failure = UpstreamFailure.from_exception(carrier)
        assert failure is not None
        assert failure.retry_after == nucleo.RETRY_AFTER_CAP
        lim.record_failure(failure, lim.acquire())
    assert refusal(lim.acquire).off_for == nucleo.RETRY_AFTER_CAP
    clock.advance(nucleo.RETRY_AFTER_CAP)
    lim.acquire()  # a day later the tool is back, not in thirty years
    assert clock.sleeps == []


def test_a_window_as_long_as_the_servers_pause_is_refused_as_a_wait() -> None:
    clock = FakeClock()
    lim = RateLimiter("geo", max_requests=1, window_seconds=120.0, clock=clock)
    lim.record_success(lim.acquire())  # the window is full until t=120
    lim.release(None, retry_after=120.0)  # and the server asked for the same pause
    exc = refusal(lim.acquire)
    assert exc.reason == "wait"  # the rate alone would have refused it


def test_a_full_window_whose_wait_exceeds_the_cap_is_refused() -> None:
    clock = FakeClock()
    lim = limiter(clock, max_requests=1, window_seconds=120.0)
    lim.acquire()
    exc = refusal(lim.acquire)
    assert (exc.reason, exc.off_for, exc.last_failure) == ("wait", 120.0, None)
    assert clock.sleeps == []


# --- refusals ----------------------------------------------------------------------------------


def test_refusal_text_for_an_open_circuit(llm_snapshot: SnapshotAssertion) -> None:
    clock = FakeClock()
    lim = RateLimiter("github-search", max_requests=30, window_seconds=60, clock=clock)
    open_circuit(lim, GITHUB_429)
    clock.advance(12.0)  # the last Retry-After (60 s) outlasts the cooldown (30 s)
    text = refusal(lim.acquire).explain_to_llm()
    assert text == llm_snapshot
    for fact in (
        "about 48 seconds",
        "HTTP 429",
        "GitHub",
        "API rate limit exceeded",
    ):
        assert fact in text, fact
    # One wait, the one the limiter enforces; its own settings are not the model's to change.
    for internal in ("github-search", "30 requests per 60 seconds", "60 seconds"):
        assert internal not in text, internal


def test_refusal_text_while_a_probe_is_in_flight(llm_snapshot: SnapshotAssertion) -> None:
    clock = FakeClock()
    lim = RateLimiter("pubchem", max_requests=5, window_seconds=1, clock=clock)
    open_circuit(lim, UpstreamFailure("PubChem", "connection refused", None))
    clock.advance(30.0)
    lim.acquire()
    assert refusal(lim.acquire).explain_to_llm() == llm_snapshot


def test_refusal_text_for_a_retry_after_beyond_the_cap(llm_snapshot: SnapshotAssertion) -> None:
    clock = FakeClock()
    lim = RateLimiter("github-search", max_requests=30, window_seconds=60, clock=clock)
    lim.record_failure(UpstreamFailure("GitHub", "secondary rate limit", 403, 900.0))
    text = refusal(lim.acquire).explain_to_llm()
    assert text == llm_snapshot
    assert "about 15 minutes" in text
    assert "HTTP 403" in text


def test_refusal_text_for_a_window_wait_beyond_the_cap(llm_snapshot: SnapshotAssertion) -> None:
    clock = FakeClock()
    lim = RateLimiter("geocoder", max_requests=1, window_seconds=3600, clock=clock)
    lim.acquire()
    assert refusal(lim.acquire).explain_to_llm() == llm_snapshot


def test_every_refusal_is_a_fresh_exception_with_a_short_traceback() -> None:
    clock = FakeClock()
    lim = limiter(clock)
    open_circuit(lim)
    refusals = [refusal(lim.acquire) for _ in range(200)]
    assert len({id(exc) for exc in refusals}) == 200

    def depth(exc: BaseException) -> int:
        count, tb = 0, exc.__traceback__
        while tb is not None:
            count, tb = count + 1, tb.tb_next
        return count

    assert {depth(exc) for exc in refusals} == {depth(refusals[0])}


def test_refusals_are_not_counted_as_upstream_failures() -> None:
    clock = FakeClock()
    lim = limiter(clock)
    open_circuit(lim)
    before = lim.stats()
    for _ in range(25):
        refusal(lim.acquire)
    after = lim.stats()
    assert after.refusals == before.refusals + 25
    assert (after.failures, after.cooldown_seconds, after.state) == (
        before.failures,
        before.cooldown_seconds,
        "open",
    )
    clock.advance(30.0)  # the cooldown did not grow with the refusals
    lim.acquire()


def test_a_refusal_readdressed_by_wrap_with_context_is_not_an_upstream_failure() -> None:
    # Another tool's limiter refused inside a service_call block: the wrap makes it an
    # ExternalServiceException, but the limiter must still not count it against the service.
    other = limiter(FakeClock())
    open_circuit(other)
    with pytest.raises(nucleo.ExternalServiceException) as info:  # noqa: SIM117
        with nucleo.service_call("GitHub", "query", "x", "search"):
            other.acquire()
    assert UpstreamFailure.from_exception(info.value) is None
    assert UpstreamFailure.from_exception(nucleo.ExternalServiceException("S", "down")) is not None


def test_a_refusal_of_a_subclass_in_the_chain_is_not_an_upstream_failure() -> None:
    # _failure knows a refusal only as the OwnRefusal it registers as (the two modules do not
    # import each other): a subclass of the refusal is one too, as isinstance had it.
    class OwnRefusalKind(nucleo.LimiterRefusalException):
        pass

    outer = nucleo.ExternalServiceException("S", "down")
    outer.__cause__ = OwnRefusalKind("shop", 1, 1.0, 0.0, "open")
    assert UpstreamFailure.from_exception(outer) is None


def test_refusal_pickles_with_its_fields() -> None:
    exc = LimiterRefusalException("github", 30, 60.0, 12.5, "open", GITHUB_429)
    copy = pickle.loads(pickle.dumps(exc))
    assert copy.last_failure == GITHUB_429
    assert copy.explain_to_llm() == exc.explain_to_llm()


# --- what the server said ---------------------------------------------------------------------


def test_the_carrier_with_a_status_is_found_through_wrap_with_context() -> None:
    with (
        pytest.raises(nucleo.ExternalServiceException) as caught,
        nucleo.service_call("GitHub", "query", "is:open", "issue search"),
    ):
        raise Http429("GitHub", "API rate limit exceeded", retry_after=42)
    assert type(caught.value) is nucleo.UpstreamThrottleException  # the wrapper knows no status
    failure = UpstreamFailure.from_exception(caught.value)
    assert failure == UpstreamFailure("GitHub", "API rate limit exceeded", 429, 42.0)


def test_release_honours_a_suggested_wait_without_counting_a_failure() -> None:
    clock = FakeClock()
    lim = RateLimiter("geo", max_requests=10, window_seconds=1.0, clock=clock)
    lim.release(lim.acquire(), retry_after=12.5)
    lim.record_success(lim.acquire())
    assert clock.sleeps == [12.5]
    assert lim.stats().failures == 0
    with pytest.raises(ValueError, match="retry_after must be a finite number of seconds"):
        lim.release(None, retry_after=float("nan"))


def test_an_http_carrier_is_quoted_by_what_its_server_said() -> None:
    with (
        pytest.raises(nucleo.ExternalServiceException) as caught,
        nucleo.service_call("PubChem", "name", "aspirin", "compound search"),
    ):
        nucleo.raise_for_status("PubChem", "/search", 503, b"backend down", {"Retry-After": "20"})
    failure = UpstreamFailure.from_exception(caught.value)
    assert failure == UpstreamFailure("PubChem", "backend down", 503, 20.0)
    # With no body, the carrier's own details are all there is to quote.
    silent = nucleo.http_exception("PubChem", "/search", 500, b"")
    assert UpstreamFailure.from_exception(silent) == UpstreamFailure(
        "PubChem", "HTTP 500 Internal Server Error at /search", 500, None
    )


def test_a_failure_without_a_response_has_no_status() -> None:
    exc = nucleo.ExternalServiceException("PubChem", "connection refused", ConnectionRefusedError())
    assert UpstreamFailure.from_exception(exc) == UpstreamFailure(
        "PubChem", "connection refused", None, None
    )
    assert UpstreamFailure.from_exception(ValueError("not upstream")) is None


def test_odd_carrier_attributes_are_ignored() -> None:
    class Odd(nucleo.ExternalServiceException):
        status_code = True  # not a status
        retry_after = float("nan")

    assert UpstreamFailure.from_exception(Odd("S", "d")) == UpstreamFailure("S", "d", None, None)


# --- settings --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"max_requests": 0}, "max_requests=0 is impossible: use a whole number >= 1"),
        ({"max_requests": 2.5}, "max_requests=2.5 is impossible"),
        (
            {"window_seconds": 0},
            "window_seconds=0 is impossible: use a finite number of seconds > 0",
        ),
        ({"window_seconds": float("inf")}, "window_seconds=inf is impossible"),
        ({"failure_step": -1.0}, "failure_step=-1.0 is impossible"),
        ({"max_throttle": float("nan")}, "max_throttle=nan is impossible"),
        ({"recovery_step": 0}, "recovery_step=0 is impossible"),
        ({"successes_per_step": 0}, "successes_per_step=0 is impossible"),
        ({"quiet_seconds": -5}, "quiet_seconds=-5 is impossible"),
        ({"quiet_recovery_step": 0}, "quiet_recovery_step=0 is impossible"),
        ({"failures_to_open": 0}, "failures_to_open=0 is impossible"),
        ({"cooldown_seconds": 0}, "cooldown_seconds=0 is impossible"),
        (
            {"cooldown_seconds": 60, "max_cooldown_seconds": 30},
            "max_cooldown_seconds=30 is impossible: use a finite number of seconds >= "
            "cooldown_seconds (60), or lower cooldown_seconds",
        ),
        ({"probe_timeout_seconds": 0}, "probe_timeout_seconds=0 is impossible"),
        ({"max_wait_seconds": -1}, "max_wait_seconds=-1 is impossible"),
    ],
)
def test_impossible_settings_say_what_to_change(settings: dict[str, float], message: str) -> None:
    options: dict[str, float] = {"max_requests": 1, "window_seconds": 1.0} | settings
    with pytest.raises(ValueError, match=re.escape(f"RateLimiter 'x': {message}")):
        RateLimiter("x", **options)  # type: ignore[arg-type]


def test_a_limiter_needs_a_name_and_a_real_clock() -> None:
    with pytest.raises(ValueError, match="name must be a non-empty string"):
        RateLimiter(" ", max_requests=1, window_seconds=1)
    with pytest.raises(TypeError, match="clock must implement Clock"):
        RateLimiter("x", max_requests=1, window_seconds=1, clock=time)  # type: ignore[arg-type]


def test_quick_recovery_can_be_turned_off() -> None:
    clock = FakeClock()
    lim = limiter(clock, quiet_seconds=float("inf"))
    lim.record_failure(OUTAGE)
    clock.advance(10_000.0)
    lim.record_success()
    assert lim.throttle_level == 1.0


# --- concurrency -------------------------------------------------------------------------------


def test_the_lock_is_not_held_across_the_call_threads() -> None:
    """4 calls that can only finish together: they finish only if they run in parallel.

    The stand-in for "4 threads x 50 ms take about 50 ms, not 200": a limiter holding its lock
    across the call (as pybreaker does) would run them one by one, and the barrier would break.
    """
    clock = FakeClock()
    lim = RateLimiter("shared", max_requests=10, window_seconds=1, clock=clock)
    together = threading.Barrier(4, timeout=10)

    @nucleo.tool(limiters=[lim])
    def slow_call() -> str:
        together.wait()
        return "done"

    results: list[nucleo.ToolResult] = []
    threads = [
        threading.Thread(target=lambda: results.append(nucleo.run_tool(slow_call)))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [r.text for r in results] == ["done"] * 4
    assert lim.stats().successes == 4


def test_the_lock_is_not_held_across_the_call_tasks() -> None:
    clock = FakeClock()
    lim = RateLimiter("shared", max_requests=10, window_seconds=1, clock=clock)

    async def main() -> list[nucleo.ToolResult]:
        together = asyncio.Barrier(4)

        @nucleo.tool(limiters=[lim])
        async def slow_call() -> str:
            await together.wait()
            return "done"

        return await asyncio.gather(*(nucleo.arun_tool(slow_call) for _ in range(4)))

    assert [r.text for r in asyncio.run(main())] == ["done"] * 4


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
@pytest.mark.parametrize(
    ("lock", "child"),
    [
        # A limiter's own, held by each of its decisions.
        (
            "lim._local.lock",
            """
            lim.record_success(lim.acquire())
            os._exit(0 if lim.stats().successes == 2 else 3)
            """,
        ),
        # The registry of live limiters, which each new limiter joins.
        ("_limiter._LIVE_LOCK", "nucleo.RateLimiter('new', max_requests=1, window_seconds=1)"),
        # The testing switch's, taken by a wait the system clock skips.
        (
            "_clock._Testing.lock",
            """
            nucleo.set_testing(True)
            nucleo.SystemClock().sleep(5.0)
            """,
        ),
    ],
    ids=["limiter", "registry", "testing"],
)
def test_a_child_forked_while_another_thread_held_a_lock_is_not_stuck_on_it(
    lock: str, child: str
) -> None:
    setup = """
        import pytest_nucleo as nucleo
        from pytest_nucleo import _clock
        from pytest_nucleo.limits import _limiter
        lim = nucleo.RateLimiter('shop', max_requests=100, window_seconds=60)
        lim.record_success(lim.acquire())
    """
    child_forked_while_held(setup, lock, child)


def test_three_threads_of_500_failures_count_exactly_1500() -> None:
    clock = FakeClock()
    lim = RateLimiter(
        "shared", max_requests=10_000, window_seconds=1, failures_to_open=10_000, clock=clock
    )

    @nucleo.tool(limiters=[lim])
    def failing() -> None:
        raise Http503("Shop API", "Service Unavailable")

    start = threading.Barrier(3, timeout=10)

    def worker() -> None:
        start.wait()
        for _ in range(500):
            assert nucleo.run_tool(failing).is_error

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stats = lim.stats()
    assert stats.failures == 1500
    assert stats.last_failure == UpstreamFailure("Shop API", "Service Unavailable", 503)


def test_async_def_failures_count() -> None:
    clock = FakeClock()
    lim = RateLimiter("shared", max_requests=100, window_seconds=1, clock=clock)

    @nucleo.tool(limiters=[lim])
    async def failing() -> None:
        raise Http503("Shop API", "Service Unavailable")

    async def main() -> list[nucleo.ToolResult]:
        return [await nucleo.arun_tool(failing) for _ in range(5)]

    assert all(result.is_error for result in asyncio.run(main()))
    assert lim.stats().failures == 5
    assert lim.throttle_level == 5.0


def test_limiters_use_the_testing_switch_through_the_system_clock() -> None:
    nucleo.set_testing(True)
    try:
        lim = RateLimiter("s", max_requests=1, window_seconds=30)
        for _ in range(10):
            lim.acquire()  # each waits 30 s of skipped time: no pile-up, no refusal
        assert lim.stats().refusals == 0
    finally:
        nucleo.set_testing(False)


# --- clocks ------------------------------------------------------------------------------------

SCENARIO = """
import time
import pytest_nucleo as nucleo

nucleo.set_testing(True)
lim = nucleo.RateLimiter("tz", max_requests=2, window_seconds=10, max_throttle=1.0,
                         failures_to_open=1)
start = nucleo.SystemClock().monotonic()
failure = nucleo.UpstreamFailure("S", "down", 503, 5.0)
lim.record_failure(failure, lim.acquire())
lim.acquire()                       # waits out Retry-After (skipped, but the clock moves)
waited = round(nucleo.SystemClock().monotonic() - start)
lim.record_failure(failure, lim.acquire())
try:
    lim.acquire()
except nucleo.LimiterRefusalException as exc:
    print(waited, lim.state, exc.reason, round(exc.off_for), time.strftime("%z", time.localtime(0)))
"""


@pytest.mark.parametrize(
    ("tz", "offset"), [("UTC", "+0000"), ("Asia/Tokyo", "+0900"), ("America/New_York", "-0500")]
)
def test_limiter_scenario_is_the_same_in_every_time_zone(tz: str, offset: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCENARIO],
        env={**os.environ, "TZ": tz},
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    # The zone really applied (last field), and the limiter did not notice.
    assert result.stdout.split() == ["5", "open", "open", "30", offset]


def test_limiters_never_read_wall_clock_time(monkeypatch: pytest.MonkeyPatch) -> None:
    def wall_clock(*_: object) -> float:
        raise AssertionError("a limiter read wall-clock time")

    for name in ("time", "time_ns", "localtime", "gmtime"):
        monkeypatch.setattr(time, name, wall_clock)
    clock = FakeClock()
    lim = limiter(clock)
    open_circuit(lim, GITHUB_429)
    refusal(lim.acquire).explain_to_llm()
    clock.advance(60.0)
    lim.record_success(lim.acquire())
    assert lim.state == "closed"


def test_a_waiter_cancelled_while_waiting_gives_its_slot_back() -> None:
    class Interrupted(Exception):
        pass

    class CancellingClock(FakeClock):
        def sleep(self, seconds: float) -> None:
            raise Interrupted  # the caller is cancelled while it waits for its slot

    clock = CancellingClock()
    lim = RateLimiter("geo", max_requests=1, window_seconds=10.0, clock=clock)
    lim.record_success(lim.acquire())  # the one slot of this window is used at t=0
    with pytest.raises(Interrupted):
        lim.acquire()  # would wait until t=10, but is cancelled: no call was made
    clock.advance(10.0)
    lim.record_success(lim.acquire())  # t=10: admitted at once, not a window later
    assert clock.monotonic() == 10.0


def test_a_waiter_giving_its_slot_back_frees_no_other_slot() -> None:
    class Interrupted(Exception):
        pass

    class CancellingOnce(FakeClock):
        cancel_next = False

        def sleep(self, seconds: float) -> None:
            if self.cancel_next:
                self.cancel_next = False
                raise Interrupted
            super().sleep(seconds)

    clock = CancellingOnce()
    lim = RateLimiter("geo", max_requests=2, window_seconds=10.0, clock=clock)
    lim.record_success(lim.acquire())
    lim.record_success(lim.acquire())  # both slots of this window are used at t=0
    clock.cancel_next = True
    with pytest.raises(Interrupted):
        lim.acquire()  # would wait until t=10, but is cancelled
    clock.advance(0.5)
    lim.record_success(lim.acquire())  # still 2 calls in the window: waits until t=10
    assert clock.monotonic() == 10.0
    assert clock.sleeps == [9.5]


def test_admissions_are_forgotten_once_out_of_the_window() -> None:
    clock = FakeClock()
    lim = RateLimiter("geo", max_requests=3, window_seconds=1.0, clock=clock)
    for _ in range(1000):
        lim.record_success(lim.acquire())
        clock.advance(0.5)
    assert len(lim._local.state.windows[0].takes) <= 4


# --- weighted takes and several budgets ---------------------------------------------------------

TOKENS = nucleo.Budget("tokens", 100, 10.0)


def test_five_two_unit_takes_fill_a_ten_unit_window_and_a_sixth_does_not_fit() -> None:
    clock = FakeClock()
    lim = RateLimiter("llm", max_requests=10, window_seconds=10.0, clock=clock, max_wait_seconds=0)
    for _ in range(5):
        lim.record_success(lim.acquire(units=2))
    exc = refusal(lambda: lim.acquire(units=2))
    assert (exc.reason, exc.off_for) == ("wait", 10.0)
    lim.record_success(lim.acquire(units=0))  # takes nothing: it fits a full window
    clock.advance(10.0)
    lim.record_success(lim.acquire(units=10))  # the window has passed: a whole one fits
    assert clock.sleeps == []


def test_a_take_waits_until_enough_units_have_left_the_window() -> None:
    clock = FakeClock()
    lim = RateLimiter("llm", max_requests=10, window_seconds=10.0, clock=clock)
    lim.acquire(units=6)
    clock.advance(2.0)
    lim.acquire(units=3)
    lim.acquire(units=2)  # 6 + 3 + 2 > 10: waits until the 6 leave, at t=10
    assert clock.sleeps == [8.0]


def test_a_take_larger_than_a_budget_can_hold_is_refused_at_once() -> None:
    clock = FakeClock()
    lim = RateLimiter("llm", max_requests=10, window_seconds=10.0, clock=clock, budgets=[TOKENS])
    exc = refusal(lambda: lim.acquire(units=11))
    assert (exc.reason, exc.off_for, exc.units, exc.budget) == ("too-large", 0.0, 11, None)
    exc = refusal(lambda: lim.acquire(units={"tokens": 101}))
    assert (exc.reason, exc.units, exc.budget) == ("too-large", 101, TOKENS)
    assert clock.sleeps == []
    assert lim.stats().refusals == 2
    lim.acquire(units={"requests": 10, "tokens": 100})  # both budgets were left untouched


def test_a_refused_multi_budget_take_leaves_every_budget_as_it_was() -> None:
    clock = FakeClock()
    lim = RateLimiter(
        "llm",
        max_requests=3,
        window_seconds=10.0,
        clock=clock,
        budgets=[TOKENS],
        max_wait_seconds=0,
    )
    lim.acquire(units={"tokens": 90})  # 1 request, 90 tokens
    assert refusal(lambda: lim.acquire(units={"tokens": 20})).reason == "wait"
    assert refusal(lambda: lim.acquire(units={"tokens": 101})).reason == "too-large"
    # Neither refusal took its request: two more fit, and exactly the 10 tokens left.
    lim.acquire(units={"tokens": 10})
    lim.acquire(units={"tokens": 0})
    assert refusal(lambda: lim.acquire(units={"tokens": 0})).reason == "wait"  # 3 requests
    clock.advance(10.0)
    lim.acquire(units={"requests": 3, "tokens": 100})
    assert clock.sleeps == []


def test_a_cancelled_multi_budget_waiter_gives_back_every_budget() -> None:
    class Interrupted(Exception):
        pass

    class CancellingClock(FakeClock):
        def sleep(self, seconds: float) -> None:
            raise Interrupted

    clock = CancellingClock()
    lim = RateLimiter("llm", max_requests=2, window_seconds=10.0, clock=clock, budgets=[TOKENS])
    lim.acquire(units={"tokens": 60})
    with pytest.raises(Interrupted):
        lim.acquire(units={"tokens": 50})  # would wait for the 60 to leave; cancelled
    lim.acquire(units={"tokens": 40})  # one request and 40 tokens were still free
    assert lim.stats().refusals == 0


def test_every_budget_window_widens_with_the_throttle() -> None:
    clock = FakeClock()
    lim = RateLimiter(
        "llm",
        max_requests=100,
        window_seconds=10.0,
        clock=clock,
        budgets=[TOKENS],
        max_wait_seconds=1000,
    )
    lim.record_failure(OUTAGE)  # level 1: every window is twice as long
    lim.acquire(units={"tokens": 100})
    lim.acquire(units={"tokens": 1})
    assert clock.sleeps == [20.0]


def test_units_that_make_no_sense_say_what_to_pass() -> None:
    lim = RateLimiter("llm", max_requests=10, window_seconds=1.0, budgets=[TOKENS])
    with pytest.raises(
        ValueError, match=r"has no budget 'tokns'; its budgets are 'requests', 'tokens'"
    ):
        lim.acquire(units={"tokns": 1})
    with pytest.raises(ValueError, match=r"units=-1 for budget 'requests' is impossible"):
        lim.acquire(units=-1)
    with pytest.raises(ValueError, match=r"units=1.5 for budget 'tokens' is impossible"):
        lim.acquire(units={"tokens": 1.5})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="units must be a whole number or a mapping"):
        lim.acquire(units=True)
    with pytest.raises(TypeError, match="units must be a whole number or a mapping"):
        lim.acquire(units="3")  # type: ignore[arg-type]
    assert lim.stats().refusals == 0


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: nucleo.Budget("", 1, 1), "Budget name must be a non-empty string"),
        (
            lambda: nucleo.Budget("t", 0, 1),
            "Budget 't': max_units=0 is impossible: use a whole number >= 1",
        ),
        (
            lambda: nucleo.Budget("t", 1, float("inf")),
            "Budget 't': window_seconds=inf is impossible",
        ),
        (
            lambda: RateLimiter(
                "x", max_requests=1, window_seconds=1, budgets=[nucleo.Budget("requests", 1, 1)]
            ),
            "two budgets are named 'requests' ('requests' is the main budget",
        ),
    ],
)
def test_impossible_budgets_say_what_to_change(make: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        make()


def test_budgets_must_be_a_list_of_budgets() -> None:
    with pytest.raises(TypeError, match=r"budgets must be a list of Budget: use \[budget\]"):
        RateLimiter("x", max_requests=1, window_seconds=1, budgets=TOKENS)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="budgets must be Budget instances; got a tuple"):
        RateLimiter("x", max_requests=1, window_seconds=1, budgets=[("tokens", 1, 1)])  # type: ignore[list-item]


def test_refusal_text_for_a_take_no_budget_can_hold(llm_snapshot: SnapshotAssertion) -> None:
    lim = RateLimiter(
        "openai",
        max_requests=500,
        window_seconds=60,
        clock=FakeClock(),
        budgets=[nucleo.Budget("tokens", 90_000, 60)],
    )
    refused = refusal(lambda: lim.acquire(units={"tokens": 120_000}))
    text = refused.explain_to_llm()
    assert text == llm_snapshot
    # The sizes are the tool's settings: the log has them, the model reads that no wait helps.
    for fact in ("openai", "120000 units", "'tokens'", "at most 90000 units per 60 seconds"):
        assert fact in str(refused), fact
        assert fact not in text, fact
    assert "will not be made later either" in text


def test_a_too_large_refusal_pickles_with_its_budget() -> None:
    exc = LimiterRefusalException("openai", 500, 60.0, 0.0, "too-large", None, None, TOKENS, 120)
    copy = pickle.loads(pickle.dumps(exc))
    assert (copy.budget, copy.units) == (TOKENS, 120)
    assert copy.explain_to_llm() == exc.explain_to_llm()


# --- what a call costs, through the runner -------------------------------------------------------


def test_the_runner_takes_what_the_cost_function_says() -> None:
    clock = FakeClock()
    lim = RateLimiter(
        "llm",
        max_requests=100,
        window_seconds=60,
        clock=clock,
        budgets=[TOKENS],
        max_wait_seconds=0,
    )

    @nucleo.tool(limiters=[lim], cost=lambda prompt: {"tokens": len(prompt)})
    def complete(prompt: str) -> str:
        return prompt.upper()

    assert nucleo.run_tool(complete, {"prompt": "x" * 60}).text == "X" * 60
    second = nucleo.run_tool(complete, {"prompt": "y" * 50})  # 60 + 50 > 100 tokens
    assert isinstance(second.exception, LimiterRefusalException)
    assert second.exception.reason == "wait"
    assert nucleo.run_tool(complete, {"prompt": "z" * 40}).text == "Z" * 40
    # run_tool's own cost wins over the tool's.
    third = nucleo.run_tool(complete, {"prompt": "w"}, cost=lambda prompt: {"tokens": 101})
    assert isinstance(third.exception, LimiterRefusalException)
    assert third.exception.reason == "too-large"
    assert lim.stats().successes == 2


def test_the_async_runner_takes_what_the_cost_function_says() -> None:
    clock = FakeClock()
    lim = RateLimiter("llm", max_requests=10, window_seconds=60, clock=clock, max_wait_seconds=0)

    @nucleo.tool(limiters=[lim], cost=lambda n: n)
    async def fetch(n: int) -> int:
        return n

    async def main() -> list[nucleo.ToolResult]:
        return [await nucleo.arun_tool(fetch, {"n": n}) for n in (4, 6, 1)]

    results = asyncio.run(main())
    assert [r.is_error for r in results] == [False, False, True]
    assert lim.stats().successes == 2


@pytest.mark.nucleo(expect_leaks=True)  # a cost function's bug reaches the model on purpose
def test_a_cost_function_that_fails_fails_the_call_like_the_tool() -> None:
    lim = RateLimiter("llm", max_requests=10, window_seconds=60, clock=FakeClock())
    called: list[str] = []

    def cost(prompt: str) -> int:
        raise KeyError("no tokenizer for this model")

    @nucleo.tool(limiters=[lim], cost=cost)
    def complete(prompt: str) -> str:
        called.append(prompt)
        return prompt

    result = nucleo.run_tool(complete, {"prompt": "hi"})
    assert isinstance(result.exception, nucleo.SystemException)
    assert called == []
    assert lim.stats().successes == lim.stats().refusals == 0


def test_a_cost_must_be_callable() -> None:
    with pytest.raises(TypeError, match="cost must be a function of the tool's arguments"):
        nucleo.tool(cost=3)  # type: ignore[arg-type]
