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
fake is faster than the cheapest real server there is). The server and the rounds are
bench_urllib.py's too (``_loopback``).

It needs urllib3 2, the one the fake answers, and stops at once on urllib3 1.x.
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
from collections.abc import Callable

import urllib3
from _loopback import compare

import pytest_nucleo as nucleo
from pytest_nucleo.testing import FakeUpstream

BODY = json.dumps({"number": "00000042", "status": "shipped"}).encode()
MISSING = b'{"error": "no such order"}'
LARGE = b"x" * 65_536


def _answer(path: str) -> tuple[int, bytes]:
    if path.endswith("/missing"):
        return 404, MISSING
    if path.endswith("/large"):
        return 200, LARGE
    return 200, BODY


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


def _routes(upstream: FakeUpstream, base: str) -> None:
    upstream.get(f"{base}/orders/00000042").respond(
        200, content=BODY, headers={"Content-Type": "application/json"}
    )
    upstream.get(f"{base}/orders/missing").respond(
        404, content=MISSING, headers={"Content-Type": "application/json"}
    )
    upstream.get(f"{base}/large").respond(200, content=LARGE)


if __name__ == "__main__":
    # urllib3 1.x is not faked, and outside pytest no network guard runs: the "fake" calls
    # would look shop.example up and go to the network.
    installed = importlib.metadata.version("urllib3")
    if int(installed.partition(".")[0]) < 2:
        sys.exit(
            f"bench_urllib3 measures the fake of urllib3 2, and urllib3 {installed} is "
            "installed, which the fake does not answer: install urllib3>=2 to run it."
        )
    # The head and the body leave in two writes: with Nagle's algorithm on, the body of an
    # answer on a kept-alive connection waits for the client's delayed acknowledgement.
    compare("urllib3", __doc__.split("\n")[0], _calls, _answer, _routes, disable_nagle=True)
