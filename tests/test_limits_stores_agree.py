"""The two stores are one state machine: the same random calls, the same answers.

The in-process store runs the rules in Python (``_machine``); the Redis store runs them as a
server-side script (``_step.lua``). Every rule test in ``test_limits.py`` runs against both;
this property test drives a limiter on each store with the same random sequence of calls
(admissions of various sizes in one budget or two, successes, failures with and without a
Retry-After, releases, stale and probe permits, time passing) and requires the same answer
to every call: the same permit, wait and start, or the same refusal, and the same statistics
after it. Against a real redis-server on a loopback port, on one fake clock per limiter.
"""

from __future__ import annotations

from typing import Any

import pytest
from _redis_server import RedisServer, unique_prefix
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pytest_nucleo as nucleo
from pytest_nucleo import Budget, FakeClock, LimiterRefusalException, RateLimiter

SETTINGS = st.fixed_dictionaries(
    {
        "max_requests": st.integers(1, 4),
        "window_seconds": st.sampled_from([1.0, 2.5, 10.0]),
        "max_throttle": st.sampled_from([0.0, 1.0, 3.0]),
        "failure_step": st.sampled_from([0.5, 1.0]),
        "recovery_step": st.sampled_from([0.2, 0.5]),
        "successes_per_step": st.integers(1, 3),
        "quiet_seconds": st.sampled_from([5.0, 300.0, float("inf")]),
        "failures_to_open": st.integers(1, 3),
        "cooldown_seconds": st.sampled_from([1.0, 4.0]),
        "max_cooldown_seconds": st.sampled_from([8.0, 30.0]),
        "probe_timeout_seconds": st.sampled_from([2.0, 15.0]),
        "max_wait_seconds": st.sampled_from([0.0, 3.0, 60.0]),
        # One budget (the common case, which the in-process rules take a path of its own
        # for), or a second one for tokens.
        "budgets": st.sampled_from([(), (Budget("tokens", 8, 5.0),)]),
    }
)
# Mostly the last permit handed out (a probe's, to close or reopen the circuit), else none or
# an earlier one (stale once the circuit changed).
PERMIT = st.sampled_from([-1, -1, -1, -1, None, 0, 1, 3])
RETRY_AFTER = st.sampled_from([None] * 12 + [0.0, 1.5, 20.0, 1e9])  # a wild one, rarely
ACQUIRE = st.tuples(st.just("acquire"), st.sampled_from([1, 1, 1, 0, 2]), st.integers(0, 9))
# Admissions and outcomes about as often as a tool's calls make them; time moves now and then.
CALL = st.one_of(
    ACQUIRE,
    ACQUIRE,
    ACQUIRE,
    st.tuples(st.just("success"), PERMIT),
    st.tuples(st.just("success"), PERMIT),
    st.tuples(st.just("failure"), PERMIT, st.sampled_from([None, 429, 503]), RETRY_AFTER),
    st.tuples(st.just("failure"), PERMIT, st.sampled_from([None, 429, 503]), RETRY_AFTER),
    st.tuples(st.just("release"), PERMIT, RETRY_AFTER),
    st.tuples(st.just("advance"), st.sampled_from([0.0, 0.25, 1.0, 2.0, 3.0, 10.0, 120.0])),
    st.tuples(st.just("advance"), st.sampled_from([0.5, 1.0, 4.0, 30.0])),
)


class Driven:
    """One limiter and the permits it handed out, driven call by call."""

    def __init__(self, limiter: RateLimiter, clock: FakeClock) -> None:
        self.limiter, self.clock = limiter, clock
        self.permits: list[nucleo.Permit] = []

    def permit(self, index: int | None) -> nucleo.Permit | None:
        if index is None or not self.permits:
            return None
        return self.permits[index % len(self.permits)]

    def step(self, call: tuple[Any, ...]) -> object:
        lim, kind = self.limiter, call[0]
        if kind == "acquire":
            _, requests, tokens = call
            start = self.clock.monotonic()
            units = {"requests": requests, "tokens": tokens} if len(lim.budgets) > 1 else requests
            try:
                permit = lim.acquire(units)
            except LimiterRefusalException as exc:
                return ("refused", exc.reason, round(exc.off_for, 6), exc.llm_message)
            self.permits.append(permit)
            return ("admitted", permit, round(self.clock.monotonic() - start, 6))
        if kind == "success":
            lim.record_success(self.permit(call[1]))
        elif kind == "failure":
            _, index, status, retry_after = call
            failure = nucleo.UpstreamFailure("Shop API", "down", status, retry_after)
            lim.record_failure(failure, self.permit(index))
        elif kind == "release":
            lim.release(self.permit(call[1]), retry_after=call[2])
        else:
            self.clock.advance(call[1])
        return None


def build(settings_: dict[str, Any], store: nucleo.RedisStore | None, clock: FakeClock) -> Any:
    return RateLimiter("agree", clock=clock, store=store, **settings_)


@pytest.fixture(scope="module")
def client(redis_server: RedisServer) -> Any:
    return redis_server.client()


@pytest.mark.slow
@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(settings_=SETTINGS, calls=st.lists(CALL, min_size=30, max_size=80))
def test_both_stores_give_the_same_answer_to_every_call(
    client: Any, settings_: dict[str, Any], calls: list[tuple[Any, ...]]
) -> None:
    here_clock, there_clock = FakeClock(1000.0), FakeClock(1000.0)
    here = Driven(build(settings_, None, here_clock), here_clock)
    store = nucleo.RedisStore(client, prefix=unique_prefix(), clock=there_clock)
    there = Driven(build(settings_, store, there_clock), there_clock)
    for number, call in enumerate(calls):
        expected, got = here.step(call), there.step(call)
        assert got == expected, f"call {number} {call!r}"
        assert there.limiter.stats() == here.limiter.stats(), f"after call {number} {call!r}"
