"""Defects seen while hardening published tools: each says what it fixes.

A 2xx page that is not JSON through requests' ``.json()`` or aiohttp's is the service's answer, not "no
answer"; an abstract ``ToolContract`` base is allowed; a broken matrix row whose classes read
the same says what differed; a search's 404 through ``service_call`` is not about an
"identifier"; a leaked exception with an empty message still reads as a sentence; a scenario
whose tool raised before reaching the fake says so, and its row shows the failure."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo import ExternalServiceException, InvalidInputException
from pytest_nucleo.testing import FakeUpstream, Observation, contract_matrix, respond

TOOLS = (Path(__file__).parent / "sample_tools.py").read_text()


def test_json_of_a_2xx_html_page_through_requests_is_an_answer_not_json(
    llm_snapshot: SnapshotAssertion,
) -> None:
    @nucleo.llm_errors(service="Library")
    def fetch() -> object:
        return requests.get("https://library.example/api/books/1", timeout=5).json()

    with FakeUpstream() as upstream:
        upstream.get("https://library.example/api/books/1").not_json()
        with pytest.raises(ExternalServiceException) as caught:
            fetch()
    text = caught.value.explain_to_llm()
    assert "gave no answer" not in text
    # The words the client base gives the same answer.
    assert (
        "answered /api/books/1 with HTTP 200, but its answer (text/html) was not the JSON" in text
    )
    assert text == llm_snapshot


def test_json_of_a_2xx_html_page_through_aiohttp_is_an_answer_not_json(
    llm_snapshot: SnapshotAssertion,
) -> None:
    import asyncio

    import aiohttp

    url = "https://library.example/api/books/1"

    @nucleo.llm_errors(service="Library")
    async def fetch() -> object:
        async with aiohttp.ClientSession() as session, session.get(url) as response:
            return await response.json()  # aiohttp's ContentTypeError: text/html

    with FakeUpstream() as upstream:
        upstream.get(url).not_json()
        with pytest.raises(ExternalServiceException) as caught:
            asyncio.run(fetch())
    text = caught.value.explain_to_llm()
    assert "gave no answer" not in text
    # The words requests' .json() gets for the same answer.
    assert (
        "answered /api/books/1 with HTTP 200, but its answer (text/html) was not the JSON" in text
    )
    assert text == llm_snapshot


def test_a_decoding_error_without_its_response_is_still_a_decoding_failure() -> None:
    # Raised by hand, outside Response.json: no answer to read, the old meaning stands.
    error = requests.JSONDecodeError("Expecting value", "<html>", 0)
    mapped = nucleo.unwrap(error, service="Library")
    assert "its answer could not be decoded" in mapped.llm_message


def test_service_call_on_a_searchs_404_speaks_of_the_query_not_an_identifier(
    llm_snapshot: SnapshotAssertion,
) -> None:
    with FakeUpstream() as upstream:
        upstream.get("https://library.example/api/search").respond(404, json={"error": "none"})
        with (
            pytest.raises(InvalidInputException) as caught,
            nucleo.service_call("Library", "query", "dune", "book search"),
        ):
            requests.get("https://library.example/api/search?q=dune", timeout=5).raise_for_status()
    text = caught.value.explain_to_llm()
    assert "identifier" not in text
    assert "Try another value" in text
    assert text == llm_snapshot


def _observe(tool: Callable[..., Any], scenario: str) -> Observation:
    matrix = {s.name: s for s in contract_matrix("fetch", valid_response=respond(200, json={}))}
    return matrix[scenario].observe(
        tool,
        {"number": "1"},
        endpoint="GET https://shop.example/orders/1",
        service_name="Shop",
    )


def test_a_leak_with_an_empty_message_reads_as_a_sentence() -> None:
    def tool(number: str) -> object:
        requests.get(f"https://shop.example/orders/{number}", timeout=5)
        raise RuntimeError()

    seen = _observe(tool, "status-500")
    assert seen.violation is not None
    assert seen.violation.startswith(
        "the tool leaked RuntimeError (with an empty message). Every failure is an exception"
    )


def test_a_tool_that_raised_before_reaching_the_fake_is_shown_as_failing() -> None:
    def tool(number: str) -> object:
        # As a tool on a client no fake reaches: it fails before any request is seen.
        raise ConnectionRefusedError(111, "Connection refused")

    seen = _observe(tool, "status-404")
    assert (seen.failed, seen.cls, seen.leaked) == (True, "ConnectionRefusedError", True)
    assert seen.violation == (
        "the tool raised ConnectionRefusedError: [Errno 111] Connection refused before any "
        "request reached the fake upstream, so this scenario tested nothing. If the tool calls "
        "GET https://shop.example/orders/1, it does so through a client fake_upstream does not "
        "fake (httpx, httpx2, requests, aiohttp and urllib.request (http.client) are faked): "
        'see pytest-nucleo\'s docs, "Pick a client" '
        "(https://pytest-nucleo.github.io/pytest-nucleo/how-to/http-clients/#pick-a-client)."
        " Otherwise check the contract's endpoint (method and URL the valid call requests)."
    )


def test_a_tool_that_returned_without_calling_keeps_the_endpoint_advice() -> None:
    seen = _observe(lambda number: {"number": number}, "status-404")
    assert seen.violation == (
        "the tool never called GET https://shop.example/orders/1, so this scenario tested "
        "nothing: check the contract's endpoint (method and URL the valid call requests)"
    )
    assert seen.failed is False


ABSTRACT = """
from pytest_nucleo.testing import ToolContract, respond
import tools


class TestShopBase(ToolContract):
    # Shared by every tool of the shop; named like a test class, and still not collected.
    service_name = "Shop"
    valid_response = respond(200, json={"number": "00000042", "status": "shipped"})
    secrets = (tools.API_KEY,)


class TestGetOrder(TestShopBase):
    tool = tools.get_order
    kind = "fetch"
    endpoint = "GET https://shop.example/orders/00000042"
    valid_call = {"number": "00000042"}


class TestSearchOrders(TestShopBase):
    tool = tools.search_orders
    kind = "search"
    endpoint = "GET https://shop.example/orders"
    valid_call = {"query": "shoes"}


class TestSwitchedOff(TestGetOrder):
    __test__ = False  # the user's own switch is kept
"""


def test_an_abstract_base_without_a_tool_is_allowed_and_collects_no_test(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(tools=TOOLS, test_shop=ABSTRACT)
    result = pytester.runpytest("--snapshot-update", "-p", "no:randomly", "-v")
    result.assert_outcomes(passed=21 + 22)
    result.stdout.no_fnmatch_line("*is missing tool*")
    result.stdout.no_fnmatch_line("*TestShopBase*")
    result.stdout.no_fnmatch_line("*TestSwitchedOff*")
    result.stdout.fnmatch_lines(["*TestGetOrder::test_contract?status-404? PASSED*"])


def test_a_class_with_a_tool_but_missing_attributes_still_says_what_is_missing() -> None:
    from pytest_nucleo.testing import ToolContract

    with pytest.raises(TypeError, match="is missing kind, service_name, endpoint, valid_call"):

        class TestHalf(ToolContract):
            tool = staticmethod(lambda: None)


def test_a_broken_row_whose_classes_read_the_same_says_what_differed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")  # the matrix as one table, a row a line
    pytester.makepyfile(
        tools=TOOLS,
        test_wait="""
from pytest_nucleo.testing import ToolContract, respond
import tools


class TestWait(ToolContract):
    tool = tools.throttle_without_wait
    kind = "fetch"
    service_name = "Shop"
    endpoint = "GET https://shop.example/orders/00000042"
    valid_call = {"number": "00000042"}
    valid_response = respond(200, json={"number": "00000042", "status": "shipped"})
""",
    )
    result = pytester.runpytest("--snapshot-update", "-p", "no:randomly", "--nucleo-matrix=all")
    result.stdout.fnmatch_lines(
        [
            "*TestWait.throttle_without_wait*throttle-429-retry-after*"
            "UpstreamThrottleException (uncorrectable)  UpstreamThrottleException"
            " (uncorrectable), but no retry_after (the server asked to wait)*broken*",
        ]
    )
