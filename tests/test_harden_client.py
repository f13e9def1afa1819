"""harden_client: a session or client an SDK builds raises the mapped failure for each failing
response, before the SDK turns it into an exception of its own."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import httpx2
import pytest
import requests
from harden_client_sdk import SearchClient, UsageLimitExceededError

import pytest_nucleo as n
from pytest_nucleo.testing import FakeUpstream, ToolContract, fails_with, respond

API_KEY = "sk-search-4711-abcd"
SEARCH = "https://api.search.example/search"
RESULTS = respond(200, json={"results": [{"title": "Lima", "url": "https://lima.example"}]})

# The tool, as its author hardens it: one line for the SDK's session, and what a 404 means.
client = SearchClient(api_key=API_KEY)
n.harden_client("Search", client.session, known=(API_KEY,))


@n.llm_errors(service="Search")
def web_search(query: str) -> list[dict[str, Any]]:
    """Search the web for ``query``."""
    try:
        return client.search(query)
    except n.Http404Exception:
        return []  # this service answers 404 when nothing matched


class TestHardenedSearch(ToolContract):
    tool = web_search
    kind = "search"
    endpoint = f"POST {SEARCH}"
    valid_call = {"query": "capital of Peru"}
    valid_response = RESULTS
    empty_response = respond(200, json={"results": []})
    service_name = "Search"
    secrets = (API_KEY,)


def test_unhardened_the_sdk_loses_the_wait_and_the_words(fake_upstream: FakeUpstream) -> None:
    fake_upstream.post(SEARCH).throttle(retry_after=30)
    with pytest.raises(UsageLimitExceededError) as caught:
        SearchClient(api_key=API_KEY).search("capital of Peru")
    assert str(caught.value) == ""


def test_hardened_a_throttle_keeps_its_wait(fake_upstream: FakeUpstream) -> None:
    fake_upstream.post(SEARCH).throttle(retry_after=30)
    with fails_with(n.Http429Exception, correctable=False) as failure:
        web_search("capital of Peru")
    assert failure.exception.retry_after == 30
    assert "This tool will not work for about 30 seconds" in failure.explanation


def test_what_the_server_said_reaches_the_model(fake_upstream: FakeUpstream) -> None:
    fake_upstream.post(SEARCH).respond(
        400, json={"detail": {"error": "query is too long: at most 400 characters"}}
    )
    with fails_with(n.Http400Exception) as failure:
        web_search("capital of Peru")
    assert "query is too long: at most 400 characters" in failure.explanation


@pytest.mark.parametrize("library", [httpx, httpx2], ids=["httpx", "httpx2"])
def test_httpx_clients_sync_and_async(fake_upstream: FakeUpstream, library: Any) -> None:
    fake_upstream.get("https://api.search.example/status").sequence(
        respond(503, text="down for maintenance", headers={"Retry-After": "120"}),
        respond(503, text="down for maintenance", headers={"Retry-After": "120"}),
        respond(200, json={"ok": True}),
    )
    sync = n.harden_client("Search", library.Client())
    assert isinstance(sync, library.Client)
    with fails_with(n.Http503Exception) as failure:
        sync.get("https://api.search.example/status")
    assert failure.exception.retry_after == 120
    assert "down for maintenance" in failure.explanation

    async def call() -> Any:
        async with n.harden_client("Search", library.AsyncClient()) as aclient:
            return await aclient.get("https://api.search.example/status")

    with fails_with(n.Http503Exception):
        asyncio.run(call())
    assert sync.get("https://api.search.example/status").json() == {"ok": True}


def test_redirects_and_successes_pass_through(fake_upstream: FakeUpstream) -> None:
    fake_upstream.get("https://api.search.example/old").respond(
        301, headers={"Location": "https://api.search.example/new"}
    )
    fake_upstream.get("https://api.search.example/new").respond(200, json={"ok": True})
    session = n.harden_client("Search", requests.Session())
    assert session.get("https://api.search.example/old").json() == {"ok": True}
    with n.harden_client("Search", httpx.Client(follow_redirects=True)) as hx:
        assert hx.get("https://api.search.example/old").json() == {"ok": True}


def test_hooking_twice_for_one_service_hooks_once() -> None:
    session = requests.Session()
    session.hooks["response"].append(print)  # the SDK's own hook stays
    for _ in range(2):
        n.harden_client("Search", session)
    n.harden_client("Maps", session)
    assert len(session.hooks["response"]) == 3
    hx = httpx.Client()
    n.harden_client("Search", hx)
    n.harden_client("Search", hx)
    assert len(hx.event_hooks["response"]) == 1


def test_anything_else_is_a_clear_type_error() -> None:
    with pytest.raises(TypeError) as caught:
        n.harden_client("Search", SearchClient(api_key=API_KEY))
    assert str(caught.value) == (
        "harden_client() takes a requests.Session, an httpx.Client or httpx.AsyncClient, or an "
        "httpx2 one; got a value of type SearchClient. For a response in hand, call "
        "raise_for_response(service, response)"
    )
    with pytest.raises(TypeError, match="needs the service's name"):
        n.harden_client("", requests.Session())


def test_an_sdk_that_rewraps_everything_keeps_the_failure_as_the_cause(
    fake_upstream: FakeUpstream,
) -> None:
    class GreedySearchClient(SearchClient):
        def search(self, query: str, max_results: int = 5) -> list[dict[str, Any]]:
            try:
                return super().search(query, max_results)
            except Exception as exc:  # as some SDKs do: every failure becomes their own
                raise UsageLimitExceededError("") from exc

    greedy = GreedySearchClient(api_key=API_KEY)
    n.harden_client("Search", greedy.session)

    @n.llm_errors(service="Search")
    def search(query: str) -> list[dict[str, Any]]:
        return greedy.search(query)

    fake_upstream.post(SEARCH).throttle(retry_after=30)
    with fails_with(n.Http429Exception) as failure:
        search("capital of Peru")
    assert failure.exception.retry_after == 30


# -- leave: chosen failing responses go to the code that sent the request ------------------

SITE = "https://site.example"


def _hardened_get(library: Any, run_async: bool, **options: Any) -> Any:
    """The GET of a hardened client of ``library`` (requests, httpx, httpx2), sync or, for the
    httpx ones, async, as a function of the URL."""
    if library is requests:
        return n.harden_client("Site", requests.Session(), **options).get
    if run_async:

        def get(url: str) -> Any:
            async def call() -> Any:
                async with n.harden_client("Site", library.AsyncClient(), **options) as aclient:
                    return await aclient.get(url)

            return asyncio.run(call())

        return get
    return n.harden_client("Site", library.Client(), **options).get


CLIENTS = [
    pytest.param(requests, False, id="requests"),
    pytest.param(httpx, False, id="httpx"),
    pytest.param(httpx, True, id="httpx-async"),
    pytest.param(httpx2, False, id="httpx2"),
    pytest.param(httpx2, True, id="httpx2-async"),
]


@pytest.mark.parametrize(("library", "run_async"), CLIENTS)
def test_leave_statuses_hands_them_to_the_caller(
    fake_upstream: FakeUpstream, library: Any, run_async: bool
) -> None:
    fake_upstream.get(f"{SITE}/search").respond(404, json={"results": []})
    fake_upstream.get(f"{SITE}/status").respond(503, text="down for maintenance")
    get = _hardened_get(library, run_async, leave={404})
    response = get(f"{SITE}/search")
    assert response.status_code == 404
    assert response.json() == {"results": []}  # the body is there for the SDK to read
    with fails_with(n.Http503Exception):
        get(f"{SITE}/status")


@pytest.mark.parametrize(("library", "run_async"), CLIENTS)
def test_leave_a_predicate_on_the_client_s_own_response(
    fake_upstream: FakeUpstream, library: Any, run_async: bool
) -> None:
    # The fetch server's robots.txt probe: there a 404 means "no robots.txt: allowed".
    fake_upstream.get(f"{SITE}/robots.txt").respond(404)
    fake_upstream.get(f"{SITE}/page").respond(404, text="no such page")
    seen: list[Any] = []

    def robots_probe(response: Any) -> bool:
        seen.append(response)
        return str(response.url).endswith("/robots.txt")

    get = _hardened_get(library, run_async, leave=robots_probe)
    assert get(f"{SITE}/robots.txt").status_code == 404
    with fails_with(n.Http404Exception) as failure:
        get(f"{SITE}/page")
    assert "no such page" in failure.explanation
    response_class = requests.Response if library is requests else library.Response
    assert [type(response) for response in seen] == [response_class, response_class]


def test_leave_checks_only_failing_responses_and_its_errors_reach_the_caller(
    fake_upstream: FakeUpstream,
) -> None:
    fake_upstream.get(f"{SITE}/ok").respond(200, json={"ok": True})
    fake_upstream.get(f"{SITE}/gone").respond(410)
    called: list[int] = []

    def leave(response: Any) -> bool:
        called.append(response.status_code)
        raise LookupError("the predicate's own bug")

    session = n.harden_client("Site", requests.Session(), leave=leave)
    assert session.get(f"{SITE}/ok").json() == {"ok": True}
    with pytest.raises(LookupError, match="the predicate's own bug"):
        session.get(f"{SITE}/gone")
    assert called == [410]


def test_hardening_again_replaces_what_is_left(fake_upstream: FakeUpstream) -> None:
    fake_upstream.get(f"{SITE}/search").respond(404, json={"results": []})
    session = requests.Session()
    n.harden_client("Site", session, leave={404})
    n.harden_client("Site", session)
    assert len(session.hooks["response"]) == 1
    with fails_with(n.Http404Exception):  # the second hook leaves nothing
        session.get(f"{SITE}/search")


def test_an_async_callable_object_is_refused_when_it_answers(
    fake_upstream: FakeUpstream,
) -> None:
    # An object whose __call__ is async is no coroutine function: it is caught by what it
    # returns, before its unawaited coroutine could read as "leave every failure".
    class RobotsProbe:
        async def __call__(self, response: Any) -> bool:
            return False

    fake_upstream.get(f"{SITE}/robots.txt").respond(404)
    session = n.harden_client("Site", requests.Session(), leave=RobotsProbe())
    with pytest.raises(TypeError, match="returned an awaitable; pass a plain function"):
        session.get(f"{SITE}/robots.txt")


@pytest.mark.parametrize(
    ("leave", "error", "message"),
    [
        (
            404,
            TypeError,
            "harden_client(leave=...) takes statuses, such as leave={404}, or a predicate called "
            "with each failing response, such as leave=lambda response: "
            'str(response.url).endswith("/robots.txt"); got 404',
        ),
        ("404", TypeError, "\"/robots.txt\"); got '404'"),
        ([404, "410"], TypeError, "\"/robots.txt\"); '410' is not a status"),
        ({True}, TypeError, '"/robots.txt"); True is not a status'),
        (
            {200, 404},
            ValueError,
            "harden_client(leave=...) names 200, which is never checked: only a failing "
            "response (a status of 400 to 999) raises, so only those can be left",
        ),
    ],
    ids=["one-int", "a-str", "a-str-inside", "a-bool", "a-success"],
)
def test_a_bad_leave_is_a_clear_error(leave: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as caught:
        n.harden_client("Site", requests.Session(), leave=leave)
    assert str(caught.value).endswith(message)


def test_a_coroutine_predicate_is_refused_rather_than_leaving_everything() -> None:
    async def robots_probe(response: Any) -> bool:
        return False

    with pytest.raises(TypeError) as caught:
        n.harden_client("Site", httpx.AsyncClient(), leave=robots_probe)
    assert str(caught.value).startswith(
        "harden_client(leave=...) calls its predicate from the client's hook, without "
        "awaiting it: pass a plain function, not the coroutine function <function "
    )
