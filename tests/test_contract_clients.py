"""ToolContract and the strategies run unchanged on tools written with requests, aiohttp and httpx2: the whole
failure matrix, faked once by fake_upstream, reaches each through its own client."""

from __future__ import annotations

from typing import Any

import client_tools as tools
import pytest
from hypothesis import given, settings

from pytest_nucleo import strategies as nst
from pytest_nucleo.testing import Scenario, ToolContract, respond

ORDER = respond(200, json={"number": "00000042", "status": "shipped"})
FETCH = "GET https://shop.example/orders/00000042"
SEARCH = "GET https://shop.example/orders"


class _Shop:
    service_name = "Shop"
    valid_response = ORDER
    secrets = (tools.API_KEY,)


class TestRequestsFetch(_Shop, ToolContract):
    tool = tools.requests_get_order
    kind = "fetch"
    endpoint = FETCH
    valid_call = {"number": "00000042"}


class TestRequestsSearch(_Shop, ToolContract):
    tool = tools.requests_search_orders
    kind = "search"
    endpoint = SEARCH
    valid_call = {"query": "shoes"}


class TestAiohttpFetch(_Shop, ToolContract):
    tool = tools.aiohttp_get_order
    kind = "fetch"
    endpoint = FETCH
    valid_call = {"number": "00000042"}


class TestAiohttpSearch(_Shop, ToolContract):
    tool = tools.aiohttp_search_orders
    kind = "search"
    endpoint = SEARCH
    valid_call = {"query": "shoes"}


class TestHttpx2Fetch(_Shop, ToolContract):
    tool = tools.httpx2_get_order
    kind = "fetch"
    endpoint = FETCH
    valid_call = {"number": "00000042"}


class TestHttpx2Search(_Shop, ToolContract):
    tool = tools.httpx2_search_orders
    kind = "search"
    endpoint = SEARCH
    valid_call = {"query": "shoes"}


# The strategies too: each drawn scenario (statuses, bodies, Retry-After values and every
# transport failure) reaches the tool through its own client.
FETCHERS = [tools.requests_get_order, tools.aiohttp_get_order, tools.httpx2_get_order]
SEARCHERS = [tools.requests_search_orders, tools.aiohttp_search_orders, tools.httpx2_search_orders]


@pytest.mark.parametrize("tool", FETCHERS, ids=lambda t: t.__name__)
@settings(max_examples=40, database=None)
@given(scenario=nst.fetch_scenarios(transports=nst.transport_failures()))
def test_fetch_scenarios_run_on_every_client(tool: Any, scenario: Scenario) -> None:
    scenario.verify(tool, {"number": "00000042"}, endpoint=FETCH)


@pytest.mark.parametrize("tool", SEARCHERS, ids=lambda t: t.__name__)
@settings(max_examples=40, database=None)
@given(scenario=nst.search_scenarios(transports=nst.transport_failures()))
def test_search_scenarios_run_on_every_client(tool: Any, scenario: Scenario) -> None:
    scenario.verify(tool, {"query": "shoes"}, endpoint=SEARCH)
