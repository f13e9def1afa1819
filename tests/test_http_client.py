"""ServiceClient / AsyncServiceClient on respx: every row of the status table, transport failures,
bodies that are not JSON, and a service quirk mapped through ``classify`` (search or fetch, and the HTTP mapping).
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx
from _tls import TLS
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo import (
    AsyncServiceClient,
    ExternalServiceException,
    HttpErrorResponse,
    LLMReadableCheckedException,
    ServiceClient,
)

BASE = "https://shop.example/api/v2"


class Shop(ServiceClient):
    service_name = "Shop API"
    base_url = BASE


class AsyncShop(AsyncServiceClient):
    service_name = "Shop API"
    base_url = BASE


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with httpx.Client(verify=TLS) as client:
        yield client


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=BASE, assert_all_called=True) as mock:
        yield mock


def call_sync(http: httpx.Client, path: str, **kwargs: Any) -> Any:
    return Shop(http).get_json(path, **kwargs)


def call_async(path: str, **kwargs: Any) -> Any:
    async def run() -> Any:
        async with httpx.AsyncClient(verify=TLS) as client:
            return await AsyncShop(client).get_json(path, **kwargs)

    return asyncio.run(run())


def call(mode: str, http: httpx.Client, path: str, **kwargs: Any) -> Any:
    return call_sync(http, path, **kwargs) if mode == "sync" else call_async(path, **kwargs)


def failure_of(mode: str, http: httpx.Client, path: str, **kwargs: Any) -> BaseException:
    with pytest.raises(LLMReadableCheckedException) as info:
        call(mode, http, path, **kwargs)
    return info.value


MODES = ["sync", "async"]

ROWS = [
    pytest.param(status, cls, id=f"{status}")
    for status, cls in [
        (400, nucleo.Http400Exception),
        (401, nucleo.Http401Exception),
        (403, nucleo.Http403Exception),
        (404, nucleo.Http404Exception),
        (413, nucleo.Http413Exception),
        (422, nucleo.Http422Exception),
        (429, nucleo.Http429Exception),
        (500, nucleo.Http500Exception),
        (502, nucleo.Http502Exception),
        (503, nucleo.Http503Exception),
        (418, nucleo.HttpUnmappedStatusException),
        (504, nucleo.HttpUnmappedStatusException),
        (301, nucleo.HttpUnmappedStatusException),
    ]
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("status", "cls"), ROWS)
def test_every_status_row_maps_through_the_client(
    mode: str, status: int, cls: type[Exception], router: respx.MockRouter, http: httpx.Client
) -> None:
    router.get("/orders/42").mock(
        return_value=httpx.Response(
            status, json={"error": f"status {status}"}, headers={"Retry-After": "7"}
        )
    )
    exc = failure_of(mode, http, "/orders/42", params={"api_key": "qk-0123456789"})
    assert type(exc) is cls
    assert isinstance(exc, HttpErrorResponse)
    assert exc.status_code == status
    assert exc.service == "Shop API"
    assert exc.endpoint == "/api/v2/orders/42"
    assert exc.response_body == f'{{"error":"status {status}"}}'
    assert exc.retry_after == 7.0
    assert "qk-0123456789" not in exc.explain_to_llm() + str(exc) + repr(exc)


@pytest.mark.parametrize("mode", MODES)
def test_a_throttle_body_on_403_is_a_throttle(
    mode: str, router: respx.MockRouter, http: httpx.Client
) -> None:
    router.get("/orders").mock(
        return_value=httpx.Response(403, json={"message": "API rate limit exceeded"})
    )
    exc = failure_of(mode, http, "/orders")
    assert isinstance(exc, nucleo.HttpThrottledStatusException)
    assert exc.status_code == 403


@pytest.mark.parametrize("mode", MODES)
def test_success_returns_the_decoded_json(
    mode: str, router: respx.MockRouter, http: httpx.Client
) -> None:
    route = router.get("/orders", params={"q": "lamp"}).mock(
        return_value=httpx.Response(200, json=[{"id": 1}])
    )
    if mode == "sync":
        assert call_sync(http, "orders", params={"q": "lamp"}) == [{"id": 1}]
    else:
        assert call_async("orders", params={"q": "lamp"}) == [{"id": 1}]
    assert route.call_count == 1


@pytest.mark.parametrize("mode", MODES)
def test_empty_on_404_is_the_search_case(
    mode: str, router: respx.MockRouter, http: httpx.Client
) -> None:
    router.get("/search").mock(return_value=httpx.Response(404, json={"error": "none"}))
    if mode == "sync":
        assert call_sync(http, "/search", empty_on_404=True) is None
    else:
        assert call_async("/search", empty_on_404=True) is None


@pytest.mark.parametrize("mode", MODES)
def test_empty_on_404_does_not_hide_other_failures(
    mode: str, router: respx.MockRouter, http: httpx.Client
) -> None:
    router.get("/search").mock(return_value=httpx.Response(500, text="boom"))
    assert type(failure_of(mode, http, "/search", empty_on_404=True)) is nucleo.Http500Exception


@pytest.mark.parametrize("mode", MODES)
def test_no_content_is_none(mode: str, router: respx.MockRouter, http: httpx.Client) -> None:
    router.get("/orders/7").mock(return_value=httpx.Response(204))
    result = call_sync(http, "/orders/7") if mode == "sync" else call_async("/orders/7")
    assert result is None


NOT_JSON = httpx.Response(
    200,
    content=b"<html><head><title>Shop - Sign in</title></head><body>Please sign in</body></html>",
    headers={"Content-Type": "text/html; charset=utf-8"},
)


@pytest.mark.parametrize("mode", MODES)
def test_a_2xx_body_that_is_not_json_is_an_external_failure(
    mode: str, router: respx.MockRouter, http: httpx.Client
) -> None:
    router.get("/orders/7").mock(return_value=NOT_JSON)
    exc = failure_of(mode, http, "/orders/7")
    assert type(exc) is ExternalServiceException
    assert not isinstance(exc, HttpErrorResponse)
    assert exc.__cause__ is None  # the decoder's error holds the whole body; it is not kept
    assert "not the JSON expected" in exc.explain_to_llm()


def test_not_json_snapshot(
    router: respx.MockRouter, http: httpx.Client, llm_snapshot: SnapshotAssertion
) -> None:
    router.get("/orders/7").mock(return_value=NOT_JSON)
    assert failure_of("sync", http, "/orders/7").explain_to_llm() == llm_snapshot


# Realistic messages: a respx side effect given an exception class says "Mock Error". The URL with its
# secrets sits in the message, as some httpx errors do; it must never reach a text.
LEAKY = "https://app:canary-pw-1@shop.example/api/v2/orders/7?api_key=canary-key-2"
TRANSPORT = {
    "refused": httpx.ConnectError(f"[Errno 111] Connection refused ({LEAKY})"),
    "connect-timeout": httpx.ConnectTimeout(f"timed out ({LEAKY})"),
    "read-timeout": httpx.ReadTimeout(f"The read operation timed out ({LEAKY})"),
    "write-timeout": httpx.WriteTimeout(f"The write operation timed out ({LEAKY})"),
    "pool-timeout": httpx.PoolTimeout(f"pool exhausted ({LEAKY})"),
    "disconnected": httpx.RemoteProtocolError(f"Server disconnected ({LEAKY})"),
    "read-error": httpx.ReadError(f"connection reset ({LEAKY})"),
}
NOTHING_SENT = {"refused", "connect-timeout", "pool-timeout"}
PART_SENT = {"write-timeout"}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", sorted(TRANSPORT))
def test_transport_failures_are_external_and_tell_whether_anything_was_sent(
    mode: str, kind: str, router: respx.MockRouter, http: httpx.Client
) -> None:
    router.get("/orders/7").mock(side_effect=TRANSPORT[kind])
    exc = failure_of(mode, http, "/orders/7")
    assert type(exc) is ExternalServiceException
    assert not isinstance(exc, HttpErrorResponse)
    assert exc.__cause__ is TRANSPORT[kind]
    text = exc.explain_to_llm()
    assert "GET /api/v2/orders/7" in text
    if kind in NOTHING_SENT:
        assert "Nothing was sent, so the service did not act on the request." in text
    elif kind in PART_SENT:
        assert "Part of the request was sent, so the service may have acted on it." in text
    else:
        assert "The request was sent, so the service may have acted on it." in text
    for shown in (text, str(exc), repr(exc)):
        assert "canary" not in shown
        assert str(TRANSPORT[kind]) not in shown


@pytest.mark.parametrize("kind", sorted(TRANSPORT))
def test_transport_failure_snapshot(
    kind: str, router: respx.MockRouter, http: httpx.Client, llm_snapshot: SnapshotAssertion
) -> None:
    router.get("/orders/7").mock(side_effect=TRANSPORT[kind])
    assert failure_of("sync", http, "/orders/7").explain_to_llm() == llm_snapshot


@pytest.mark.parametrize("mode", MODES)
def test_request_returns_the_response_and_passes_keywords_to_httpx(
    mode: str, router: respx.MockRouter, http: httpx.Client
) -> None:
    route = router.post("/orders", json={"item": "lamp"}).mock(
        return_value=httpx.Response(201, json={"id": 9})
    )

    async def run_async() -> httpx.Response:
        async with httpx.AsyncClient(verify=TLS) as client:
            return await AsyncShop(client).request("POST", "/orders", json={"item": "lamp"})

    if mode == "sync":
        response = Shop(http).request("POST", "/orders", json={"item": "lamp"})
    else:
        response = asyncio.run(run_async())
    assert response.status_code == 201
    assert route.call_count == 1


@pytest.mark.parametrize("mode", MODES)
def test_request_raises_the_mapped_failure(
    mode: str, router: respx.MockRouter, http: httpx.Client
) -> None:
    router.delete("/orders/7").mock(return_value=httpx.Response(404))

    async def run_async() -> None:
        async with httpx.AsyncClient(verify=TLS) as client:
            await AsyncShop(client).request("DELETE", "/orders/7")

    def run_sync() -> None:
        Shop(http).request("DELETE", "/orders/7")

    with pytest.raises(nucleo.Http404Exception):
        (run_sync if mode == "sync" else lambda: asyncio.run(run_async()))()


# A service quirk, mapped onto existing types in classify (never a type per service).
class Register(ServiceClient):
    """A register that answers "not found" as a 200 with an error JSON."""

    service_name = "Register"
    base_url = "https://register.example"

    def classify(self, response: httpx.Response) -> LLMReadableCheckedException | None:
        if response.is_success and response.headers.get("content-type") == "application/json":
            payload = response.json()
            if isinstance(payload, dict) and payload.get("status") == "NOT_FOUND":
                return nucleo.ResourceNotFoundException("company", payload.get("id", "?"))
        return None


class AsyncRegister(AsyncServiceClient):
    service_name = "Register"
    base_url = "https://register.example"
    classify = Register.classify  # type: ignore[assignment]  # one quirk, both clients


def test_classify_maps_a_service_quirk_sync_and_async(http: httpx.Client) -> None:
    with respx.mock(base_url="https://register.example", assert_all_called=True) as mock:
        mock.get("/companies/123").mock(
            return_value=httpx.Response(200, json={"status": "NOT_FOUND", "id": "123"})
        )
        register = Register(http)
        with pytest.raises(nucleo.ResourceNotFoundException, match="company not found"):
            register.get_json("/companies/123")
        assert register.get_json("/companies/123", empty_on_404=True) is None

        async def run() -> Any:
            async with httpx.AsyncClient(verify=TLS) as client:
                return await AsyncRegister(client).get_json("/companies/123")

        with pytest.raises(nucleo.ResourceNotFoundException):
            asyncio.run(run())


class Epo(ServiceClient):
    """EPO OPS answers robot detection as a 403 with an XML fault; say so in classify."""

    service_name = "EPO OPS"
    base_url = "https://ops.epo.org/3.2"

    def classify(self, response: httpx.Response) -> LLMReadableCheckedException | None:
        if response.status_code == 403 and b"CLIENT.RobotDetected" in response.content[:2048]:
            return nucleo.UpstreamThrottleException(
                self.service_name, "robot detection (CLIENT.RobotDetected)", retry_after=60
            )
        return None


def test_classify_runs_before_the_status_table(http: httpx.Client) -> None:
    with respx.mock(base_url="https://ops.epo.org/3.2", assert_all_called=True) as mock:
        mock.get("/rest-services/published-data/search").mock(
            return_value=httpx.Response(
                403, content=b"<fault><code>CLIENT.RobotDetected</code></fault>"
            )
        )
        with pytest.raises(nucleo.UpstreamThrottleException) as info:
            Epo(http).get_json("/rest-services/published-data/search")
        assert info.value.retry_after == 60


def test_a_subclass_without_its_configuration_fails_at_construction() -> None:
    class Forgot(ServiceClient):
        service_name = "Forgot"

    with pytest.raises(TypeError, match="must set the class attribute\\(s\\) base_url"):
        Forgot()
    with pytest.raises(TypeError, match="service_name, base_url"):
        AsyncServiceClient()


def test_an_owned_client_is_built_once_and_closed(router: respx.MockRouter) -> None:
    router.get("/a").mock(return_value=httpx.Response(200, json=1))
    with Shop() as shop:
        first = shop.client
        assert shop.get_json("/a") == 1
        assert shop.get_json("/a") == 1
        assert shop.client is first
    assert first.is_closed


def test_the_clients_built_for_service_clients_share_one_tls_context(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # httpx builds a TLS context for each client, loading certifi's bundle (about 40 ms): a
    # service client opened per call would pay that on every call. Each load is recorded.
    from pytest_nucleo._http import _service as _client

    loaded: list[ssl.SSLContext] = []
    load = ssl.SSLContext.load_verify_locations

    def recorded(context: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        loaded.append(context)
        load(context, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", recorded)
    _client._tls.cache_clear()
    try:
        for _ in range(3):
            Shop().close()
            AsyncShop()
        assert len(loaded) == 1
    finally:
        _client._tls.cache_clear()  # built again by the next test that needs it, unrecorded
    # httpx's default settings: certificates and host names are checked.
    assert loaded[0].verify_mode is ssl.CERT_REQUIRED
    assert loaded[0].check_hostname


def test_a_given_client_is_left_open(http: httpx.Client) -> None:
    with Shop(http):
        pass
    assert not http.is_closed


def test_an_owned_async_client_is_closed() -> None:
    async def run() -> httpx.AsyncClient:
        async with AsyncShop() as shop:
            return shop.client

    assert asyncio.run(run()).is_closed


def test_failures_are_logged_at_debug_without_secrets(
    router: respx.MockRouter, http: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    router.get("/orders/7").mock(return_value=httpx.Response(500, text="echo qk-0123456789"))
    with caplog.at_level(logging.DEBUG, logger="pytest_nucleo.http"):
        failure_of("sync", http, "/orders/7", params={"api_key": "qk-0123456789"})
    assert [r.levelno for r in caplog.records] == [logging.DEBUG]
    assert "HTTP 500" in caplog.text
    assert "qk-0123456789" not in caplog.text


def test_a_full_url_path_is_used_as_given(router: respx.MockRouter, http: httpx.Client) -> None:
    router.get("https://cdn.example/file.json").mock(return_value=httpx.Response(200, json={}))
    assert call_sync(http, "https://cdn.example/file.json") == {}


def test_sent_values_cover_headers_query_userinfo_and_body() -> None:
    request = httpx.Request(
        "POST",
        "https://bob:pw-secret-1@api.example/x?token=tok-secret-2&q=lamp",
        headers={"Authorization": "Bearer abc-secret-3", "X-Api-Key": "key-secret-4"},
        json={"client_secret": "cs-secret-5", "n": 10, "card": {"number": 4111111111111111}},
    )
    values = nucleo.sent_values(request)
    for secret in ("pw-secret-1", "tok-secret-2", "abc-secret-3", "key-secret-4", "cs-secret-5"):
        assert secret in values
    assert "lamp" in values  # a query value the server may echo is masked too
    assert "4111111111111111" in values  # long JSON integers too
    assert "10" not in values  # shorter than four characters: see redact


def test_sent_values_keep_a_json_bodys_strings_before_its_numbers() -> None:
    request = httpx.Request(
        "POST",
        "https://api.example/x",
        json={"password": "hunter2-secret", "limit": 1000, "ids": list(range(10**8, 10**8 + 300))},
    )
    values = nucleo.sent_values(request)
    assert "hunter2-secret" in values  # not crowded out by 300 numbers
    assert "1000" not in values  # a short number would blank out every number quoted
    assert str(10**8) in values
    assert "application/json" not in values


def test_a_number_sent_in_a_json_body_is_masked_when_echoed(
    router: respx.MockRouter, http: httpx.Client
) -> None:
    router.post("/pay").mock(
        return_value=httpx.Response(402, json={"error": "card 4111111111111111 was declined"})
    )
    with pytest.raises(nucleo.LLMReadableException) as info:
        Shop(http).request("POST", "/pay", json={"card": 4111111111111111, "cvc": 123})
    assert "4111111111111111" not in info.value.explain_to_llm()
    assert "card [REDACTED] was declined" in info.value.explain_to_llm()


def test_values_sent_unreserved_are_their_own_encoded_forms() -> None:
    """sent_values skips quoting values it finds unreserved; quoting would not change them."""
    import random
    from urllib.parse import quote, quote_plus

    from pytest_nucleo._http._clients._sent import _UNRESERVED

    rng = random.Random(3)
    alphabet = [chr(c) for c in range(0x20, 0x80)] + ["\u00e9", "\u0130", "\uff11", "\n", "\t"]
    skipped = 0
    for _ in range(20_000):
        value = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))
        if rng.random() < 0.5:
            value = "".join(rng.choice("aZ09_.-~") for _ in range(rng.randint(0, 6))) + value[:1]
        if _UNRESERVED.fullmatch(value):
            skipped += 1
            assert quote(value, safe="") == quote_plus(value) == value, repr(value)
    assert skipped > 5_000


def test_values_sent_reads_the_parameters_an_sdk_kept_before_encoding() -> None:
    """An SDK's form or query arguments, as a mapping: masked as a query's values are."""
    from pytest_nucleo._http._clients._sent import values_sent

    params = {
        "customer": "cus_canary0123",
        "amount": 123456789,
        "note": "a b&c=d",
        "capture": False,  # a flag: "False" would mask that word in every text
        "metadata": {"order": "ord_nested0123"},  # nested: not read
        "none": None,
    }
    values = values_sent(
        "POST", "https://api.example/v1/charges?token=tok-in-url", (), None, params=params
    )
    assert {"cus_canary0123", "123456789", "a b&c=d", "a%20b%26c%3Dd", "tok-in-url"} <= set(values)
    assert not {"False", "ord_nested0123", "None"} & set(values)
    assert values_sent("GET", "", (), None, params=params) == tuple(
        v for v in values if v != "tok-in-url"
    )
    # A URL urlsplit refuses keeps the parameters' values all the same.
    assert "cus_canary0123" in values_sent("GET", "http://[::1", (), None, params=params)
