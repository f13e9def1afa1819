"""fake_upstream's cost per urllib call against a bare ``http.server`` on loopback, as ratios
measured in the same run.

    python bench/bench_urllib.py [--rounds N] [--calls N]

ok      ``urlopen`` of a 200 JSON answer, read and decoded.
404     ``urlopen`` raising ``HTTPError`` for a 404, mapped by ``llm_errors`` (what a tool does).

Each round times ``--calls`` calls through the fake (routes answered in process, by the real
urllib and http.client above a fake socket) and the same calls to a ``ThreadingHTTPServer`` on
127.0.0.1 answering the same bytes; rounds interleave, and the medians are printed with their
ratio (below 1: the fake is faster than the cheapest real server there is).
"""

from __future__ import annotations

import argparse
import http.server
import json
import statistics
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable

import pytest_nucleo as nucleo
from pytest_nucleo.testing import FakeUpstream

BODY = json.dumps({"number": "00000042", "status": "shipped"}).encode()


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        missing = self.path.endswith("/missing")
        body = b'{"error": "no such order"}' if missing else BODY
        self.send_response(404 if missing else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def _calls(base: str) -> dict[str, Callable[[], object]]:
    @nucleo.llm_errors(service="Shop")
    def fetch(url: str) -> object:
        with urllib.request.urlopen(url, timeout=10) as response:
            return json.loads(response.read())

    def ok() -> object:
        return fetch(f"{base}/orders/00000042")

    def missing() -> object:
        try:
            fetch(f"{base}/orders/missing")
        except nucleo.ResourceNotFoundException as error:
            return error
        raise AssertionError("the 404 was not mapped")

    return {"ok": ok, "404": missing}


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
                    404, json={"error": "no such order"}
                )
                for name, call in faked.items():
                    times.setdefault((name, "fake"), []).append(_time(call, options.calls))
    finally:
        server.shutdown()
    print(f"urllib through fake_upstream vs http.server on loopback, median of {options.rounds}")
    print(f"{'call':<6}{'fake':>12}{'loopback':>12}{'ratio':>9}")
    for name in loopback:
        fake = statistics.median(times[(name, "fake")])
        real = statistics.median(times[(name, "loopback")])
        print(f"{name:<6}{fake * 1e6:>10.1f}us{real * 1e6:>10.1f}us{fake / real:>8.2f}x")


if __name__ == "__main__":
    main()
