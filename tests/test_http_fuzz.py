"""Totality and secrecy of the HTTP mapping over many random answers (no foreign exception, no secret).

Plain seeded ``random``, not hypothesis: at this size hypothesis would cost minutes (a
hypothesis example costs about a millisecond of its own).
"""

from __future__ import annotations

import inspect
import json
import logging
import random
import string
import types
from collections.abc import Iterator, Sequence
from typing import TypeVar
from urllib.parse import quote

import httpx
import pytest

import pytest_nucleo as nucleo
from pytest_nucleo import (
    HttpErrorResponse,
    LLMReadableCheckedException,
    http_exception,
    raise_for_status,
)
from tests._frameworks import needs_frameworks

TEXT_LIMIT = 2200
"""Longest ``explain_to_llm()`` of an HTTP failure, documented in the docs ("Write a service client"): a service name
(200), an endpoint (300) and a body excerpt (1,000) in fixed wording, plus the hint line."""

CASES = 100_000
CANARY_CASES = 10_000

RETRY_AFTER_VALUES = [
    "0",
    "1",
    "30",
    "120",
    "86400",
    "999999999999",
    "9" * 5000,
    "+1",
    "-1",
    "1e3",
    "1.5",
    "nan",
    "inf",
    "-inf",
    "\uff11\uff12",
    "\u0661",
    " 7 ",
    "",
    "soon",
    "Wed, 21 Oct 2015 07:28:00 GMT",
    "Sun, 06 Nov 2095 08:49:37 GMT",
    "Sunday, 06-Nov-94 08:49:37 GMT",
    "Sun Nov  6 08:49:37 1994",
    "Mon, 32 Foo 2020 99:99:99 GMT",
    "Wed, 21 Oct 2015 07:28:00 +9999",
    "\x00",
    "30, 60",
]
CONTENT_TYPES = [
    "application/json",
    "text/html; charset=utf-8",
    "text/plain; charset=latin-1",
    "text/html; charset=bogus-codec",
    "application/octet-stream",
    "text/xml",
    "",
    "text/plain; charset=utf-16",
]
HTML_PAGES = [
    "<html><head><title>{t}</title><style>b{{}}</style></head><body><h1>{t}</h1><p>{t}</p>"
    "<script>var x = '{t}';</script></body></html>",
    "<!DOCTYPE html><html><body><div class='e'>{t}<br>{t}</div><!-- {t} --></body></html>",
    "<html><body><p>unclosed {t} <b>tag <i",
]
WORDS = [
    "rate limit",
    "throttled",
    "permission denied",
    "not found",
    "Bad credentials",
    "captcha",
    "quota exceeded",
    "internal error",
    "SlowDown",
    "ok",
    "é",
    "日本",
    "\u202e",
]


T = TypeVar("T")


def _big_bodies(rng: random.Random) -> list[bytes]:
    """A few 1 MB bodies, built once: random bytes, HTML, JSON, text."""
    return [
        rng.randbytes(1 << 20),
        ("<html><body>" + "<p>filler text</p>" * 60_000 + "</body></html>").encode(),
        json.dumps({"items": ["x" * 50] * 20_000}).encode(),
        ("lorem ipsum " * 90_000).encode(),
    ]


_PIECES = [*WORDS, " ", "\r\n", "\t", '"', "<", ">", "&amp;", "\x00", "\ufffd"]


def _random_text(rng: random.Random, size: int) -> str:
    """``size`` pieces, each a piece of markup or a word 30% of the time, else a printable
    character; drawn a column at a time (one ``rng.choice`` per character cost as much as
    mapping the texts)."""
    words = rng.choices(_PIECES, k=size)
    characters = rng.choices(string.printable, k=size)
    return "".join(
        word if draw < 0.3 else character
        for word, character, draw in zip(
            words, characters, [rng.random() for _ in range(size)], strict=True
        )
    )


def _random_body(rng: random.Random, kind: int, text: str, big: list[bytes]) -> bytes | str | None:
    """A body of one of eight kinds; ``text`` is a random text, with the case's secret or not."""
    if kind == 0:
        return rng.choice([b"", None, ""])
    if kind == 1:
        return rng.choice(big)
    if kind == 2:
        return rng.randbytes(rng.randint(1, 3000))
    if kind == 3:
        return rng.choice(HTML_PAGES).format(t=text).encode("utf-8", "replace")
    if kind == 4:
        return json.dumps({"error": {"message": text, "code": rng.randint(0, 999)}}).encode()
    if kind == 5:
        return text  # a str body
    if kind == 6:
        return (text * rng.randint(1, 400)).encode("utf-8", "replace")
    return text.encode(rng.choice(["utf-8", "utf-16", "latin-1"]), "replace")


Case = tuple[int, str, str, str, bytes | str | None, list[tuple[str, str]]]
ENDPOINTS = [
    "https://u:{secret}@api.example/v1/items/{id}?api_key={secret}#f",
    "/v1/search?q={secret}",
    "{path}",
]


def _random_cases(
    rng: random.Random, count: int, big: list[bytes], texts: list[str], paths: list[str]
) -> Iterator[Case]:
    """``count`` random answers: status, secret, service, endpoint, body and headers.

    Every case gets its own draw of each field. The draws are made a field at a time for all
    cases with ``rng.choices``: one ``rng.choice`` or ``rng.randint`` costs about 0.6 us in
    Python, and drawing some twenty of them per case took as long as mapping it. Weights give
    the same distributions as drawing the kind first, then the value.
    """

    def column(population: Sequence[T], weights: Sequence[float] | None = None) -> list[T]:
        return rng.choices(population, weights, k=count)

    statuses = column(range(100, 600))
    # A fixed name (each a quarter of the time), or a run of 1 to 400 "x" (the last quarter).
    runs = ["x" * size for size in range(1, 401)]
    services = column(["PubChem", "Shop API", "S\r\nvc", *runs], [len(runs)] * 3 + [1] * len(runs))
    endpoints = zip(column(ENDPOINTS), column(range(10**9 + 1)), column(paths), strict=True)
    bodies = zip(column(range(8)), column(texts), column([False, True]), strict=True)
    # Headers: 0 to 2 Retry-After values; a Content-Type 60% of the time, a remaining count
    # and a non-ASCII header 20% of the time each; in a random order.
    retries = zip(
        column(range(3)), column(RETRY_AFTER_VALUES), column(RETRY_AFTER_VALUES), strict=True
    )
    content_types = column(
        [*CONTENT_TYPES, None], [0.6 / len(CONTENT_TYPES)] * len(CONTENT_TYPES) + [0.4]
    )
    remaining = column(["0", "10", "", "zero", None], [0.05] * 4 + [0.8])
    notes = column([True, False], [0.2, 0.8])
    for status, service, endpoint, body, retry, content_type, left, note in zip(
        statuses, services, endpoints, bodies, retries, content_types, remaining, notes, strict=True
    ):
        secret = _canary(rng)
        template, number, path = endpoint
        kind, text, echo = body
        if echo:
            text += f" echo {secret} "
        how_many, first, second = retry
        headers = [("Retry-After", value) for value in (first, second)[:how_many]]
        if content_type is not None:
            headers.append(("Content-Type", content_type))
        if left is not None:
            headers.append(("X-RateLimit-Remaining", left))
        if note:
            headers.append(("X-Note", "caf\u00e9 \u65e5\u672c"))  # non-ASCII value
        rng.shuffle(headers)
        yield (
            status,
            secret,
            service,
            template.format(secret=secret, id=number, path=path),
            _random_body(rng, kind, text, big),
            headers,
        )


def _canary(rng: random.Random) -> str:
    return f"cnry{rng.getrandbits(72):018x}"


@pytest.mark.slow
def test_100k_random_answers_map_totally_within_bounds() -> None:
    rng = random.Random(20_251_130)
    big = _big_bodies(rng)
    # Random texts are drawn from a pool: building each one character by character cost
    # more than mapping it.
    texts = [_random_text(rng, rng.randint(0, 200)) for _ in range(2000)]
    paths = ["/" + _random_text(rng, rng.randint(0, 500)) for _ in range(500)]
    foreign: list[str] = []
    longest = 0
    for status, secret, service, endpoint, body, headers in _random_cases(
        rng, CASES, big, texts, paths
    ):
        try:
            if 200 <= status <= 299:
                assert raise_for_status(service, endpoint, status, body, headers) is None
                continue
            exc = http_exception(service, endpoint, status, body, headers, known=[secret])
        except Exception as error:  # any exception at all is a failure of totality
            foreign.append(f"{status}: {type(error).__name__}: {error!s:.200}")
            continue
        assert isinstance(exc, LLMReadableCheckedException)
        assert isinstance(exc, HttpErrorResponse)
        assert exc.status_code == status
        text = exc.explain_to_llm()
        longest = max(longest, len(text))
        assert len(exc.llm_message) > 0
        assert len(text) <= TEXT_LIMIT, text
        assert "more characters cut" not in exc.llm_message[-40:]  # the guidance is never cut
        assert "\r" not in text
        assert secret not in text
        assert secret not in str(exc)
        if exc.retry_after is not None:
            assert 0 <= exc.retry_after <= nucleo.RETRY_AFTER_CAP
    assert foreign == []
    assert longest > 400  # the bound was approached, so it was tested


# --- secret canaries through the client ------------------------------------------------------


def _echoing_handler(rng: random.Random, canaries: dict[str, str]) -> httpx.MockTransport:
    """A server that answers with a random status and echoes what it received."""

    def handle(request: httpx.Request) -> httpx.Response:
        kind = rng.randrange(10)
        if kind == 0:
            # Real httpcore messages carry no URL; ours must not depend on that, but the cause
            # stays for the logs, so it is realistic here.
            raise rng.choice([httpx.ConnectError, httpx.ReadTimeout])("[Errno 111] refused")
        received = f"{request.url} {request.headers.raw} {request.content!r}"
        seen = [value for value in canaries.values() if value in received]
        echo = " ".join(rng.choice([value, quote(value, safe="")]) for value in seen)
        body = rng.choice(
            [
                f'{{"error": "bad request", "echo": "{echo}", "url": "{request.url}"}}',
                f"<html><body><h1>Error</h1><p>{echo}</p><pre>{request.headers}</pre></body></html>",
                f"denied for Authorization: {request.headers.get('authorization')} and {echo}",
                f"{echo} " * rng.randint(1, 3000),
            ]
        )
        status = rng.choice([200, 400, 401, 403, 404, 418, 429, 500, 502, 503])
        return httpx.Response(status, text=body, headers={"Retry-After": rng.choice(["5", "x"])})

    return httpx.MockTransport(handle)


class Echo(nucleo.ServiceClient):
    service_name = "Echo"
    base_url = "https://echo.example/api"


@pytest.mark.slow
def test_canaries_never_reach_texts_or_logs(caplog: pytest.LogCaptureFixture) -> None:
    rng = random.Random(12)
    tool_log = logging.getLogger("tool")
    canaries: dict[str, str] = {}
    # One client for all cases (building one per case would dominate); each case sets its
    # own credentials on it.
    client = httpx.Client(transport=_echoing_handler(rng, canaries))
    shop = Echo(client)
    checked = 0
    # httpx's own "HTTP Request: GET <url>" INFO line prints the URL with userinfo and query;
    # that logger is not ours (the docs say to keep it at WARNING), so it is kept there.
    caplog.set_level(logging.WARNING, logger="httpx")
    with caplog.at_level(logging.DEBUG):
        for _ in range(CANARY_CASES):
            canaries.clear()
            canaries.update(
                (name, _canary(rng))
                for name in ("user", "password", "query", "auth", "api_key", "cookie", "json")
            )
            client.headers = httpx.Headers(
                {
                    "Authorization": f"Bearer {canaries['auth']}",
                    "X-Api-Key": canaries["api_key"],
                    "Cookie": f"theme=dark; session={canaries['cookie']}",
                }
            )
            url = (
                f"https://{canaries['user']}:{canaries['password']}@echo.example/api/items/1"
                f"?api_key={canaries['query']}"
            )
            try:
                if rng.random() < 0.5:
                    shop.get_json(url, params={"q": canaries["query"]})
                else:
                    shop.request("POST", url, json={"client_secret": canaries["json"]})
            except nucleo.LLMReadableException as exc:
                shown = f"{exc}\n{exc!r}\n{exc.explain_to_llm()}"
                # What a tool boundary logs: correctable at WARNING, the rest with the stack.
                if exc.is_correctable:
                    tool_log.warning("tool failed: %s", exc)
                else:
                    tool_log.error("tool failed: %s", exc, exc_info=exc)
                for value in canaries.values():
                    assert value not in shown
                checked += 1
            logged = "".join(f"{r.getMessage()}{caplog.handler.format(r)}" for r in caplog.records)
            for value in canaries.values():
                assert value not in logged
            caplog.clear()
    assert checked > 0.8 * CANARY_CASES


# --- totality for every client's response objects --------------------------------------------


class _Responses:
    """Build a response of each supported client from one random answer, cheaply: the objects
    are those the clients return, filled in directly instead of parsed off a socket."""

    def __init__(self) -> None:
        import asyncio

        import aiohttp
        import httpx2
        import requests
        import urllib3
        from multidict import CIMultiDict, CIMultiDictProxy
        from yarl import URL

        self.httpx2, self.requests, self.urllib3, self.aiohttp = httpx2, requests, urllib3, aiohttp
        self.multi, self.proxy, self.yarl = CIMultiDict, CIMultiDictProxy, URL
        self.loop = asyncio.new_event_loop()
        self.kinds = ("httpx", "httpx2", "requests", "urllib3", "aiohttp")
        # What an aiohttp response reads of the writer that sent its request (nothing here).
        self.written = types.SimpleNamespace(output_size=0)

    def close(self) -> None:
        self.loop.close()

    def build(
        self,
        kind: str,
        status: int,
        url: str,
        secret: str,
        body: bytes,
        headers: list[tuple[str, str]],
    ) -> object:
        sent = {"Authorization": f"Bearer {secret}", "Accept": "application/json"}
        if kind in ("httpx", "httpx2"):
            lib = httpx if kind == "httpx" else self.httpx2
            raw = [(name, value.encode("utf-8")) for name, value in headers]
            try:
                request = lib.Request("GET", url, headers=sent)
            except Exception:  # a random path httpx will not parse: the client would refuse it
                request = lib.Request("GET", f"https://api.example/?api_key={secret}", headers=sent)
            return lib.Response(status, headers=raw, content=body, request=request)
        if kind == "requests":
            prepared = self.requests.PreparedRequest()
            prepared.method, prepared.url, prepared.body = "GET", url, None
            prepared.headers = self.requests.structures.CaseInsensitiveDict(sent)
            response = self.requests.Response()
            response.status_code, response.url, response._content = status, url, body
            response.headers = self.requests.structures.CaseInsensitiveDict(headers)
            response.request = prepared
            return response
        if kind == "urllib3":
            return self.urllib3.HTTPResponse(
                body=body, status=status, headers=headers, request_url=url, preload_content=True
            )
        try:
            target = self.yarl(url)
        except (ValueError, TypeError):
            target = self.yarl(f"https://api.example/?api_key={secret}")
        info = self.aiohttp.RequestInfo(target, "GET", self.proxy(self.multi(sent)), target)
        # aiohttp 3.14 asks the writer of the sent request for its size; 3.13 and before take none.
        takes_writer = "stream_writer" in inspect.signature(self.aiohttp.ClientResponse).parameters
        response = self.aiohttp.ClientResponse(
            "GET", target, writer=None, continue100=None, timer=None, request_info=info,
            traces=[], loop=self.loop, session=None,  # type: ignore[arg-type]
            **({"stream_writer": self.written} if takes_writer else {}),
        )  # fmt: skip
        response.status = status
        response._headers = self.proxy(self.multi(headers))
        response._body = body
        return response


CLIENT_CASES = 20_000
"""Random answers spread over the five clients (about 4,000 each), as the client objects a
tool holds, so the fuzz checks what the clients add: reading their objects, masking what their
requests carried. The mapping behind them is fuzzed with 100,000 answers above; 100,000 here
too cost the suite about a minute of CPU for no more of what the clients add, which a few
thousand objects of each client, of every body kind and header mix, already cover."""

CLIENT_SLICES = 2
"""The client cases run as this many tests of their own seed, so the suite's workers share
them (each slice is a few seconds)."""


@pytest.mark.slow
@pytest.mark.parametrize("piece", range(CLIENT_SLICES))
def test_random_answers_of_every_client_map_totally_within_bounds(piece: int) -> None:
    rng = random.Random(20_261_201 + piece)
    cases_here = CLIENT_CASES // CLIENT_SLICES
    big = _big_bodies(rng)
    texts = [_random_text(rng, rng.randint(0, 200)) for _ in range(2000)]
    paths = ["/" + _random_text(rng, rng.randint(0, 500)) for _ in range(500)]
    clients = _Responses()
    kinds = rng.choices(clients.kinds, k=cases_here)
    foreign: list[str] = []
    seen: dict[str, int] = dict.fromkeys(clients.kinds, 0)
    try:
        cases = _random_cases(rng, cases_here, big, texts, paths)
        for kind, (status, secret, service, endpoint, body, headers) in zip(
            kinds, cases, strict=True
        ):
            if not endpoint.startswith("http"):
                endpoint = "https://api.example" + (endpoint if endpoint.startswith("/") else "/")
            raw = body.encode("utf-8", "replace") if isinstance(body, str) else body or b""
            response = clients.build(kind, status, endpoint, secret, raw, headers)
            try:
                # A urllib3 response does not know the headers it was requested with.
                known = [secret] if kind == "urllib3" else []
                exc = nucleo.exception_for_response(service, response, known=known)
            except Exception as error:  # any exception at all is a failure of totality
                foreign.append(f"{kind} {status}: {type(error).__name__}: {error!s:.200}")
                continue
            seen[kind] += 1
            if 200 <= status <= 299:
                assert exc is None
                continue
            assert isinstance(exc, HttpErrorResponse)
            assert exc.status_code == status
            text = exc.explain_to_llm()
            assert len(exc.llm_message) > 0
            assert len(text) <= TEXT_LIMIT, text
            assert "\r" not in text
            assert secret not in text, (kind, text)  # sent in the query and the credentials
            assert secret not in str(exc)
    finally:
        clients.close()
    assert foreign[:5] == []
    assert min(seen.values()) > cases_here // 10  # every client was fuzzed


# --- secret canaries through bare client errors and provider SDK errors ----------------------

PROVIDER_CASES = 2_000


def _provider_error(rng: random.Random, canaries: dict[str, str]) -> Exception:
    """An openai or anthropic status error as the SDK builds it, for a request carrying the
    canaries (API key, conversation) and a provider answer echoing some of them."""
    import anthropic
    import httpx2
    import openai

    sdk = rng.choice([openai, anthropic])
    request = httpx2.Request(
        "POST",
        f"https://api.example/v1/chat?key={canaries['query']}",
        headers={"Authorization": f"Bearer {canaries['key']}", "x-api-key": canaries["key"]},
        json={"model": "m-1", "messages": [{"role": "user", "content": canaries["prompt"]}]},
    )
    carried = [canaries["key"], canaries["prompt"], canaries["query"]]  # what it sent
    echo = " ".join(rng.sample(carried, rng.randint(0, len(carried))))
    code = rng.choice(["insufficient_quota", "rate_limit_exceeded", "model_not_found", None, 7])
    message = rng.choice(
        [
            f"Incorrect API key provided: {echo}",
            f"Your credit balance is too low. {echo}",
            f"prompt is too long: {echo}",
            f"model: {echo}",
            echo,
        ]
    )
    body = rng.choice(
        [
            {"error": {"message": message, "type": code, "code": code}},
            {"type": "error", "error": {"type": "overloaded_error", "message": message}},
            {"error": message},
            [message],
        ]
    )
    status = rng.choice([400, 401, 403, 404, 409, 413, 422, 429, 500, 502, 503, 504, 529])
    headers = {"retry-after": rng.choice(["3", "x", "999999"])}
    response = httpx2.Response(status, json=body, headers=headers, request=request)
    error = sdk.APIStatusError(f"Error code: {status} - {body}", response=response, body=body)
    return rng.choice([error, sdk.APIConnectionError(request=request)]) if status == 504 else error


def _client_error(rng: random.Random, canaries: dict[str, str]) -> Exception:
    """A bare transport error of httpx2 or requests for a URL holding the canaries."""
    import httpx2
    import requests

    url = (
        f"https://{canaries['user']}:{canaries['password']}@api.example/v1/x"
        f"?api_key={canaries['query']}"
    )
    text = f"[Errno 111] Connection refused ({url})"
    if rng.random() < 0.5:
        kind = rng.choice([httpx2.ConnectError, httpx2.ReadTimeout, httpx2.RemoteProtocolError])
        return kind(text, request=httpx2.Request("GET", url))
    prepared = requests.Request("GET", url).prepare()
    kind = rng.choice(
        [requests.ConnectionError, requests.ReadTimeout, requests.exceptions.SSLError]
    )
    return kind(text, request=prepared)


def test_canaries_never_reach_provider_or_client_error_texts() -> None:
    needs_frameworks("anthropic", "openai")
    rng = random.Random(1201)
    checked = 0
    for _ in range(PROVIDER_CASES):
        canaries = {name: _canary(rng) for name in ("key", "prompt", "query", "user", "password")}
        canaries["prompt"] = f"please summarise {canaries['prompt']} for me"
        error = (_provider_error if rng.random() < 0.7 else _client_error)(rng, canaries)
        try:
            result: BaseException = nucleo.unwrap(error)
        except (nucleo.LLMReadableException, nucleo.UpstreamRetryException) as raised:
            result = raised
        assert result is not error  # every one of them was recognised
        shown = []
        for member in nucleo._causes.iter_chain(result):
            if isinstance(member, nucleo.LLMReadableException):
                shown += [str(member), repr(member), member.explain_to_llm()]
            elif isinstance(member, nucleo.UpstreamRetryException):
                shown += [str(member), repr(member)]
        text = "\n".join(shown)
        for value in canaries.values():
            assert value not in text
        checked += 1
    assert checked == PROVIDER_CASES
