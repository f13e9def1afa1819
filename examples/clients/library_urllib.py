"""The library's fetch and search tools, written on the standard library's urllib.request.

urllib raises ``HTTPError`` for a status outside 2xx, ``URLError`` for a call it could not
send, and the socket's ``TimeoutError`` for an answer that did not come: ``llm_errors`` reads
them all, so the tools need no mapping of their own.
"""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from library import BASE_URL, HEADERS, SERVICE, book_of, books_of, check_isbn, check_query, parsed

import pytest_nucleo as nucleo


def _get(url: str) -> bytes:
    request = urllib.request.Request(url, headers=HEADERS)
    with urllib.request.urlopen(request, timeout=10) as response:
        body: bytes = response.read()
    return body


@nucleo.tool
@nucleo.llm_errors(service=SERVICE)
def fetch_book(isbn: str) -> dict[str, Any]:
    """One book by its ISBN-13."""
    check_isbn(isbn)
    return book_of(parsed(_get(f"{BASE_URL}/books/{isbn}")))


@nucleo.tool
@nucleo.llm_errors(service=SERVICE)
def search_books(query: str) -> list[dict[str, Any]]:
    """The books whose title matches ``query``; an empty list when none does."""
    check_query(query)
    try:
        body = _get(f"{BASE_URL}/search?{urllib.parse.urlencode({'q': query})}")
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return []
        raise
    return books_of(parsed(body))
