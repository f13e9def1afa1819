"""The library's fetch and search tools, written on requests."""

from __future__ import annotations

from typing import Any

import requests
from library import BASE_URL, HEADERS, SERVICE, book_of, books_of, check_isbn, check_query, parsed

import pytest_nucleo as nucleo

session = requests.Session()
session.headers.update(HEADERS)


@nucleo.tool
@nucleo.llm_errors(service=SERVICE)
def fetch_book(isbn: str) -> dict[str, Any]:
    """One book by its ISBN-13."""
    check_isbn(isbn)
    response = session.get(f"{BASE_URL}/books/{isbn}", timeout=10)
    nucleo.raise_for_response(SERVICE, response)
    return book_of(parsed(response.content))


@nucleo.tool
@nucleo.llm_errors(service=SERVICE)
def search_books(query: str) -> list[dict[str, Any]]:
    """The books whose title matches ``query``; an empty list when none does."""
    check_query(query)
    response = session.get(f"{BASE_URL}/search", params={"q": query}, timeout=10)
    if response.status_code == 404:
        return []
    nucleo.raise_for_response(SERVICE, response)
    return books_of(parsed(response.content))
