"""Response -> exception mapping, 64 KiB body vs 10 MB body, measured in one run.

Run: ``python bench/bench_mapping.py``. Prints the median time of ``http_exception`` for each
body (text, JSON and HTML), and the ratio 10 MB / 64 KiB, which should stay near 1 (at most
~4): only a window at each end of a body is ever decoded. Then a page the fast HTML reader
gives up on against one it reads. Times are medians of repeated runs
on this machine; compare ratios, not absolute numbers, across machines.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable

from pytest_nucleo import http_exception

KIB = 1024
MIB = 1024 * KIB


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


def median_us(call: Callable[[], object], rounds: int = 15, number: int = 200) -> float:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(number):
            call()
        samples.append((time.perf_counter() - start) / number * 1e6)
    return statistics.median(samples)


def main() -> None:
    print("response -> exception mapping (http_exception, status 503), median of 15 x 200")
    print(f"{'body':<6} {'64 KiB':>10} {'10 MB':>10} {'ratio':>7}")
    for name, make, content_type in [
        ("text", text_body, "text/plain"),
        ("json", json_body, "application/json"),
        ("html", html_body, "text/html; charset=utf-8"),
    ]:
        small, large = make(64 * KIB), make(10 * MIB)
        headers = {"Retry-After": "30", "Content-Type": content_type}
        results = []
        for body in (small, large):
            results.append(
                median_us(
                    lambda body=body, headers=headers: http_exception(
                        "Bench", "/v1/items/42?api_key=k", 503, body, headers
                    )
                )
            )
        print(
            f"{name:<6} {results[0]:>8.1f}us {results[1]:>8.1f}us {results[1] / results[0]:>6.2f}x"
        )
    print("target: <= 50 us for bodies up to 64 KiB; 10 MB <= ~4x the 64 KiB time")
    # A page the fast reader gives up on: a long text, then markup only html.parser reads (a
    # self-closing tag). Giving up must cost no more than reading: the reader once retried
    # its pattern at every character of the text before such markup.
    start, end = b"<html><body><pre>" + b"word " * 200, b"word " * 400 + b"</pre></body></html>"
    headers = {"Content-Type": "text/html"}
    plain, odd = (
        median_us(lambda body=start + tag + end: http_exception("Bench", "/x", 500, body, headers))
        for tag in (b"<br>", b"<br/>")
    )
    print(
        f"html page, 1 kB of text then a line break: {plain:.1f}us as <br>, {odd:.1f}us as "
        f"<br/>, {odd / plain:.2f}x (html.parser reads the second)"
    )


if __name__ == "__main__":
    main()
