"""Scenarios: one way an upstream behaves, and what the failure contract expects of a tool then.

A scenario arranges a fake upstream for one call, runs the tool, and checks what came back
against CONTRACT sections 1, 3, 4 and 6: the class (by meaning, so a carrier wrapped by
``wrap_with_context`` still counts), its correctability, an empty result for a search that found
nothing, and a clean, secret-free text. A broken rule fails with a message that names it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pytest_nucleo import (
    CorrectableLLMException,
    ExternalServiceException,
    InvalidInputException,
    LLMReadableException,
    SystemException,
    UnauthorizedException,
    UpstreamRetryException,
    UpstreamThrottleException,
)
from pytest_nucleo._chain import iter_chain
from pytest_nucleo._runner import run_sync
from pytest_nucleo._secrets import redact
from pytest_nucleo._status import THROTTLE_RULE_STATUSES

from ._fake import (
    FakeUpstream,
    Outcome,
    connect_error,
    html_error,
    not_json,
    respond,
    throttle,
    timeout,
)
from ._hygiene import text_problems

Kind = Literal["search", "fetch"]
KINDS: tuple[Kind, ...] = ("search", "fetch")

UNMAPPED_STATUS = 418
"""The status the matrix uses for "any other received status"."""


class ContractViolation(AssertionError):
    """A tool broke a rule of the failure contract; the message names the rule."""


@dataclass(frozen=True)
class Expectation:
    """What the contract expects: a failure meaning ``cls`` with ``correctable``, or success.

    ``empty`` marks a search that found nothing: the tool must return an empty result.
    ``rule`` quotes the contract rule the scenario tests.
    """

    cls: type[LLMReadableException] | None
    correctable: bool | None
    rule: str
    empty: bool = False

    @property
    def fails(self) -> bool:
        return self.cls is not None

    def describe(self) -> str:
        if self.cls is None:
            return "an empty result" if self.empty else "a result"
        kind = "correctable" if self.correctable else "uncorrectable"
        return f"{self.cls.__name__} ({kind})"


@dataclass
class Observation:
    """What one scenario saw: the tool's result or failure, and the verdict."""

    tool: str
    scenario: str
    expected: str
    failed: bool = False
    cls: str | None = None
    correctable: bool | None = None
    text: str | None = None
    leaked: bool = False
    unclean: list[str] = field(default_factory=list)
    violation: str | None = None
    snapshot: str = "none"
    not_applicable: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "scenario": self.scenario,
            "expected": self.expected,
            "failed": self.failed,
            "class": self.cls,
            "correctable": self.correctable,
            "leaked": self.leaked,
            "unclean": self.unclean,
            "violation": self.violation,
            "snapshot": self.snapshot,
            "not_applicable": self.not_applicable,
        }


def call_tool(tool: Callable[..., Any], arguments: Mapping[str, Any]) -> Any:
    """Call a sync or async tool with keyword arguments; an async one runs to completion."""
    if inspect.iscoroutinefunction(tool):
        return run_sync(
            lambda: tool(**arguments),
            refusal="a contract scenario runs its async tool itself, so not under a running loop",
        )
    return tool(**arguments)


def _meaning_found(exc: LLMReadableException, expected: type[LLMReadableException]) -> bool:
    """The failure is ``expected``, or carries it in its chain (wrap_with_context keeps it)."""
    return any(isinstance(member, expected) for member in iter_chain(exc))


@dataclass(frozen=True)
class Scenario:
    """One way the upstream behaves for one call, and what the contract expects of the tool.

    ``verify(tool, arguments, endpoint=...)`` arranges a fake upstream for the endpoint, runs the
    tool once (sync or async) and raises :class:`ContractViolation` naming the broken rule.
    """

    name: str
    kind: Kind
    outcome: Outcome
    expect: Expectation
    planted: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"Scenario({self.kind} {self.name}: {self.outcome.description} -> {self.expect.describe()})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        # Hypothesis prints a failing example with its own pretty printer, which spells out a
        # dataclass field by field; this one line reads better.
        printer.text(repr(self))

    def observe(
        self,
        tool: Callable[..., Any],
        arguments: Mapping[str, Any],
        *,
        endpoint: str,
        secrets: tuple[str, ...] = (),
        is_empty: Callable[[Any], bool] = lambda value: not value,
        tool_name: str | None = None,
    ) -> Observation:
        """Run the tool against this scenario and judge it; never raises for a violation.

        ``secrets`` are credentials the tool sends: no text may contain them. ``is_empty`` tells
        an empty search result (default: a falsy value such as ``[]``).
        """
        method, url = _split_endpoint(endpoint)
        seen = Observation(
            tool=tool_name or str(getattr(tool, "__name__", "tool")),
            scenario=self.name,
            expected=self.expect.describe(),
        )
        upstream = FakeUpstream(assert_all_called=False)
        route = upstream.route(method, url).always(self.outcome)
        error: BaseException | None = None
        value: Any = None
        with upstream:
            try:
                value = call_tool(tool, arguments)
            except Exception as exc:
                error = exc
        if not route.called and not upstream.problems:
            seen.violation = (
                f"the tool never called {method} {url}, so this scenario tested nothing: check "
                "the contract's endpoint (method and URL the valid call requests)"
            )
            return seen
        if upstream.problems:
            seen.violation = str(upstream.problems[0])
            return seen
        self._judge(seen, error, value, secrets, is_empty)
        if seen.violation is not None:
            # It quotes raw exceptions and values, and goes to test output and the CI report.
            seen.violation = redact(seen.violation, secrets)
        return seen

    def verify(
        self,
        tool: Callable[..., Any],
        arguments: Mapping[str, Any],
        *,
        endpoint: str,
        secrets: tuple[str, ...] = (),
        is_empty: Callable[[Any], bool] = lambda value: not value,
    ) -> Observation:
        """``observe``, then fail with a :class:`ContractViolation` when a rule was broken."""
        __tracebackhide__ = True
        seen = self.observe(tool, arguments, endpoint=endpoint, secrets=secrets, is_empty=is_empty)
        if seen.violation is not None:
            raise ContractViolation(f"{self!r}\n{seen.violation}")
        return seen

    def _judge(
        self,
        seen: Observation,
        error: BaseException | None,
        value: Any,
        secrets: tuple[str, ...],
        is_empty: Callable[[Any], bool],
    ) -> None:
        expect = self.expect
        if isinstance(error, UpstreamRetryException):
            seen.failed = True
            seen.cls = type(error).__name__
            seen.violation = (
                f"a retry signal ({type(error).__name__}) escaped the tool: signals are for the "
                "runner, which retries by itself; outside it they are not a failure the model "
                "can read (CONTRACT 7)"
            )
            return
        if error is not None and not isinstance(error, LLMReadableException):
            seen.failed = seen.leaked = True
            seen.cls = type(error).__name__
            seen.correctable = False
            seen.violation = (
                f"the tool leaked {type(error).__name__}: {error}. Every failure must be an "
                "exception of the set; the model would read only that a system error occurred "
                "(CONTRACT 1). Map it, or wrap the service call with service_call/"
                "wrap_with_context."
            )
            return
        if error is None:
            if expect.empty and not is_empty(value):
                seen.violation = (
                    f"the tool returned {_short(value)} where the contract expects an empty "
                    f"result: {expect.rule}"
                )
            if not expect.fails:
                return
            seen.violation = (
                f"the tool returned {_short(value)} where the contract expects "
                f"{expect.describe()}: {expect.rule}"
            )
            return
        assert isinstance(error, LLMReadableException)
        seen.failed = True
        seen.cls = type(error).__name__
        seen.correctable = error.is_correctable
        seen.text = error.explain_to_llm()
        seen.unclean = text_problems(seen.text, secrets=(*secrets, *self.planted))
        if expect.cls is None:
            seen.violation = (
                f"the tool failed with {seen.cls} where the contract expects "
                f"{expect.describe()}: {expect.rule}. The model read:\n{seen.text}"
            )
        elif isinstance(error, SystemException) and expect.cls is not SystemException:
            seen.leaked = True
            seen.violation = (
                f"the failure reached the model as a SystemException (a bug, to the model) where "
                f"the contract expects {expect.describe()}: {expect.rule}. "
                f"Technical message: {error}"
            )
        elif error.is_correctable is not expect.correctable:
            seen.violation = (
                f"{seen.cls} is {'correctable' if error.is_correctable else 'uncorrectable'}, but "
                f"the contract expects {expect.describe()}: {expect.rule}. "
                f"The model read:\n{seen.text}"
            )
        elif not _meaning_found(error, expect.cls):
            seen.violation = (
                f"the tool failed with {seen.cls}, where the contract expects "
                f"{expect.describe()}: {expect.rule}. The model read:\n{seen.text}"
            )
        elif seen.unclean:
            listed = "; ".join(seen.unclean)
            seen.violation = (
                f"the model text is not clean ({listed}): texts carry no stack trace, repr, "
                f"control character or secret, and are bounded (CONTRACT 1 and 6). The model "
                f"read:\n{seen.text}"
            )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _split_endpoint(endpoint: str) -> tuple[str, str]:
    method, _, url = endpoint.strip().partition(" ")
    if not url:
        method, url = "GET", endpoint.strip()
    return method.upper(), url.strip()


# -- the matrix of TOOLKIT ------------------------------------------------------------------

CANARIES = (
    "sk-nucleocanary0123456789abcdef",
    "AKIANUCLEOCANARY0001",
)


def _fail(cls: type[LLMReadableException], correctable: bool, rule: str) -> Expectation:
    return Expectation(cls, correctable, rule)


BAD_INPUT = "CONTRACT 4: 400, 413 and 422 mean the call was wrong, an InvalidInputException"
CREDENTIALS = "CONTRACT 4: 401 and 403 mean our credentials were rejected, an UnauthorizedException"
THROTTLED = "CONTRACT 4 and 7: a throttling service is an UpstreamThrottleException"
OUTAGE = (
    "CONTRACT 3 and 4: a service that failed or could not be reached is an ExternalServiceException"
)
FETCH_404 = (
    "CONTRACT 3: a fetch by an id that names nothing (404) is a ResourceNotFoundException, "
    "correctable (or an InvalidInputException about that parameter)"
)
SEARCH_EMPTY = "CONTRACT 3: a search that found nothing returns an empty result, not a failure"
NOT_JSON = "CONTRACT 4: a 2xx body that is not the JSON asked for is an ExternalServiceException"


def status_expectation(kind: Kind, status: int, *, throttle_body: bool = False) -> Expectation:
    """What the contract expects of a tool of ``kind`` when the upstream answers ``status``.

    ``throttle_body``: the body says the service is throttling (``body_says_throttled``), which
    turns a 400, 401, 403 or 503 into a throttle, as the client base maps it.
    """
    if throttle_body and status in THROTTLE_RULE_STATUSES:
        return _fail(
            UpstreamThrottleException, False, THROTTLED + f" ({status} with a throttle body)"
        )
    if status in (400, 413, 422):
        return _fail(InvalidInputException, True, BAD_INPUT)
    if status in (401, 403):
        return _fail(UnauthorizedException, False, CREDENTIALS)
    if status == 404:
        if kind == "search":
            return Expectation(
                None, None, SEARCH_EMPTY + " (404 here means no results)", empty=True
            )
        return _fail(CorrectableLLMException, True, FETCH_404)
    if status == 429:
        return _fail(UpstreamThrottleException, False, THROTTLED)
    if 200 <= status < 300:
        return Expectation(None, None, "CONTRACT 3: a reachable service with results")
    return _fail(ExternalServiceException, False, OUTAGE)


def contract_matrix(
    kind: Kind,
    *,
    valid_response: Outcome,
    empty_response: Outcome | None = None,
    secrets: tuple[str, ...] = (),
) -> list[Scenario]:
    """The failure matrix of TOOLKIT for one tool, in a stable order with readable names.

    The secret-canary scenario's error body echoes ``secrets`` (what the tool sends) beside
    shaped canaries; no text may contain any of them.
    """
    statuses = [400, 401, 403, 404, 413, 422, 429, 500, 502, 503]
    matrix = [Scenario("valid-call", kind, valid_response, status_expectation(kind, 200))]
    matrix += [
        Scenario(
            f"status-{status}",
            kind,
            respond(status, json={"error": f"upstream said {status}"}),
            status_expectation(kind, status),
        )
        for status in statuses
    ]
    matrix += [
        Scenario(
            f"status-{UNMAPPED_STATUS}-unmapped",
            kind,
            respond(UNMAPPED_STATUS, text="I'm a teapot"),
            status_expectation(kind, UNMAPPED_STATUS),
        ),
        Scenario("throttle-429", kind, throttle(), status_expectation(kind, 429)),
        Scenario("throttle-429-retry-after", kind, throttle(30), status_expectation(kind, 429)),
        Scenario(
            "throttle-401-body",
            kind,
            throttle(status=401),
            status_expectation(kind, 401, throttle_body=True),
        ),
        Scenario(
            "throttle-403-body",
            kind,
            throttle(60, status=403),
            status_expectation(kind, 403, throttle_body=True),
        ),
        Scenario("read-timeout", kind, timeout(), _fail(ExternalServiceException, False, OUTAGE)),
        Scenario(
            "connection-refused",
            kind,
            connect_error(),
            _fail(ExternalServiceException, False, OUTAGE),
        ),
        Scenario(
            "not-json-2xx", kind, not_json(), _fail(ExternalServiceException, False, NOT_JSON)
        ),
        Scenario(
            "html-error-page",
            kind,
            html_error(500, size=300_000),
            _fail(ExternalServiceException, False, OUTAGE + "; its text is bounded"),
        ),
        Scenario(
            "secret-canaries",
            kind,
            respond(
                500,
                json={
                    "error": "upstream failure",
                    "echo": {"api_key": CANARIES[0], "aws": CANARIES[1]},
                    "authorization": f"Bearer {CANARIES[0]}",
                    "received": list(secrets),
                },
            ),
            _fail(ExternalServiceException, False, OUTAGE + "; CONTRACT 6: no secret in any text"),
            planted=(*CANARIES, *secrets),
        ),
    ]
    if kind == "search":
        matrix.append(
            Scenario(
                "empty-search",
                kind,
                empty_response or respond(200, json=[]),
                Expectation(None, None, SEARCH_EMPTY, empty=True),
            )
        )
    return matrix
