"""A literature search that makes two kinds of request, as PubMed's E-utilities want: an esearch
for the ids of the articles that match, then an esummary of each hit for its title and year.

A hit whose summary is gone (the record was withdrawn between the two requests) is left out
rather than failing the search: the model asked for articles about a term, and the ones still
there are the answer.
"""

from __future__ import annotations

import os
from typing import Any

import httpx

import pytest_nucleo as nucleo

API_KEY = os.environ.get("NCBI_API_KEY", "ncbi-demo-key-0123456789abcdef")


class PubMed(nucleo.ServiceClient):
    service_name = "PubMed"
    base_url = "https://eutils.ncbi.example/entrez/eutils"


pubmed = PubMed(httpx.Client(timeout=10.0))


@nucleo.tool
@nucleo.llm_errors
def search_articles(term: str, limit: int = 3) -> list[dict[str, Any]]:
    """The articles matching ``term``: id, title and year of each; an empty list when none does."""
    if not term.strip():
        raise nucleo.InvalidInputException("term", term, "must name a subject, such as 'aspirin'")
    search = {"db": "pubmed", "term": term, "retmax": limit, "retmode": "json", "api_key": API_KEY}
    found = pubmed.get_json("/esearch.fcgi", params=search, empty_on_404=True)
    articles = []
    for pmid in found["esearchresult"]["idlist"] if found else []:
        summary = pubmed.get_json(
            "/esummary.fcgi",
            params={"db": "pubmed", "id": pmid, "retmode": "json", "api_key": API_KEY},
            empty_on_404=True,
        )
        record = (summary or {}).get("result", {}).get(pmid)
        if record is None:
            continue  # withdrawn since the search: not an article to show
        articles.append({"pmid": pmid, "title": record["title"], "year": record["pubdate"][:4]})
    return articles
