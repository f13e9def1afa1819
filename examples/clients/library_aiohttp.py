"""The library's fetch and search tools, written on aiohttp (async)."""

from __future__ import annotations

from typing import Any

import aiohttp
from library import BASE_URL, HEADERS, SERVICE, book_of, books_of, check_isbn, check_query, parsed

import pytest_nucleo as nucleo

# total bounds the whole call, sending included; sock_connect and sock_read, when they run
# out first, say which phase it was.
TIMEOUT = aiohttp.ClientTimeout(total=60, sock_connect=10, sock_read=10)


def _session() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(headers=HEADERS, timeout=TIMEOUT)


@nucleo.tool
@nucleo.llm_errors(service=SERVICE)
async def fetch_book(isbn: str) -> dict[str, Any]:
    """One book by its ISBN-13."""
    check_isbn(isbn)
    async with _session() as session, session.get(f"{BASE_URL}/books/{isbn}") as response:
        body = await response.read()  # read first: the mapping reads the body it was given
        nucleo.raise_for_response(SERVICE, response)
    return book_of(parsed(body))


@nucleo.tool
@nucleo.llm_errors(service=SERVICE)
async def search_books(query: str) -> list[dict[str, Any]]:
    """The books whose title matches ``query``; an empty list when none does."""
    check_query(query)
    async with (
        _session() as session,
        session.get(f"{BASE_URL}/search", params={"q": query}) as response,
    ):
        body = await response.read()
        if response.status == 404:
            return []
        nucleo.raise_for_response(SERVICE, response)
    return books_of(parsed(body))
