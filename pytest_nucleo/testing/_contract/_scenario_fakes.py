"""The fake upstream a scenario runs against: one route for the contract's endpoint, giving the
scenario's outcome, and the routes the contract arranges for the other requests its tool makes
(``ToolContract.extra_routes``), which answer the same in every scenario."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pytest_nucleo.testing._fake._upstream import FakeRoute, FakeUpstream, Outcome

Arrange = Callable[[FakeUpstream], None]
"""Routes the other requests of a tool on a scenario's fake upstream, before the call."""

# Idle fake upstreams of scenarios, by method and URL, newest last. A scenario's fake has one
# route, for the contract's endpoint; building one (a respx router and route, whose call lists
# are mocks, and the URL's pattern) costs about as much as the tool's call, so the scenarios of
# one endpoint share one, cleared of its calls and problems before each (see scenario_fake).
# A fake with arranged routes is built for its scenario alone: what an arrangement adds is the
# contract's, and another contract of the same endpoint may arrange others.
_IDLE_FAKES: dict[tuple[str, str], tuple[FakeUpstream, FakeRoute]] = {}
_IDLE_LIMIT = 16


def split_endpoint(endpoint: str) -> tuple[str, str]:
    """``"GET https://..."`` as its method and URL; a bare URL is a GET."""
    method, _, url = endpoint.strip().partition(" ")
    if not url:
        method, url = "GET", endpoint.strip()
    return method.upper(), url.strip()


def scenario_fake(
    method: str, url: str, outcome: Outcome, arrange: Arrange | None = None
) -> tuple[FakeUpstream, FakeRoute]:
    """A stopped fake upstream whose route ``method url`` gives ``outcome``, and which has the
    routes ``arrange`` adds; no calls, no problems. Without ``arrange``, taken from the idle
    ones when there is one for this endpoint (so that a scenario run inside another's tool,
    or in another thread, gets its own), built otherwise."""
    if arrange is not None:
        upstream = FakeUpstream(assert_all_called=False)
        route = upstream.route(method, url).always(outcome)  # first: it matches first
        arrange(upstream)
        return upstream, route
    idle = _IDLE_FAKES.pop((method, url), None)
    if idle is None:
        upstream = FakeUpstream(assert_all_called=False)
        return upstream, upstream.route(method, url).always(outcome)
    upstream, route = idle
    upstream._forget()
    return upstream, route.always(outcome)


def park(method: str, url: str, upstream: FakeUpstream, route: FakeRoute) -> None:
    """Keep a scenario's fake without arranged routes, once read, for the next scenario of
    the endpoint."""
    _IDLE_FAKES[method, url] = upstream, route
    while len(_IDLE_FAKES) > _IDLE_LIMIT:
        del _IDLE_FAKES[next(iter(_IDLE_FAKES))]


def route_all(upstream: FakeUpstream, routes: Mapping[str, Outcome]) -> None:
    """Add ``routes`` (``"METHOD URL"`` to the outcome it always gives) to ``upstream``."""
    for endpoint, outcome in routes.items():
        method, url = split_endpoint(endpoint)
        upstream.route(method, url).always(outcome)
