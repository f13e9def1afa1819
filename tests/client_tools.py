"""The same fetch and search tools written on requests, aiohttp and httpx2, each mapping its own
client's exceptions by hand, for ToolContract to check (tests/test_contract_clients.py)."""

from __future__ import annotations

from typing import Any

import aiohttp
import httpx2
import requests

import pytest_nucleo as n

BASE = "https://shop.example/orders"
API_KEY = "test-key-4711-abcd"
HEADERS = {"X-Api-Key": API_KEY}
NO_ANSWER = "no answer in time; the request may have been acted on"
NO_CONNECTION = "could not connect; nothing was sent"


def _refuse(status: int, body: bytes, headers: Any, url: str) -> n.LLMReadableCheckedException:
    return n.http_exception("Shop", url, status, body, headers, known=(API_KEY,))


# -- requests ----------------------------------------------------------------------------------


def _requests_get(url: str, params: dict[str, str] | None = None) -> requests.Response:
    try:
        return requests.get(url, params=params, headers=HEADERS, timeout=10)
    except requests.Timeout as exc:
        raise n.ExternalServiceException("Shop", NO_ANSWER, exc) from exc
    except requests.RequestException as exc:
        raise n.ExternalServiceException("Shop", NO_CONNECTION, exc) from exc


def _requests_json(response: requests.Response) -> Any:
    try:
        return response.json()
    except ValueError as exc:
        raise n.ExternalServiceException("Shop", "the answer was not JSON", exc) from exc


def requests_get_order(number: str) -> Any:
    response = _requests_get(f"{BASE}/{number}")
    if response.status_code == 404:
        raise n.ResourceNotFoundException("order", number)
    if not response.ok:
        raise _refuse(response.status_code, response.content, response.headers, response.url)
    return _requests_json(response)


def requests_search_orders(query: str) -> Any:
    response = _requests_get(BASE, params={"q": query})
    if response.status_code == 404:
        return []
    if not response.ok:
        raise _refuse(response.status_code, response.content, response.headers, response.url)
    return _requests_json(response)


# -- aiohttp -----------------------------------------------------------------------------------


async def _aiohttp_get(url: str, params: dict[str, str] | None = None) -> tuple[int, bytes, Any]:
    try:
        async with (
            aiohttp.ClientSession() as session,
            session.get(url, params=params, headers=HEADERS) as response,
        ):
            return response.status, await response.read(), response.headers
    except TimeoutError as exc:  # aiohttp's timeouts are asyncio's (ServerTimeoutError & co)
        raise n.ExternalServiceException("Shop", NO_ANSWER, exc) from exc
    except aiohttp.ClientError as exc:
        raise n.ExternalServiceException("Shop", NO_CONNECTION, exc) from exc


def _aiohttp_json(body: bytes) -> Any:
    import json

    try:
        return json.loads(body)
    except ValueError as exc:
        raise n.ExternalServiceException("Shop", "the answer was not JSON", exc) from exc


async def aiohttp_get_order(number: str) -> Any:
    url = f"{BASE}/{number}"
    status, body, headers = await _aiohttp_get(url)
    if status == 404:
        raise n.ResourceNotFoundException("order", number)
    if status >= 400:
        raise _refuse(status, body, headers, url)
    return _aiohttp_json(body)


async def aiohttp_search_orders(query: str) -> Any:
    status, body, headers = await _aiohttp_get(BASE, params={"q": query})
    if status == 404:
        return []
    if status >= 400:
        raise _refuse(status, body, headers, BASE)
    return _aiohttp_json(body)


# -- httpx2 ------------------------------------------------------------------------------------

CLIENT = httpx2.Client(headers=HEADERS)


def _httpx2_get(url: str, params: dict[str, str] | None = None) -> httpx2.Response:
    try:
        return CLIENT.get(url, params=params)
    except httpx2.TimeoutException as exc:
        raise n.ExternalServiceException("Shop", NO_ANSWER, exc) from exc
    except httpx2.TransportError as exc:
        raise n.ExternalServiceException("Shop", NO_CONNECTION, exc) from exc


def _httpx2_json(response: httpx2.Response) -> Any:
    try:
        return response.json()
    except ValueError as exc:
        raise n.ExternalServiceException("Shop", "the answer was not JSON", exc) from exc


def httpx2_get_order(number: str) -> Any:
    response = _httpx2_get(f"{BASE}/{number}")
    if response.status_code == 404:
        raise n.ResourceNotFoundException("order", number)
    if not response.is_success:
        raise _refuse(response.status_code, response.content, response.headers, str(response.url))
    return _httpx2_json(response)


def httpx2_search_orders(query: str) -> Any:
    response = _httpx2_get(BASE, params={"q": query})
    if response.status_code == 404:
        return []
    if not response.is_success:
        raise _refuse(response.status_code, response.content, response.headers, str(response.url))
    return _httpx2_json(response)
