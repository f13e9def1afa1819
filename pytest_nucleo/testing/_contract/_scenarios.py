"""Scenarios: one way an upstream behaves, and what the failure contract expects of a tool then.

A scenario arranges a fake upstream for one call, runs the tool, and checks what came back: the
class (by meaning, so a carrier wrapped by ``wrap_with_context`` still counts; a throttle by the
outermost class, which is what the model reads), its correctability, an empty result for a
search that found nothing, a text that names the service, and a clean, secret-free text. A
broken rule fails with a message that says the rule in words (the docs list them all under
"The rules a scenario checks").
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pytest_nucleo import (
    ExternalServiceException,
    InvalidInputException,
    LLMReadableException,
    ResourceNotFoundException,
    SystemException,
    UnauthorizedException,
    UpstreamRetryException,
    UpstreamThrottleException,
)
from pytest_nucleo._causes import iter_chain
from pytest_nucleo._http._body_rules import THROTTLE_RULE_STATUSES
from pytest_nucleo._runner._tools import run_sync
from pytest_nucleo._text._render import seconds
from pytest_nucleo._text._secrets import MASK, redact
from pytest_nucleo.testing._docs import docs_ref
from pytest_nucleo.testing._fake._upstream import (
    Outcome,
    connect_error,
    html_error,
    not_json,
    respond,
    throttle,
    timeout,
)

from ._hygiene import text_problems
from ._scenario_fakes import Arrange, park, scenario_fake, split_endpoint
from ._wording import enforced_wait, stated_waits

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
    ``rule`` says the rule the scenario tests, in words. ``also`` are other classes the rule
    accepts as the outermost failure (a 404 on a fetch may reach the model as the
    ``InvalidInputException`` that ``wrap_with_context`` makes). ``retry_after``: the wait the
    server asked for, which the model must be told of.
    """

    cls: type[LLMReadableException] | None
    """The failure class the tool must raise (the outermost failure's meaning); None: the call must
    succeed."""
    correctable: bool | None
    """Whether the failure must be correctable; None when the call must succeed."""
    rule: str
    """The rule the scenario tests, in words, as a violation quotes it."""
    empty: bool = False
    """A search that found nothing: the tool must return an empty result."""
    also: tuple[type[LLMReadableException], ...] = ()
    """Other classes the rule accepts as the outermost failure."""
    retry_after: float | None = None
    """The wait the server asked for, which the model text must tell; None when it asked none."""

    @property
    def fails(self) -> bool:
        """Whether the scenario expects a failure rather than a result."""
        return self.cls is not None

    def describe(self) -> str:
        """The expectation in words: ``ResourceNotFoundException (correctable)``, ``an empty
        result``."""
        if self.cls is None:
            return "an empty result" if self.empty else "a result"
        kind = "correctable" if self.correctable else "uncorrectable"
        return f"{self.cls.__name__} ({kind})"


@dataclass
class Observation:
    """What one scenario saw: the tool's result or failure, and the verdict."""

    tool: str
    """The tool, as ``ContractClass.tool_name``."""
    scenario: str
    """The scenario's name, ``status-404`` and so on."""
    expected: str
    """What the contract expected, as :meth:`Expectation.describe` says it."""
    failed: bool = False
    """Whether the tool failed (raised an LLM-readable failure)."""
    cls: str | None = None
    """The class name of the failure the model saw; None on success."""
    correctable: bool | None = None
    """Whether that failure was correctable; None on success."""
    text: str | None = None
    """The whole text the model read; None when the tool returned a value."""
    leaked: bool = False
    """Whether a foreign exception escaped the tool instead of an LLM-readable failure."""
    unclean: list[str] = field(default_factory=list)
    """What made the text unclean (a planted secret, a repr, a traceback), one entry per finding."""
    rules: list[str] = field(default_factory=list)
    """The rule each problem in ``unclean`` broke, as the matrix names it."""
    violation: str | None = None
    """The broken rule, when the scenario failed; None when it passed."""
    snapshot: str = "none"
    """The snapshot's verdict: ``matches``, ``written`` (``--snapshot-update``), ``differs``,
    ``missing`` or ``none`` (no text to compare)."""
    not_applicable: str | None = None
    """The reason the contract gave for skipping the scenario; None when it ran."""
    read: str | None = None
    """The text as reports quote it: what the model read, bounded, planted values masked."""
    differs: str | None = None
    """What differed from the expectation when the class is the expected one (a throttle
    without its ``retry_after``), for a report row that would otherwise read the same twice."""

    def as_dict(self) -> dict[str, Any]:
        """The observation as one row of ``report.json``."""
        return {
            "tool": self.tool,
            "scenario": self.scenario,
            "expected": self.expected,
            "failed": self.failed,
            "class": self.cls,
            "correctable": self.correctable,
            "leaked": self.leaked,
            "unclean": self.unclean,
            "rules": self.rules,
            "violation": self.violation,
            "snapshot": self.snapshot,
            "not_applicable": self.not_applicable,
            "text": self.read,
            "differs": self.differs,
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
    """The scenario's name, the test id's part: ``status-404``, ``timeout``."""
    kind: Kind
    """The kind of tool the scenario is for: ``search`` or ``fetch``."""
    outcome: Outcome
    """What the upstream does for the call."""
    expect: Expectation
    """What the contract expects of the tool then."""
    planted: tuple[str, ...] = ()
    """Secret values the outcome plants in its answer, which no text may show."""

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
        service_name: str | None = None,
        arrange: Arrange | None = None,
    ) -> Observation:
        """Run the tool against this scenario and judge it; never raises for a violation.

        ``secrets`` are credentials the tool sends: no text may contain them. ``is_empty`` tells
        an empty search result (default: a falsy value such as ``[]``). ``service_name``, when
        given, must appear in the text of every upstream failure. ``arrange(fake_upstream)``
        routes the other requests the tool makes (the fetch of each hit after a search), which
        answer the same whatever the scenario: its outcome applies to ``endpoint`` alone.
        """
        method, url = split_endpoint(endpoint)
        seen = Observation(
            tool=tool_name or str(getattr(tool, "__name__", "tool")),
            scenario=self.name,
            expected=self.expect.describe(),
        )
        upstream, route = scenario_fake(method, url, self.outcome, arrange)
        error: BaseException | None = None
        value: Any = None
        # Started and stopped by hand, not verified on exit: the scenario judges the fake's
        # problems itself, with advice that fits a contract.
        upstream.start()
        try:
            value = call_tool(tool, arguments)
        except Exception as exc:
            error = exc
        finally:
            upstream.stop()
        problems, called = list(upstream.problems), route.called
        if arrange is None:  # read all it saw: the next scenario of the endpoint may reuse it
            park(method, url, upstream, route)
        if error is not None and (problems or not called):
            # The row shows what the tool did, even though the scenario could not judge it.
            seen.failed, seen.cls = True, type(error).__name__
            seen.leaked = not isinstance(error, LLMReadableException)
            if isinstance(error, LLMReadableException):
                seen.correctable = error.is_correctable
        if not called and not problems:
            seen.violation = _never_called(method, url, error, (*secrets, *self.planted))
            return seen
        if problems:
            # The scenario's routes are the contract's: a fake_upstream line to add would not
            # help here, the contract is what to fix.
            seen.violation = (
                f"{problems[0]}: the tool requested something other than the "
                f"contract's endpoint {method} {url}"
                f"{' and the routes it arranges' if arrange is not None else ''}; set endpoint "
                "to the method and URL the valid call requests, and route the other requests "
                "it makes in extra_routes"
            )
            return seen
        quote = self._judge(seen, error, value, secrets, is_empty, service_name)
        if seen.text is not None:
            seen.read = quote_read(seen.text, (*secrets, *self.planted))
        if seen.violation is not None:
            # It quotes raw exceptions and values, and goes to test output and the CI report.
            seen.violation = quote_read(
                redact(seen.violation, (*secrets, *self.planted)), limit=QUOTE_LIMIT
            )
            if quote and seen.read is not None:
                seen.violation += f" The model read:\n{seen.read}"
        return seen

    def verify(
        self,
        tool: Callable[..., Any],
        arguments: Mapping[str, Any],
        *,
        endpoint: str,
        secrets: tuple[str, ...] = (),
        is_empty: Callable[[Any], bool] = lambda value: not value,
        service_name: str | None = None,
        arrange: Arrange | None = None,
    ) -> Observation:
        """``observe``, then fail with a :class:`ContractViolation` when a rule was broken."""
        __tracebackhide__ = True
        seen = self.observe(
            tool,
            arguments,
            endpoint=endpoint,
            secrets=secrets,
            is_empty=is_empty,
            service_name=service_name,
            arrange=arrange,
        )
        if seen.violation is not None:
            raise ContractViolation(f"{self!r}\n{seen.violation}\n(every rule: {RULES})")
        return seen

    def _judge(
        self,
        seen: Observation,
        error: BaseException | None,
        value: Any,
        secrets: tuple[str, ...],
        is_empty: Callable[[Any], bool],
        service_name: str | None,
    ) -> bool:
        """Set the verdict on ``seen``; True when the violation should quote the model text."""
        expect = self.expect
        if isinstance(error, UpstreamRetryException):
            seen.failed = True
            seen.cls = type(error).__name__
            seen.violation = (
                f"a retry signal ({type(error).__name__}) escaped the tool: {RETRY_SIGNALS}"
            )
            return False
        if error is not None and not isinstance(error, LLMReadableException):
            seen.failed = seen.leaked = True
            seen.cls = type(error).__name__
            seen.correctable = False
            seen.violation = (
                f"the tool leaked {_raised(error)}. {EVERY_FAILURE_IN_THE_SET} "
                "Map it, or wrap the service call with service_call/wrap_with_context."
            )
            return False
        if error is None:
            if expect.empty and not is_empty(value):
                seen.violation = (
                    f"the tool returned {_short(value)} where the contract expects an empty "
                    f"result: {expect.rule}"
                )
            if not expect.fails:
                return False
            seen.violation = (
                f"the tool returned {_short(value)} where the contract expects "
                f"{expect.describe()}: {expect.rule}"
            )
            return False
        assert isinstance(error, LLMReadableException)
        seen.failed = True
        seen.cls = type(error).__name__
        seen.correctable = error.is_correctable
        seen.text = error.explain_to_llm()
        problems = text_problems(
            seen.text, secrets=(*secrets, *self.planted), retry_after=enforced_wait(error)
        )
        seen.unclean = list[str](problems)
        seen.rules = list(dict.fromkeys(p.rule for p in problems))
        accepted = next((cls for cls in expect.also if isinstance(error, cls)), None)
        if accepted is not None:
            seen.expected = Expectation(accepted, expect.correctable, expect.rule).describe()
        if expect.cls is None:
            seen.violation = (
                f"the tool failed with {seen.cls} where the contract expects "
                f"{expect.describe()}: {expect.rule}."
            )
        elif isinstance(error, SystemException) and expect.cls is not SystemException:
            seen.leaked = True
            seen.violation = (
                f"the failure reached the model as a SystemException (a bug, to the model) where "
                f"the contract expects {expect.describe()}: {expect.rule}. "
                f"Technical message: {error}"
            )
            return False
        elif error.is_correctable is not expect.correctable:
            seen.violation = (
                f"{seen.cls} is {'correctable' if error.is_correctable else 'uncorrectable'}, but "
                f"the contract expects {expect.describe()}: {expect.rule}."
            )
        elif expect.cls is UpstreamThrottleException:
            seen.violation, seen.differs = _throttle_violation(error, seen.text, expect)
        elif accepted is None and not _meaning_found(error, expect.cls):
            seen.violation = (
                f"the tool failed with {seen.cls}, where the contract expects "
                f"{expect.describe()}: {expect.rule}."
            )
        if seen.violation is None and seen.unclean:
            seen.violation = f"the model text is not clean ({'; '.join(seen.unclean)}): {CLEAN}."
            seen.differs = "an unclean text"
        if (
            seen.violation is None
            and service_name
            and not expect.correctable
            and service_name.casefold() not in seen.text.casefold()
        ):
            seen.violation = (
                f"the model text does not name the service {service_name!r}: {NAMES_SERVICE} "
                "(the contract's service_name must be the name the tool's texts use)."
            )
            seen.differs = "a text that does not name the service"
        return seen.violation is not None


def _never_called(
    method: str, url: str, error: BaseException | None, planted: tuple[str, ...]
) -> str:
    """Why a scenario tested nothing: no request reached the fake upstream."""
    if error is None:
        return (
            f"the tool never called {method} {url}, so this scenario tested nothing: check "
            "the contract's endpoint (method and URL the valid call requests)"
        )
    raised = quote_read(redact(_raised(error), planted), limit=300)
    return (
        f"the tool raised {raised} before any request reached the fake upstream, so this "
        f"scenario tested nothing. If the tool calls {method} {url}, it does so through a "
        f"client fake_upstream does not fake ({FAKED_CLIENTS} are faked): see {CLIENTS_DOCS}. "
        "Otherwise check the contract's endpoint (method and URL the valid call requests)."
    )


def _throttle_violation(
    error: LLMReadableException, text: str, expect: Expectation
) -> tuple[str | None, str | None]:
    """What is wrong with a throttle as the model reads it (the outermost class, the words),
    and, when the class is right, what differed in a few words for the report's row."""
    if not isinstance(error, UpstreamThrottleException):
        return (
            f"the tool failed with {type(error).__name__}, where the contract expects "
            f"{expect.describe()}: {expect.rule}. The model reads the outermost failure, not "
            "its cause: raise (or let through) the UpstreamThrottleException itself, with the "
            "wait the server asked for."
        ), None
    if not _THROTTLE_WORDS.search(text):
        return (
            f"the model text does not say the service is limiting requests: {expect.rule}.",
            "a text that does not say the service is limiting requests",
        )
    if expect.retry_after is None:
        return None, None
    wait = getattr(error, "retry_after", None)  # kept by the constructor, so always there
    if not isinstance(wait, int | float):
        return (
            f"the server asked to wait {seconds(expect.retry_after)} (Retry-After), but the "
            f"UpstreamThrottleException carries no retry_after: {expect.rule}. Keep the "
            "server's wait (raise the carrier, or pass retry_after=)."
        ), "no retry_after (the server asked to wait)"
    # Its number of seconds, or a wait in minutes or hours within their rounding ("about 2
    # minutes"), as the wording check reads it.
    number = seconds(wait).partition(" ")[0]
    said = re.search(rf"(?<![\d.]){re.escape(number)}(?![\d])", text) or any(
        abs(stated - wait) <= rounding for stated, rounding in stated_waits(text).items()
    )
    if not said:
        return (
            f"the model text does not say how long to wait ({seconds(wait)}, as "
            f"the server asked): {expect.rule}."
        ), "a text that does not say how long to wait"
    return None, None


def _raised(error: BaseException) -> str:
    """``error`` as a violation quotes it: its class and message, or that it had none."""
    message = str(error).strip()
    name = type(error).__name__
    return f"{name}: {message}" if message else f"{name} (with an empty message)"


_THROTTLE_WORDS = re.compile(
    r"throttl|rate.?limit|too many requests|limiting (?:our |the )?requests|slow down",
    re.IGNORECASE,
)


QUOTE_LIMIT = 2000
"""Most characters of a model text a report or a violation quotes (its head and tail)."""


def quote_read(text: str, planted: tuple[str, ...] = (), *, limit: int = QUOTE_LIMIT) -> str:
    """``text`` as the model read it, for test output and reports: verbatim but bounded (head
    and tail, saying how much was cut), the planted values of the test masked so that no
    credential of the test reaches CI logs (the hygiene problems name them)."""
    for value in sorted({v for v in planted if v}, key=len, reverse=True):
        text = text.replace(value, MASK)
    if len(text) <= limit:
        return text
    head, tail = limit * 2 // 3, limit // 3
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut} characters cut ...]\n{text[-tail:]}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# -- the matrix of TOOLKIT ------------------------------------------------------------------

CANARIES = (
    "sk-nucleocanary0123456789abcdef",
    "AKIANUCLEOCANARY0001",
)


def _fail(cls: type[LLMReadableException], correctable: bool, rule: str) -> Expectation:
    return Expectation(cls, correctable, rule)


FAKED_CLIENTS = "httpx, httpx2, requests, aiohttp and urllib.request (http.client)"
CLIENTS_DOCS = docs_ref("docs/how-to/http-clients.md", "Pick a client")

# The rules, in words: each violation says the whole rule it broke; the docs list them all.
RULES = docs_ref("docs/explanation/failure-contract.md", "The rules a scenario checks")
BAD_INPUT = "a 400, 413 or 422 means the call was wrong: an InvalidInputException, correctable"
CREDENTIALS = (
    "a 401 or 403 means the service rejected the tool's credentials: an UnauthorizedException, "
    "uncorrectable"
)
THROTTLED = (
    "a service that is limiting requests is an UpstreamThrottleException, uncorrectable, as the "
    "outermost failure: its text tells the model the service is limiting requests and, when the "
    "server sent Retry-After, how long to wait (and its retry_after is set)"
)
OUTAGE = (
    "a service that failed or could not be reached is an ExternalServiceException, uncorrectable"
)
FETCH_404 = (
    "a fetch by an id that names nothing (404) is a ResourceNotFoundException, correctable, or "
    "the InvalidInputException about that parameter that wrap_with_context makes"
)
SEARCH_EMPTY = "a search that found nothing returns an empty result, not a failure"
FOUND = "a reachable service with results gives a result"
NOT_JSON = "a 2xx body that is not the JSON asked for is an ExternalServiceException, uncorrectable"
BOUNDED = "the text is bounded, however large the page the service sent"
NO_SECRET = "no text holds a secret, whatever the service echoed"
EVERY_FAILURE_IN_THE_SET = (
    "Every failure is an exception of the set; anything else reaches the model only as "
    '"a system error occurred".'
)
RETRY_SIGNALS = (
    "retry signals are for the runner, which retries by itself; outside it they are not a "
    "failure the model can read"
)
CLEAN = (
    "a model text holds no stack trace, object repr, markup, control character or secret, and "
    "is bounded; it agrees with its hint line, says each thing once, states the wait the "
    "failure keeps, quotes only words and names no loopback address as the service (see "
    '"How the texts are written")'
)
NAMES_SERVICE = "the text of every upstream failure names the service, so the model knows which one"


def status_expectation(
    kind: Kind, status: int, *, throttle_body: bool = False, retry_after: float | None = None
) -> Expectation:
    """What the contract expects of a tool of ``kind`` when the upstream answers ``status``.

    ``throttle_body``: the body says the service is throttling (``body_says_throttled``), which
    turns a 400, 401, 403 or 503 into a throttle, as the client base maps it. ``retry_after``:
    the wait the server asked for, which a throttle's text must tell.
    """
    if throttle_body and status in THROTTLE_RULE_STATUSES:
        return Expectation(
            UpstreamThrottleException,
            False,
            THROTTLED + f" (here a {status} whose body says so)",
            retry_after=retry_after,
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
        return Expectation(
            ResourceNotFoundException, True, FETCH_404, also=(InvalidInputException,)
        )
    if status == 429:
        return Expectation(UpstreamThrottleException, False, THROTTLED, retry_after=retry_after)
    if 200 <= status < 300:
        return Expectation(None, None, FOUND)
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
        Scenario(
            "throttle-429-retry-after",
            kind,
            throttle(30),
            status_expectation(kind, 429, retry_after=30),
        ),
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
            status_expectation(kind, 403, throttle_body=True, retry_after=60),
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
            _fail(ExternalServiceException, False, f"{OUTAGE}; {BOUNDED}"),
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
            _fail(ExternalServiceException, False, f"{OUTAGE}; {NO_SECRET}"),
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
