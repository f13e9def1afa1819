"""What bench_urllib.py and bench_urllib3.py share: a bare ``http.server`` on loopback that
answers the same bytes as the fake's routes, and the rounds that time a client's calls through
each and print the medians with their ratio.

Each round times ``--calls`` calls through the fake and the same calls to the server; rounds
interleave, so both sides see the same load. A ratio below 1 means the fake is faster than the
cheapest real server there is.
"""

from __future__ import annotations

import argparse
import http.server
import os
import statistics
import threading
import time
from collections.abc import Callable

from pytest_nucleo.testing import FakeUpstream

Answer = Callable[[str], tuple[int, bytes]]
"""The status and JSON body the server sends for a path."""
Calls = Callable[[str], dict[str, Callable[[], object]]]
"""The timed calls, by name, of a client aimed at a base URL."""


def _options(description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=300)
    return parser.parse_args()


def _server(answer: Answer, *, disable_nagle: bool) -> http.server.ThreadingHTTPServer:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = disable_nagle

        def do_GET(self) -> None:
            status, body = answer(self.path)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)


def _time(call: Callable[[], object], count: int) -> tuple[float, float]:
    """Seconds a call, of the wall clock and of this process's CPU (every thread's: the
    loopback server's work counts, as a real server's would cost its host)."""
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(count):
        call()
    return (time.perf_counter() - start) / count, (time.process_time() - cpu) / count


def compare(
    client: str,
    description: str,
    calls: Calls,
    answer: Answer,
    route: Callable[[FakeUpstream, str], None],
    *,
    disable_nagle: bool = False,
) -> None:
    """Time ``calls`` against the server answering ``answer`` and through a fake upstream
    whose routes ``route`` adds for a base URL, and print the medians; ``description`` is the
    script's, for ``--help``.

    ``disable_nagle`` sends the server's body without waiting for the acknowledgement of its
    head: a client that keeps its connections alive would otherwise wait for its own delayed
    acknowledgement (40 ms) on each call, which no real server makes it pay."""
    settings = _options(description)
    server = _server(answer, disable_nagle=disable_nagle)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    loopback = calls(f"http://127.0.0.1:{server.server_port}")
    faked = calls("http://shop.example")
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    print(f"load average: {' '.join(f'{load:.2f}' for load in os.getloadavg())}")
    try:
        for _ in range(settings.rounds):
            for name, call in loopback.items():
                times.setdefault((name, "loopback"), []).append(_time(call, settings.calls))
            with FakeUpstream(assert_all_called=False) as upstream:
                route(upstream, "http://shop.example")
                for name, call in faked.items():
                    times.setdefault((name, "fake"), []).append(_time(call, settings.calls))
    finally:
        server.shutdown()
    print(f"{client} through fake_upstream vs http.server on loopback, median of {settings.rounds}")
    print(f"load average: {' '.join(f'{load:.2f}' for load in os.getloadavg())}")
    print(f"{'call':<8}{'fake':>12}{'loopback':>12}{'ratio':>9}   (CPU; wall beside)")
    for name in loopback:
        fake = [statistics.median(side) for side in zip(*times[(name, "fake")], strict=True)]
        real = [statistics.median(side) for side in zip(*times[(name, "loopback")], strict=True)]
        print(
            f"{name:<8}{fake[1] * 1e6:>10.1f}us{real[1] * 1e6:>10.1f}us{fake[1] / real[1]:>8.2f}x"
            f"   wall {fake[0] * 1e6:.1f}us vs {real[0] * 1e6:.1f}us, {fake[0] / real[0]:.2f}x"
        )
