"""The library's tools on the standard library's urllib keep the whole failure contract."""

from __future__ import annotations

from library import API_KEY, BASE_URL
from library_urllib import fetch_book, search_books

from pytest_nucleo.testing import ToolContract, respond

BOOK = {"isbn": "9780306406157", "title": "Dune", "year": 1965}


class TestUrllibFetchBook(ToolContract):
    tool = fetch_book
    kind = "fetch"
    service_name = "Library"
    endpoint = f"GET {BASE_URL}/books/9780306406157"
    valid_call = {"isbn": "9780306406157"}
    valid_response = respond(200, json=BOOK)
    secrets = (API_KEY,)


class TestUrllibSearchBooks(ToolContract):
    tool = search_books
    kind = "search"
    service_name = "Library"
    endpoint = f"GET {BASE_URL}/search?q=dune"
    valid_call = {"query": "dune"}
    valid_response = respond(200, json={"books": [BOOK]})
    empty_response = respond(404, json={"error": "no book matches"})
    secrets = (API_KEY,)
