"""Response -> exception mapping: each target as a ratio against a baseline measured in the same run.

Run: ``python bench/bench_mapping.py [--rounds N]``. Every measure is timed in batches, each
batch of a measure right after a batch of its baseline, and each pair gives one ratio; the
output shows the median time per call of both and the ratio's min, median and max over the
rounds. Times are the process's CPU time (``time.process_time``), with wall time beside them:
other processes' time slices do not count in CPU time, so a loaded machine moves the ratios
less than the times. The load average is printed at the start and at the end.

The targets:

- a small JSON error response (a vendor's 429, 404 or 503 body of a few hundred bytes) to its
  exception and that exception's ``explain_to_llm()`` text: at most 3x httpx's own
  ``response.raise_for_status()`` and ``str(error)`` on the same response;
- a 64 KiB HTML error page to its exception and text: at most 60 us of CPU;
- a 10 MB body at most 1.3x a 1 KiB one (only a window at each end of a body is decoded);
- masking 4 KB of text with three values the tool sent (``known``), against the same text
  masked without them.

A page the fast HTML reader gives up on is timed against one it reads (the last line): giving
up must cost no more than reading.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from pytest_nucleo import exception_for_response, http_exception
from pytest_nucleo._text._secrets import redact

KIB = 1024
MIB = 1024 * KIB


# --- bodies ------------------------------------------------------------------------------------

# Error bodies as the vendors send them (shapes from their documentation; ids made up).
_OPENAI_429 = {
    "error": {
        "message": "Rate limit reached for gpt-4o in organization org-Abc123 on tokens per min "
        "(TPM): Limit 30000, Used 29500, Requested 1200. Please try again in 1.4s. Visit "
        "https://platform.openai.com/account/rate-limits to learn more.",
        "type": "tokens",
        "param": None,
        "code": "rate_limit_exceeded",
    }
}
_GITHUB_404 = {
    "message": "Not Found",
    "documentation_url": "https://docs.github.com/rest/repos/repos#get-a-repository",
    "status": "404",
}
_STRIPE_404 = {
    "error": {
        "code": "resource_missing",
        "doc_url": "https://stripe.com/docs/error-codes/resource-missing",
        "message": "No such customer: 'cus_NffrFeUfNV2Hib'",
        "param": "id",
        "request_log_url": "https://dashboard.stripe.com/test/logs/req_1a2b3c4d5e6f?t=1700000000",
        "type": "invalid_request_error",
    }
}
_GEMINI_503 = {
    "error": {
        "code": 503,
        "message": "The model is overloaded. Please try again later.",
        "status": "UNAVAILABLE",
    }
}


@dataclass(frozen=True)
class Answer:
    """One failed response: what the mapping reads, and the same as an httpx response."""

    name: str
    service: str
    url: str
    status: int
    body: bytes
    headers: dict[str, str]

    def response(self) -> httpx.Response:
        request = httpx.Request("GET", self.url, headers={"User-Agent": "bench"})
        return httpx.Response(self.status, headers=self.headers, content=self.body, request=request)


SMALL_JSON = [
    Answer(
        "OpenAI 429",
        "OpenAI",
        "https://api.openai.com/v1/chat/completions",
        429,
        json.dumps(_OPENAI_429, indent=4).encode(),
        {"content-type": "application/json", "retry-after": "2", "x-request-id": "req_abc"},
    ),
    Answer(
        "GitHub 404",
        "GitHub",
        "https://api.github.com/repos/octo/nope",
        404,
        json.dumps(_GITHUB_404).encode(),
        {"content-type": "application/json; charset=utf-8", "x-ratelimit-remaining": "4999"},
    ),
    Answer(
        "Stripe 404",
        "Stripe",
        "https://api.stripe.com/v1/customers/cus_NffrFeUfNV2Hib",
        404,
        json.dumps(_STRIPE_404, indent=2).encode(),
        {"content-type": "application/json", "request-id": "req_1a2b3c"},
    ),
    Answer(
        "Gemini 503",
        "Gemini",
        "https://generativelanguage.googleapis.com/v1beta/models/gemini:generateContent",
        503,
        json.dumps(_GEMINI_503, indent=2).encode(),
        {"content-type": "application/json; charset=UTF-8"},
    ),
]


def text_body(size: int) -> bytes:
    line = b"upstream failure: worker 17 could not read shard 4 (timeout after 30 s)\n"
    return (line * (size // len(line) + 1))[:size]


def json_body(size: int) -> bytes:
    item = {"id": 123456, "error": "quota check failed", "detail": "x" * 40}
    items = [item] * (size // len(json.dumps(item)) + 1)
    return json.dumps({"errors": items}).encode()[:size]


def html_body(size: int) -> bytes:
    head = b"<html><head><title>502 Bad Gateway</title><style>body{margin:0}</style></head><body>"
    row = b"<div class='row'><span>upstream</span> <b>timed out</b></div>\n"
    middle = row * (size // len(row) + 1)
    return (head + middle)[: size - 14] + b"</body></html>"


def known_text() -> tuple[str, tuple[str, ...]]:
    """4 KB of a service's log lines that echo what the tool sent once, and the three values
    the tool sent: its key, the Authorization header holding it, an account id."""
    key = "sk-live-abcdef0123456789ABCDEF"
    lines = [
        f"2026-12-07T10:{i:02d}:00Z worker-{i % 7} handled request {1000 + i} for tenant acme "
        f"in {i * 3 % 97} ms, status ok\n"
        for i in range(60)
    ]
    lines[5] = (
        f"2026-12-07T10:05:00Z rejected request with key {key} for account acct_9876543210: "
        "not allowed\n"
    )
    return "".join(lines)[:4096], (key, f"Bearer {key}", "acct_9876543210")


# --- timing ------------------------------------------------------------------------------------


def batch(call: Callable[[], object], number: int) -> tuple[float, float]:
    """CPU and wall seconds per call over ``number`` calls."""
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(number):
        call()
    return (time.process_time() - cpu) / number, (time.perf_counter() - wall) / number


def number_for(call: Callable[[], object], seconds: float = 0.02) -> int:
    """Calls in about ``seconds`` of CPU: a batch long enough for process_time's resolution."""
    call()  # warm what is cached
    number = 1
    while True:
        cpu, _ = batch(call, number)
        if cpu * number >= seconds or number >= 1 << 16:
            return max(1, int(number * seconds / max(cpu * number, 1e-9)))
        number *= 4


@dataclass
class Paired:
    """A measure and its baseline, timed in turns: per-call times and per-round ratios."""

    cpu: list[float]
    wall: list[float]
    base_cpu: list[float]
    base_wall: list[float]

    @property
    def ratios(self) -> list[float]:
        return [a / b for a, b in zip(self.cpu, self.base_cpu, strict=True)]

    def spread(self) -> str:
        ratios = sorted(self.ratios)
        return f"{ratios[0]:.2f} / {statistics.median(ratios):.2f} / {ratios[-1]:.2f}"


def _explained_response(service: str, response: httpx.Response) -> str:
    """The model's text for an error ``response``, mapped whole."""
    mapped = exception_for_response(service, response)
    assert mapped is not None  # every response timed here is an error
    return mapped.explain_to_llm()


def _explained_parts(answer: Answer) -> str:
    """The model's text for an error answer, mapped from its parts."""
    return http_exception(
        answer.service, answer.url, answer.status, answer.body, answer.headers
    ).explain_to_llm()


def paired(call: Callable[[], object], baseline: Callable[[], object], rounds: int) -> Paired:
    n_call, n_base = number_for(call), number_for(baseline)
    result = Paired([], [], [], [])
    for _ in range(rounds):
        base_cpu, base_wall = batch(baseline, n_base)
        cpu, wall = batch(call, n_call)
        result.cpu.append(cpu)
        result.wall.append(wall)
        result.base_cpu.append(base_cpu)
        result.base_wall.append(base_wall)
    return result


def us(seconds: list[float]) -> str:
    return f"{statistics.median(seconds) * 1e6:8.1f} us"


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown (no /proc/loadavg)"


# --- the targets -------------------------------------------------------------------------------


def floor(response: httpx.Response) -> str:
    """httpx's own: raise_for_status() and the error's text."""
    try:
        response.raise_for_status()
    except httpx.HTTPStatusError as error:
        return str(error)
    return ""


def small_json(rounds: int) -> None:
    print("1. small JSON error response -> exception and explain_to_llm() text (goal <= 3x)")
    print("   baseline: httpx response.raise_for_status() + str(error), on the same response")
    print("   ratio columns: min / median / max over the rounds, CPU time")
    for answer in SMALL_JSON:
        response = answer.response()
        mapped = paired(
            functools.partial(_explained_response, answer.service, response),
            functools.partial(floor, response),
            rounds,
        )
        parts = paired(
            functools.partial(_explained_parts, answer),
            functools.partial(floor, response),
            rounds,
        )
        print(
            f"   {answer.name:<11} ({len(answer.body):3d} B) baseline {us(mapped.base_cpu)} | "
            f"exception_for_response {us(mapped.cpu)} ratio {mapped.spread()} | "
            f"http_exception {us(parts.cpu)} ratio {parts.spread()} | wall {us(mapped.wall)}"
        )


def html_page(rounds: int) -> None:
    body = html_body(64 * KIB)
    headers = {"Retry-After": "30", "Content-Type": "text/html; charset=utf-8"}
    response = httpx.Response(
        503, headers=headers, content=body, request=httpx.Request("GET", "https://x.example/v1")
    )
    mapped = paired(
        lambda: http_exception(
            "Bench", "/v1/items/42?api_key=k", 503, body, headers
        ).explain_to_llm(),
        lambda: floor(response),
        rounds,
    )
    whole = paired(
        lambda: exception_for_response("Bench", response).explain_to_llm(),  # type: ignore[union-attr]
        lambda: floor(response),
        rounds,
    )
    print("2. a 64 KiB HTML error page -> exception and text (goal <= 60 us of CPU)")
    cpu = sorted(mapped.cpu)
    print(
        f"   http_exception         {us(mapped.cpu)} CPU (min {cpu[0] * 1e6:.1f}, max "
        f"{cpu[-1] * 1e6:.1f}), wall {us(mapped.wall)}; {mapped.spread()} x the baseline "
        f"({us(mapped.base_cpu).strip()})"
    )
    print(
        f"   exception_for_response {us(whole.cpu)} CPU, with what the request sent read for "
        f"masking; {whole.spread()} x the baseline"
    )


def large_bodies(rounds: int) -> None:
    print("3. a 10 MB body vs a 1 KiB one, status 503 (goal <= 1.3x)")
    for name, make, content_type in [
        ("text", text_body, "text/plain"),
        ("json", json_body, "application/json"),
        ("html", html_body, "text/html; charset=utf-8"),
    ]:
        small, large = make(1 * KIB), make(10 * MIB)
        headers = {"Retry-After": "30", "Content-Type": content_type}
        result = paired(
            functools.partial(http_exception, "Bench", "/v1/x", 503, large, headers),
            functools.partial(http_exception, "Bench", "/v1/x", 503, small, headers),
            rounds,
        )
        print(
            f"   {name:<5} 1 KiB {us(result.base_cpu)}  10 MB {us(result.cpu)}  "
            f"ratio {result.spread()}"
        )


def known_values(rounds: int) -> None:
    text, known = known_text()
    result = paired(lambda: redact(text, known), lambda: redact(text), rounds)
    print("4. masking 4 KB with three values the tool sent, vs the same text without them")
    print(f"   without {us(result.base_cpu)}  with {us(result.cpu)}  ratio {result.spread()}")


def refused_page(rounds: int) -> None:
    # A page the fast reader gives up on: a long text, then markup only html.parser reads (a
    # self-closing tag). Giving up must cost no more than reading: the reader once retried
    # its pattern at every character of the text before such markup.
    start, end = b"<html><body><pre>" + b"word " * 200, b"word " * 400 + b"</pre></body></html>"
    headers = {"Content-Type": "text/html"}
    plain, odd = (start + b"<br>" + end, start + b"<br/>" + end)
    result = paired(
        lambda: http_exception("Bench", "/x", 500, odd, headers),
        lambda: http_exception("Bench", "/x", 500, plain, headers),
        rounds,
    )
    print(
        f"5. html page, 1 kB of text then a line break: {us(result.base_cpu).strip()} as <br>, "
        f"{us(result.cpu).strip()} as <br/>, ratio {result.spread()} (html.parser reads the "
        "second)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=15, help="paired batches per measure")
    rounds = parser.parse_args().rounds
    print(f"load average {load_average()}")
    print(f"each measure: {rounds} rounds of a batch of its baseline, then a batch of it")
    small_json(rounds)
    html_page(rounds)
    large_bodies(rounds)
    known_values(rounds)
    refused_page(rounds)
    print(f"load average {load_average()}")


if __name__ == "__main__":
    main()
