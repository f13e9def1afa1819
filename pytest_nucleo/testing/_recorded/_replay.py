"""The recorded failures a ToolContract replays: which recorded calls its tool would make.

``ToolContract.recorded`` lists recordings (glob patterns, relative to pytest's rootdir). Each
recorded failure whose method and URL the contract's valid call would request becomes one more
scenario, ``recorded-<recording>-<entry>``. A recording that cannot be read becomes a scenario
that fails alone with the reason, so the rest of the matrix still runs.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx

from pytest_nucleo.testing._contract._scenario_fakes import split_endpoint
from pytest_nucleo.testing._contract._scenarios import Expectation, Kind, Observation, Scenario
from pytest_nucleo.testing._fake._upstream import Outcome

from ._recording import RecordedExchange, RecordingError, read_recording, recorded_scenario

PREFIX = "recorded-"

# Path segments that name a thing rather than a route: numbers, and hex or UUID ids.
_ID_SEGMENT = re.compile(r"\d+|(?=[0-9a-f-]*\d)[0-9a-f-]{8,}", re.IGNORECASE)
# Query parameters that carry a credential or change on every call: they never decide a match.
_CREDENTIAL_PARAM = re.compile(r"key|token|secret|sig|passw|auth|session|^x-amz-", re.IGNORECASE)
_VOLATILE_PARAMS = frozenset({"_", "cb", "nonce", "ts", "timestamp"})
_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True, repr=False)
class UnreadableRecording(Scenario):
    """A recording (or one entry of it) that could not be read: its test fails with why."""

    problem: str = ""

    def __repr__(self) -> str:
        return f"UnreadableRecording({self.name}: {self.problem})"

    def observe(self, tool: Any, arguments: Any, **kwargs: Any) -> Observation:
        return Observation(
            str(kwargs.get("tool_name") or "tool"),
            self.name,
            "a readable recording",
            violation=self.problem,
        )


def _unreadable(name: str, kind: Kind, problem: str) -> UnreadableRecording:
    nothing = Outcome("nothing (the recording could not be read)", _never)
    return UnreadableRecording(
        name, kind, nothing, Expectation(None, None, "a readable recording"), problem=problem
    )


def _never(request: httpx.Request) -> httpx.Response:
    raise AssertionError("an unreadable recording has no response to replay")


def would_call(endpoint: str, valid_call: Mapping[str, Any], exchange: RecordedExchange) -> bool:
    """Whether the recorded request is one the contract's valid call would make.

    Method, scheme, host and port are equal; the paths have as many segments, each equal, or equal
    but for the values of ``valid_call`` it holds (``2026-11.json`` from ``month="2026-11"``
    matches ``2026-12.json``), or a number or hex or UUID id in the endpoint; and, when the endpoint has a query, the two queries have the same parameter
    names, in any order and whatever their values, leaving out credential parameters (names
    holding key, token, secret, sig, passw, auth or session, or starting with X-Amz-) and
    cache busters (``_``, ``cb``, ``nonce``, ``ts``, ``timestamp``).
    """
    method, url = split_endpoint(endpoint)
    try:
        wanted, seen = httpx.URL(url), httpx.URL(exchange.url)
    except (httpx.InvalidURL, TypeError):
        return False
    if (method, wanted.scheme, wanted.host.lower(), wanted.port) != (
        exchange.method,
        seen.scheme,
        seen.host.lower(),
        seen.port,
    ):
        return False
    parameters = {str(v) for v in valid_call.values() if isinstance(v, str | int | float)}
    ours, theirs = _segments(wanted.path), _segments(seen.path)
    if len(ours) != len(theirs):
        return False
    for mine, recorded in zip(ours, theirs, strict=True):
        if mine != recorded and not _segment_pattern(mine, parameters).fullmatch(recorded):
            return False
    if not wanted.query:
        return True  # as a fake route without a query matches any query
    return _query_names(wanted) == _query_names(seen)


def _segment_pattern(segment: str, parameters: set[str]) -> re.Pattern[str]:
    """What a recorded segment may be: ``segment`` with each parameter value in it (a whole
    id segment too) open to any value, so ``2026-11.json`` from ``month="2026-11"`` matches
    ``2026-12.json``."""
    if _ID_SEGMENT.fullmatch(segment):
        return re.compile(r".+")
    values = sorted((p for p in parameters if p and p in segment), key=len, reverse=True)
    if not values:
        return re.compile(re.escape(segment))
    splitter = "|".join(re.escape(value) for value in values)
    parts = re.split(f"(?:{splitter})", segment)
    return re.compile(".+?".join(re.escape(part) for part in parts))


def _segments(path: str) -> list[str]:
    return [unquote(part) for part in path.strip("/").split("/")] if path.strip("/") else []


def _query_names(url: httpx.URL) -> frozenset[str]:
    return frozenset(
        name
        for name, _ in url.params.multi_items()
        if name.lower() not in _VOLATILE_PARAMS and not _CREDENTIAL_PARAM.search(name)
    )


def check_patterns(owner: str, patterns: object) -> tuple[str, ...]:
    """``ToolContract.recorded`` as a tuple of patterns, or a TypeError saying what to give."""
    if isinstance(patterns, str | Path) or not isinstance(patterns, Iterable):
        raise TypeError(
            f"{owner}.recorded must be a list of recordings or glob patterns, such as "
            f'["tests/cassettes/*.yaml", "tests/har/*.har"]; got {patterns!r}'
        )
    listed = tuple(patterns)
    wrong = [p for p in listed if not isinstance(p, str | Path) or not str(p).strip()]
    if wrong:
        raise TypeError(
            f"{owner}.recorded holds {wrong[0]!r}: each item is a path or glob pattern, as a "
            "string, relative to pytest's rootdir"
        )
    return tuple(str(p) for p in listed)


def recorded_matrix(
    *,
    patterns: Iterable[str],
    rootdir: Path,
    kind: Kind,
    endpoint: str,
    valid_call: Mapping[str, Any],
    not_applicable: Iterable[str] = (),
) -> list[Scenario]:
    """The scenarios of a contract's recorded failures, in the order of the recordings."""
    files: list[Path] = []
    matrix: list[Scenario] = []
    for number, pattern in enumerate(patterns, start=1):
        found = sorted(
            Path(rootdir, match) for match in glob.glob(pattern, root_dir=rootdir, recursive=True)
        )
        if not found:
            matrix.append(
                _unreadable(
                    f"{PREFIX}missing-{number}",
                    kind,
                    f"the recorded pattern {pattern!r} matches no file under {rootdir} (patterns "
                    "are relative to pytest's rootdir): check the path, or record the cassette",
                )
            )
        files += [path for path in found if path not in files]
    names = _names(files)
    failures = matched = unreadable = 0
    for path in files:
        stem = names[path]
        try:
            entries = _shown_relative(read_recording(path), path, rootdir)
        except RecordingError as error:
            error = RecordingError(_relative(path, rootdir), error.entry, error.problem)
            matrix.append(_unreadable(f"{PREFIX}{stem}-unreadable", kind, str(error)))
            unreadable += 1
            continue
        for entry in entries:
            if isinstance(entry, RecordingError):
                matrix.append(_unreadable(f"{PREFIX}{stem}-{entry.entry}", kind, str(entry)))
                unreadable += 1
            elif entry.failure() is not None:
                failures += 1
                if would_call(endpoint, valid_call, entry):
                    name = f"{PREFIX}{stem}-{entry.entry}"
                    matrix.append(recorded_scenario(entry, kind, name))
                    matched += 1
    if files and not matched and not unreadable:
        matrix.append(
            _unreadable(
                f"{PREFIX}none-matched",
                kind,
                f"the recordings hold {failures} failure(s), and none is a call to {endpoint} "
                "(method, scheme, host, path with its parameters, query names): run "
                "`python -m pytest_nucleo scenarios "
                f"{' '.join(_relative(p, rootdir) for p in files[:3])}` to list them",
            )
        )
    known = {scenario.name for scenario in matrix}
    unknown = sorted(
        name for name in not_applicable if name.startswith(PREFIX) and name not in known
    )
    if unknown:
        matrix.append(
            _unreadable(
                f"{PREFIX}not-applicable-unknown",
                kind,
                f"not_applicable names {', '.join(unknown)}, which no recording produced; the "
                f"recorded scenarios are: {', '.join(sorted(known)) or '(none)'}",
            )
        )
    return matrix


def _relative(path: Path, rootdir: Path) -> str:
    """The path as pytest shows test files: relative to the rootdir when under it."""
    try:
        return str(path.relative_to(rootdir))
    except ValueError:
        return str(path)


def _shown_relative(
    entries: list[RecordedExchange | RecordingError], path: Path, rootdir: Path
) -> list[RecordedExchange | RecordingError]:
    shown = _relative(path, rootdir)
    return [
        RecordingError(shown, entry.entry, entry.problem)
        if isinstance(entry, RecordingError)
        else replace(entry, source=shown)
        for entry in entries
    ]


def _names(files: list[Path]) -> dict[Path, str]:
    """A safe, unique id part per recording: its stem, with the suffix when stems collide."""
    stems = [_UNSAFE_ID.sub("_", path.stem).strip("_-") or "recording" for path in files]
    names: dict[Path, str] = {}
    for path, stem in zip(files, stems, strict=True):
        name = stem if stems.count(stem) == 1 else f"{stem}_{path.suffix.lstrip('.')}"
        while name in names.values():
            name += "_"
        names[path] = name
    return names
