"""Recorded exchanges: what a recording holds, and the scenario a recorded failure becomes.

This is the seam between recording formats and the scenario machinery. A format (VCR.py
cassettes in ``_cassette``, HAR files in ``_har``) turns a file into :class:`RecordedExchange`
values; everything after that is shared: which exchange is a failure, what the contract
expects of it, how its secrets are scrubbed, and the :class:`Scenario` that replays it. A third
format is one module with ``claims`` and ``read``, and its name in ``FORMATS``.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import httpx

from pytest_nucleo import ExternalServiceException
from pytest_nucleo._http._clients._sent import sent_values
from pytest_nucleo._http._status import HttpThrottledStatusException, http_exception
from pytest_nucleo._text._excerpt import safe_endpoint
from pytest_nucleo._text._secrets import MASK, redact
from pytest_nucleo.testing._contract._scenarios import (
    NOT_JSON,
    Expectation,
    Kind,
    Observation,
    Scenario,
    status_expectation,
)
from pytest_nucleo.testing._docs import docs_ref
from pytest_nucleo.testing._fake._upstream import respond

DOCS = docs_ref("docs/how-to/recorded-failures.md", "Replay recorded failures", section=False)

FORMATS = ("_har", "_cassette")
"""The modules that read a kind of recording, asked in this order whether a file is theirs."""

ERROR_OBJECT = (
    "a 2xx whose body is an error object is not a result: the service failed, an "
    "ExternalServiceException (map it in the client's classify)"
)

# Response headers that change on every call or describe the transfer, not the answer: left
# out of the replay, so a snapshot does not change when the same failure is recorded again.
# Set-Cookie carries session secrets. The Date stays: a wait stated as a time of day (an epoch
# reset, a date Retry-After) is read against it, so a replay states the wait the service meant,
# the same on every run, where our clock would read a recorded reset as long past.
VOLATILE_HEADERS = frozenset(
    {
        "age",
        "cf-ray",
        "connection",
        "content-encoding",
        "content-length",
        "etag",
        "expires",
        "keep-alive",
        "last-modified",
        "server-timing",
        "set-cookie",
        "transfer-encoding",
        "via",
        "x-amz-id-2",
        "x-amz-request-id",
        "x-github-request-id",
        "x-request-id",
    }
)

# Request headers that carry credentials in several pieces, and what a long piece is: short
# pieces ("host", a date) are names and would mask ordinary words of a body.
_CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})
_PIECES = re.compile(r"[\s,;/]+")
_LONG_PIECE = 16

# What marks a JSON body of a 2xx as an error report rather than a result.
_ERROR_KEYS = ("error", "errors")
_ERROR_STATES = frozenset({"error", "fail", "failed", "failure"})


class RecordingError(ValueError):
    """A recording, or one entry of it, could not be read; the message names file and entry."""

    def __init__(self, source: str | Path, entry: int | None, problem: str) -> None:
        self.source = str(source)
        self.entry = entry
        self.problem = problem
        where = self.source if entry is None else f"{self.source}, entry {entry}"
        super().__init__(f"{where}: {problem}. See {DOCS}.")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.source, self.entry, self.problem))


@dataclass(frozen=True)
class RecordedExchange:
    """One request and the response it got, as a recording holds it.

    ``entry`` counts from 1 in the order of the file. Headers are (name, value) pairs, bodies
    raw bytes (decompressed when the recording kept them compressed).
    """

    source: str
    entry: int
    method: str
    url: str
    request_headers: tuple[tuple[str, str], ...]
    request_body: bytes
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes

    @property
    def where(self) -> str:
        return f"{self.source}, entry {self.entry}"

    @property
    def shown(self) -> str:
        """Method and path, fit to show: no host, query, userinfo or recorded secret."""
        return f"{self.method} {safe_endpoint(self.url, self.secrets())}"

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((v for n, v in self.headers if n.lower() == wanted), None)

    def secrets(self) -> tuple[str, ...]:
        """Every recorded value that must never be shown: what the request carried (credential
        headers, cookies, query values, userinfo, body values) and the cookies the server set."""
        return self._secrets

    @cached_property
    def _secrets(self) -> tuple[str, ...]:
        # Asked for by the replay's body, headers, description and hygiene check alike.
        try:
            request = httpx.Request(
                self.method, self.url, headers=list(self.request_headers), content=self.request_body
            )
        except (httpx.InvalidURL, ValueError, TypeError):
            request = httpx.Request(self.method, "http://recorded.invalid/")
            values = [self.url]
        else:
            values = []
        values.extend(sent_values(request))
        for name, value in self.request_headers:
            if name.lower() in _CREDENTIAL_HEADERS:
                # "AWS4-HMAC-SHA256 Credential=AKIA.../s3, Signature=abc...": a server echoes
                # the pieces (S3 returns SignatureProvided), so mask each long one too.
                credential = value.split(None, 1)[-1]  # the scheme is no secret
                pieces = (piece.rpartition("=")[2] for piece in _PIECES.split(credential))
                values.extend(piece for piece in pieces if len(piece) >= _LONG_PIECE)
        for name, value in self.headers:
            if name.lower() == "set-cookie":
                cookie = value.split(";", 1)[0]
                values += [value, cookie, cookie.partition("=")[2]]
        return tuple(dict.fromkeys(v.strip() for v in values if len(v.strip()) >= 4))

    def failure(self) -> str | None:
        """Why this exchange is a failure (``"status"``, ``"not-json"``, ``"error-object"``),
        or None for a success. A 3xx is a redirect on the way to an answer, not a failure."""
        if not 200 <= self.status <= 399:
            return "status"
        if self.status >= 300 or self.status == 204:
            return None
        try:
            document = json.loads(self.body)
        except (ValueError, UnicodeDecodeError):
            return "not-json"
        return "error-object" if _reports_error(document) else None


def _reports_error(document: object) -> bool:
    if not isinstance(document, dict):
        return False
    if any(document.get(key) for key in _ERROR_KEYS):
        return True
    state = document.get("status", document.get("state"))
    if isinstance(state, str) and state.strip().lower() in _ERROR_STATES:
        return True
    return document.get("ok") is False or document.get("success") is False


def replay_headers(exchange: RecordedExchange) -> dict[str, str]:
    """The response headers a replay sends: volatile ones left out, recorded secrets masked."""
    known = exchange.secrets()
    kept: dict[str, str] = {}
    for name, value in exchange.headers:
        if name.lower() not in VOLATILE_HEADERS and name.lower() not in kept:
            kept[name.lower()] = redact(value, known) if known else value
    return kept


def replay_body(exchange: RecordedExchange) -> bytes:
    """The response body a replay sends, with every recorded secret masked (raw and encoded)."""
    body = exchange.body
    for value in sorted(exchange.secrets(), key=len, reverse=True):
        body = body.replace(value.encode("utf-8", "surrogateescape"), MASK.encode())
    return body


def expectation(exchange: RecordedExchange, kind: Kind) -> Expectation:
    """What the contract expects of a tool of ``kind`` when the upstream answers as recorded."""
    why = exchange.failure()
    if why == "not-json":
        return Expectation(ExternalServiceException, False, NOT_JSON)
    if why == "error-object":
        return Expectation(ExternalServiceException, False, ERROR_OBJECT)
    if why is None:
        return status_expectation(kind, 200)
    # The client base decides whether a 400, 401, 403 or 503 is a throttle; ask it.
    mapped = http_exception(
        "service", "/", exchange.status, replay_body(exchange), replay_headers(exchange)
    )
    throttled = isinstance(mapped, HttpThrottledStatusException)
    return status_expectation(kind, exchange.status, throttle_body=throttled)


@dataclass(frozen=True, repr=False)
class RecordedScenario(Scenario):
    """A scenario replaying one recorded failure: the real status, headers and body.

    Recorded secrets are scrubbed from what it replays and planted, so a text holding one
    fails the hygiene check; a violation message is masked with them too.
    """

    source: str = ""

    def observe(self, *args: Any, **kwargs: Any) -> Observation:
        seen = super().observe(*args, **kwargs)
        if seen.violation is not None:
            seen.violation = redact(seen.violation, self.planted)
        return seen


def recorded_scenario(exchange: RecordedExchange, kind: Kind, name: str) -> RecordedScenario:
    """The scenario that replays ``exchange`` (a failure) for a tool of ``kind``."""
    outcome = respond(
        exchange.status, content=replay_body(exchange), headers=replay_headers(exchange)
    )
    described = type(outcome)(
        f"recorded {exchange.status} of {exchange.shown} ({exchange.where})", outcome.produce
    )
    return RecordedScenario(
        name,
        kind,
        described,
        expectation(exchange, kind),
        planted=exchange.secrets(),
        source=exchange.where,
    )


class _Format(Protocol):
    def claims(self, path: Path, text: str) -> bool: ...

    def read(self, path: Path, text: str) -> list[RecordedExchange | RecordingError]: ...


def read_recording(path: str | Path) -> list[RecordedExchange | RecordingError]:
    """Every entry of a recording, in order: an exchange, or the error that entry gave.

    A file that cannot be read at all (missing, not text, malformed, of an unknown format)
    raises :class:`RecordingError`; one bad entry is returned in its place, so the others
    still count.
    """
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as error:
        raise RecordingError(path, None, f"cannot be read ({error.strerror or error})") from None
    except UnicodeDecodeError as error:
        raise RecordingError(
            path, None, f"is not UTF-8 text (byte {error.start}): a recording is YAML or JSON"
        ) from None
    for name in FORMATS:
        reader: _Format = importlib.import_module(f"{__package__}.{name}")
        if reader.claims(path, text):
            return reader.read(path, text)
    raise RecordingError(
        path,
        None,
        "is not a recording this reader knows: give a VCR.py cassette (.yaml, .yml or .json) "
        'or a HAR file (.har, or .json whose top-level object holds a "log")',
    )


def recorded_failures(
    paths: Iterable[str | Path],
) -> list[RecordedExchange | RecordingError]:
    """The failures (and the unreadable entries) of every recording in ``paths``, in order."""
    found: list[RecordedExchange | RecordingError] = []
    for path in paths:
        for entry in read_recording(path):
            if isinstance(entry, RecordingError) or entry.failure() is not None:
                found.append(entry)
    return found
