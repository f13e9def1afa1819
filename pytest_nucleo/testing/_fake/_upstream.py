"""A fake upstream for every HTTP client a tool uses: statuses, timeouts, throttles, sequences.

One route table (a respx router) answers httpx, httpx2, requests, aiohttp, urllib, urllib3 and
httplib2 alike, each through its own backend under ``_backends``. An outcome is client-neutral: an answer is an
``httpx.Response``, a transport failure one of httpx's transport errors naming its kind, which
each backend raises as its client's own exception.

Strict by default: a request no route matches fails with an error naming the URL and the
routes there are (never a fake timeout), and a route never called fails the test at teardown.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime
from types import TracebackType
from typing import Any

import httpx
import respx
from respx.models import AllMockedAssertionError

from pytest_nucleo._causes import iter_chain
from pytest_nucleo._text._secrets import redact
from pytest_nucleo.testing._docs import docs_ref

from ._backends import Backend, backend_factories, watch_imports
from ._checks import check_base_url, check_status, checked_headers, never_matching
from ._guard import fake_started, fake_stopped
from ._json_body import JSON_CONTENT_TYPE, json_body
from ._pages import Server, error_page

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")

DOCS = docs_ref("docs/how-to/fake-upstream.md", "Fake upstream failures", section=False)


class UnmatchedRequestError(AllMockedAssertionError):
    """A request reached the fake upstream and no route matched it.

    Its message is one line, ``no fake route for GET <url>``: it travels inside whatever the
    tool makes of it (a SystemException's technical message, a log record). The whole report,
    with the line that adds the route, is :func:`problem_report`'s, which the plugin, ``verify``
    and ``fails_with`` show once.
    """

    def __init__(self, method: str, url: str, route_line: str, routes: tuple[str, ...]) -> None:
        self.method = method
        """The request's method, ``GET`` and so on."""
        self.url = url
        """The request's URL as messages show it: secret-looking tokens masked."""
        self.route_line = route_line
        """The line that adds a route for the request, ``fake_upstream.get(...).respond(200,
        json=...)``."""
        self.routes = routes
        """The routes the fake upstream had, each as ``FakeRoute.describe()`` gives it."""
        super().__init__(f"no fake route for {method} {url}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.method, self.url, self.route_line, self.routes))


class UnexpectedCallError(AssertionError):
    """A route with a finite sequence of outcomes was called more often than it has outcomes."""


@dataclass(frozen=True)
class Outcome:
    """What the upstream does for one request, whatever the client: answer with a response
    (``produce`` returns an ``httpx.Response``), or fail to (it raises one of httpx's transport
    errors, such as ``httpx.ReadTimeout``, which each client's fake raises as its own)."""

    description: str
    """What the outcome does, in words (``respond 503 text``, ``read timeout``): messages and the
    report name outcomes by it."""
    produce: Callable[[httpx.Request], httpx.Response]
    """Builds the answer to one request, or raises the httpx transport error that stands for the
    failure."""

    def __call__(self, request: httpx.Request) -> httpx.Response:
        return self.produce(request)


def respond(
    status: int = 200,
    *,
    text: str | None = None,
    json: Any = None,
    content: bytes | None = None,
    headers: Mapping[str, str] | None = None,
) -> Outcome:
    """Answer with ``status`` and at most one body: ``text``, ``json`` or raw ``content``."""
    check_status(status)
    given = [
        name for name, v in (("text", text), ("json", json), ("content", content)) if v is not None
    ]
    if len(given) > 1:
        raise ValueError(f"respond() takes one body, got {' and '.join(given)}: pick one")
    shown = f" {given[0]}" if given else ""

    # Servers send header bytes; a non-ASCII value (full-width digits in Retry-After, say) goes
    # out as UTF-8, where a str would make httpx refuse to build the response.
    raw_headers = [(name.encode(), value.encode()) for name, value in checked_headers(headers)]
    if json is not None:
        # Our own encoding, not httpx's: its output changed between versions (see _json_body).
        content = json_body(json)
        if not any(name.lower() == b"content-type" for name, _ in raw_headers):
            raw_headers.append((b"Content-Type", JSON_CONTENT_TYPE.encode()))

    def produce(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            status, text=text, content=content, headers=raw_headers, request=request
        )

    return Outcome(f"respond {status}{shown}", produce)


def timeout() -> Outcome:
    """The request was sent and no answer came in time (the server may have acted on it)."""

    def produce(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("The read operation timed out", request=request)

    return Outcome("read timeout", produce)


def connect_error() -> Outcome:
    """The connection was refused: nothing was sent."""

    def produce(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    return Outcome("connection refused", produce)


_THROTTLE_BODIES = {
    429: '{"error": "Too Many Requests", "message": "Rate limit exceeded, slow down."}',
    403: (
        '{"message": "API rate limit exceeded for installation. Check the rate limit status '
        'before retrying.", "documentation_url": "https://docs.example/rate-limits"}'
    ),
    401: '{"error": "rate_limited", "message": "Too many requests: rate limit exceeded."}',
    503: '{"error": "Service Unavailable", "message": "Too many requests, slow down."}',
}


def throttle(
    retry_after: float | str | None = None, *, status: int = 429, body: str | None = None
) -> Outcome:
    """The upstream says we call too fast: a 429 by default, or a 401/403/503 with a throttle
    body. ``retry_after`` is seconds (sent as delay-seconds) or an HTTP-date string, sent as
    the ``Retry-After`` header. To fake a malformed header, use ``respond(headers=...)``.
    """
    check_status(status)
    if body is None and status not in _THROTTLE_BODIES:
        raise ValueError(
            f"throttle(status={status}) has no realistic default body: use 429, 401, 403 or "
            "503, or pass body= with what that upstream says when it throttles"
        )
    headers = {"Content-Type": "application/json"}
    if isinstance(retry_after, str):
        headers["Retry-After"] = retry_after
    elif retry_after is not None:
        if isinstance(retry_after, bool) or not (math.isfinite(retry_after) and retry_after >= 0):
            raise ValueError(
                f"retry_after must be a finite number of seconds >= 0 or an HTTP-date, got "
                f"{retry_after!r}; to fake a malformed header, pass "
                "respond(429, headers={'Retry-After': ...}) instead"
            )
        headers["Retry-After"] = str(math.ceil(retry_after))
    answer = respond(status, text=body or _THROTTLE_BODIES[status], headers=headers)
    wait = f", Retry-After {headers['Retry-After']}" if "Retry-After" in headers else ""
    return Outcome(f"throttle {status}{wait}", answer.produce)


def html_error(
    status: int = 500, *, server: Server | None = None, size: int | None = None
) -> Outcome:
    """An HTML error page like the ones proxies and frameworks send instead of the JSON asked for.

    By default the page a status usually comes with: Cloudflare's for 520 to 526, Django's
    (debugging off) for 500, nginx's for every other status (with the standard reason phrase
    where nginx has no page of its own). ``server="nginx"``, ``"cloudflare"``, ``"django"`` or
    ``"rails"`` picks the page; a status that server never sends a page for is a
    ``ValueError``. ``size`` pads the page to that many bytes with HTML comments, which the
    body excerpt drops (to test that a huge page still gives a bounded text); left out, the
    page is as small as the real one. For an HTML body on a 2xx, use ``not_json()``.
    """
    page = error_page(check_status(status), server=server, size=size)
    bodies: dict[str, bytes] = {}  # built once per host: a padded page may be megabytes

    def produce(request: httpx.Request) -> httpx.Response:
        host = request.url.host
        if host not in bodies:
            bodies[host] = page.body(host)
        return httpx.Response(
            status, content=bodies[host], headers=page.headers(host), request=request
        )

    return Outcome(page.description, produce)


def not_json(status: int = 200) -> Outcome:
    """A success status whose body is not the JSON a client asked for (a login page)."""
    answer = respond(
        status,
        text="<html><body>Please sign in to continue.</body></html>",
        headers={"Content-Type": "text/html"},
    )
    return Outcome(f"respond {status} with a body that is not JSON", answer.produce)


def http_date(seconds_from_epoch: float) -> str:
    """An RFC 9110 HTTP-date, for ``throttle(retry_after=http_date(...))``."""
    return format_datetime(datetime.fromtimestamp(seconds_from_epoch, UTC), usegmt=True)


class FakeRoute:
    """One method and URL of the fake upstream, and what it does when called.

    ``respond``, ``timeout``, ``connect_error``, ``throttle``, ``html_error`` and ``not_json``
    make every call do the same; ``sequence(...)`` gives one outcome per call, in order, and a
    call beyond the last fails the test.
    """

    def __init__(self, upstream: FakeUpstream, method: str, url: str) -> None:
        self.method = method
        """The HTTP method the route matches, upper case."""
        self.url = url
        """The URL the route matches (``base_url`` already applied); without a query it matches any
        query."""
        self._upstream = upstream
        self._outcomes: list[Outcome] = []
        self._repeat = False
        self._route = upstream.router.route(method=method, url=url)
        self._route.side_effect = self._answer

    def __repr__(self) -> str:
        return f"<FakeRoute {self.describe()}>"

    def describe(self) -> str:
        """The route and its plan in one line, ``GET https://... -> respond 503``, as failure
        messages list it."""
        if not self._outcomes:
            plan = "no outcome set"
        elif self._repeat:
            plan = self._outcomes[0].description
        else:
            plan = "sequence: " + ", then ".join(o.description for o in self._outcomes)
        return f"{self.method} {self.url} -> {plan}"

    @property
    def calls(self) -> list[httpx.Request]:
        """The requests this route answered, in order."""
        return [call.request for call in self._route.calls]

    @property
    def called(self) -> bool:
        """Whether the route answered at least one request; :attr:`calls` has them."""
        return bool(self._route.calls)

    def _answer(self, request: httpx.Request) -> httpx.Response:
        count = len(self._route.calls)  # calls recorded before this one
        if not self._outcomes:
            raise self._upstream._problem(
                UnexpectedCallError(
                    f"fake_upstream: {self.method} {self.url} was called but no "
                    "outcome was set: call .respond(...), .timeout(), ... on it"
                )
            )
        if self._repeat:
            return self._outcomes[0](request)
        if count >= len(self._outcomes):
            raise self._upstream._problem(
                UnexpectedCallError(
                    f"fake_upstream: {self.method} {self.url} was called {count + 1} times, but "
                    f"its sequence has {len(self._outcomes)} outcomes "
                    f"({self.describe()}). Add outcomes to the sequence, or check why the "
                    "tool calls again."
                )
            )
        return self._outcomes[count](request)

    def always(self, outcome: Outcome) -> FakeRoute:
        """Every call gets ``outcome``."""
        if not isinstance(outcome, Outcome):
            raise TypeError(f"always() takes an outcome such as respond(404), got {outcome!r}")
        self._outcomes, self._repeat = [outcome], True
        return self

    def sequence(self, *outcomes: Outcome) -> FakeRoute:
        """One outcome per call, in order: ``sequence(timeout(), respond(503), respond(200))``."""
        if not outcomes or not all(isinstance(o, Outcome) for o in outcomes):
            raise TypeError(
                "sequence() takes one or more outcomes, built with the functions of "
                "pytest_nucleo.testing: respond(...), timeout(), connect_error(), throttle(...), "
                f"html_error(...), not_json(); got {outcomes!r}"
            )
        self._outcomes, self._repeat = list(outcomes), False
        return self

    def respond(
        self,
        status: int = 200,
        *,
        text: str | None = None,
        json: Any = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> FakeRoute:
        """Every call gets this answer: ``status`` and at most one body, ``text``, ``json``
        (encoded compactly by the fake) or raw ``content``, and ``headers``. See
        :func:`~pytest_nucleo.testing.respond`; use :meth:`sequence` for a different answer per
        call."""
        return self.always(respond(status, text=text, json=json, content=content, headers=headers))

    def timeout(self) -> FakeRoute:
        """Every call times out after the request was sent (the server may have acted on it): each
        client raises its own read timeout. See :func:`~pytest_nucleo.testing.timeout`."""
        return self.always(timeout())

    def connect_error(self) -> FakeRoute:
        """Every call finds the connection refused (nothing was sent): each client raises its own
        connection error. See :func:`~pytest_nucleo.testing.connect_error`."""
        return self.always(connect_error())

    def throttle(
        self, retry_after: float | str | None = None, *, status: int = 429, body: str | None = None
    ) -> FakeRoute:
        """Every call is throttled: a 429 by default (or 401, 403, 503 with a throttle body), with
        ``retry_after`` as the ``Retry-After`` header. See
        :func:`~pytest_nucleo.testing.throttle`."""
        return self.always(throttle(retry_after, status=status, body=body))

    def html_error(
        self, status: int = 500, *, server: Server | None = None, size: int | None = None
    ) -> FakeRoute:
        """Every call gets a real server's HTML error page (nginx by default), of about its real
        size. See :func:`~pytest_nucleo.testing.html_error`."""
        return self.always(html_error(status, server=server, size=size))

    def not_json(self, status: int = 200) -> FakeRoute:
        """Every call gets a success status whose body is an HTML page, not the JSON the client
        asked for. See :func:`~pytest_nucleo.testing.not_json`."""
        return self.always(not_json(status))


class _StrictRouter(respx.MockRouter):
    """A respx router whose unmatched requests fail with our message, not a fake response."""

    def __init__(self, upstream: FakeUpstream) -> None:
        super().__init__(assert_all_called=False, assert_all_mocked=True)
        self._upstream = upstream

    def handler(self, request: httpx.Request) -> httpx.Response:
        try:
            return super().handler(request)
        except UnmatchedRequestError:
            raise
        except AllMockedAssertionError:
            raise self._upstream._unmatched(request) from None

    async def async_handler(self, request: httpx.Request) -> httpx.Response:
        try:
            return await super().async_handler(request)
        except UnmatchedRequestError:
            raise
        except AllMockedAssertionError:
            raise self._upstream._unmatched(request) from None


def _shown_url(url: httpx.URL) -> str:
    """``url`` for a message that CI logs keep: secret-looking tokens masked (a test may send
    a real key it read from the environment), the query kept, since a route's query decides
    what it matches."""
    shown = redact(str(url.copy_with(query=None)))
    query = url.query.decode("ascii", "backslashreplace")
    return f"{shown}?{redact(query)}" if query else shown


def _route_line(request: httpx.Request) -> str:
    """The line that adds a route for ``request``, its query left out (a route without one
    matches any query)."""
    method = request.method.lower()
    call = method if method in ("get", "post", "put", "patch", "delete") else None
    # A Python string literal of the URL, whatever it holds (a backslash, a quote).
    url = json.dumps(_shown_url(request.url.copy_with(query=None)), ensure_ascii=False)
    where = f"{call}({url})" if call else f'route("{request.method}", {url})'
    return f"fake_upstream.{where}.respond(200, json=...)"


def problem_report(problems: list[AssertionError]) -> str:
    """What the fake upstream found wrong, for the test's failure: each unmatched request once
    (however often the tool retried it), then the lines that add their routes, each once, the
    test's routes and where the docs explain them; then any other problem."""
    unmatched = [p for p in problems if isinstance(p, UnmatchedRequestError)]
    others = [str(p) for p in problems if not isinstance(p, UnmatchedRequestError)]
    parts = []
    if unmatched:
        counts: dict[str, int] = {}
        for error in unmatched:
            counts[str(error)] = counts.get(str(error), 0) + 1
        heads = [f"{head} ({n} requests)" if n > 1 else head for head, n in counts.items()]
        lines = list(dict.fromkeys(error.route_line for error in unmatched))
        routes = unmatched[-1].routes or ("(none)",)
        parts.append(
            "\n".join(
                [
                    *heads,
                    "Add a route for "
                    + ("it" if len(lines) == 1 else "each")
                    + " to the test, with the answer the tool should get:",
                    *(f"    {line}" for line in lines),
                    "The test's routes:",
                    *(f"    {route}" for route in routes),
                    f"See {DOCS}.",
                ]
            )
        )
    return "\n\n".join([*parts, *dict.fromkeys(others)])


_running_fakes: list[FakeUpstream] = []
"""The fakes started and not stopped, oldest first: a refusal names the one in the way."""


def _where_started() -> str:
    """The first frame outside pytest-nucleo, pytest and pluggy: the user's line that started a
    fake (``file:line in function``)."""
    import sys

    frame = sys._getframe(1)
    skipped = ("pytest_nucleo", "_pytest", "pytest", "pluggy", "contextlib", "runpy")
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.split(".")[0] not in skipped:
            code = frame.f_code
            return f"{code.co_filename}:{frame.f_lineno} in {code.co_name}"
        frame = frame.f_back  # type: ignore[assignment]
    return "an unknown place"


class FakeUpstream:
    """The upstream services a tool calls, faked for httpx, httpx2, requests, aiohttp, urllib,
    urllib3 and httplib2.

    As a fixture: ``fake_upstream``. As a context manager, for one hypothesis example at a
    time: ``with FakeUpstream() as upstream: ...``. On exit it checks that every route was
    called (unless ``assert_all_called=False``) and that no request went unmatched.
    """

    def __init__(self, *, assert_all_called: bool = True, base_url: str | None = None) -> None:
        self.assert_all_called = assert_all_called
        """Whether a route never called fails the test at the end (the ``nucleo`` marker's option
        of that name)."""
        self.base_url = base_url
        """What a relative route URL is joined to (``get('/orders/1')``); None: route URLs must be
        absolute."""
        self.router = _StrictRouter(self)
        """The respx router that holds the routes and answers every client's requests; use the
        route methods rather than this."""
        self.routes: list[FakeRoute] = []
        """The routes declared so far, in order."""
        self.problems: list[AssertionError] = []
        """What went wrong so far (unmatched requests, calls past a sequence's end), reported when
        the fake stops or the test ends."""
        if base_url is not None:
            check_base_url(base_url)
        self._backends: list[Backend] = []
        self._unwatch: Callable[[], None] | None = None
        self.started_at: str | None = None
        """Where the running fake was started (``file:line in function``), None while stopped:
        a fake that cannot start names the one that holds the clients."""

    # -- routes ---------------------------------------------------------------------------

    def route(self, method: str, url: str) -> FakeRoute:
        """The route for ``method`` and ``url``; say what it does with ``.respond(...)`` & co.

        ``url`` is absolute, or relative to ``base_url``. A route without a query string
        matches requests with any query.
        """
        upper = method.upper() if isinstance(method, str) else method
        if upper not in METHODS:
            raise ValueError(f"unknown HTTP method {method!r}: use one of {', '.join(METHODS)}")
        full = self._absolute(url)
        route = FakeRoute(self, upper, full)
        self.routes.append(route)
        return route

    def _absolute(self, url: str) -> str:
        if not isinstance(url, str):
            raise TypeError(
                f"url must be a string such as 'https://api.example/items', got {url!r}"
            )
        if self.base_url is not None and not url.startswith(("http://", "https://")):
            url = self.base_url.rstrip("/") + "/" + url.lstrip("/")
        never_matching(url, "the route URL")
        return url

    def get(self, url: str) -> FakeRoute:
        """A route for ``GET url``: give it an outcome, ``fake_upstream.get(url).respond(404)``.
        The URL is absolute, or relative to ``base_url``; for another method, :meth:`route`."""
        return self.route("GET", url)

    def post(self, url: str) -> FakeRoute:
        """A route for ``POST url``; see :meth:`get`."""
        return self.route("POST", url)

    def put(self, url: str) -> FakeRoute:
        """A route for ``PUT url``; see :meth:`get`."""
        return self.route("PUT", url)

    def patch(self, url: str) -> FakeRoute:
        """A route for ``PATCH url``; see :meth:`get`."""
        return self.route("PATCH", url)

    def delete(self, url: str) -> FakeRoute:
        """A route for ``DELETE url``; see :meth:`get`."""
        return self.route("DELETE", url)

    @property
    def requests(self) -> list[httpx.Request]:
        """Every request the fake upstream saw, matched or not, in order."""
        return [call.request for call in self.router.calls]

    # -- strictness -----------------------------------------------------------------------

    def _problem(self, error: AssertionError) -> AssertionError:
        self.problems.append(error)
        return error

    def _unmatched(self, request: httpx.Request) -> UnmatchedRequestError:
        error = UnmatchedRequestError(
            request.method,
            _shown_url(request.url),
            _route_line(request),
            tuple(r.describe() for r in self.routes),
        )
        self._problem(error)
        return error

    def take_problems(self) -> str | None:
        """The report of what went wrong so far (see :func:`problem_report`), or None; the
        problems are then forgotten, so that each is reported once."""
        if not self.problems:
            return None
        report = problem_report(self.problems)
        self.problems.clear()
        return report

    def verify(self) -> None:
        """Fail when a request went unmatched, a sequence ran out, or a route was never called."""
        __tracebackhide__ = True
        message = self.failure_message()
        if message is not None:
            raise AssertionError(message)

    def failure_message(self) -> str | None:
        """What :meth:`verify` fails with, or None when all is well."""
        messages = [problem_report(self.problems)] if self.problems else []
        if self.assert_all_called:
            unused = [r for r in self.routes if not r.called]
            if unused:
                listed = "\n".join(f"  {r.describe()}" for r in unused)
                messages.append(
                    f"fake_upstream: {len(unused)} route(s) were never called:\n{listed}\n"
                    "Remove them, or mark the test @pytest.mark.nucleo(assert_all_called=False) "
                    "if calling them is optional."
                )
        return "\n\n".join(messages) if messages else None

    def _forget(self) -> None:
        """Back to no calls and no problems, its routes kept (for a scenario's fake, reused by
        the next scenario of the same endpoint); only while stopped."""
        if self._backends:
            raise RuntimeError("a running fake upstream cannot forget its calls")
        self.router.calls.clear()
        for route in self.routes:
            route._route.calls.clear()
        self.problems.clear()

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> FakeUpstream:
        """Fake every client until ``stop``, those imported by now and any imported before
        then; refuse beside another mock of one."""
        backends = [make() for make in backend_factories()]
        for backend in backends:
            reason = backend.refusal()
            if reason is not None:
                raise RuntimeError(f"fake_upstream cannot start: {reason}{self._in_the_way()}")
        self.started_at = _where_started()
        _running_fakes.append(self)
        try:
            for backend in backends:
                backend.start(self.router)
                self._backends.append(backend)
            self._unwatch = watch_imports(self._imported)
            fake_started(self)  # its routed hosts resolve, to an address only it answers
        except BaseException:
            self.stop()
            raise
        return self

    def _imported(self, client: str, make: Callable[[], Backend]) -> None:
        """Fake ``client``, imported while this fake runs. Raising would fail the import
        itself, far from the cause: a problem fails the test instead."""
        try:
            backend = make()
            reason = backend.refusal()
            if reason is None:
                backend.start(self.router)
                self._backends.append(backend)
        except Exception as error:
            reason = f"{type(error).__name__}: {error}"
        if reason is not None:
            self._problem(
                AssertionError(
                    f"fake_upstream could not fake {client}, imported while it ran: {reason}"
                )
            )

    def stop(self) -> None:
        """Take the fakes out of every client, checking nothing (leaving the ``with`` block
        checks); safe to call twice."""
        if self._unwatch is not None:
            self._unwatch()
            self._unwatch = None
        while self._backends:
            self._backends.pop().stop()
        fake_stopped(self)
        if self in _running_fakes:
            _running_fakes.remove(self)
        self.started_at = None

    def _in_the_way(self) -> str:
        """The sentence naming the fakes that still run (they hold the clients), or ''."""
        others = [fake for fake in _running_fakes if fake is not self]
        if not others:
            return ""
        places = "; ".join(str(fake.started_at) for fake in others)
        return (
            f" The FakeUpstream started at {places} is still running and holds the clients' "
            "fakes (a fixture of session, module or class scope, or a start() without stop()). "
            "Start one per test (the fake_upstream fixture, or `with FakeUpstream() as "
            "upstream:` inside the test), and stop it before the next one starts."
        )

    def __enter__(self) -> FakeUpstream:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        __tracebackhide__ = True
        self.stop()
        if exc is None:
            self.verify()
        elif isinstance(exc, Exception) and self.problems:
            # The fake's problem leads: what the tool made of an unmatched request (a
            # SystemException, an error result the test then asserted on) follows from it.
            ours = any(member in self.problems for member in iter_chain(exc))
            report = self.take_problems()
            if ours:
                raise AssertionError(report) from None
            raise AssertionError(report) from exc
