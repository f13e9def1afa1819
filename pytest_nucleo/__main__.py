"""``python -m pytest_nucleo``: command-line tools for a tool's test suite.

``python -m pytest_nucleo scenarios PATH...`` lists what recordings (VCR.py cassettes, HAR
files) hold: one line per recorded failure, with the class a tool on the client base raises
for it and the first line of the text the model would read. Exit status: 0 when every
recording was read, 1 when one (or an entry of one) could not be, 2 for a usage error.

This is a test-time tool: it may import the testing modules, which the runtime never does.
"""

from __future__ import annotations

import argparse
import glob
import sys
from collections.abc import Sequence
from typing import Any, TextIO

import httpx

from pytest_nucleo import LLMReadableException, ServiceClient
from pytest_nucleo._text._render import one_line

USAGE_ERROR = 2
UNREADABLE = 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pytest_nucleo",
        description="Command-line tools of pytest-nucleo.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    scenarios = commands.add_parser(
        "scenarios",
        help="list the failures that recordings (VCR.py cassettes, HAR files) hold",
        description=(
            "List every recorded failure (a non-2xx response, or a 2xx whose body is not JSON "
            "or is an error object): file and entry, method and path, status, the class a tool "
            "on the client base raises and the first line of what the model would read."
        ),
    )
    scenarios.add_argument(
        "paths", nargs="+", metavar="PATH", help="a recording, or a glob pattern of recordings"
    )
    scenarios.add_argument(
        "--kind",
        choices=("search", "fetch"),
        default="fetch",
        help="judge the failures for a search or a fetch tool (default: fetch)",
    )
    return parser


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None) -> int:
    """Run the command line; returns the exit status instead of exiting."""
    out = out or sys.stdout
    parser = _parser()
    try:
        options = parser.parse_args(argv)
    except SystemExit as stop:  # argparse has printed the usage and the error
        return USAGE_ERROR if stop.code else 0
    return _scenarios(options.paths, options.kind, out)


def _scenarios(patterns: Sequence[str], kind: Any, out: TextIO) -> int:
    from pytest_nucleo.testing._recorded._recording import (
        RecordingError,
        expectation,
        read_recording,
    )

    status = 0
    for pattern in patterns:
        paths = sorted(glob.glob(pattern, recursive=True)) if glob.has_magic(pattern) else [pattern]
        if not paths:
            print(f"{pattern}: matches no file", file=sys.stderr)
            status = UNREADABLE
        for path in paths:
            try:
                entries = read_recording(path)
            except RecordingError as error:
                print(str(error), file=sys.stderr)
                status = UNREADABLE
                continue
            failures = 0
            for entry in entries:
                if isinstance(entry, RecordingError):
                    print(str(entry), file=sys.stderr)
                    status = UNREADABLE
                    continue
                if entry.failure() is None:
                    continue
                failures += 1
                expected = expectation(entry, kind).describe()
                print(
                    f"{path}:{entry.entry} {entry.shown} {entry.status} -> {_reading(entry, expected)}",
                    file=out,
                )
            print(f"{path}: {len(entries)} entries, {failures} failure(s)", file=out)
    return status


def _reading(entry: Any, expected: str) -> str:
    """What a tool on the client base makes of the recorded answer: class and first line."""
    from pytest_nucleo.testing._recorded._recording import replay_body, replay_headers

    url = httpx.URL(entry.url)
    body, headers = replay_body(entry), replay_headers(entry)

    class Recorded(ServiceClient):
        service_name = url.host or "the service"
        base_url = f"{url.scheme}://{url.netloc.decode('ascii', 'replace')}"

    def answer(request: httpx.Request) -> httpx.Response:
        raw = [(name.encode(), value.encode()) for name, value in headers.items()]
        return httpx.Response(entry.status, content=body, headers=raw, request=request)

    with httpx.Client(transport=httpx.MockTransport(answer)) as http:
        client = Recorded(http)
        try:
            client._decode(client._send(entry.method, url.path), empty_on_404=False)
        except LLMReadableException as failure:
            kind = "correctable" if failure.is_correctable else "uncorrectable"
            first = one_line(failure.explain_to_llm().splitlines()[0], 160)
            return f"{type(failure).__name__} ({kind}): {first}"
    return (
        f"a result: the client base returns this body as data, where the contract expects "
        f"{expected}; map it in the client's classify"
    )


if __name__ == "__main__":
    sys.exit(main())
