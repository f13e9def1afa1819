"""Under the plugin, limiters neither leak between tests nor wait for real (pytester)."""

from __future__ import annotations

import pytest

SHARED_LIMITER = """
import pytest
import pytest_nucleo as nucleo

# As the docs recommend ("Share a limiter"): one limiter per upstream, at module level, shared by its tools.
shop = nucleo.RateLimiter("shop", max_requests=20, window_seconds=60)


class Http503(nucleo.ExternalServiceException):
    status_code = 503

    def __init__(self):
        super().__init__("Shop", "Service Unavailable")


@nucleo.tool(limiters=[shop])
def get_order(number: str, *, fail: bool = False) -> dict:
    if fail:
        raise Http503()
    return {"number": number}
"""


def test_an_open_circuit_does_not_leak_into_the_next_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(limited_shop=SHARED_LIMITER)
    pytester.makepyfile(
        test_limiter_circuit="""
        import pytest
        import pytest_nucleo as nucleo
        from limited_shop import get_order, shop

        @pytest.mark.parametrize("attempt", range(14))
        def test_outage(attempt):
            result = nucleo.run_tool(get_order, {"number": "1", "fail": True}, retries=0)
            assert result.is_error

        def test_happy_path():
            result = nucleo.run_tool(get_order, {"number": "1"}, retries=0)
            assert not result.is_error, result.text
            assert shop.state == "closed" and shop.throttle_level == 0.0
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=15)


def test_no_test_waits_for_real_for_a_window_slot(pytester: pytest.Pytester) -> None:
    # The suite's own guard makes any real time.sleep fail, inside this inner run too.
    pytester.makepyfile(limited_shop=SHARED_LIMITER)
    pytester.makepyfile(
        test_limiter_window="""
        import pytest_nucleo as nucleo
        from limited_shop import get_order, shop

        def test_many_calls():
            results = [nucleo.run_tool(get_order, {"number": str(n)}) for n in range(22)]
            assert not any(r.is_error for r in results)
            assert shop.stats().successes == 22
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)


def test_a_limiter_the_test_builds_is_left_alone(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_limiter_of_its_own="""
        import pytest
        import pytest_nucleo as nucleo

        @pytest.fixture
        def limiter():
            lim = nucleo.RateLimiter("own", max_requests=1, window_seconds=60, failures_to_open=1,
                                     max_throttle=0)
            lim.record_failure(nucleo.UpstreamFailure("S", "down", 503), lim.acquire())
            return lim

        def test_its_state_is_what_the_fixture_made(limiter):
            assert limiter.state == "open"
        """
    )
    pytester.runpytest().assert_outcomes(passed=1)


@pytest.mark.nucleo(real_waits=True)
def test_real_waits_can_be_asked_for_and_the_switch_is_restored(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_limiter_switch="""
        import pytest
        import pytest_nucleo as nucleo

        def test_waits_are_skipped():
            assert nucleo.is_testing()

        @pytest.mark.nucleo(real_waits=True)
        def test_real_waits():
            assert not nucleo.is_testing()

        @pytest.mark.nucleo(real_waits="yes")
        def test_a_bad_option():
            pass
        """
    )
    import pytest_nucleo as nucleo

    assert not nucleo.is_testing()  # the outer test asked for real waits (see its mark)
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*nucleo(real_waits=...) takes True or False, got 'yes'*"])
    assert not nucleo.is_testing()


def test_reset_forgets_state_and_counts_but_keeps_settings() -> None:
    import pytest_nucleo as nucleo

    clock = nucleo.FakeClock()
    lim = nucleo.RateLimiter(
        "s", max_requests=2, window_seconds=10, failures_to_open=1, max_throttle=0, clock=clock
    )
    stale = lim.acquire()
    lim.record_failure(nucleo.UpstreamFailure("S", "down", 503), stale)
    assert lim.state == "open"
    lim.reset()
    assert lim.state == "closed"
    assert lim.stats().failures == 0
    assert lim.max_requests == 2
    lim.record_failure(nucleo.UpstreamFailure("S", "down", 503), stale)  # from before: ignored
    assert lim.state == "closed"
