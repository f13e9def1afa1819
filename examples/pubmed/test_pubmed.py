"""The two-request search keeps the whole failure contract, on each of its requests."""

from __future__ import annotations

from typing import Any

from pubmed import API_KEY, search_articles

from pytest_nucleo.testing import FakeUpstream, ToolContract, respond

EUTILS = "https://eutils.ncbi.example/entrez/eutils"
TITLES = {"38000001": "Aspirin and the heart", "38000002": "Aspirin in 1899"}


def hits(*pmids: str) -> dict[str, Any]:
    return {"esearchresult": {"count": str(len(pmids)), "idlist": list(pmids)}}


def summary(pmid: str) -> dict[str, Any]:
    return {"result": {"uids": [pmid], pmid: {"title": TITLES[pmid], "pubdate": "2024 Mar"}}}


class TestSearchArticles(ToolContract):
    """The search's failures; each hit's summary is answered in every scenario."""

    tool = search_articles
    kind = "search"
    service_name = "PubMed"
    endpoint = f"GET {EUTILS}/esearch.fcgi"
    valid_call = {"term": "aspirin"}
    valid_response = respond(200, json=hits(*TITLES))
    empty_response = respond(200, json=hits())
    secrets = (API_KEY,)

    def arrange_more(self, fake_upstream: FakeUpstream) -> None:
        for pmid in TITLES:  # one answer per hit, told apart by the query
            query = f"db=pubmed&id={pmid}&retmode=json&api_key={API_KEY}"
            fake_upstream.get(f"{EUTILS}/esummary.fcgi?{query}").respond(200, json=summary(pmid))


class TestSearchArticlesSummaries(ToolContract):
    """The summaries' failures: the same search, its esearch answered in every scenario."""

    tool = search_articles
    kind = "search"
    service_name = "PubMed"
    endpoint = f"GET {EUTILS}/esummary.fcgi"
    valid_call = {"term": "aspirin"}
    valid_response = respond(200, json=summary("38000001"))
    empty_response = respond(200, json={"result": {"uids": []}})  # withdrawn since the search
    extra_routes = {f"GET {EUTILS}/esearch.fcgi": respond(200, json=hits("38000001"))}
    secrets = (API_KEY,)


def test_each_hit_is_summarised(fake_upstream: FakeUpstream) -> None:
    fake_upstream.get(f"{EUTILS}/esearch.fcgi").respond(200, json=hits(*TITLES))
    TestSearchArticles().arrange_more(fake_upstream)
    found = search_articles("aspirin")
    assert [(article["pmid"], article["title"]) for article in found] == list(TITLES.items())
    assert {article["year"] for article in found} == {"2024"}
