"""ToolContract: the whole failure matrix for one tool, from a few class attributes."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from importlib import import_module
from typing import Any, ClassVar, NoReturn, TypeVar
from urllib.parse import urlsplit

import pytest
from syrupy.assertion import SnapshotAssertion

from ._contract._report import SKIP_WHERE, record
from ._contract._scenario_fakes import route_all, split_endpoint
from ._contract._scenarios import KINDS, RULES, Kind, Observation, Scenario, contract_matrix
from ._failure import LLMText
from ._fake._backends import backend_factories
from ._fake._upstream import METHODS, FakeUpstream, Outcome, respond
from ._recorded._replay import (
    PREFIX,
    UnreadableRecording,
    check_patterns,
    recorded_matrix,
)

F = TypeVar("F", bound=Callable[..., Any])

_REQUIRED = ("tool", "kind", "service_name", "endpoint", "valid_call")
_GENERATED = ("test_contract", "pytest_generate_tests")


def _class_location(cls: type) -> tuple[str, int]:
    """The file and line (1-based) where ``cls`` is defined; its module's file, line 1, when
    the source cannot be read."""
    import inspect

    try:
        return inspect.getsourcefile(cls) or "", inspect.getsourcelines(cls)[1]
    except (OSError, TypeError):
        module = sys.modules.get(cls.__module__)
        return str(getattr(module, "__file__", None) or cls.__module__), 1


def overrides_contract(reason: str) -> Callable[[F], F]:
    """Mark a method of a ToolContract subclass that replaces a generated test, saying why.

    Without it, replacing ``test_contract`` is refused: a contract silently weakened by an
    override would still look green in CI.
    """
    if not isinstance(reason, str) or not reason.strip():
        raise TypeError(
            "overrides_contract() needs a reason: say why the generated test is replaced"
        )

    def mark(func: F) -> F:
        func.__nucleo_override_reason__ = reason  # type: ignore[attr-defined]
        return func

    return mark


class ToolContract:
    """Subclass it as ``TestSomething`` to check a tool against the whole failure matrix.

    Give the tool (sync or async), its ``kind`` ("search" or "fetch"), the ``service_name``, the
    ``endpoint`` its valid call requests ("GET https://..."), the ``valid_call`` arguments and
    the ``valid_response`` the upstream gives them. Each scenario of the matrix becomes its own
    test, ``test_contract[status-404]`` and so on, checking class, correctability, hygiene, that
    an upstream failure's text names ``service_name``, and a snapshot of the text. Declare a
    scenario that cannot apply in ``not_applicable``, with a reason; the report shows it. List
    VCR.py cassettes or HAR files in ``recorded`` (globs relative to pytest's rootdir) and each
    recorded failure of the endpoint becomes one more test,
    ``test_contract[recorded-<file>-<entry>]``, replaying the real answer. A tool that makes
    other requests besides (a search, then a fetch of each hit) routes them in
    ``extra_routes``, or in ``arrange_more`` for what a table cannot say.

    A subclass without ``tool`` is an abstract base, for what a family of tools shares
    (``service_name``, ``secrets``, ``is_empty``): pytest collects no test from it, and its
    subclasses that set ``tool`` are checked in full.
    """

    tool: ClassVar[Callable[..., Any]]
    """The tool under contract, sync or async, called with :attr:`valid_call` as keyword arguments;
    a plain function attribute (``tool = get_product``)."""
    kind: ClassVar[Kind]
    """``"search"`` (an empty result is a valid answer) or ``"fetch"`` (a missing resource is a
    failure): it chooses the matrix."""
    service_name: ClassVar[str]
    """The service name the tool's client gives; every upstream failure's text must name it."""
    endpoint: ClassVar[str]
    """The request the valid call makes, ``"GET https://api.example/items/1"``: every scenario
    fakes this route."""
    valid_call: ClassVar[Mapping[str, Any]]
    """Keyword arguments of a call that succeeds when the upstream answers :attr:`valid_response`."""
    valid_response: ClassVar[Outcome] = respond(200, json={})
    """What the upstream answers the valid call (an outcome such as ``respond(200, json=...)``)."""
    empty_response: ClassVar[Outcome | None] = None
    """For a search: the upstream's answer that means nothing was found; None: ``respond(200,
    json=[])``."""
    secrets: ClassVar[tuple[str, ...]] = ()
    """Values the tool sends that no text may show (an API key read in the test): each scenario
    checks them."""
    not_applicable: ClassVar[Mapping[str, str]] = {}
    """Scenario name to reason, for scenarios that cannot happen for this tool; each is skipped and
    the report shows the reason."""
    recorded: ClassVar[Sequence[str]] = ()
    """Globs of VCR.py cassettes or HAR files (relative to pytest's rootdir) whose failures of
    :attr:`endpoint` become tests too."""
    extra_routes: ClassVar[Mapping[str, Outcome]] = {}
    """The other requests the valid call makes, ``"GET https://..."`` to the outcome the upstream
    always gives them (``respond(200, json=...)``), such as the fetch of each hit after a search.
    They answer the same in every scenario: the scenario's failure applies to :attr:`endpoint`
    alone (check another request's failures with a contract whose endpoint it is). For what a
    table cannot say, override :meth:`arrange_more`."""

    _matrix: ClassVar[list[Scenario]]
    _nucleo_abstract: ClassVar[bool] = False
    __test__: ClassVar[bool]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        name = cls.__name__
        if not hasattr(cls, "tool"):
            # A shared base (service_name, secrets, is_empty for a family of tools): abstract
            # until a subclass names its tool, so pytest collects no test from it.
            cls.__test__ = False
            cls._nucleo_abstract = True
            return
        if "__test__" not in cls.__dict__ and _abstract_above(cls):
            cls.__test__ = True  # what the abstract base turned off, not the user
        missing = [attr for attr in _REQUIRED if not hasattr(cls, attr)]
        if missing:
            raise TypeError(
                f"{name}(ToolContract) is missing {', '.join(missing)}: set them as class "
                "attributes, e.g. tool = get_order, kind = 'fetch', service_name = 'Shop', "
                "endpoint = 'GET https://shop.example/orders/1', valid_call = {'number': '1'}"
            )
        own_tool = cls.__dict__.get("tool")
        if own_tool is not None and not isinstance(own_tool, staticmethod):
            # A function stored on a class would be bound as a method; keep it a plain callable.
            cls.tool = staticmethod(own_tool)
        if not callable(cls.tool):
            raise TypeError(f"{name}.tool must be the tool function, got {cls.tool!r}")
        if cls.kind not in KINDS:
            raise TypeError(f"{name}.kind must be 'search' or 'fetch', got {cls.kind!r}")
        if not (isinstance(cls.service_name, str) and cls.service_name.strip()):
            raise TypeError(
                f"{name}.service_name must be the name of the service as the tool's texts say "
                f"it (such as 'Shop'), got {cls.service_name!r}: every upstream failure's text "
                "must name it"
            )
        if not isinstance(cls.valid_call, Mapping):
            raise TypeError(
                f"{name}.valid_call must be the keyword arguments of a valid call, as a dict; "
                f"got {cls.valid_call!r}"
            )
        for attr in _GENERATED:
            # As the class resolves it: set to None, or replaced by a mixin, counts too.
            resolved = getattr(cls, attr, None)
            if resolved is ToolContract.__dict__[attr] or getattr(
                resolved, "__nucleo_override_reason__", None
            ):
                continue
            owner = next(k for k in cls.__mro__ if attr in k.__dict__)
            where = "" if owner is cls else f" (in {owner.__name__})"
            raise TypeError(
                f"{name} overrides the generated {attr}{where} without saying why: that would "
                "silently weaken the contract. Declare single scenarios in not_applicable "
                "with a reason, or decorate the override with "
                "@overrides_contract('why the generated test does not apply')"
            )
        cls._matrix = contract_matrix(
            cls.kind,
            valid_response=cls.valid_response,
            empty_response=cls.empty_response,
            secrets=tuple(cls.secrets),
        )
        cls.recorded = check_patterns(name, cls.recorded)
        _check_extra_routes(cls)
        names = {scenario.name for scenario in cls._matrix}
        for scenario, reason in cls.not_applicable.items():
            # Recorded scenarios exist once their recordings are read, at collection.
            if scenario not in names and not scenario.startswith(PREFIX):
                raise TypeError(
                    f"{name}.not_applicable names {scenario!r}, which is not a scenario of a "
                    f"{cls.kind} tool; the scenarios are: {', '.join(sorted(names))}"
                )
            if not isinstance(reason, str) or not reason.strip():
                raise TypeError(
                    f"{name}.not_applicable[{scenario!r}] needs a reason (a sentence saying why "
                    "the scenario cannot happen for this tool)"
                )

    def is_empty(self, value: Any) -> bool:
        """Whether a search result is empty; override for results such as ``{"items": []}``."""
        return not value

    def arrange_more(self, fake_upstream: FakeUpstream) -> None:
        """Route the other requests the tool makes on each scenario's fake upstream, before the
        call: by default, :attr:`extra_routes`. Override it for what a table cannot say (a
        sequence, a route per hit of a search), with the fake's own route methods
        (``fake_upstream.get(url).respond(...)``). The contract's :attr:`endpoint` is routed
        already, and matches first; a route left uncalled (a failure stopped the tool before
        it) fails nothing."""
        route_all(fake_upstream, type(self).extra_routes)

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """pytest's hook: makes one ``test_contract`` per scenario of the matrix, recorded failures
        included. Don't call it."""
        if "nucleo_scenario" in metafunc.fixturenames:
            # The fakes of the clients imported by now (the tool's, whose module is imported)
            # and llm_snapshot's extension are loaded at collection, with the rest of the test
            # stack, rather than by the first scenario: a scenario's time is then the tool's
            # and the checks'.
            backend_factories()
            import_module(f"{__package__}._snapshot")
            cls = type(self)
            matrix = cls._matrix
            if cls.recorded:
                matrix = matrix + recorded_matrix(
                    patterns=cls.recorded,
                    rootdir=metafunc.config.rootpath,
                    kind=cls.kind,
                    endpoint=cls.endpoint,
                    valid_call=cls.valid_call,
                    not_applicable=cls.not_applicable,
                )
            metafunc.parametrize("nucleo_scenario", matrix, ids=[s.name for s in matrix])

    def test_contract(
        self,
        nucleo_scenario: Scenario,
        llm_snapshot: SnapshotAssertion,
        request: pytest.FixtureRequest,
    ) -> None:
        """The generated test: runs the tool under one scenario and checks class, correctability,
        hygiene and the snapshot. Replace it only with :func:`overrides_contract`."""
        __tracebackhide__ = True
        cls = type(self)
        if isinstance(nucleo_scenario, UnreadableRecording):
            _fail(nucleo_scenario.problem)
        tool_name = f"{cls.__name__}.{getattr(cls.tool, '__name__', 'tool')}"
        reason = cls.not_applicable.get(nucleo_scenario.name)
        if reason is not None:
            skipped = Observation(
                tool_name,
                nucleo_scenario.name,
                nucleo_scenario.expect.describe(),
                not_applicable=reason,
            )
            record(request.config, skipped)
            # The skip is reported at the contract class, which says why, not at this line.
            request.node.stash[SKIP_WHERE] = _class_location(cls)
            pytest.skip(f"not applicable: {reason}")
        observation = nucleo_scenario.observe(
            cls.tool,
            cls.valid_call,
            endpoint=cls.endpoint,
            secrets=tuple(cls.secrets),
            is_empty=self.is_empty,
            tool_name=tool_name,
            service_name=cls.service_name,
            arrange=self._arrangement(),
        )
        if observation.violation is None and observation.text is not None:
            try:
                assert LLMText(observation.text) == llm_snapshot
            except AssertionError:
                missing = _no_snapshot(llm_snapshot)
                observation.snapshot = "missing" if missing else "differs"
                record(request.config, observation)
                if not missing:
                    raise  # syrupy's diff shows what changed for the model
                # A first run has one such failure per scenario: each shows its text for review,
                # and the run's summary says once how to store them all.
                _fail(
                    f"{tool_name} [{nucleo_scenario.name}]: no snapshot stores this text yet "
                    f"(a new text; the end of the run says how to store it). The model read:\n"
                    f"{observation.read or observation.text}",
                )
            updating = bool(request.config.getoption("--snapshot-update", default=False))
            observation.snapshot = "written" if updating else "matches"
        record(request.config, observation)
        if observation.violation is not None:
            _fail(
                f"{tool_name} broke the failure contract in scenario {nucleo_scenario!r}:\n"
                f"{observation.violation}\n(every rule: {RULES})"
            )

    def _arrangement(self) -> Callable[[FakeUpstream], None] | None:
        """:meth:`arrange_more` when the contract routes more than its endpoint, else None (a
        scenario's fake is then shared by the scenarios of the endpoint)."""
        overridden = type(self).arrange_more is not ToolContract.arrange_more
        return self.arrange_more if overridden or type(self).extra_routes else None


def _check_extra_routes(cls: type[ToolContract]) -> None:
    """A TypeError, saying what to give, for ``extra_routes`` that are not a table of other
    requests to their outcomes."""
    name, routes = cls.__name__, cls.extra_routes
    example = 'extra_routes = {"GET https://api.example/items/1": respond(200, json={"id": 1})}'
    if not isinstance(routes, Mapping):
        raise TypeError(
            f"{name}.extra_routes must map each other request the tool makes to what the "
            f"upstream answers it, such as {example}; got {routes!r}"
        )
    endpoint = split_endpoint(cls.endpoint)
    for key, outcome in routes.items():
        method, url = split_endpoint(key) if isinstance(key, str) else ("", "")
        if method not in METHODS or urlsplit(url).scheme not in ("http", "https"):
            raise TypeError(
                f"{name}.extra_routes has the key {key!r}: give the method and absolute URL of "
                f"a request, such as {example}"
            )
        if (method, url) == endpoint:
            raise TypeError(
                f"{name}.extra_routes routes {key!r}, the contract's endpoint, whose answer is "
                "each scenario's: list only the other requests the tool makes"
            )
        if not isinstance(outcome, Outcome):
            raise TypeError(
                f"{name}.extra_routes[{key!r}] must be an outcome such as respond(200, "
                f"json=...) (from pytest_nucleo.testing); got {outcome!r}"
            )


def _abstract_above(cls: type) -> bool:
    """Whether the nearest class above ``cls`` that sets ``__test__`` is an abstract contract."""
    for above in cls.__mro__[1:]:
        if "__test__" in above.__dict__:
            return bool(above.__dict__.get("_nucleo_abstract"))
    return False


def _fail(message: str) -> NoReturn:
    """Fail the scenario's test with ``message`` alone: no traceback, no chained exception.

    Not hidden from tracebacks, unlike the test: pytest says "All traceback entries are
    hidden" under a message when every frame is."""
    raise pytest.fail.Exception(message, pytrace=False) from None


def _no_snapshot(snapshot: SnapshotAssertion) -> bool:
    """Whether the assertion that just failed found no stored snapshot (rather than another
    text)."""
    results = snapshot.executions
    return bool(results) and results[max(results)].recalled_data is None
