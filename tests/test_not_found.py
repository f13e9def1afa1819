"""is_not_found: "404 means empty" for every client, hooked or not. It reads what each client
raises for a 404 through the mapping the runtime uses, so ``except Http404Exception``, which
never matches the exception of a client that is not hooked, is not needed."""

from __future__ import annotations

import asyncio
import json
import pickle
import urllib.error
import urllib.request
from collections.abc import Callable

import aiohttp
import httpx
import pytest
import requests

import pytest_nucleo as nucleo
from pytest_nucleo.testing import FakeUpstream, ToolContract, connect_error, respond, timeout

BOOKS = "https://books.example/api/search?q=dune"


def httpx_404() -> None:
    httpx.get(BOOKS).raise_for_status()


def requests_404() -> None:
    requests.get(BOOKS, timeout=5).raise_for_status()


def aiohttp_404() -> None:
    async def call() -> None:
        async with aiohttp.ClientSession() as session, session.get(BOOKS) as response:
            response.raise_for_status()

    asyncio.run(call())


def urllib_404() -> None:
    urllib.request.urlopen(BOOKS, timeout=5)


CLIENTS: dict[str, Callable[[], None]] = {
    "httpx": httpx_404,
    "requests": requests_404,
    "aiohttp": aiohttp_404,
    "urllib": urllib_404,
}


def raised(call: Callable[[], None]) -> BaseException:
    try:
        call()
    except Exception as error:
        return error
    raise AssertionError("the call did not raise")


@pytest.mark.parametrize("client", list(CLIENTS))
def test_each_client_s_404_is_not_found(fake_upstream: FakeUpstream, client: str) -> None:
    fake_upstream.get(BOOKS).respond(404, json={"error": "no book matches"})
    error = raised(CLIENTS[client])
    assert not isinstance(error, nucleo.LLMReadableException)  # the client's own exception
    assert nucleo.is_not_found(error)


@pytest.mark.parametrize("client", list(CLIENTS))
@pytest.mark.parametrize("status", [400, 401, 410, 429, 500, 503])
def test_another_status_is_not(fake_upstream: FakeUpstream, client: str, status: int) -> None:
    fake_upstream.get(BOOKS).respond(status, text="something else")
    assert not nucleo.is_not_found(raised(CLIENTS[client]))


@pytest.mark.parametrize("client", list(CLIENTS))
def test_a_transport_failure_is_not(fake_upstream: FakeUpstream, client: str) -> None:
    fake_upstream.get(BOOKS).sequence(timeout(), connect_error())
    assert not nucleo.is_not_found(raised(CLIENTS[client]))  # a read timeout
    assert not nucleo.is_not_found(raised(CLIENTS[client]))  # a refused connection


def test_a_failure_of_the_set_is_read_as_itself() -> None:
    mapped = nucleo.Http404Exception("Library", "/api/books/1", "no such book")
    assert nucleo.is_not_found(mapped)
    assert nucleo.is_not_found(pickle.loads(pickle.dumps(mapped)))
    assert nucleo.is_not_found(nucleo.ResourceNotFoundException("book", "978"))
    assert not nucleo.is_not_found(nucleo.Http503Exception("Library", "/api", "down"))
    assert not nucleo.is_not_found(nucleo.InvalidInputException("isbn", "x", "13 digits"))
    assert not nucleo.is_not_found(nucleo.RateLimitRetryException("slow down", retry_after=1))
    assert not nucleo.is_not_found(ValueError("a bug"))


def test_the_cause_chain_is_read_as_unwrap_reads_it(fake_upstream: FakeUpstream) -> None:
    fake_upstream.get(BOOKS).respond(404)

    class SdkError(Exception):
        """An SDK that wraps what its client raised."""

    def search() -> None:
        try:
            urllib_404()
        except urllib.error.HTTPError as error:
            raise SdkError("search failed") from error

    wrapped = raised(search)
    assert nucleo.is_not_found(wrapped)
    # wrap_with_context readdresses a 404 to the parameter the model sent: the model reads a
    # value to fix, not an empty result, and so does is_not_found.
    readdressed = nucleo.wrap_with_context(wrapped, "Library", "query", "dune", "search")
    assert isinstance(readdressed, nucleo.InvalidInputException)
    assert not nucleo.is_not_found(readdressed)
    # A failure of the set wrapping a 404 decides by its own meaning, as the model reads it.
    outage = nucleo.ExternalServiceException("Library", "the index is rebuilding")
    outage.__cause__ = nucleo.Http404Exception("Library", "/api/search", "")
    assert not nucleo.is_not_found(outage)


def test_anything_but_an_exception_is_a_clear_type_error() -> None:
    with pytest.raises(TypeError) as caught:
        nucleo.is_not_found(404)  # type: ignore[arg-type]
    assert str(caught.value) == (
        "is_not_found() takes the exception a call raised (in an except block: "
        "is_not_found(error)); got a value of type int"
    )


# The recipe, on urllib, which no hook reaches: 404 means "no results" for this service.


@nucleo.llm_errors(service="Library")
def search_books(query: str) -> list[str]:
    """Titles matching ``query``; an empty list when none does."""
    url = f"https://books.example/api/search?q={query}"
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            body = response.read()
    except urllib.error.HTTPError as error:
        if nucleo.is_not_found(error):
            return []
        raise
    try:
        return [book["title"] for book in json.loads(body)["books"]]
    except ValueError:
        raise nucleo.ExternalServiceException(
            "Library", "the answer was not the JSON expected"
        ) from None


class TestSearchBooksOnUrllib(ToolContract):
    tool = search_books
    kind = "search"
    service_name = "Library"
    endpoint = BOOKS
    valid_call = {"query": "dune"}
    valid_response = respond(200, json={"books": [{"title": "Dune"}]})
    empty_response = respond(404, json={"error": "no book matches"})
