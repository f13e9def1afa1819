"""Hypothesis strategies: property tests over example tools, options, and st.from_type."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx
import pytest
import sample_tools
from hypothesis import find, given
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

import pytest_nucleo as nucleo
from pytest_nucleo import strategies as nst
from pytest_nucleo.testing import ContractViolation, Scenario

FETCH = "GET https://shop.example/orders/00000042"
SEARCH = "GET https://shop.example/orders"


@given(nst.fetch_scenarios())
def test_fetch_tool_keeps_the_contract(scenario: Scenario) -> None:
    scenario.verify(sample_tools.get_order, {"number": "00000042"}, endpoint=FETCH)


@given(nst.search_scenarios())
def test_search_tool_keeps_the_contract(scenario: Scenario) -> None:
    scenario.verify(sample_tools.search_orders, {"query": "shoes"}, endpoint=SEARCH)


@given(
    nst.search_scenarios(statuses=st.just(404)).filter(lambda s: s.name.startswith("status-404"))
)
def test_a_search_turning_404_into_an_error_is_caught(scenario: Scenario) -> None:
    with pytest.raises(ContractViolation, match="a search that found nothing returns an empty"):
        scenario.verify(sample_tools.search_404_is_error, {"query": "x"}, endpoint=SEARCH)


@given(nst.fetch_scenarios(transports=nst.transport_failures()))
def test_every_scenario_has_a_readable_repr(scenario: Scenario) -> None:
    text = repr(scenario)
    assert text.startswith(f"Scenario(fetch {scenario.name}: ")
    assert " -> " in text
    assert "object at 0x" not in text


@pytest.mark.parametrize("kind", ["status-5", "throttle-", "connection-refused", "empty-search"])
def test_a_failing_example_is_printed_as_its_readable_repr(
    pytester: pytest.Pytester, kind: str
) -> None:
    # Hypothesis prints a failing example with its own printer, not repr(): a scenario made
    # by st.builds or .map showed as the lambda call that built it.
    pytester.makepyfile(
        f"""
        from hypothesis import given, settings
        from pytest_nucleo import strategies as nst

        @settings(database=None)
        @given(nst.search_scenarios())
        def test_fails(scenario):
            assert not scenario.name.startswith({kind!r})
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    # Older hypothesis releases say "Falsifying example:", newer ones "Failing test case:".
    result.stdout.re_match_lines(
        [
            r".*(Falsifying example|Failing test case):",
            rf".*scenario=Scenario\(search {re.escape(kind)}.*: .* -> .*\),",
        ]
    )


@given(nst.retry_after_values())
def test_the_valid_flag_agrees_with_the_parser(value: nst.RetryAfterValue) -> None:
    assert (nucleo.parse_retry_after(value.header) is not None) is value.valid


def test_retry_after_dates_fall_before_and_after_now() -> None:
    # The parser reads a date against the current time: a date ahead asks for a wait, one
    # behind for none. (Dates around a fixed day all fell behind once it had gone by.) Read
    # against the time the test started, so that a replay reads a date as the first run did.
    started = datetime.now(UTC)

    def offset(header: str) -> float:
        return (parsedate_to_datetime(header) - started).total_seconds()

    def date_waiting(wait: bool) -> nst.RetryAfterValue:
        def read(value: nst.RetryAfterValue) -> bool:
            seconds = nucleo.parse_retry_after(value.header, now=started)
            return not value.header.isdigit() and seconds is not None and (seconds > 0) is wait

        return find(nst.retry_after_values(valid=True), read)

    ahead, behind = date_waiting(True).header, date_waiting(False).header
    # Hypothesis shrinks towards the nearest date; none is within five minutes of now, so a
    # test's verdict on a date cannot change while it runs. (Each find() reads the time when
    # it starts: a minute of slack for a slow machine.)
    assert 299 <= offset(ahead) <= 300 + 60
    assert nucleo.parse_retry_after(ahead) > 0  # type: ignore[operator]
    assert -300 - 1 <= offset(behind) <= -300 + 60
    assert nucleo.parse_retry_after(behind) == 0


@given(nst.retry_after_values(valid=True))
def test_retry_after_dates_keep_away_from_now(value: nst.RetryAfterValue) -> None:
    if not value.header.isdigit():
        # A minute of slack for the time the test itself takes.
        seconds = abs((parsedate_to_datetime(value.header) - datetime.now(UTC)).total_seconds())
        assert 240 <= seconds <= 86_400 + 60


@given(nst.error_bodies(kinds=["secret"]))
def test_secret_bodies_say_what_they_planted(body: nst.ErrorBody) -> None:
    assert body.planted
    assert all(secret.encode() in body.content for secret in body.planted)


@given(nst.error_bodies(kinds=("huge",)))
def test_huge_bodies_are_huge(body: nst.ErrorBody) -> None:
    assert len(body.content) >= nst.HUGE_BODY_SIZE


@given(nst.http_statuses(min_value=500, max_value=503))
def test_status_bounds_are_kept(status: int) -> None:
    assert 500 <= status <= 503


@pytest.mark.parametrize(
    ("strategy", "message"),
    [
        (nst.http_statuses(min_value=600), "min_value=600 must be an int from 100 to 599"),
        (nst.http_statuses(min_value=500, max_value=400), "must not exceed max_value=400"),
        (nst.retry_after_values(valid="yes"), "valid='yes' must be True, False or None"),  # type: ignore[arg-type]
        (nst.error_bodies(kinds=["xml"]), "unknown: xml"),
        (nst.error_bodies(kinds=[]), "must be a non-empty collection"),
        (nst.fetch_scenarios(statuses=[404]), "statuses=[404] must be a hypothesis strategy"),  # type: ignore[arg-type]
        (nst.scenarios(kinds=["list"]), "kinds=['list'] must be a non-empty collection"),
        (nst.scenarios(status=st.just(404)), "scenarios() got unknown option(s) status;"),
        (
            nst.fetch_scenarios(statuses=st.just(700), transports=st.nothing()).filter(
                lambda s: s.name.startswith("status")
            ),
            "statuses drew 700: it must draw HTTP statuses, ints from 100 to 599",
        ),
    ],
)
def test_bad_options_raise_invalid_argument_when_the_test_runs(
    strategy: st.SearchStrategy[object], message: str
) -> None:
    # Building the strategy above raised nothing; using it does.
    @given(strategy)
    def use(value: object) -> None:
        pass

    with pytest.raises(InvalidArgument, match=re.escape(message)):
        use()


@given(nst.scenarios(kinds=["search"]))
def test_scenarios_can_keep_one_kind(scenario: Scenario) -> None:
    assert scenario.kind == "search"


@given(st.from_type(nucleo.InvalidInputException), st.from_type(nucleo.LLMReadableException))
def test_from_type_builds_members_of_the_set(
    invalid: nucleo.InvalidInputException, any_failure: nucleo.LLMReadableException
) -> None:
    assert isinstance(invalid, nucleo.InvalidInputException)
    assert isinstance(any_failure, nucleo.LLMReadableException)
    assert any_failure.explain_to_llm().startswith(any_failure.llm_message)


def test_strategies_are_not_imported_by_the_runtime_or_the_plugin() -> None:
    import subprocess
    import sys

    code = (
        "import sys, pytest_nucleo, pytest_nucleo.plugin\n"
        "print('pytest_nucleo.strategies' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@given(
    nst.fetch_scenarios(
        statuses=st.sampled_from([400, 401, 403, 503]), bodies=nst.error_bodies(kinds=["text"])
    )
)
def test_a_body_that_says_throttle_is_expected_to_throttle(scenario: Scenario) -> None:
    # The expectation follows the client's throttle rule, so a throttle-worded body on a 400
    # (AWS "Throttling") is never expected to be the model's input mistake.
    if scenario.name.startswith("status-"):
        request = httpx.Request("GET", "https://x.example/")
        response = scenario.outcome(request)
        throttled = nucleo.body_says_throttled(response.content, status=response.status_code)
        assert (scenario.expect.cls is nucleo.UpstreamThrottleException) is throttled


def test_a_throttle_worded_400_is_expected_to_throttle() -> None:
    from pytest_nucleo.testing._contract._scenarios import status_expectation

    assert (
        status_expectation("fetch", 400, throttle_body=True).cls is nucleo.UpstreamThrottleException
    )
    assert status_expectation("fetch", 400).cls is nucleo.InvalidInputException
    assert (
        status_expectation("fetch", 404, throttle_body=True).cls is nucleo.ResourceNotFoundException
    )
