"""Tools on httpx that map HTTP failures by hand: one that behaves, and some that each break
one rule of the failure contract. Used directly and, as source, inside pytester runs."""

import httpx

import pytest_nucleo as n

CLIENT = httpx.Client()
API_KEY = "test-key-4711-abcd"


def _fail_for(response, parameter, value):
    status = response.status_code
    wait = n.parse_retry_after(response.headers.get("Retry-After"))
    # The documented throttle rule; everything else here is mapped by hand.
    if status in (400, 401, 403, 503) and n.body_says_throttled(response.content, status=status):
        raise n.UpstreamThrottleException("Shop", f"HTTP {status}: throttled", wait)
    if status in (400, 413, 422):
        raise n.InvalidInputException(parameter, value, f"the shop refused it (HTTP {status})")
    if status in (401, 403):
        raise n.UnauthorizedException("Shop", f"HTTP {status}")
    if status == 404:
        raise n.ResourceNotFoundException("order", value)
    if status == 429:
        raise n.UpstreamThrottleException("Shop", "HTTP 429", wait)
    raise n.ExternalServiceException("Shop", f"HTTP {status}")


def _send(url, params=None):
    try:
        return CLIENT.get(url, params=params, headers={"X-Api-Key": API_KEY})
    except httpx.TimeoutException as exc:
        raise n.ExternalServiceException(
            "Shop", "no answer in time; the request may have been acted on", exc
        ) from exc
    except httpx.TransportError as exc:
        raise n.ExternalServiceException(
            "Shop", "could not connect; nothing was sent", exc
        ) from exc


def _json(response):
    try:
        return response.json()
    except ValueError as exc:
        raise n.ExternalServiceException("Shop", "the answer was not JSON", exc) from exc


def get_order(number):
    response = _send(f"https://shop.example/orders/{number}")
    if not response.is_success:
        _fail_for(response, "number", number)
    return _json(response)


async def aget_order(number):
    async with httpx.AsyncClient() as client:
        try:
            response = await client.get(f"https://shop.example/orders/{number}")
        except httpx.TransportError as exc:
            raise n.ExternalServiceException("Shop", "could not reach the shop", exc) from exc
    if not response.is_success:
        _fail_for(response, "number", number)
    return _json(response)


def search_orders(query):
    response = _send("https://shop.example/orders", params={"q": query})
    if response.status_code == 404:
        return []
    if not response.is_success:
        _fail_for(response, "query", query)
    return _json(response)


# -- each breaks one rule -------------------------------------------------------------------


def leaks_key_error(number):
    return _send(f"https://shop.example/orders/{number}").json()["order"]


def outage_for_bad_id(number):
    response = _send(f"https://shop.example/orders/{number}")
    if response.status_code == 404:
        raise n.ExternalServiceException("Shop", "HTTP 404")
    if not response.is_success:
        _fail_for(response, "number", number)
    return _json(response)


def search_404_is_error(query):
    response = _send("https://shop.example/orders", params={"q": query})
    if not response.is_success:
        _fail_for(response, "query", query)
    return _json(response)


def key_in_text(number):
    response = _send(f"https://shop.example/orders/{number}")
    if response.status_code >= 500:
        raise n.ExternalServiceException("Shop", f"HTTP {response.status_code} for key {API_KEY}")
    if not response.is_success:
        _fail_for(response, "number", number)
    return _json(response)


def swallows_timeout(query):
    try:
        response = CLIENT.get("https://shop.example/orders", params={"q": query})
    except httpx.TimeoutException:
        return []
    except httpx.TransportError as exc:
        raise n.ExternalServiceException("Shop", "could not connect", exc) from exc
    if response.status_code == 404:
        return []
    if not response.is_success:
        _fail_for(response, "query", query)
    return _json(response)


def html_in_text(number):
    response = _send(f"https://shop.example/orders/{number}")
    if response.status_code >= 500:
        failure = n.ExternalServiceException("Shop", f"HTTP {response.status_code}")
        failure.llm_message = f"The external service Shop failed: {response.text}"  # all of it
        raise failure
    if not response.is_success:
        _fail_for(response, "number", number)
    return _json(response)


def no_service_in_text(number):
    response = _send(f"https://shop.example/orders/{number}")
    if response.status_code >= 500:
        raise n.ExternalServiceException(
            "Shop", "HTTP 500", llm_message=f"failed calling /orders/{number}"
        )
    if not response.is_success:
        _fail_for(response, "number", number)
    return _json(response)


def throttle_as_outage(number):
    try:
        return get_order(number)
    except n.UpstreamThrottleException as exc:
        raise n.ExternalServiceException("Shop", "the shop is unavailable") from exc


def throttle_without_wait(number):
    try:
        return get_order(number)
    except n.UpstreamThrottleException:
        raise n.UpstreamThrottleException("Shop", "slow down") from None
