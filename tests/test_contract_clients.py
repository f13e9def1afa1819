"""ToolContract runs unchanged on tools written with requests, aiohttp and httpx2: the whole
failure matrix, faked once by fake_upstream, reaches each through its own client."""

from __future__ import annotations

import client_tools as tools

from pytest_nucleo.testing import ToolContract, respond

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
