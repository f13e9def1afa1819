"""ToolContract routes the other requests a tool makes (``extra_routes``, ``arrange_more``): a
search that fetches each hit passes its whole matrix, each scenario's failure applying to the
contract's endpoint alone."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from test_contract import SEARCH_SCENARIOS

from pytest_nucleo.testing import (
    FakeUpstream,
    ToolContract,
    contract_matrix,
    respond,
)

API = "https://papers.example/api"

TWO_REQUESTS = '''
import httpx

import pytest_nucleo as nucleo

API = "https://papers.example/api"


class Papers(nucleo.ServiceClient):
    service_name = "Papers"
    base_url = API


papers = Papers(httpx.Client())


@nucleo.llm_errors
def search_papers(term: str) -> list:
    """The ids matching ``term``, then each one's title."""
    found = papers.get_json("/search", params={"q": term}, empty_on_404=True) or {"ids": []}
    return [papers.get_json(f"/papers/{pid}")["title"] for pid in found["ids"]]
'''

CONTRACT = """
from pytest_nucleo.testing import ToolContract, respond

from papers_tool import API, search_papers


class TestSearchPapers(ToolContract):
    tool = search_papers
    kind = "search"
    service_name = "Papers"
    endpoint = f"GET {API}/search"
    valid_call = {"term": "tides"}
    valid_response = respond(200, json={"ids": ["p1"]})
    empty_response = respond(200, json={"ids": []})
"""


def test_a_search_that_fetches_each_hit_finds_nothing_without_its_extra_routes(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(papers_tool=TWO_REQUESTS, test_papers=CONTRACT)
    result = pytester.runpytest("--snapshot-update", "-p", "no:randomly")
    result.stdout.fnmatch_lines(
        [
            "*TestSearchPapers.search_papers broke the failure contract in scenario "
            "Scenario(search valid-call*",
            "no fake route for GET https://papers.example/api/papers/p1: the tool requested "
            "something other than the contract's endpoint GET https://papers.example/api/search; "
            "set endpoint to the method and URL the valid call requests, and route the other "
            "requests it makes in extra_routes",
        ]
    )


def test_with_its_extra_routes_it_passes_the_whole_matrix(pytester: pytest.Pytester) -> None:
    extra = '    extra_routes = {f"GET {API}/papers/p1": respond(200, json={"title": "Tides"})}\n'
    pytester.makepyfile(papers_tool=TWO_REQUESTS, test_papers=CONTRACT + extra)
    first = pytester.runpytest("--snapshot-update", "-p", "no:randomly")
    first.assert_outcomes(passed=SEARCH_SCENARIOS)
    again = pytester.runpytest("-p", "no:randomly", "-v")
    again.assert_outcomes(passed=SEARCH_SCENARIOS)
    again.stdout.fnmatch_lines(
        [f"*1 tool(s), {SEARCH_SCENARIOS} scenario(s): {SEARCH_SCENARIOS} ok, 0 broken*"]
    )
    snapshots = (pytester.path / "__snapshots__" / "test_papers.txt").read_text()
    # Each failure is the search's: the extra route answered the same in every scenario.
    assert "/api/search (HTTP 503 Service Unavailable)" in snapshots
    assert "/api/papers/" not in snapshots


# -- in this process: the tool, its contracts, and what a scenario's fake holds ------------


class Papers:
    """A search, then a fetch of each hit, on httpx."""

    def __init__(self) -> None:
        self.client = httpx.Client()

    def __call__(self, term: str) -> list[str]:
        import pytest_nucleo as nucleo

        with nucleo.llm_errors(component="search_papers"):
            found = self.client.get(f"{API}/search", params={"q": term})
            nucleo.raise_for_response("Papers", found)
            titles = []
            for pid in found.json()["ids"]:
                paper = self.client.get(f"{API}/papers/{pid}")
                nucleo.raise_for_response("Papers", paper)
                titles.append(paper.json()["title"])
            return titles


search_papers = Papers()
HITS = respond(200, json={"ids": ["p1", "p2"]})


def test_arrange_more_routes_what_a_table_cannot_say() -> None:
    class Contract(ToolContract):
        __test__ = False
        tool = search_papers
        kind = "fetch"
        service_name = "Papers"
        endpoint = f"GET {API}/search"
        valid_call = {"term": "tides"}
        valid_response = HITS

        def arrange_more(self, fake_upstream: FakeUpstream) -> None:
            for pid in ("p1", "p2"):  # one answer per hit
                fake_upstream.get(f"{API}/papers/{pid}").respond(200, json={"title": pid.upper()})

    contract = Contract()
    arrange = contract._arrangement()
    assert arrange is not None
    for scenario in contract_matrix("fetch", valid_response=HITS):
        seen = scenario.observe(
            search_papers,
            contract.valid_call,
            endpoint=contract.endpoint,
            service_name="Papers",
            arrange=arrange,
        )
        assert seen.violation is None, (scenario.name, seen.violation)


def test_verify_takes_an_arrangement_for_property_tests() -> None:
    def arrange(upstream: FakeUpstream) -> None:
        upstream.get(f"{API}/papers/p1").respond(200, json={"title": "Tides"})
        upstream.get(f"{API}/papers/p2").respond(200, json={"title": "Waves"})

    [valid] = [s for s in contract_matrix("fetch", valid_response=HITS) if s.name == "valid-call"]
    seen = valid.verify(
        search_papers, {"term": "tides"}, endpoint=f"GET {API}/search", arrange=arrange
    )
    assert seen.violation is None


def test_an_arranged_fake_is_the_scenario_s_alone() -> None:
    # Scenario fakes of one endpoint are shared; one with extra routes is not, so a contract
    # of the same endpoint without them does not inherit them.
    [valid] = [s for s in contract_matrix("fetch", valid_response=HITS) if s.name == "valid-call"]

    def arrange(upstream: FakeUpstream) -> None:
        for pid in ("p1", "p2"):
            upstream.get(f"{API}/papers/{pid}").respond(200, json={"title": pid})

    endpoint = f"GET {API}/search"
    assert valid.observe(search_papers, {"term": "t"}, endpoint=endpoint).violation is not None
    assert (
        valid.observe(search_papers, {"term": "t"}, endpoint=endpoint, arrange=arrange).violation
        is None
    )
    bare = valid.observe(search_papers, {"term": "t"}, endpoint=endpoint)
    assert bare.violation is not None
    assert bare.violation.startswith(f"no fake route for GET {API}/papers/p1")


@pytest.mark.parametrize(
    ("routes", "message"),
    [
        (
            [("GET https://papers.example/api/papers/p1", None)],
            "TestBad.extra_routes must map each other request the tool makes to what the "
            'upstream answers it, such as extra_routes = {"GET https://api.example/items/1": '
            "respond(200, json={\"id\": 1})}; got [('GET https://papers.example/api/papers/p1', "
            "None)]",
        ),
        (
            {1: respond(200)},
            "TestBad.extra_routes has the key 1: give the method and absolute URL of a request, "
            "such as extra_routes = {*}",
        ),
        (
            {"FETCH /papers/p1": respond(200)},
            "TestBad.extra_routes has the key 'FETCH /papers/p1': give the method and absolute "
            "URL of a request, such as *",
        ),
        (
            {"get https://papers.example/api/search": respond(200)},
            "TestBad.extra_routes routes 'get https://papers.example/api/search', the "
            "contract's endpoint, whose answer is each scenario's: list only the other requests "
            "the tool makes",
        ),
        (
            {"GET https://papers.example/api/papers/p1": {"title": "Tides"}},
            "TestBad.extra_routes['GET https://papers.example/api/papers/p1'] must be an outcome "
            "such as respond(200, json=...) (from pytest_nucleo.testing); got {'title': 'Tides'}",
        ),
    ],
    ids=[
        "not-a-mapping",
        "a-key-not-a-request",
        "a-key-not-a-method-and-url",
        "the-endpoint-itself",
        "not-an-outcome",
    ],
)
def test_bad_extra_routes_fail_when_the_class_is_made(routes: Any, message: str) -> None:
    import fnmatch

    with pytest.raises(TypeError) as caught:

        class TestBad(ToolContract):
            tool = search_papers
            kind = "search"
            service_name = "Papers"
            endpoint = f"GET {API}/search"
            valid_call = {"term": "tides"}
            extra_routes = routes

    assert fnmatch.fnmatchcase(str(caught.value), message.replace("[", "[[]")), str(caught.value)
