"""Defects a review of the merged change found: each test failed before its fix."""

from __future__ import annotations

import threading

import httpx
import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

import pytest_nucleo as nucleo
from pytest_nucleo.limits._limiter import live_limiters


@pytest.mark.nucleo(expect_leaks=True)
def test_a_streamed_error_response_raised_unread_is_a_failure_not_a_crash() -> None:
    clock = nucleo.FakeClock()
    limiter = nucleo.RateLimiter("shop", max_requests=100, window_seconds=1, clock=clock)
    streamed = httpx.Response(503, content=iter([b"down"]))
    client = httpx.Client(transport=httpx.MockTransport(lambda request: streamed))

    def fetch(q: str) -> None:
        with client.stream("GET", "https://api.example.com/x") as response:
            response.raise_for_status()  # its body was never read

    # The status maps, its unread body unseen (the stream is closed by the time it is mapped).
    result = nucleo.run_tool(fetch, {"q": "a"}, limiters=[limiter], clock=clock)
    assert result.is_error
    assert isinstance(result.exception, nucleo.Http503Exception)
    with pytest.raises(nucleo.Http503Exception), nucleo.llm_errors():
        fetch("a")
    limiter.record_success(limiter.acquire())  # the permit was given back: nothing is stuck


def test_limiters_built_in_another_thread_never_break_the_walk() -> None:
    stop = threading.Event()
    kept: list[nucleo.RateLimiter] = []
    failures: list[BaseException] = []

    def build() -> None:
        while not stop.is_set():
            kept.append(nucleo.RateLimiter("t", max_requests=1, window_seconds=1))
            if len(kept) > 500:
                kept.clear()

    builder = threading.Thread(target=build)
    builder.start()
    try:
        for _ in range(300):
            try:
                live_limiters()
            except RuntimeError as error:  # "Set changed size during iteration"
                failures.append(error)
    finally:
        stop.set()
        builder.join()
    assert failures == []


def test_reset_forgets_what_this_process_kept_of_a_shared_store() -> None:
    unreachable = redis.Redis(
        host="127.0.0.1", port=1, socket_timeout=0.2, socket_connect_timeout=0.2,
        retry=Retry(NoBackoff(), 0),
    )  # fmt: skip
    store = nucleo.RedisStore(unreachable, prefix="review", recheck_seconds=30)
    limiter = nucleo.RateLimiter("r", max_requests=5, window_seconds=60, store=store)
    limiter.record_success(limiter.acquire())
    assert limiter.stats().fallbacks > 0
    limiter.reset()
    assert limiter.stats().fallbacks == 0


class Stop(BaseException):
    """A BaseException of the caller's own code, not one the runner lets through."""


@pytest.mark.nucleo(expect_leaks=True)
def test_a_cost_function_raising_a_base_exception_fails_the_call() -> None:
    limiter = nucleo.RateLimiter("c", max_requests=5, window_seconds=60, clock=nucleo.FakeClock())

    def cost(q: str) -> int:
        raise Stop("boom")

    result = nucleo.run_tool(lambda q: "ok", {"q": "a"}, limiters=[limiter], cost=cost)
    assert result.is_error
    assert isinstance(result.exception, nucleo.SystemException)
