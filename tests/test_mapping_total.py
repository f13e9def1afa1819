"""Mapping is total and bounded: whatever charset, nesting or size a server answers with, the
client and ``http_exception`` give one of the package's exceptions, never a foreign one, and
the cost of a huge body does not grow with it."""

from __future__ import annotations

import asyncio
import contextlib
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
import respx
from syrupy.assertion import SnapshotAssertion

from pytest_nucleo import (
    AsyncServiceClient,
    ExternalServiceException,
    LLMReadableCheckedException,
    ServiceClient,
    body_excerpt,
    http_exception,
)

BASE = "https://shop.example/api"


class Shop(ServiceClient):
    service_name = "Shop API"
    base_url = BASE


class AsyncShop(AsyncServiceClient):
    service_name = "Shop API"
    base_url = BASE


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=BASE, assert_all_called=True) as mock:
        yield mock


def sync_call(method: str, path: str, **kwargs: Any) -> Any:
    with Shop() as shop:
        if method == "GET":
            return shop.get_json(path)
        return shop.request(method, path, **kwargs)


def async_call(method: str, path: str, **kwargs: Any) -> Any:
    async def run() -> Any:
        async with AsyncShop() as shop:
            if method == "GET":
                return await shop.get_json(path)
            return await shop.request(method, path, **kwargs)

    return asyncio.run(run())


CALLS: dict[str, Callable[..., Any]] = {"sync": sync_call, "async": async_call}

# Charsets a server may name that are not text encodings, or that refuse to decode arbitrary
# bytes with replacement: each once raised UnicodeError (or LookupError) out of the mapping.
# (Python 3.13 decodes any bytes as punycode, into nonsense; the string escapes read a
# body's backslashes as Python's.)
ODD_CHARSETS = [
    "idna", "punycode", "undefined", "rot13", "base64", "hex", "zlib", "nonesuch",
    "unicode_escape", "raw_unicode_escape", "charmap", "utf-7",
]  # fmt: skip


@pytest.mark.parametrize("charset", ODD_CHARSETS)
@pytest.mark.parametrize("body", [b"bad \xff\xfe request", b"plain words", b"w\xc3\xb6rd " * 3000])
def test_a_server_chosen_charset_never_breaks_http_exception(charset: str, body: bytes) -> None:
    headers = {"content-type": f"text/plain; charset={charset}"}
    failure = http_exception("Shop API", "/orders", 500, body, headers)
    assert failure.explain_to_llm().startswith("The external service Shop API failed")
    assert "bad" in str(failure) or "plain" in str(failure) or "w\u00f6rd" in str(failure)


@pytest.mark.parametrize("mode", sorted(CALLS))
@pytest.mark.parametrize("charset", ["idna", "punycode", "undefined", "unicode_escape"])
@pytest.mark.parametrize("status", [200, 500])
def test_a_server_chosen_charset_never_breaks_the_client(
    mode: str, charset: str, status: int, router: respx.MockRouter
) -> None:
    router.get("/orders").respond(
        status, content=b"oops \xff", headers={"content-type": f"text/html; charset={charset}"}
    )
    with pytest.raises(LLMReadableCheckedException) as info:
        CALLS[mode]("GET", "/orders")
    assert "oops" in info.value.explain_to_llm()


DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize("mode", sorted(CALLS))
def test_a_too_deep_json_answer_is_an_answer_that_could_not_be_read(
    mode: str, router: respx.MockRouter
) -> None:
    router.get("/orders").respond(200, content=DEEP, headers={"content-type": "application/json"})
    with pytest.raises(ExternalServiceException) as info:
        CALLS[mode]("GET", "/orders")
    assert type(info.value) is ExternalServiceException
    assert "could not be read" in info.value.explain_to_llm()
    assert info.value.__cause__ is None


def test_a_too_deep_json_answer_snapshot(
    router: respx.MockRouter, llm_snapshot: SnapshotAssertion
) -> None:
    router.get("/orders").respond(200, content=DEEP, headers={"content-type": "application/json"})
    with pytest.raises(ExternalServiceException) as info:
        sync_call("GET", "/orders")
    assert info.value.explain_to_llm() == llm_snapshot


@pytest.mark.parametrize("mode", sorted(CALLS))
def test_a_too_deep_request_body_is_still_masked_on_a_400(
    mode: str, router: respx.MockRouter
) -> None:
    # The request body's values are masked in the answer: reading them must not blow the stack.
    body = b'{"k": ' * 5000 + b'"canary-deep-value"' + b"}" * 5000
    router.post("/orders").respond(400, content=b'{"error": "bad: canary-deep-value"}')
    with pytest.raises(LLMReadableCheckedException) as info:
        CALLS[mode]("POST", "/orders", content=body, headers={"content-type": "application/json"})
    assert "rejected the request" in info.value.explain_to_llm()


FIFTY_MB = 50_000_000


def peak_growth(action: Callable[[], object]) -> int:
    tracemalloc.start()
    with contextlib.suppress(ExternalServiceException):  # what a non-JSON answer raises
        action()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"word " * (FIFTY_MB // 5), id="bytes"),
        pytest.param("w\u00f6rd " * (FIFTY_MB // 5), id="str"),
        pytest.param(b"<html><body>" + b"a" * FIFTY_MB, id="html"),
    ],
)
@pytest.mark.parametrize("content_type", [None, "text/plain; charset=utf-16", "text/html"])
def test_a_huge_body_costs_only_its_windows(body: bytes | str, content_type: str | None) -> None:
    excerpt = peak_growth(lambda: body_excerpt(body, content_type=content_type))
    headers = {"content-type": content_type} if content_type else None
    mapping = peak_growth(lambda: http_exception("Shop API", "/x", 500, body, headers))
    assert excerpt < 1_000_000
    assert mapping < 1_000_000


@pytest.mark.parametrize("content_type", ["text/html", "text/plain", "application/json"])
def test_a_huge_answer_that_is_not_json_is_not_decoded_whole(content_type: str) -> None:
    request = httpx.Request("GET", f"{BASE}/orders")
    answer = httpx.Response(
        200,
        content=b"<html>" + b"word " * (FIFTY_MB // 5),
        headers={"content-type": content_type},
        request=request,
    )
    shop = Shop(httpx.Client())
    assert peak_growth(lambda: shop._decode(answer, empty_on_404=False)) < 1_000_000
    with pytest.raises(ExternalServiceException) as info:
        shop._decode(answer, empty_on_404=False)
    assert "not the JSON expected" in info.value.explain_to_llm()


def test_json_after_much_whitespace_is_still_decoded() -> None:
    request = httpx.Request("GET", f"{BASE}/orders")
    answer = httpx.Response(200, content=b" \n" * 5000 + b'{"ok": true}', request=request)
    assert Shop(httpx.Client())._decode(answer, empty_on_404=False) == {"ok": True}


def test_a_retry_after_of_zero_says_the_limit_may_be_over(llm_snapshot: SnapshotAssertion) -> None:
    failure = http_exception("Shop API", "/orders", 429, "slow down", {"Retry-After": "0"})
    assert failure.retry_after == 0
    assert "It asked for a wait of 0 seconds" in failure.explain_to_llm()
    assert failure.explain_to_llm() == llm_snapshot


def test_a_long_body_with_no_words_is_named_by_its_size(llm_snapshot: SnapshotAssertion) -> None:
    failure = http_exception("Shop API", "/orders", 500, "0123456789-" * 30)
    assert "Its answer was a body of 330 bytes with no words in it." in failure.explain_to_llm()
    assert failure.explain_to_llm() == llm_snapshot


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"<html><head><script>location='/login'</script></head></html>", "text/html"),
        (b"   \n\t  ", "text/plain"),
        (b"<html><body>" + b"<img src='logo.png'>" * 30 + b"</body></html>", "text/html"),
    ],
    ids=["scripts-only", "spaces-only", "images-only"],
)
def test_a_body_with_nothing_to_show_is_never_called_empty(
    body: bytes, content_type: str, llm_snapshot: SnapshotAssertion
) -> None:
    failure = http_exception("Shop API", "/orders", 500, body, {"Content-Type": content_type})
    text = failure.explain_to_llm()
    assert "no body" not in text
    assert "empty body" not in str(failure)
    assert f"a body of {len(body)} bytes with no text to show" in str(failure)
    if len(body) > 200:  # a long one is named by its size, as a body of digits is
        assert f"Its answer was a body of {len(body)} bytes with no text to show." in text
    assert text == llm_snapshot


def test_a_json_answer_that_does_not_parse_is_not_called_empty(router: respx.MockRouter) -> None:
    router.get("/orders").respond(
        200, content=b'{"a": 1', headers={"content-type": "application/json"}
    )
    with pytest.raises(ExternalServiceException) as info:
        sync_call("GET", "/orders")
    assert "was not the JSON expected." in info.value.explain_to_llm()
    assert "empty" not in info.value.explain_to_llm()


def test_an_empty_answer_where_json_was_asked_for(
    router: respx.MockRouter, llm_snapshot: SnapshotAssertion
) -> None:
    router.get("/orders").respond(200, content=b"", headers={"content-type": "application/json"})
    with pytest.raises(ExternalServiceException) as info:
        sync_call("GET", "/orders")
    assert "The body was empty." in info.value.explain_to_llm()
    assert info.value.explain_to_llm() == llm_snapshot
