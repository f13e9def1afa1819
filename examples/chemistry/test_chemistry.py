"""The chemistry tools: search versus fetch, a service quirk, one limiter for both tools."""

from __future__ import annotations

from typing import TYPE_CHECKING

import chemistry
from chemistry import fetch_compound, search_compounds
from hypothesis import given
from hypothesis import strategies as st

import pytest_nucleo as nucleo
from pytest_nucleo import strategies as nst
from pytest_nucleo.testing import FakeUpstream, Scenario, ToolContract, fails_with, respond

if TYPE_CHECKING:
    from syrupy.assertion import SnapshotAssertion

BASE = "https://pubchem.example/rest/pug"
SEARCH = f"{BASE}/compound/name/aspirin/cids/JSON"
FETCH = f"{BASE}/compound/cid/2244/property/MolecularFormula,MolecularWeight/JSON"
ASPIRIN = {
    "PropertyTable": {
        "Properties": [{"CID": 2244, "MolecularFormula": "C9H8O4", "MolecularWeight": "180.16"}]
    }
}


def test_a_search_that_finds_nothing_is_an_empty_result(fake_upstream: FakeUpstream) -> None:
    fake_upstream.get(f"{BASE}/compound/name/unobtainium/cids/JSON").respond(
        404, json={"Fault": {"Code": "PUGREST.NotFound"}}
    )
    assert search_compounds("unobtainium") == []


def test_a_fetch_of_an_unknown_id_is_the_models_to_fix(
    fake_upstream: FakeUpstream, llm_snapshot: SnapshotAssertion
) -> None:
    fake_upstream.get(
        f"{BASE}/compound/cid/999999999/property/MolecularFormula,MolecularWeight/JSON"
    ).respond(404, json={"Fault": {"Code": "PUGREST.NotFound", "Message": "No CID found"}})
    with fails_with(nucleo.InvalidInputException, correctable=True) as failure:
        fetch_compound(999999999)
    assert failure.exception.parameter_name == "cid"
    assert isinstance(failure.exception.__cause__, nucleo.Http404Exception)
    assert failure.explanation == llm_snapshot


def test_server_busy_is_mapped_to_a_throttle(
    fake_upstream: FakeUpstream, llm_snapshot: SnapshotAssertion
) -> None:
    fake_upstream.get(SEARCH).respond(
        503,
        # No throttle words: only classify can tell this 503 is a throttle.
        json={"Fault": {"Code": "PUGREST.ServerBusy", "Message": "Server is busy"}},
        headers={"Retry-After": "10"},
    )
    # HttpThrottledStatusException: the UpstreamThrottleException that carries the status.
    with fails_with(nucleo.HttpThrottledStatusException) as failure:
        search_compounds("aspirin")
    assert failure.exception.status_code == 503
    assert failure.exception.retry_after == 10
    assert failure.explanation == llm_snapshot


def test_both_tools_carry_the_modules_one_limiter() -> None:
    search, fetch = nucleo.ToolInfo.of(search_compounds), nucleo.ToolInfo.of(fetch_compound)
    assert search is not None, "search_compounds is not a @tool"
    assert fetch is not None, "fetch_compound is not a @tool"
    assert search.limiters == fetch.limiters == (chemistry.limiter,)


def test_one_limiter_switches_both_tools_off(
    fake_upstream: FakeUpstream, llm_snapshot: SnapshotAssertion
) -> None:
    # The same wiring as the module's, on a fake clock and with a shorter fuse.
    clock = nucleo.FakeClock()
    shared = nucleo.RateLimiter(
        "pubchem",
        max_requests=5,
        window_seconds=1.0,
        clock=clock,
        max_throttle=1.0,
        failures_to_open=2,
    )
    fake_upstream.get(SEARCH).respond(500, text="backend down")
    for _ in range(3):
        result = nucleo.run_tool(
            search_compounds, {"name": "aspirin"}, limiters=[shared], clock=clock
        )
        assert result.is_error
    refused = nucleo.run_tool(fetch_compound, {"cid": 2244}, limiters=[shared], clock=clock)
    assert isinstance(refused.exception, nucleo.LimiterRefusalException)
    assert refused.text == llm_snapshot


@given(nst.search_scenarios(empty_responses=st.just(respond(404))))
def test_search_keeps_the_contract(scenario: Scenario) -> None:
    scenario.verify(search_compounds, {"name": "aspirin"}, endpoint=f"GET {SEARCH}")


@given(nst.fetch_scenarios())
def test_fetch_keeps_the_contract(scenario: Scenario) -> None:
    scenario.verify(fetch_compound, {"cid": 2244}, endpoint=f"GET {FETCH}")


class TestSearchCompounds(ToolContract):
    tool = search_compounds
    kind = "search"
    service_name = "PubChem"
    endpoint = f"GET {SEARCH}"
    valid_call = {"name": "aspirin"}
    valid_response = respond(200, json={"IdentifierList": {"CID": [2244]}})
    empty_response = respond(404, json={"Fault": {"Code": "PUGREST.NotFound"}})


class TestFetchCompound(ToolContract):
    tool = fetch_compound
    kind = "fetch"
    service_name = "PubChem"
    endpoint = f"GET {FETCH}"
    valid_call = {"cid": 2244}
    valid_response = respond(200, json=ASPIRIN)
