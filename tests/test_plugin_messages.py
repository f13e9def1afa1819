"""What the user reads first when a test goes wrong: each message, through pytester, with the
exact lines pytest prints."""

from __future__ import annotations

import pytest

PYTEST_9 = int(pytest.__version__.split(".")[0]) >= 9

# One tool per client the fake serves, each behind @llm_errors, asking for a URL no test routes.
TOOLS = """
import asyncio

import aiohttp
import httpx
import httpx2
import requests

from pytest_nucleo import llm_errors

URL = "https://books.example/books/2"


@llm_errors
def via_httpx():
    return httpx.get(URL + "?full=1").json()


@llm_errors
async def via_httpx_async():
    async with httpx.AsyncClient() as client:
        return (await client.get(URL + "?full=1")).json()


@llm_errors
def via_httpx2():
    return httpx2.get(URL + "?full=1").json()


@llm_errors
def via_requests():
    return requests.get(URL + "?full=1", timeout=5).json()


@llm_errors
async def via_aiohttp():
    async with aiohttp.ClientSession() as session:
        async with session.get(URL + "?full=1") as answer:
            return await answer.json()


def call(name):
    tool = globals()["via_" + name]
    result = tool()
    return asyncio.run(result) if asyncio.iscoroutine(result) else result
"""

CLIENTS = ("httpx", "httpx_async", "httpx2", "requests", "aiohttp")

ROUTE_LINE = '    fake_upstream.get("https://books.example/books/2").respond(200, json=...)'
UNMATCHED = [
    "no fake route for GET https://books.example/books/2?full=1",
    "Add a route for it to the test, with the answer the tool should get:",
    ROUTE_LINE,
    "The test's routes:",
    "    GET https://books.example/books/1 -> respond 200 json",
    'See pytest-nucleo\'s docs, "Fake upstream failures" (https://pytest-nucleo.github.io/pytest-nucleo/how-to/fake-upstream/).',
]


@pytest.fixture
def books(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(books=TOOLS)
    return pytester


def test_an_unmatched_request_behind_llm_errors_leads_with_the_route_to_add(
    books: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # the short summary's lines whole
    books.makepyfile(
        test_books=f"""
        import pytest

        from pytest_nucleo import ResourceNotFoundException, run_tool
        from pytest_nucleo.testing import fails_with
        from books import call

        CLIENTS = {CLIENTS!r}

        @pytest.fixture
        def routed(fake_upstream):
            fake_upstream.get("https://books.example/books/1").respond(200, json={{}})
            return fake_upstream

        @pytest.mark.parametrize("client", CLIENTS)
        def test_expected(routed, client):
            with fails_with(ResourceNotFoundException):
                call(client)

        @pytest.mark.parametrize("client", CLIENTS)
        def test_bare(routed, client):
            call(client)

        @pytest.mark.parametrize("client", CLIENTS)
        def test_swallowed(routed, client):
            try:
                call(client)
            except Exception:
                pass

        @pytest.mark.parametrize("client", CLIENTS)
        def test_through_the_runner(routed, client):
            result = run_tool(lambda: call(client), {{}})
            assert result.is_error
        """
    )
    result = books.runpytest("-p", "no:cacheprovider", "-p", "no:randomly")
    ways = ("test_expected", "test_bare", "test_swallowed", "test_through_the_runner")
    result.assert_outcomes(failed=len(ways) * len(CLIENTS))
    for way in ways:
        for client in CLIENTS:
            result.stdout.fnmatch_lines(
                [f"_* {way}[[]{client}[]] _*", *UNMATCHED, "*"], consecutive=True
            )
            if PYTEST_9:  # pytest 8 leaves the message off the short summary's line
                result.stdout.fnmatch_lines(
                    [
                        f"FAILED test_books.py::{way}[[]{client}[]] - no fake route for GET "
                        "https://books.example/books/2?full=1"
                    ]
                )
    output = result.stdout.str()
    # The line to add is given once per test, never through the failure the tool made of it.
    assert output.count(ROUTE_LINE) == len(ways) * len(CLIENTS)
    assert "reached the model as a SystemException" not in output
    assert "After it, the test failed" not in output
    assert "ERROR at teardown" not in output
    # The runner's failures came from the fake, not from the tool: no leak in the matrix.
    assert "nucleo failure matrix" not in output


def test_a_failure_of_the_test_besides_the_unmatched_request_follows_it(
    books: pytest.Pytester,
) -> None:
    books.makepyfile(
        """
        from books import call

        def test_then_asserts(fake_upstream):
            fake_upstream.get("https://books.example/books/1").respond(200, json={})
            try:
                call("httpx")
            except Exception:
                pass
            assert 1 + 1 == 3
        """
    )
    result = books.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "_* test_then_asserts _*",
            *UNMATCHED,
            "",
            "After it, the test failed with: assert (1 + 1) == 3",
        ],
        consecutive=True,
    )


def test_a_tool_retrying_an_unmatched_request_is_told_once(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import httpx

        def test_retries(fake_upstream):
            for _ in range(3):
                try:
                    httpx.delete("https://books.example/books/2")
                except Exception:
                    pass
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "_* test_retries _*",
            "no fake route for DELETE https://books.example/books/2 (3 requests)",
            "Add a route for it to the test, with the answer the tool should get:",
            '    fake_upstream.delete("https://books.example/books/2").respond(200, json=...)',
            "The test's routes:",
            "    (none)",
        ],
        consecutive=True,
    )


def test_a_teardown_failure_of_fake_upstream_shows_no_fixture_source(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        def test_unused(fake_upstream):
            fake_upstream.get("https://books.example/never").respond(200)
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "_* ERROR at teardown of test_unused _*",
            "fake_upstream: 1 route(s) were never called:",
            "  GET https://books.example/never -> respond 200",
            "Remove them, or mark the test @pytest.mark.nucleo(assert_all_called=False) if "
            "calling them is optional.",
            "=* short test summary info =*",
        ],
        consecutive=True,
    )
    output = result.stdout.str()
    assert "def fake_upstream" not in output
    assert "plugin.py" not in output


def test_the_context_manager_form_leads_with_the_route_to_add(books: pytest.Pytester) -> None:
    books.makepyfile(
        """
        from pytest_nucleo import ResourceNotFoundException, run_tool
        from pytest_nucleo.testing import FakeUpstream, assert_error_result, fails_with
        from books import call

        def test_bare():
            with FakeUpstream() as upstream:
                upstream.get("https://books.example/books/1").respond(200, json={})
                call("requests")

        def test_expected():
            with FakeUpstream(assert_all_called=False) as upstream:
                upstream.get("https://books.example/books/1").respond(200, json={})
                with fails_with(ResourceNotFoundException):
                    call("aiohttp")

        def test_result():
            with FakeUpstream(assert_all_called=False) as upstream:
                upstream.get("https://books.example/books/1").respond(200, json={})
                result = run_tool(lambda: call("httpx2"), {})
                assert_error_result(result, ResourceNotFoundException)
        """
    )
    result = books.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(["_* test_result _*", *UNMATCHED], consecutive=True)
    result.stdout.fnmatch_lines(
        [f"E       AssertionError: {UNMATCHED[0]}", *(f"E       {line}" for line in UNMATCHED[1:])],
        consecutive=True,
    )
    result.stdout.fnmatch_lines(["_* test_expected _*", *UNMATCHED], consecutive=True)
    assert "reached the model as a SystemException" not in result.stdout.str()


def test_llm_errors_is_suggested_only_where_it_fixes_the_failure(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_hint="""
        import httpx
        from pytest_nucleo import InvalidInputException, ResourceNotFoundException
        from pytest_nucleo.testing import fails_with

        def get_book(book_id):
            request = httpx.Request("GET", "https://books.example/books/" + book_id)
            answer = httpx.Response(404, text="no such book", request=request)
            answer.raise_for_status()

        def parse_id(text):
            return int(text)

        def test_fixed_by_the_decorator():
            with fails_with(ResourceNotFoundException):
                get_book("9")

        def test_not_fixed_by_the_decorator():
            with fails_with(InvalidInputException):
                parse_id("nine")
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "E       Failed: Expected ResourceNotFoundException, but the call raised "
            "HTTPStatusError, which is outside the failure set. The model would read it as:",
            "E       No resource was found at /books/9*",
            "E       [[]This error may be correctable*",
            "E       Technical cause: HTTPStatusError: Client error '404 Not Found' for url "
            "'https://books.example/books/9'",
            "E       For more information check: *",
            "E       Raise ResourceNotFoundException where this fails, or decorate the tool with "
            "@llm_errors, which turns it into ResourceNotFoundException.",
        ],
        consecutive=True,
    )
    result.stdout.fnmatch_lines(
        [
            "E       Failed: Expected InvalidInputException, but the call raised ValueError, "
            "which is outside the failure set. The model would read it as:",
            "E       A system error occurred in the tool. The operation could not be completed.",
            "E       [[]This error is not correctable - consider an alternative approach[]]",
            "E       Technical cause: ValueError: invalid literal for int() with base 10: 'nine'",
            "E       Raise InvalidInputException where this fails.",
        ],
        consecutive=True,
    )
    assert result.stdout.str().count("@llm_errors") == 1


def test_an_unmatched_request_is_not_told_to_decorate_the_tool(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_undecorated="""
        import httpx
        from pytest_nucleo import ResourceNotFoundException
        from pytest_nucleo.testing import fails_with

        def test_undecorated(fake_upstream):
            with fails_with(ResourceNotFoundException):
                httpx.get("https://books.example/books/2")
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["_* test_undecorated _*", "no fake route for GET https://books.example/books/2"],
        consecutive=True,
    )
    assert "@llm_errors" not in result.stdout.str()


def test_fails_with_match_searches_the_model_text(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_match="""
        import re
        import pytest
        from pytest_nucleo import ResourceNotFoundException
        from pytest_nucleo.testing import fails_with

        def missing():
            raise ResourceNotFoundException("book", "99")

        def test_found():
            with fails_with(ResourceNotFoundException, match=r"book.*\\b99\\b"):
                missing()

        def test_compiled():
            with fails_with(ResourceNotFoundException, match=re.compile("NO BOOK", re.I)):
                raise ResourceNotFoundException("book", "no book")

        def test_not_found():
            with fails_with(ResourceNotFoundException, match=r"order \\d+"):
                missing()
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "_* test_not_found _*",
            "ResourceNotFoundException was raised, but the model text does not match the pattern.",
            "Pattern: 'order \\\\d+'",
            "Model text:",
            'No book was found with the identifier "99". Check the identifier, try another one, '
            "or use another tool to find the right one.",
            "[[]This error may be correctable*",
            "=* short test summary info =*",
        ],
        consecutive=True,
    )


def test_an_unmatched_request_in_a_fixture_is_an_error_at_setup(books: pytest.Pytester) -> None:
    books.makepyfile(
        test_setup="""
        import pytest
        from books import call

        @pytest.fixture
        def warmed(fake_upstream):
            fake_upstream.get("https://books.example/books/1").respond(200, json={})
            try:
                call("httpx2")
            except Exception:
                pass

        def test_after_warming(warmed):
            pass
        """
    )
    result = books.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["_* ERROR at setup of test_after_warming _*", *UNMATCHED], consecutive=True
    )
