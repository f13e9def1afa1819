"""fake_upstream's cost per urllib call against a bare ``http.server`` on loopback, as ratios
measured in the same run.

    python bench/bench_urllib.py [--rounds N] [--calls N]

ok      ``urlopen`` of a 200 JSON answer, read and decoded.
404     ``urlopen`` raising ``HTTPError`` for a 404, mapped by ``llm_errors`` (what a tool does).

Each round times ``--calls`` calls through the fake (routes answered in process, by the real
urllib and http.client above a fake socket) and the same calls to a ``ThreadingHTTPServer`` on
127.0.0.1 answering the same bytes; rounds interleave, and the medians are printed with their
ratio (below 1: the fake is faster than the cheapest real server there is). The server and the
rounds are bench_urllib3.py's too (``_loopback``).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable

from _loopback import compare

import pytest_nucleo as nucleo
from pytest_nucleo.testing import FakeUpstream

BODY = json.dumps({"number": "00000042", "status": "shipped"}).encode()
MISSING = b'{"error": "no such order"}'


def _answer(path: str) -> tuple[int, bytes]:
    return (404, MISSING) if path.endswith("/missing") else (200, BODY)


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


def _routes(upstream: FakeUpstream, base: str) -> None:
    upstream.get(f"{base}/orders/00000042").respond(
        200, content=BODY, headers={"Content-Type": "application/json"}
    )
    upstream.get(f"{base}/orders/missing").respond(404, json={"error": "no such order"})


if __name__ == "__main__":
    compare("urllib", __doc__.split("\n")[0], _calls, _answer, _routes)
