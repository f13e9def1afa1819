"""The library's tools on httpx2 keep the whole failure contract, like the httpx examples."""

from __future__ import annotations

import pytest

pytest.importorskip("httpx2")  # the `httpx2` extra; a plain `pip install .` skips this module

from library import API_KEY, BASE_URL
from library_httpx2 import fetch_book, search_books

from pytest_nucleo.testing import ToolContract, respond

BOOK = {"isbn": "9780306406157", "title": "Dune", "year": 1965}


class TestHttpx2FetchBook(ToolContract):
    tool = fetch_book
    kind = "fetch"
    service_name = "Library"
    endpoint = f"GET {BASE_URL}/books/9780306406157"
    valid_call = {"isbn": "9780306406157"}
    valid_response = respond(200, json=BOOK)
    secrets = (API_KEY,)


class TestHttpx2SearchBooks(ToolContract):
    tool = search_books
    kind = "search"
    service_name = "Library"
    endpoint = f"GET {BASE_URL}/search?q=dune"
    valid_call = {"query": "dune"}
    valid_response = respond(200, json={"books": [BOOK]})
    empty_response = respond(404, json={"error": "no book matches"})
    secrets = (API_KEY,)
