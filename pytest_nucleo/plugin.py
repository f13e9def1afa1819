"""The pytest11 entry point of pytest-nucleo: the ``nucleo`` marker, fixtures and hooks.

Loaded through the ``nucleo`` entry point, or with ``-p pytest_nucleo.plugin`` when
``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` is set. pytest loads it in every session of a project where
the package is installed, most of which never use it, so it costs little more than its own
import where it is unused. Importing it pulls in neither respx, syrupy nor hypothesis; each
fixture imports what it needs when it runs. A test that uses nothing of ours imports nothing
of ours either, and no hook of ours runs for each of its tests: the per-test hooks join a
session only once one of its tests could need them (see :func:`_each_test`), the network guard
is installed once a test could meet it (see :func:`_arm`), and the failure matrix's machinery
loads only once something recorded to it (or a setting asks for its report).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_nucleo.testing import _settings

if TYPE_CHECKING:
    from importlib.abc import Loader
    from importlib.machinery import ModuleSpec
    from types import ModuleType

    from syrupy.assertion import SnapshotAssertion

    from pytest_nucleo.testing import FakeUpstream
    from pytest_nucleo.testing._fake import _guard as _network

# llm_snapshot is syrupy's snapshot fixture: the plugin brings syrupy's plugin along, so that
# `-p pytest_nucleo.plugin` alone is enough with plugin autoload off. pytest skips it when it
# is loaded already (autoload on) or blocked (`-p no:syrupy`); find_spec imports nothing.
pytest_plugins = ["syrupy"] if importlib.util.find_spec("syrupy") else []

MARKER_OPTIONS = _settings.MARKER_OPTIONS  # (the reference docs list them from here)

# The modules whose presence the hooks check in sys.modules rather than import: while one is
# not imported, what it holds does not exist yet (a limiter, the testing switch's state, a
# running fake, a recorded observation), so there is nothing for a hook to do about it.
_CLOCK = "pytest_nucleo._clock"
_LIMITERS = "pytest_nucleo.limits._limiter"
_FAKE = "pytest_nucleo.testing._fake._upstream"  # the one module that starts fake upstreams
_NAMES = "pytest_nucleo.testing._fake._names"
_REPORT = "pytest_nucleo.testing._contract._report"
_FAILURE = "pytest_nucleo.testing._failure"
_SESSION_END = "pytest_nucleo.testing._session_end"
_PLUGIN_USE = "pytest_nucleo.testing._plugin_use"  # the marker's and the fixtures' work
_RUNNER = "pytest_nucleo._runner"  # whose failure records the runner watch reads
_WORKER_KEY = "nucleo_observations"  # _report.WORKER_KEY, read here without importing it
_TEST_STACK = ("hypothesis", "respx", "syrupy")  # _extras.TEST_STACK, likewise

_options = pytest.StashKey[dict[str, Any]]()
_guard = pytest.StashKey["_network.Guard"]()
_allow_hosts = pytest.StashKey[list[str]]()
_testing_before = pytest.StashKey[bool]()


def pytest_addoption(parser: pytest.Parser) -> None:
    _settings.add_options(parser)


class _RunnerWatch(logging.Handler):
    """Sees the runner's failure records during tests, correctable (WARNING) and uncorrectable
    (ERROR) alike, so a leak or an unclean text is reported even when the test that caused it
    passed (``--nucleo-strict``)."""

    def __init__(self, config: pytest.Config) -> None:
        super().__init__(logging.WARNING)
        self.config = config
        self.where: str | None = None
        self.expect_leaks = False

    def emit(self, record: logging.LogRecord) -> None:
        # A session run inside a test (pytester) runs its own tests inside the outer one's:
        # only the innermost running test's session records, so a failure is reported once.
        # (A slice, not [-1]: a tool's thread may log while the last test is being popped.)
        if self not in _running[-1:]:
            return
        # An uncorrectable failure comes as the record's exception, a correctable one (logged
        # without a traceback) in its extra attribute.
        failure = record.exc_info[1] if record.exc_info else getattr(record, "nucleo_failure", None)
        if self.where is None or failure is None or not record.args:
            return
        from pytest_nucleo.testing._contract._report import record_runner_failure

        tool = str(record.args[0]) if isinstance(record.args, tuple) else "tool"
        record_runner_failure(
            self.config,
            tool,
            self.where,
            failure,
            expect_leaks=self.expect_leaks,
        )


_watch = pytest.StashKey[_RunnerWatch]()
_guard_scope = pytest.StashKey[str]()
_fake_addresses_before = pytest.StashKey[str]()
_running: list[_RunnerWatch] = []  # the watches of the sessions running a test, innermost last
_sessions: list[pytest.Config] = []  # the configured sessions, outermost first (pytester nests)
_tests: list[pytest.Item] = []  # the tests between their setup and teardown, innermost last


class _ImportWatch:
    """A finder first on ``sys.meta_path`` that finds nothing itself. When a module it
    watches is imported, it has the finders after it find the module and runs a function of
    ours once the module has run: so the plugin need not import a module of ours early only
    to act on it, and still acts on it, mid-test too, once it exists. It watches for as long
    as a session runs, so a module imported again (pytester forgets the modules first
    imported during its runs) is seen again."""

    def __init__(self) -> None:
        self.then: dict[str, Callable[[ModuleType], None]] = {}

    def watch(self, name: str, then: Callable[[ModuleType], None]) -> None:
        self.then[name] = then
        if not any(finder is self for finder in sys.meta_path):
            sys.meta_path.insert(0, self)

    def stop(self) -> None:
        self.then.clear()
        sys.meta_path[:] = [finder for finder in sys.meta_path if finder is not self]

    def find_spec(
        self, name: str, path: Any = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name not in self.then:  # every other import of the process: one look-up
            return None
        finders = list(sys.meta_path)
        after = next((i + 1 for i, finder in enumerate(finders) if finder is self), 0)
        for finder in finders[after:]:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _RunThen(spec.loader, self)
                return spec  # type: ignore[no-any-return]
        return None


class _RunThen:
    """A module's loader, with what the watch has to run once the module has run."""

    def __init__(self, loader: Loader, watch: _ImportWatch) -> None:
        self.loader = loader
        self.watch = watch

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        create = getattr(self.loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module: ModuleType) -> None:
        # The module keeps its own loader: tracebacks and inspect read its source through it.
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        then = self.watch.then.get(module.__name__)
        if then is not None:
            then(module)


_imports = _ImportWatch()


def pytest_configure(config: pytest.Config) -> None:
    # A bad value fails the run at once; the guard's scope is read once, not per test.
    scope, addresses, hosts = _settings.checked(config)
    config.stash[_guard_scope], config.stash[_allow_hosts] = scope, hosts
    _sessions.append(config)
    watch = config.stash[_watch] = _RunnerWatch(config)
    logging.getLogger("pytest_nucleo.runner").addHandler(watch)
    # Process-wide, like the guard: the session's choice until it ends (pytester nests them).
    # Where the module is not imported yet, it will start at the default.
    if addresses != _settings.ADDRESS_CHOICES[0] or _NAMES in sys.modules:
        from pytest_nucleo.testing._fake import _names

        config.stash[_fake_addresses_before] = _names.use_addresses(addresses)
    # The guard refuses for every test under "all"; under the other scopes only a test that
    # uses the plugin, or one that runs a fake upstream, can meet it, so it waits for the
    # first of those (a test's setup, or the fake's module imported, mid-test or not).
    if scope == "all" or _FAKE in sys.modules:
        _arm(config)
    elif any(name in sys.modules for name in (_CLOCK, _RUNNER, _PLUGIN_USE, _REPORT)):
        _each_test(config)  # a conftest imported something of ours a test can touch
    _imports.watch(_FAKE, _arm_every_session)
    _imports.watch(_CLOCK, _clock_loaded)
    for name in (_RUNNER, _PLUGIN_USE, _REPORT):
        _imports.watch(name, _each_test_everywhere)
    config.addinivalue_line(
        "markers",
        "nucleo(assert_all_called=True, base_url=None, expect_leaks=False, allow_network=False, "
        "allow_hosts=[], real_waits=False): configure the fake_upstream fixture "
        "(assert_all_called=False lets routes go uncalled; base_url makes relative route URLs); "
        "expect_leaks=True: the test makes a tool leak a foreign exception on purpose, so the "
        "report does not count it; allow_network=True: the network guard lets the test reach "
        "non-loopback addresses; allow_hosts=[...]: it may reach these hosts (names, "
        "*.patterns, addresses, networks); real_waits=True: the system clock really sleeps in "
        "this test (waits are skipped by default).",
    )


def pytest_plugin_registered(plugin: object) -> None:
    """pytester's in-process runs forget the modules first imported during a run, and the
    state in them: where pytester is loaded, the guard's and the testing switch's modules are
    imported at once, outside any run, so that the runs and the session share one copy."""
    if getattr(plugin, "__name__", None) == "_pytest.pytester":
        import pytest_nucleo._clock
        import pytest_nucleo.testing._fake._guard  # noqa: F401


def _arm(config: pytest.Config) -> _network.Guard:
    """The session's network guard, installed now if it was not yet, with the guards of the
    sessions around it (outermost first, so the innermost session's stays the one that
    decides); a test running in one of them is guarded from now on as its setup would have."""
    from pytest_nucleo.testing._fake import _guard as network

    for session in _sessions[: _sessions.index(config) + 1]:
        if _guard not in session.stash:
            hosts: list[str] = session.stash[_allow_hosts]
            guard = network.install(allow_hosts=hosts)
            session.stash[_guard] = guard
            running = [item for item in _tests if item.config is session]
            if running:
                _begin_guard(running[-1], guard, running[-1].stash[_options])
            _each_test(session)  # each test begins and ends the guard from now on
    return config.stash[_guard]


def _arm_every_session(fake: ModuleType) -> None:
    if _sessions:
        _arm(_sessions[-1])


def _clock_loaded(clock: ModuleType) -> None:
    """The testing switch's module came in during a test: the switch as that test wants it."""
    _each_test_everywhere(clock)
    if _tests:
        clock.set_testing(_wants_testing(_tests[-1]))


_EACH_TEST = "nucleo-each-test"  # the per-test hooks' name in a session's plugin manager


def _each_test(config: pytest.Config) -> None:
    """The per-test hooks (:class:`_EachTest`) join the session, once. Until then none runs:
    each would cost every test of a suite that never uses the plugin about as much as a
    trivial test's own hooks do. They join once a test could need them: a collected test
    uses a fixture or the marker of ours, the guard is installed, or a module whose state a
    test can touch is imported (the testing switch's, the runner's, the fixtures' own).

    That import may come inside a running test (a test that imports the runner, say). That
    test is then taken up as if the hooks had run for it so far: its setup's work now, and
    its call's too if it is in its call. In its teardown it is left alone (its teardown hook
    would not run for it): the switch stays as it is until the next test."""
    if config.pluginmanager.has_plugin(_EACH_TEST):
        return
    config.pluginmanager.register(_EachTest(), _EACH_TEST)
    item, phase = _test_running_in(config)
    if item is not None and phase in ("setup", "call"):
        _begin_test(item, reset_limiters=False)  # a limiter that exists now is this test's own
        if phase == "call":
            _begin_call(item)


def _each_test_everywhere(module: ModuleType) -> None:
    for config in _sessions:
        _each_test(config)


def _test_running_in(config: pytest.Config) -> tuple[pytest.Item | None, str]:
    """The session's test running now and its phase, from what pytest tells a test of itself
    (``PYTEST_CURRENT_TEST``, "<node id> (<phase>)"), or ``None`` between tests."""
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    session = config.pluginmanager.get_plugin("session")
    nodeid, _, phase = current.rpartition(" (")
    if not nodeid or session is None:
        return None, ""
    item = next((item for item in getattr(session, "items", ()) if item.nodeid == nodeid), None)
    return item, phase.rstrip(")")


def _wants_testing(item: pytest.Item) -> bool:
    return not item.stash[_options].get("real_waits", False)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Snapshot files are not tests: pytest's doctest plugin would read
    ``__snapshots__/test_<module>.txt`` as a doctest file (its ``test*.txt`` glob), and fail
    the run's collection when one is damaged, before any test could say which."""
    if collection_path.parent.name == "__snapshots__" and collection_path.suffix == ".txt":
        return True
    return None


def pytest_unconfigure(config: pytest.Config) -> None:
    watch = config.stash.get(_watch, None)
    if watch is not None:
        logging.getLogger("pytest_nucleo.runner").removeHandler(watch)
    guard = config.stash.get(_guard, None)
    if guard is not None:
        from pytest_nucleo.testing._fake import _guard as network

        network.uninstall(guard)
    before = config.stash.get(_fake_addresses_before, None)
    if before is not None:
        from pytest_nucleo.testing._fake import _names

        _names.use_addresses(before)
    if config in _sessions:
        _sessions.remove(config)
    if not _sessions:
        _imports.stop()


class _EachTest:
    """The plugin's per-test hooks, registered in a session by :func:`_each_test` once one of
    its tests could need them. Each hook's work is a function of the module, so that a test
    already running when they join can be taken up by the same code."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        _begin_test(item, reset_limiters=True)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        _begin_call(item)
        try:
            return (yield)
        finally:
            _end_call(item)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, None, None]:
        try:
            return (yield)
        finally:
            _end_test(item)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        _complete_report(item, call, report)
        return report


def pytest_collection_finish(session: pytest.Session) -> None:
    if any(_uses_plugin(item) for item in session.items):
        _each_test(session.config)


def _begin_test(item: pytest.Item, *, reset_limiters: bool) -> None:
    # Checked before any fixture runs, so a misspelt option fails the test whatever it uses.
    marked = item.get_closest_marker("nucleo") is not None
    options = item.stash[_options] = _marker_options(item) if marked else {}
    hosts = _marker_hosts(options)
    config = item.config
    guard = config.stash.get(_guard, None)
    uses = None
    if guard is None:  # not yet needed (see pytest_configure): is it now?
        uses = marked or _uses_plugin_fixture(item)
        if (uses and config.stash[_guard_scope] == "plugin-tests") or _FAKE in sys.modules:
            guard = _arm(config)
    if guard is not None:
        _begin_guard(item, guard, options, hosts, uses)
    _start_fresh_time(item, options, reset_limiters)


# A test that requests one of these, or carries the nucleo marker, uses the plugin.
_PLUGIN_FIXTURES = frozenset({"fake_upstream", "llm_snapshot"})


def _begin_guard(
    item: pytest.Item,
    guard: _network.Guard,
    options: dict[str, Any],
    hosts: list[str] | None = None,
    uses: bool | None = None,
) -> None:
    """Guard the test, or not, as the scope says (see the docs' "The network guard"): with
    ``plugin-tests``, a test that uses the plugin's fixtures or marker is guarded, and any
    other test only while a fake upstream runs in it. ``hosts`` and ``uses`` (whether the
    test uses the plugin) when the caller knows them already."""
    scope = item.config.stash[_guard_scope]
    allowed = options.get("allow_network", False)
    if hosts is None:
        hosts = _marker_hosts(options)
    if scope == "off":
        guard.begin(allow_network=True)
    elif scope == "all" or (uses if uses is not None else _uses_plugin(item)):
        guard.begin(allow_network=allowed, allow_hosts=hosts)
    else:
        guard.begin(allow_network=allowed, while_faking=True, allow_hosts=hosts)


def _marker_hosts(options: dict[str, Any]) -> list[str]:
    if "allow_hosts" not in options:  # the marker's default: nothing to check
        return []
    from pytest_nucleo.testing._plugin_use import marker_hosts

    return marker_hosts(options["allow_hosts"])


def _marker_options(item: pytest.Item) -> dict[str, Any]:
    from pytest_nucleo.testing._plugin_use import marker_options

    return marker_options(item)


def _uses_plugin_fixture(item: pytest.Item) -> bool:
    return bool(_PLUGIN_FIXTURES.intersection(getattr(item, "fixturenames", ())))


def _uses_plugin(item: pytest.Item) -> bool:
    return _uses_plugin_fixture(item) or item.get_closest_marker("nucleo") is not None


def _start_fresh_time(item: pytest.Item, options: dict[str, Any], reset_limiters: bool) -> None:
    """Before any fixture: real waiting off (unless the test asks for it), and every limiter
    that already exists as if just built, so no test waits for real or inherits an open circuit
    or a full window from the tests before it. A limiter built during the test is its own.

    Neither module is imported for it: with no limiter module there is no limiter, and the
    switch's module, imported during the test, gets the test's setting then (the import
    watch); until then the test finds the switch as the test around it wants it (a session
    run inside a test), or off."""
    if _CLOCK in sys.modules:
        from pytest_nucleo import _clock

        item.stash[_testing_before] = _clock.is_testing()
        _clock.set_testing(not options.get("real_waits", False))
    else:  # as the test it runs in wants it (pytester), else off: the module's default
        item.stash[_testing_before] = _wants_testing(_tests[-1]) if _tests else False
    _tests.append(item)
    if reset_limiters and _LIMITERS in sys.modules:
        from pytest_nucleo.limits._limiter import live_limiters

        for limiter in live_limiters():
            limiter.reset()


def _end_test(item: pytest.Item) -> None:
    _end_call(item)  # a test taken up in its call had no call hook to end it
    guard = item.config.stash.get(_guard, None)
    if guard is not None:
        guard.end()
    before = item.stash.get(_testing_before, None)
    if before is not None:  # the switch as the test found it (a session may run inside one)
        if item in _tests:
            _tests.remove(item)
        if _CLOCK in sys.modules:
            from pytest_nucleo import _clock

            _clock.set_testing(before)


def _begin_call(item: pytest.Item) -> None:
    watch = item.config.stash.get(_watch, None)
    if watch is not None:
        watch.where = item.nodeid
        watch.expect_leaks = item.stash.get(_options, {}).get("expect_leaks", False)
        _running.append(watch)


def _end_call(item: pytest.Item) -> None:
    watch = item.config.stash.get(_watch, None)
    if watch is not None and watch in _running:
        _running.remove(watch)
        watch.where = None
        watch.expect_leaks = False


def _complete_report(
    item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport
) -> None:
    guard = item.config.stash.get(_guard, None)
    blocked = guard.take() if guard is not None else []
    if blocked:
        from pytest_nucleo.testing._fake._guard import failure_message

        # Recorded, not only raised: the code under test may have caught the error.
        message = failure_message(blocked)
        if report.passed:
            report.outcome = "failed"
            report.longrepr = message
        else:
            report.sections.append(("pytest-nucleo network guard", message))
    if _PLUGIN_USE in sys.modules:  # else no fake upstream ran in the test
        from pytest_nucleo.testing._plugin_use import after_report

        after_report(item, call, report)
    # A contract's skip, where a contract may have run.
    if report.skipped and isinstance(report.longrepr, tuple) and _REPORT in sys.modules:
        from pytest_nucleo.testing._plugin_use import skip_at_contract_class

        skip_at_contract_class(item, report)


@pytest.fixture
def fake_upstream(request: pytest.FixtureRequest) -> Generator[FakeUpstream, None, None]:
    """The upstream services of the tool under test, faked for httpx and httpx2 (sync and
    async), requests, aiohttp, the standard library's urllib, urllib3 (so boto3) and httplib2 (so
    google-api-python-client), from one route table.

    ``fake_upstream.get(url).respond(404, text=...)``, ``.timeout()``, ``.connect_error()``,
    ``.throttle(retry_after=...)``, ``.html_error(...)``, ``.not_json()``, ``.sequence(...)``.
    Strict: an unmatched request and a route never called fail the test.
    """
    from pytest_nucleo.testing._plugin_use import fake_upstream_fixture

    # The options as pytest_runtest_setup read them, unless the fixture came before it.
    yield from fake_upstream_fixture(request, request.node.stash.get(_options, None))


@pytest.fixture
def llm_snapshot(request: pytest.FixtureRequest) -> SnapshotAssertion:
    """syrupy's ``snapshot``, storing model texts exactly as the model reads them, one ``.txt``
    file per test module. ``pytest --snapshot-update`` writes them."""
    from pytest_nucleo.testing._plugin_use import llm_snapshot_fixture

    return llm_snapshot_fixture(request)


def pytest_report_header(config: pytest.Config) -> str | None:
    """One header line when the test stack is incomplete, so the reason is on screen before
    the first fixture that needs it fails."""
    absent = [name for name in _TEST_STACK if importlib.util.find_spec(name) is None]
    if not absent:
        return None
    from pytest_nucleo.testing._extras import INSTALL

    return f"pytest-nucleo: {', '.join(absent)} not installed; {INSTALL} brings them"


def pytest_assertrepr_compare(
    config: pytest.Config, op: str, left: object, right: object
) -> list[str] | None:
    """A line diff when two model texts differ; nothing for any other type, so that other
    plugins' explanations (syrupy's diffs among them) stay in charge of theirs."""
    if op != "==" or not (isinstance(left, str) and isinstance(right, str)):
        return None
    if _FAILURE not in sys.modules:  # where LLMText is not imported, no text is one
        return None
    from pytest_nucleo.testing._failure import LLMText

    if not (isinstance(left, LLMText) or isinstance(right, LLMText)):
        return None
    from pytest_nucleo.testing._plugin_use import text_diff

    return text_diff(left, right)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """pytest-xdist: merge a finished worker's observations on the controller."""
    output = getattr(node, "workeroutput", {})
    if output.get(_WORKER_KEY) in (None, "", "[]"):  # the worker observed nothing
        return
    from pytest_nucleo.testing._contract._report import merge_worker

    merge_worker(node.config, output)


@pytest.hookimpl(tryfirst=True)  # before pytest's junitxml writes its file
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    # Nothing was observed where the failure matrix's module was never imported, so an xdist
    # worker has nothing to ship; a report and strict mode are asked for, observed or not.
    observed = _REPORT in sys.modules
    if hasattr(config, "workerinput"):
        if observed:
            from pytest_nucleo.testing._contract._report import ship_from_worker

            ship_from_worker(config)
        return
    if (
        observed
        or _settings.setting(config, "nucleo_report")
        or _settings.setting(config, "nucleo_strict")
    ):
        from pytest_nucleo.testing._session_end import finish

        finish(session)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    # Nothing to say where the run's end had nothing to do (see pytest_sessionfinish).
    if (
        _REPORT in sys.modules
        or _SESSION_END in sys.modules
        or _settings.setting(config, "nucleo_strict")
    ):
        from pytest_nucleo.testing._session_end import terminal_summary

        terminal_summary(terminalreporter, config)


@pytest.hookimpl(wrapper=True, tryfirst=True, specname="pytest_terminal_summary")
def pytest_terminal_summary_new_snapshots(
    terminalreporter: Any, exitstatus: int, config: pytest.Config
) -> Generator[None, None, None]:
    """After everything else of the summary (the outermost wrapper ends last), just above
    pytest's last line: say once how to store the texts that have no snapshot yet. A first
    run fails each such scenario, as syrupy fails a missing snapshot, and this is where the
    reader of those failures looks next."""
    try:
        return (yield)
    finally:
        if _REPORT in sys.modules:  # else no scenario ran, new or not
            from pytest_nucleo.testing._session_end import new_snapshots

            new_snapshots(terminalreporter, config)
