"""The library's fetch and search tools, written on httpx2 (the client of the agent SDKs)."""

from __future__ import annotations

from typing import Any

import httpx2
from library import BASE_URL, HEADERS, SERVICE, book_of, books_of, check_isbn, check_query, parsed

import pytest_nucleo as nucleo

client = httpx2.Client(base_url=BASE_URL, headers=HEADERS, timeout=10.0)


@nucleo.tool
@nucleo.llm_errors(service=SERVICE)
def fetch_book(isbn: str) -> dict[str, Any]:
    """One book by its ISBN-13."""
    check_isbn(isbn)
    response = client.get(f"/books/{isbn}")
    nucleo.raise_for_response(SERVICE, response)
    return book_of(parsed(response.content))


@nucleo.tool
@nucleo.llm_errors(service=SERVICE)
def search_books(query: str) -> list[dict[str, Any]]:
    """The books whose title matches ``query``; an empty list when none does."""
    check_query(query)
    response = client.get("/search", params={"q": query})
    if response.status_code == 404:
        return []
    nucleo.raise_for_response(SERVICE, response)
    return books_of(parsed(response.content))
