"""Every rule of the contract is drawn within the first 100 examples, on every seed."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings

from pytest_nucleo import strategies as nst
from pytest_nucleo.testing import Scenario


@pytest.mark.parametrize("kind", ["fetch", "search"])
def test_each_rule_is_drawn_with_a_chance_of_at_least_999_in_1000(kind: str) -> None:
    chances = nst.rule_probabilities(kind)  # type: ignore[arg-type]
    first = "status-404" if kind == "fetch" else "empty-search"
    assert set(chances) == {
        first,
        "throttle-429-retry-after",
        "read-timeout",
        "connection-refused",
        "connect-timeout",
        "write-timeout",
        "pool-timeout",
        "server-disconnected",
        "connection-reset",
    }
    assert min(chances.values()) >= 0.999


def _rule_of(scenario: Scenario) -> str:
    if scenario.name.startswith("throttle-429 Retry-After"):
        return "throttle-429-retry-after"
    return scenario.name.split(" ")[0]


SEEDS = range(16)  # 2 x 16 runs of 100 examples: a few seconds


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["fetch", "search"])
def test_every_seed_draws_every_rule_in_100_examples(kind: str) -> None:
    strategy = nst.fetch_scenarios() if kind == "fetch" else nst.search_scenarios()
    rules = set(nst.rule_probabilities(kind))  # type: ignore[arg-type]
    missed: dict[int, set[str]] = {}
    for number in SEEDS:
        drawn: set[str] = set()

        @seed(number)
        @settings(
            max_examples=100,
            database=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
            deadline=None,
        )
        @given(strategy)
        def draw(scenario: Scenario) -> None:
            drawn.add(_rule_of(scenario))  # noqa: B023  # run at once, inside this iteration

        draw()
        if rules - drawn:
            missed[number] = rules - drawn
    assert missed == {}
