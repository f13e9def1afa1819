"""fake_upstream's cost per urllib3 call against a bare ``http.server`` on loopback, as ratios
measured in the same run.

    python bench/bench_urllib3.py [--rounds N] [--calls N]

ok      ``PoolManager.request`` of a 200 JSON answer, decoded (``response.json()``).
404     the same for a 404, mapped by ``raise_for_response`` under ``llm_errors`` (what a tool
        does).
stream  a 64 KiB answer read with ``preload_content=False`` in 8 KiB chunks, as botocore reads
        an object's body.

Each round times ``--calls`` calls through the fake (urllib3's own ``urlopen``, retries and
``HTTPResponse`` around a pool whose ``_make_request`` the route table answers) and the same
calls to a ``ThreadingHTTPServer`` on 127.0.0.1 answering the same bytes over kept-alive
connections; rounds interleave, and the medians are printed with their ratio (below 1: the
fake is faster than the cheapest real server there is).
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import statistics
import threading
import time
from collections.abc import Callable

import urllib3

import pytest_nucleo as nucleo
from pytest_nucleo.testing import FakeUpstream

BODY = json.dumps({"number": "00000042", "status": "shipped"}).encode()
MISSING = b'{"error": "no such order"}'
LARGE = b"x" * 65_536


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # connections kept alive, as urllib3's pool keeps them
    # The head and the body leave in two writes: with Nagle's algorithm on, the body waits
    # for the client's delayed acknowledgement (40 ms), which no real server makes it pay.
    disable_nagle_algorithm = True

    def do_GET(self) -> None:
        if self.path.endswith("/missing"):
            status, body = 404, MISSING
        elif self.path.endswith("/large"):
            status, body = 200, LARGE
        else:
            status, body = 200, BODY
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def _calls(base: str) -> dict[str, Callable[[], object]]:
    pool = urllib3.PoolManager()

    @nucleo.llm_errors(service="Shop")
    def fetch(url: str) -> object:
        response = pool.request("GET", url, timeout=10, retries=False)
        nucleo.raise_for_response("Shop", response)
        return response.json()

    def ok() -> object:
        return fetch(f"{base}/orders/00000042")

    def missing() -> object:
        try:
            fetch(f"{base}/orders/missing")
        except nucleo.ResourceNotFoundException as error:
            return error
        raise AssertionError("the 404 was not mapped")

    def stream() -> object:
        response = pool.request("GET", f"{base}/large", preload_content=False, retries=False)
        size = sum(len(chunk) for chunk in response.stream(8192))
        response.release_conn()
        return size

    return {"ok": ok, "404": missing, "stream": stream}


def _time(call: Callable[[], object], count: int) -> float:
    start = time.perf_counter()
    for _ in range(count):
        call()
    return (time.perf_counter() - start) / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=300)
    options = parser.parse_args()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    loopback = _calls(f"http://127.0.0.1:{server.server_port}")
    faked = _calls("http://shop.example")
    times: dict[tuple[str, str], list[float]] = {}
    try:
        for _ in range(options.rounds):
            for name, call in loopback.items():
                times.setdefault((name, "loopback"), []).append(_time(call, options.calls))
            with FakeUpstream(assert_all_called=False) as upstream:
                upstream.get("http://shop.example/orders/00000042").respond(
                    200, content=BODY, headers={"Content-Type": "application/json"}
                )
                upstream.get("http://shop.example/orders/missing").respond(
                    404, content=MISSING, headers={"Content-Type": "application/json"}
                )
                upstream.get("http://shop.example/large").respond(200, content=LARGE)
                for name, call in faked.items():
                    times.setdefault((name, "fake"), []).append(_time(call, options.calls))
    finally:
        server.shutdown()
    print(f"urllib3 through fake_upstream vs http.server on loopback, median of {options.rounds}")
    print(f"load average: {' '.join(f'{load:.2f}' for load in os.getloadavg())}")
    print(f"{'call':<8}{'fake':>12}{'loopback':>12}{'ratio':>9}")
    for name in loopback:
        fake = statistics.median(times[(name, "fake")])
        real = statistics.median(times[(name, "loopback")])
        print(f"{name:<8}{fake * 1e6:>10.1f}us{real * 1e6:>10.1f}us{fake / real:>8.2f}x")


if __name__ == "__main__":
    main()
