"""Hypothesis strategies for the failure contract: statuses, Retry-After values, error bodies,
transport failures, and whole search and fetch scenarios.

Imported only on request (``from pytest_nucleo import strategies as nst``). Strategies follow
hypothesis' own style: plural nouns, keyword-only options, strategies as arguments, and
``InvalidArgument`` for a bad option, raised when the test runs. A scenario knows how to arrange
the fake upstream for one example and what the contract expects, so a property test is::

    @given(nst.fetch_scenarios())
    def test_get_order(scenario):
        scenario.verify(get_order, {"number": "00000042"}, endpoint="GET https://shop.example/orders/00000042")

Snapshots don't belong inside ``@given`` (hypothesis numbers them in generation order); snapshot
the enumerated matrix of ``ToolContract`` and use these for invariants.
"""

from __future__ import annotations

import glob
import json
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from os import PathLike
from pathlib import Path
from typing import Any, TypeVar

import httpx
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from pytest_nucleo.testing._contract._scenarios import (
    CANARIES,
    KINDS,
    NOT_JSON,
    OUTAGE,
    SEARCH_EMPTY,
    Expectation,
    Kind,
    Scenario,
    status_expectation,
)
from pytest_nucleo.testing._fake._upstream import Outcome, connect_error, respond, throttle, timeout

from . import ExternalServiceException, body_says_throttled, parse_retry_after

T = TypeVar("T")

MAPPED_STATUSES = (400, 401, 403, 404, 413, 422, 429, 500, 502, 503)
"""The statuses with a class of their own in the HTTP mapping; :func:`http_statuses` favours them."""
BODY_KINDS = ("json", "html", "text", "empty", "huge", "binary", "secret")
"""The kinds of error body :func:`error_bodies` can draw."""
HUGE_BODY_SIZE = 256 * 1024
"""The size in bytes of a "huge" error body, above the runner's default text limit."""

__all__ = [
    "BODY_KINDS",
    "HUGE_BODY_SIZE",
    "MAPPED_STATUSES",
    "ErrorBody",
    "RetryAfterValue",
    "error_bodies",
    "fetch_scenarios",
    "http_statuses",
    "recorded_scenarios",
    "retry_after_values",
    "rule_probabilities",
    "scenarios",
    "search_scenarios",
    "transport_failures",
]


def _lazily(build: Callable[[], st.SearchStrategy[T]]) -> st.SearchStrategy[T]:
    """Defer building (and validating options) until the strategy is used, as hypothesis does."""
    return st.deferred(build)


def _check_strategy(name: str, value: object) -> None:
    if not isinstance(value, st.SearchStrategy):
        raise InvalidArgument(f"{name}={value!r} must be a hypothesis strategy")


# -- statuses and Retry-After ----------------------------------------------------------------


def http_statuses(*, min_value: int = 400, max_value: int = 599) -> st.SearchStrategy[int]:
    """Error statuses from ``min_value`` to ``max_value``, weighted towards the mapped ones."""

    def build() -> st.SearchStrategy[int]:
        for name, value in (("min_value", min_value), ("max_value", max_value)):
            if isinstance(value, bool) or not isinstance(value, int) or not 100 <= value <= 599:
                raise InvalidArgument(f"{name}={value!r} must be an int from 100 to 599")
        if min_value > max_value:
            raise InvalidArgument(f"min_value={min_value} must not exceed max_value={max_value}")
        mapped = [s for s in MAPPED_STATUSES if min_value <= s <= max_value]
        anything = st.integers(min_value, max_value)
        return st.one_of(st.sampled_from(mapped), anything) if mapped else anything

    return _lazily(build)


@dataclass(frozen=True)
class RetryAfterValue:
    """A ``Retry-After`` header value, and whether RFC 9110 allows it."""

    header: str
    """The header value as sent, such as ``"120"`` or an HTTP-date."""
    valid: bool
    """Whether RFC 9110 allows it (delay-seconds or an HTTP-date)."""

    def __repr__(self) -> str:
        return f"RetryAfter({self.header!r}, {'valid' if self.valid else 'malformed'})"


_MALFORMED_RETRY_AFTER = (
    "+1",
    "-1",
    "1e3",
    "1.5",
    "nan",
    "inf",
    "-inf",
    "30 seconds",
    "\uff11\uff12",  # full-width digits
    "\u0661\u0662",  # Arabic-Indic digits
    "",
    "soon",
    "Wed, 99 Foo 2026 25:61:61 GMT",
    "0x10",
)


_DATE_MARGIN = 300
"""Seconds a drawn HTTP-date keeps from the current time, so a test reads it the same way
however long hypothesis takes to replay it."""


def retry_after_values(*, valid: bool | None = None) -> st.SearchStrategy[RetryAfterValue]:
    """``Retry-After`` values: delay-seconds and HTTP-dates (from five minutes to a day before
    or after the strategy is first drawn from) when valid, and the malformed forms parsers get
    wrong (``+1``, ``1e3``, ``nan``, full-width digits, ...).

    ``valid=True`` or ``False`` keeps one kind; the default mixes both.
    """

    def build() -> st.SearchStrategy[RetryAfterValue]:
        if valid not in (None, True, False):
            raise InvalidArgument(f"valid={valid!r} must be True, False or None")
        seconds = st.integers(0, 86_400).map(str)
        # Within a day of when the strategy is built, so that a date is past or future for the
        # code under test, which reads it against the current time (a fixed day would turn
        # every date into a past one once that day has gone by). Never within five minutes of
        # it: hypothesis shrinks towards the smallest offset, and a date a second ahead would
        # be future on the first run and past on the replay, which hypothesis calls flaky.
        base = datetime.now(UTC).replace(microsecond=0)
        away = st.integers(_DATE_MARGIN, 86_400)
        dates = st.tuples(away, st.sampled_from((1, -1))).map(
            lambda drawn: format_datetime(
                base + timedelta(seconds=drawn[0] * drawn[1]), usegmt=True
            )
        )
        good = st.one_of(seconds, dates).map(lambda h: RetryAfterValue(h, True))
        bad = st.sampled_from(_MALFORMED_RETRY_AFTER).map(lambda h: RetryAfterValue(h, False))
        if valid is None:
            return st.one_of(good, bad)
        return good if valid else bad

    return _lazily(build)


# -- error bodies ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ErrorBody:
    """An error body as a server sends it, with the secrets planted in it (if any)."""

    kind: str
    """What kind of body it is (``json``, ``html``, ``text``, ...), for the example's repr."""
    content: bytes
    """The body's bytes."""
    content_type: str
    """The ``Content-Type`` a server sends it with."""
    planted: tuple[str, ...] = ()
    """Secret values planted in the body, which no text may show."""

    def __repr__(self) -> str:
        head = self.content[:40]
        more = f"... ({len(self.content)} bytes)" if len(self.content) > 40 else ""
        return f"ErrorBody({self.kind}, {head!r}{more})"


# Words of error messages, a few of them a throttle's: the expectation follows the client's
# throttle rule (body_says_throttled), so both meanings of a 400/401/403/503 get exercised.
_WORDS = (
    "invalid", "request", "field", "missing", "server", "error", "backend", "order", "id",
    "rate limit exceeded", "slow down",
)  # fmt: skip
_message = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=8).map(" ".join)

_HUGE_HTML = (
    "<!DOCTYPE html><html><head><title>502 Bad Gateway</title><style>p{}</style></head><body>"
    + "<p>upstream connect error or disconnect/reset before headers</p>" * (HUGE_BODY_SIZE // 64)
    + "</body></html>"
).encode()


def _body_strategy(kind: str) -> st.SearchStrategy[ErrorBody]:
    if kind == "json":
        return st.builds(
            lambda msg, code: ErrorBody(
                kind,
                json.dumps({"error": {"code": code, "message": msg}}).encode(),
                "application/json",
            ),
            _message,
            st.integers(1, 9999),
        )
    if kind == "html":
        return _message.map(
            lambda msg: ErrorBody(
                kind,
                f"<html><head><title>Error</title><script>var a=1;</script></head>"
                f"<body><h1>Error</h1><p>{msg}</p></body></html>".encode(),
                "text/html; charset=utf-8",
            )
        )
    if kind == "text":
        return _message.map(lambda msg: ErrorBody(kind, msg.encode(), "text/plain"))
    if kind == "empty":
        return st.just(ErrorBody(kind, b"", "text/plain"))
    if kind == "huge":
        return st.just(ErrorBody(kind, _HUGE_HTML, "text/html"))
    if kind == "binary":
        return st.binary(min_size=1, max_size=64).map(
            lambda data: ErrorBody(kind, data, "application/octet-stream")
        )
    return st.sampled_from(CANARIES).map(
        lambda secret: ErrorBody(
            kind,
            json.dumps(
                {"error": "bad credentials", "received": secret, "auth": f"Bearer {secret}"}
            ).encode(),
            "application/json",
            planted=(secret,),
        )
    )


def error_bodies(*, kinds: Collection[str] = BODY_KINDS) -> st.SearchStrategy[ErrorBody]:
    """Error bodies of the given ``kinds``: JSON, HTML, plain text, empty, huge (256 KiB of
    HTML), binary, and secret-laden (a JSON body echoing a credential)."""

    def build() -> st.SearchStrategy[ErrorBody]:
        chosen = list(kinds) if not isinstance(kinds, str) else [kinds]
        unknown = sorted(set(chosen) - set(BODY_KINDS))
        if not chosen or unknown:
            raise InvalidArgument(
                f"kinds={kinds!r} must be a non-empty collection of {', '.join(BODY_KINDS)}"
                + (f"; unknown: {', '.join(unknown)}" if unknown else "")
            )
        return st.one_of([_body_strategy(kind) for kind in chosen])

    return _lazily(build)


# -- transport failures ----------------------------------------------------------------------


def _raising(description: str, error: Callable[[httpx.Request], Exception]) -> Outcome:
    def produce(request: httpx.Request) -> httpx.Response:
        raise error(request)

    return Outcome(description, produce)


_TRANSPORT_FAILURES = (
    timeout(),
    connect_error(),
    _raising("connect timeout", lambda r: httpx.ConnectTimeout("timed out", request=r)),
    _raising("write timeout", lambda r: httpx.WriteTimeout("timed out", request=r)),
    _raising("pool timeout", lambda r: httpx.PoolTimeout("timed out", request=r)),
    _raising(
        "server disconnected",
        lambda r: httpx.RemoteProtocolError(
            "Server disconnected without sending a response.", request=r
        ),
    ),
    _raising(
        "connection reset",
        lambda r: httpx.ReadError("[Errno 104] Connection reset by peer", request=r),
    ),
)


def transport_failures() -> st.SearchStrategy[Outcome]:
    """Ways a request fails without a response: timeouts, refusals, resets, disconnects."""
    return st.sampled_from(_TRANSPORT_FAILURES)


# -- scenarios -------------------------------------------------------------------------------


def _status_scenario(
    kind: Kind, status: int, body: ErrorBody, retry_after: RetryAfterValue | None
) -> Scenario:
    headers = {"Content-Type": body.content_type}
    if retry_after is not None:
        headers["Retry-After"] = retry_after.header
    outcome = respond(status, content=body.content, headers=headers)
    wait = f", Retry-After {retry_after.header!r}" if retry_after is not None else ""
    name = f"status-{status} {body.kind} body{wait}"
    throttle_body = body_says_throttled(body.content, status=status)
    asked = parse_retry_after(retry_after.header) if retry_after is not None else None
    expect = status_expectation(kind, status, throttle_body=throttle_body, retry_after=asked)
    return Scenario(name, kind, outcome, expect, planted=body.planted)


_DRAWS = 100
"""What a rule's chance is computed for: the first 100 examples, hypothesis' default budget."""

_OTHERS = (("answered", 7), ("throttled", 2), ("not-json", 1))
"""The free combinations, in one share beside the rules' and split by these weights."""


def _rule_names(kind: Kind) -> list[str]:
    """The rules every run must draw: a 404 on a fetch or an empty search, a throttle with
    Retry-After, and each default transport failure."""
    first = "status-404" if kind == "fetch" else "empty-search"
    return [first, "throttle-429-retry-after", *(_transport_name(t) for t in _TRANSPORT_FAILURES)]


def _transport_name(outcome: Outcome) -> str:
    return outcome.description.replace(" ", "-")


def rule_probabilities(kind: Kind, *, examples: int = _DRAWS) -> dict[str, float]:
    """For each rule the default ``fetch_scenarios()`` or ``search_scenarios()`` must draw, the
    chance that it is drawn at least once within the first ``examples`` examples, from the
    strategy's weights: each rule, and the free combinations together, get an equal share.
    (Hypothesis never runs one example twice, so the real chance is higher still: a rule with
    nothing more to vary is drawn once, and its share then goes to the others.)"""
    names = _rule_names(kind)
    each = 1.0 / (len(names) + 1)
    return {name: 1.0 - (1.0 - each) ** examples for name in names}


def _one_of_weighted(branches: list[tuple[int, st.SearchStrategy[T]]]) -> st.SearchStrategy[T]:
    """One of ``branches`` with the given whole weights. Drawn as an index from a short list
    (hypothesis draws a small ``sampled_from`` evenly; a wide integer leans towards 0)."""
    slots = [strategy for weight, strategy in branches for _ in range(weight)]
    # Built once, not per draw: a strategy made inside a draw is validated and labelled anew
    # each time, which cost a generated scenario more than drawing it.
    index = st.sampled_from(range(len(slots)))

    @st.composite
    def pick(draw: st.DrawFn) -> T:
        return draw(slots[draw(index)])

    return pick()


def _scenarios(
    kind: Kind,
    chosen_statuses: st.SearchStrategy[int] | None,
    bodies: st.SearchStrategy[ErrorBody],
    retry_afters: st.SearchStrategy[RetryAfterValue],
    transports: st.SearchStrategy[Outcome] | None,
    found_nothing: st.SearchStrategy[Scenario] | None,
) -> st.SearchStrategy[Scenario]:
    statuses = http_statuses() if chosen_statuses is None else chosen_statuses
    for name, value in (
        ("statuses", statuses),
        ("bodies", bodies),
        ("retry_afters", retry_afters),
        ("transports", transports if transports is not None else st.nothing()),
    ):
        _check_strategy(name, value)

    # Composites, not st.builds or .map: hypothesis prints a failing example made by those as
    # the call that made it (lambdas and all), and a composite's by its value's readable repr.
    # Each strategy a composite draws from is built here, once (see _one_of_weighted).
    maybe_retry_after = st.none() | retry_afters

    @st.composite
    def answered(draw: st.DrawFn) -> Scenario:
        status = draw(statuses)
        if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
            raise InvalidArgument(
                f"statuses drew {status!r}: it must draw HTTP statuses, ints from 100 to 599"
            )
        return _status_scenario(kind, status, draw(bodies), draw(maybe_retry_after))

    def unreachable(outcomes: st.SearchStrategy[Outcome]) -> st.SearchStrategy[Scenario]:
        return outcomes.map(
            lambda outcome: Scenario(
                _transport_name(outcome),
                kind,
                outcome,
                Expectation(ExternalServiceException, False, OUTAGE),
            )
        )

    some_wait = st.integers(0, 3600)
    wait_strategies = {True: some_wait, False: st.none(), None: st.none() | some_wait}

    def throttled(statuses: tuple[int, ...], waits: bool | None) -> st.SearchStrategy[Scenario]:
        """A throttle answer; ``waits``: with a Retry-After (True), without, or either (None)."""
        throttle_statuses, throttle_waits = st.sampled_from(statuses), wait_strategies[waits]

        @st.composite
        def a_throttle(draw: st.DrawFn) -> Scenario:
            status = draw(throttle_statuses)
            wait = draw(throttle_waits)
            return Scenario(
                f"throttle-{status}" + ("" if wait is None else f" Retry-After {wait}"),
                kind,
                throttle(wait, status=status),
                status_expectation(kind, status, throttle_body=True, retry_after=wait),
            )

        return a_throttle()

    @st.composite
    def not_found(draw: st.DrawFn) -> Scenario:
        return _status_scenario(kind, 404, draw(bodies), None)

    not_json = st.just(
        Scenario(
            "not-json-2xx",
            kind,
            respond(200, text="<html>sign in</html>", headers={"Content-Type": "text/html"}),
            Expectation(ExternalServiceException, False, NOT_JSON),
        )
    )
    # The rules first, each with an equal share, so every run draws each of them (see
    # rule_probabilities). Custom transports count as one rule; custom statuses replace the
    # 404 rule of a fetch (the caller chose which statuses to try).
    rules: list[st.SearchStrategy[Scenario]] = [throttled((429,), waits=True)]
    if found_nothing is not None:
        rules.insert(0, found_nothing)
    elif chosen_statuses is None:
        rules.insert(0, not_found())
    if transports is None:
        rules += [unreachable(st.just(outcome)) for outcome in _TRANSPORT_FAILURES]
    else:
        rules.append(unreachable(transports))
    others = _one_of_weighted(
        list(
            zip(
                (weight for _, weight in _OTHERS),
                [answered(), throttled((429, 401, 403), waits=None), not_json],
                strict=True,
            )
        )
    )
    return _one_of_weighted([(1, rule) for rule in [*rules, others]])


def fetch_scenarios(
    *,
    statuses: st.SearchStrategy[int] | None = None,
    bodies: st.SearchStrategy[ErrorBody] | None = None,
    retry_afters: st.SearchStrategy[RetryAfterValue] | None = None,
    transports: st.SearchStrategy[Outcome] | None = None,
) -> st.SearchStrategy[Scenario]:
    """Scenarios for a tool that fetches one resource by id (a 404 must be correctable).

    Each rule of the contract (a 404, a throttle with Retry-After, each transport failure) has
    an equal share of the examples, and so do the free combinations of statuses, bodies and
    Retry-After values: the first 100 examples draw every rule with a chance of at least
    99.9% (see :func:`rule_probabilities`).
    """
    return _lazily(
        lambda: _scenarios(
            "fetch",
            statuses,
            error_bodies() if bodies is None else bodies,
            retry_after_values() if retry_afters is None else retry_afters,
            transports,
            None,
        )
    )


def search_scenarios(
    *,
    statuses: st.SearchStrategy[int] | None = None,
    bodies: st.SearchStrategy[ErrorBody] | None = None,
    retry_afters: st.SearchStrategy[RetryAfterValue] | None = None,
    transports: st.SearchStrategy[Outcome] | None = None,
    empty_responses: st.SearchStrategy[Outcome] | None = None,
) -> st.SearchStrategy[Scenario]:
    """Scenarios for a search tool (a 404, or ``empty_responses``, must give an empty result).

    ``empty_responses`` are what the upstream answers when nothing matched (default: a 200 with
    ``[]``). Rules are drawn as for :func:`fetch_scenarios`, an empty search in place of the 404.
    """

    def build() -> st.SearchStrategy[Scenario]:
        empties = st.just(respond(200, json=[])) if empty_responses is None else empty_responses
        _check_strategy("empty_responses", empties)
        found_nothing = empties.map(
            lambda outcome: Scenario(
                "empty-search",
                "search",
                outcome,
                Expectation(None, None, SEARCH_EMPTY, empty=True),
            )
        )
        return _scenarios(
            "search",
            statuses,
            error_bodies() if bodies is None else bodies,
            retry_after_values() if retry_afters is None else retry_afters,
            transports,
            found_nothing,
        )

    return _lazily(build)


_SCENARIO_OPTIONS = ("statuses", "bodies", "retry_afters", "transports", "empty_responses")


def scenarios(*, kinds: Collection[str] = KINDS, **options: Any) -> st.SearchStrategy[Scenario]:
    """Search and fetch scenarios together (``kinds`` keeps one); ``options`` as for either."""

    def build() -> st.SearchStrategy[Scenario]:
        unknown = sorted(set(options) - set(_SCENARIO_OPTIONS))
        if unknown:
            raise InvalidArgument(
                f"scenarios() got unknown option(s) {', '.join(unknown)}; it takes kinds, "
                f"{', '.join(_SCENARIO_OPTIONS)}"
            )
        chosen = [kinds] if isinstance(kinds, str) else list(kinds)
        if not chosen or set(chosen) - set(KINDS):
            raise InvalidArgument(
                f"kinds={kinds!r} must be a non-empty collection of search, fetch"
            )
        fetch_options = {k: v for k, v in options.items() if k != "empty_responses"}
        parts = []
        if "fetch" in chosen:
            parts.append(fetch_scenarios(**fetch_options))
        if "search" in chosen:
            parts.append(search_scenarios(**options))
        return st.one_of(parts)

    return _lazily(build)


# -- recorded failures -----------------------------------------------------------------------


def recorded_scenarios(
    paths: Iterable[str | PathLike[str]], *, kinds: Collection[str] = KINDS
) -> st.SearchStrategy[Scenario]:
    """The failures recordings hold (VCR.py cassettes, HAR files), each replayed as recorded.

    ``paths`` are files or glob patterns, relative to the current directory. Each recorded
    failure gives one scenario per kind in ``kinds``, named ``recorded-<file stem>-<entry>``,
    that replays the real status, headers and body (recorded secrets masked) at whatever
    endpoint ``verify`` is given. A recording that cannot be read, or holds no failure, is an
    ``InvalidArgument`` naming the file and the entry, raised when the test runs.
    """

    def build() -> st.SearchStrategy[Scenario]:
        from pytest_nucleo.testing._recorded._recording import (
            RecordingError,
            recorded_failures,
            recorded_scenario,
        )

        chosen = [kinds] if isinstance(kinds, str) else list(kinds)
        if not chosen or set(chosen) - set(KINDS):
            raise InvalidArgument(
                f"kinds={kinds!r} must be a non-empty collection of search, fetch"
            )
        if isinstance(paths, str | PathLike) or not isinstance(paths, Iterable):
            raise InvalidArgument(
                f"paths={paths!r} must be a list of recordings or glob patterns, such as "
                '["tests/cassettes/*.yaml"]'
            )
        files: list[str] = []
        for pattern in map(str, paths):
            found = sorted(glob.glob(pattern, recursive=True))
            if not found:
                raise InvalidArgument(f"recorded_scenarios(): {pattern!r} matches no file")
            files += found
        try:
            failures = recorded_failures(files)
        except RecordingError as error:
            raise InvalidArgument(str(error)) from error
        broken = [entry for entry in failures if isinstance(entry, RecordingError)]
        if broken:
            raise InvalidArgument(str(broken[0])) from broken[0]
        if not failures:
            raise InvalidArgument(f"recorded_scenarios(): {', '.join(files)} hold no failure")
        return st.sampled_from(
            [
                recorded_scenario(
                    exchange, kind, f"recorded-{Path(exchange.source).stem}-{exchange.entry}"
                )
                for exchange in failures
                if not isinstance(exchange, RecordingError)
                for kind in chosen
                if kind in KINDS
            ]
        )

    return _lazily(build)
