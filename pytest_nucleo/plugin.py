"""The pytest11 entry point of pytest-nucleo: the ``nucleo`` marker, fixtures and hooks.

Loaded through the ``nucleo`` entry point, or with ``-p pytest_nucleo.plugin`` when
``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` is set. It stays light: importing it pulls in neither respx,
syrupy nor hypothesis; each fixture imports what it needs when it runs.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_nucleo.testing import _extras, _settings
from pytest_nucleo.testing._fake import _guard as _network
from pytest_nucleo.testing._fake import _names as _fake_names

if TYPE_CHECKING:
    from syrupy.assertion import SnapshotAssertion

    from pytest_nucleo.testing import FakeUpstream

# llm_snapshot is syrupy's snapshot fixture: the plugin brings syrupy's plugin along, so that
# `-p pytest_nucleo.plugin` alone is enough with plugin autoload off. pytest skips it when it
# is loaded already (autoload on) or blocked (`-p no:syrupy`); find_spec imports nothing.
pytest_plugins = ["syrupy"] if importlib.util.find_spec("syrupy") else []

_UPSTREAM_OPTIONS = ("assert_all_called", "base_url")
MARKER_OPTIONS = (
    *_UPSTREAM_OPTIONS,
    "expect_leaks",
    "allow_network",
    "allow_hosts",
    "real_waits",
)
_FLAGS = ("assert_all_called", "expect_leaks", "allow_network", "real_waits")

_call_failed = pytest.StashKey[bool]()
_options = pytest.StashKey[dict[str, Any]]()
_guard = pytest.StashKey[_network.Guard]()
_testing_before = pytest.StashKey[bool]()
_upstream = pytest.StashKey["FakeUpstream"]()


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
_report_error = pytest.StashKey[str]()
_fake_addresses_before = pytest.StashKey[str]()
_running: list[_RunnerWatch] = []  # the watches of the sessions running a test, innermost last


def pytest_configure(config: pytest.Config) -> None:
    # A bad value fails the run at once; the guard's scope is read once, not per test.
    config.stash[_guard_scope], addresses, hosts = _settings.checked(config)
    watch = config.stash[_watch] = _RunnerWatch(config)
    config.stash[_guard] = _network.install(allow_hosts=hosts)
    # Process-wide, like the guard: the session's choice until it ends (pytester nests them).
    config.stash[_fake_addresses_before] = _fake_names.use_addresses(addresses)
    logging.getLogger("pytest_nucleo.runner").addHandler(watch)
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
        _network.uninstall(guard)
    before = config.stash.get(_fake_addresses_before, None)
    if before is not None:
        _fake_names.use_addresses(before)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    # Checked before any fixture runs, so a misspelt option fails the test whatever it uses.
    options = item.stash[_options] = _marker_options(item)
    guard = item.config.stash.get(_guard, None)
    if guard is not None:
        _begin_guard(item, guard, options)
    _start_fresh_time(item)


# A test that requests one of these, or carries the nucleo marker, uses the plugin.
_PLUGIN_FIXTURES = frozenset({"fake_upstream", "llm_snapshot"})


def _begin_guard(item: pytest.Item, guard: _network.Guard, options: dict[str, Any]) -> None:
    """Guard the test, or not, as the scope says (see the docs' "The network guard"): with
    ``plugin-tests``, a test that uses the plugin's fixtures or marker is guarded, and any
    other test only while a fake upstream runs in it."""
    scope = item.config.stash[_guard_scope]
    allowed = options.get("allow_network", False)
    hosts = _marker_hosts(options.get("allow_hosts", ()))
    if scope == "off":
        guard.begin(allow_network=True)
    elif scope == "all" or _uses_plugin(item):
        guard.begin(allow_network=allowed, allow_hosts=hosts)
    else:
        guard.begin(allow_network=allowed, while_faking=True, allow_hosts=hosts)


def _marker_hosts(hosts: object) -> list[str]:
    if hosts == ():  # the marker's default: nothing to check
        return []
    where = "@pytest.mark.nucleo(allow_hosts=...)"
    if isinstance(hosts, str) or not (
        isinstance(hosts, list | tuple) and all(isinstance(h, str) for h in hosts)
    ):
        raise pytest.UsageError(
            f"{where} takes a list of host names, patterns, addresses or networks, such as "
            f"['db.internal.example', '10.0.0.0/8']; got {hosts!r}"
        )
    try:
        _network.AllowList(hosts, where)
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
    return list(hosts)


def _uses_plugin(item: pytest.Item) -> bool:
    names = getattr(item, "fixturenames", ())
    return (
        bool(_PLUGIN_FIXTURES.intersection(names)) or item.get_closest_marker("nucleo") is not None
    )


def _start_fresh_time(item: pytest.Item) -> None:
    """Before any fixture: real waiting off (unless the test asks for it), and every limiter
    that already exists as if just built, so no test waits for real or inherits an open circuit
    or a full window from the tests before it. A limiter built during the test is its own."""
    from pytest_nucleo import _clock
    from pytest_nucleo.limits._limiter import live_limiters

    item.stash[_testing_before] = _clock.is_testing()
    _clock.set_testing(not item.stash[_options].get("real_waits", False))
    for limiter in live_limiters():
        limiter.reset()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, None, None]:
    try:
        return (yield)
    finally:
        guard = item.config.stash.get(_guard, None)
        if guard is not None:
            guard.end()
        before = item.stash.get(_testing_before, None)
        if before is not None:  # the switch as the test found it (a session may run inside one)
            from pytest_nucleo import _clock

            _clock.set_testing(before)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    watch = item.config.stash.get(_watch, None)
    if watch is not None:
        watch.where = item.nodeid
        watch.expect_leaks = item.stash.get(_options, {}).get("expect_leaks", False)
        _running.append(watch)
    try:
        return (yield)
    finally:
        if watch is not None:
            _running.remove(watch)
            watch.where = None
            watch.expect_leaks = False


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    guard = item.config.stash.get(_guard, None)
    blocked = guard.take() if guard is not None else []
    if blocked:
        # Recorded, not only raised: the code under test may have caught the error.
        message = _network.failure_message(blocked)
        if report.passed:
            report.outcome = "failed"
            report.longrepr = message
        else:
            report.sections.append(("pytest-nucleo network guard", message))
    upstream = item.stash.get(_upstream, None)
    if upstream is not None and upstream.problems and report.when in ("setup", "call"):
        _lead_with_upstream_problems(report, call, upstream)
    if report.when in ("setup", "call"):  # (no call after a failed setup)
        item.stash[_call_failed] = report.failed
    if report.skipped and isinstance(report.longrepr, tuple):
        _skip_at_contract_class(item, report)
    return report


def _skip_at_contract_class(item: pytest.Item, report: pytest.TestReport) -> None:
    """A contract's not-applicable scenario is reported as skipped at the user's contract
    class (where ``not_applicable`` says why), not at the line of ours that skipped it."""
    from pytest_nucleo.testing._contract._report import SKIP_WHERE

    where = item.stash.get(SKIP_WHERE, None)
    if where is not None and isinstance(report.longrepr, tuple):
        report.longrepr = (where[0], where[1], report.longrepr[2])


def _lead_with_upstream_problems(
    report: pytest.TestReport, call: pytest.CallInfo[None], upstream: FakeUpstream
) -> None:
    """Fail the test with what the fake upstream found wrong (an unmatched request, a sequence
    run out), even when the tool swallowed the error or turned it into a failure of the set:
    that is the cause, and what the test then failed with only follows from it."""
    from pytest_nucleo._causes import iter_chain

    problems = list(upstream.problems)
    message = upstream.take_problems()
    if message is None:
        return
    if report.skipped:  # skipped or xfailed: keep that outcome, and say what went wrong
        report.sections.append(("pytest-nucleo fake upstream", message))
        return
    if report.failed and call.excinfo is not None:
        raised = call.excinfo.value
        crash = getattr(getattr(report.longrepr, "reprcrash", None), "message", None)
        own = str(crash).splitlines()[0] if crash else type(raised).__name__
        # The same failure when it came from a problem (through the tool, or fails_with
        # naming it); another one is said in a line, the fix of the problem coming first.
        same = any(member in problems for member in iter_chain(raised)) or any(
            str(problem) in own for problem in problems
        )
        if not same:
            message += f"\n\nAfter it, the test failed with: {own}"
    report.outcome = "failed"
    report.longrepr = message


def _marker_options(item: pytest.Item) -> dict[str, Any]:
    """The options of every ``nucleo`` mark on the test, its class and module, merged: per
    option, the closest node's mark wins (the test's over its class's over its module's), and
    on the test itself a parameter's mark wins over the function's."""
    depth = {id(node): level for level, node in enumerate(item.listchain())}
    marks = sorted(item.iter_markers_with_node("nucleo"), key=lambda pair: depth[id(pair[0])])
    options: dict[str, Any] = {}
    # Farthest first; on one node, pytest lists a parameter's marks after the function's.
    for _, marker in marks:
        if marker.args:
            raise pytest.UsageError(
                f"@pytest.mark.nucleo takes keyword arguments only ({', '.join(MARKER_OPTIONS)}), "
                f"got positional {marker.args!r}"
            )
        unknown = sorted(set(marker.kwargs) - set(MARKER_OPTIONS))
        if unknown:
            raise pytest.UsageError(
                f"@pytest.mark.nucleo got unknown option(s) {', '.join(unknown)}; "
                f"it takes {', '.join(MARKER_OPTIONS)}"
            )
        for flag in _FLAGS:
            if flag in marker.kwargs and not isinstance(marker.kwargs[flag], bool):
                raise pytest.UsageError(
                    f"@pytest.mark.nucleo({flag}=...) takes True or False, "
                    f"got {marker.kwargs[flag]!r}"
                )
        base_url = marker.kwargs.get("base_url")
        if base_url is not None and not isinstance(base_url, str):
            raise pytest.UsageError(
                "@pytest.mark.nucleo(base_url=...) takes an absolute http(s) URL string such as "
                f"'https://api.example/v1', got {type(base_url).__name__} {base_url!r}"
            )
        options.update(marker.kwargs)
    return options


@pytest.fixture
def fake_upstream(request: pytest.FixtureRequest) -> Generator[FakeUpstream, None, None]:
    """The upstream services of the tool under test, faked for httpx and httpx2 (sync and
    async), requests, aiohttp, the standard library's urllib, urllib3 (so boto3) and httplib2 (so
    google-api-python-client), from one route table.

    ``fake_upstream.get(url).respond(404, text=...)``, ``.timeout()``, ``.connect_error()``,
    ``.throttle(retry_after=...)``, ``.html_error(...)``, ``.not_json()``, ``.sequence(...)``.
    Strict: an unmatched request and a route never called fail the test.
    """
    _require("fake_upstream", ("respx",))
    for other, client in (
        ("httpx_mock", "httpx"),
        ("respx_mock", "httpx"),
        ("httpx2_mock", "httpx2"),
    ):
        if other in request.fixturenames:
            raise pytest.UsageError(
                f"fake_upstream and {other} both patch {client} in {request.node.nodeid}: they would "
                "both answer requests. Use one of them per test."
            )
    from pytest_nucleo.testing import FakeUpstream

    options = request.node.stash.get(_options, None)  # set by pytest_runtest_setup...
    if options is None:  # ...unless the fixture was requested before that hook ran
        options = _marker_options(request.node)
    # Failed outside the except clauses, so that the message is not shown twice (chained).
    problem = None
    try:
        upstream = FakeUpstream(**{k: v for k, v in options.items() if k in _UPSTREAM_OPTIONS})
    except ValueError as error:  # a base_url no request can go to
        problem = f"@pytest.mark.nucleo(base_url=...): {error}"
    if problem is not None:
        pytest.fail(problem, pytrace=False)
    request.node.stash[_upstream] = upstream  # its problems lead the test's report
    try:
        upstream.start()
    except RuntimeError as refused:  # another mock is in the way: the message says which
        problem = str(refused)
    if problem is not None:
        pytest.fail(problem, pytrace=False)
    try:
        yield upstream
    finally:
        upstream.stop()
    if request.node.stash.get(_call_failed, False):
        upstream.problems.clear()  # the test already failed; don't bury its message
        upstream.assert_all_called = False
    message = upstream.failure_message()
    if message is not None:
        # Reported as a message: a traceback here would show this fixture's source, which
        # says nothing about the test.
        pytest.fail(message, pytrace=False)


@pytest.fixture
def llm_snapshot(request: pytest.FixtureRequest) -> SnapshotAssertion:
    """syrupy's ``snapshot``, storing model texts exactly as the model reads them, one ``.txt``
    file per test module. ``pytest --snapshot-update`` writes them."""
    _require("llm_snapshot", ("syrupy",))
    from pytest_nucleo.testing import LLMTextSnapshotExtension, _snapshot

    snapshot: SnapshotAssertion = request.getfixturevalue("snapshot")
    # A snapshot file that rewriting mends (another serializer's, not UTF-8) is refused with
    # its name, unless the run rewrites it.
    _snapshot.updating = bool(request.config.getoption("update_snapshots", default=False))
    return snapshot.use_extension(LLMTextSnapshotExtension)


def _require(fixture: str, modules: tuple[str, ...]) -> None:
    message = _extras.needs(fixture, modules)
    if message is not None:
        pytest.fail(message, pytrace=False)


def pytest_report_header(config: pytest.Config) -> str | None:
    """One header line when the test stack is incomplete, so the reason is on screen before
    the first fixture that needs it fails."""
    absent = _extras.missing()
    if not absent:
        return None
    return f"pytest-nucleo: {', '.join(absent)} not installed; {_extras.INSTALL} brings them"


def pytest_assertrepr_compare(
    config: pytest.Config, op: str, left: object, right: object
) -> list[str] | None:
    """A line diff when two model texts differ; nothing for any other type, so that other
    plugins' explanations (syrupy's diffs among them) stay in charge of theirs."""
    if op != "==" or not (isinstance(left, str) and isinstance(right, str)):
        return None
    from pytest_nucleo.testing._failure import LLMText

    if not (isinstance(left, LLMText) or isinstance(right, LLMText)):
        return None
    import difflib

    diff = difflib.ndiff(right.splitlines(), left.splitlines())
    return ["model texts differ (- expected, + actual):", *(line.rstrip("\n") for line in diff)]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """pytest-xdist: merge a finished worker's observations on the controller."""
    from pytest_nucleo.testing._contract._report import merge_worker

    merge_worker(node.config, getattr(node, "workeroutput", {}))


@pytest.hookimpl(tryfirst=True)  # before pytest's junitxml writes its file
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    from pytest_nucleo.testing._contract import _report

    config = session.config
    if hasattr(config, "workerinput"):
        _report.ship_from_worker(config)
        return
    entries = _report.observations(config)
    path = _settings.setting(config, "nucleo_report")
    if path:
        try:
            _report.write_reports(path, entries)
        except OSError as error:  # the folder changed during the run: say so in the summary
            config.stash[_report_error] = f"the report could not be written to {path}: {error}"
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_file and entries:
        with open(summary_file, "a", encoding="utf-8") as out:
            out.write(_report.markdown(_report.published(entries)))
    problems = _strict_problems(config, entries)
    if problems:
        _tell_junitxml(config, problems)
    if (
        session.exitstatus == pytest.ExitCode.OK  # never hide an interruption or internal error
        and problems
    ):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


_STRICT_NODEID = "pytest-nucleo::strict"
"""The test case that stands for strict mode's problems in a ``--junitxml`` file."""


def _tell_junitxml(config: pytest.Config, problems: list[str]) -> None:
    """Add strict mode's problems to the ``--junitxml`` file as one failed test case, so that
    a CI that reads the file sees the failure the exit code says (and not 0 failures)."""
    # pytest's junitxml plugin is fed test reports; it has no public way in but its stash key.
    from _pytest.junitxml import xml_key

    xml = config.stash.get(xml_key, None)
    if xml is None:
        return
    count = f"{len(problems)} problem{'s' if len(problems) > 1 else ''}"
    text = "\n".join([f"--nucleo-strict failed the run ({count}):", *problems])
    location = ("pytest-nucleo", None, "strict")
    failed = pytest.TestReport(_STRICT_NODEID, location, {}, "failed", text, "call")
    closed = pytest.TestReport(_STRICT_NODEID, location, {}, "passed", None, "teardown")
    for report in (failed, closed):  # a test case is written once its teardown is reported
        xml.pytest_runtest_logreport(report)


def _strict_problems(config: pytest.Config, entries: list[dict[str, Any]]) -> list[str]:
    """What --nucleo-strict fails the run for; nothing without the option."""
    if not _settings.setting(config, "nucleo_strict"):
        return []
    from pytest_nucleo.testing._contract import _report

    problems = _report.strict_problems(entries)
    runner = logging.getLogger("pytest_nucleo.runner")
    if not runner.isEnabledFor(logging.WARNING):
        # The watch reads the runner's failure records: with none emitted it would see no leak
        # nor unclean text, and a strict run must not pass for want of looking.
        level = logging.getLevelName(runner.getEffectiveLevel())
        problems.append(
            f"the logger 'pytest_nucleo.runner' emits no WARNING records (level {level}, or "
            "disabled), so the failures of run_tool (correctable ones log at WARNING, the "
            "others at ERROR) cannot be seen: keep it at WARNING or below in the test run"
        )
    return problems


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    from pytest_nucleo.testing._contract import _report

    entries = _report.observations(config)
    problems = _strict_problems(config, entries)
    failed = config.stash.get(_report_error, None)
    if not (entries or problems or failed):
        return
    write = terminalreporter.write_line
    terminalreporter.section("nucleo failure matrix")
    everything = _settings.setting(config, "nucleo_matrix") == "all" or config.get_verbosity() > 0
    shown = entries if everything else _report.problem_rows(entries)
    width = _terminal_width(terminalreporter)
    for line in _report.terminal_lines(shown, width) if shown else ():
        write(line)
    text = _report.summary(entries)
    if not everything and len(shown) < len(entries):
        text += " (every row: -v or --nucleo-matrix=all)"
    for line in _wrapped(text, width):
        write(line)
    path = _settings.setting(config, "nucleo_report")
    if failed:
        write(failed, red=True)
    elif path:
        write(f"report written to {', '.join(str(p) for p in _report.report_paths(path))}")
    if problems:
        write("--nucleo-strict failed the run:", red=True)
        for problem in problems:  # one line each, whole, so that CI logs can be searched
            write(f"  {problem}", red=True)
        _say_so_on_the_last_line(terminalreporter, problems)


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
        from pytest_nucleo.testing._contract import _report

        hint = _report.new_snapshots_hint(_report.observations(config))
        for line in _wrapped(hint or "", _terminal_width(terminalreporter)):
            terminalreporter.write_line(line, yellow=True)


def _say_so_on_the_last_line(terminalreporter: Any, problems: list[str]) -> None:
    """Make pytest's last line ("1 passed in 0.86s") red and say that strict mode failed the
    run, and for how many problems: the exit code is 1, and a green last line would lie."""
    build = getattr(terminalreporter, "build_summary_stats_line", None)
    if build is None:  # a terminal reporter of another make: the section above says it all
        return
    part = f"failed by --nucleo-strict ({len(problems)} problem{'s' if len(problems) > 1 else ''})"

    def build_failing() -> tuple[list[tuple[str, dict[str, bool]]], str]:
        parts, _ = build()
        return [*parts, (part, {"red": True, "bold": True})], "red"

    terminalreporter.build_summary_stats_line = build_failing


def _wrapped(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters (a word longer than that is cut)."""
    import textwrap

    return textwrap.wrap(text, width, subsequent_indent="  ", break_on_hyphens=False)


def _terminal_width(terminalreporter: Any) -> int:
    writer = getattr(terminalreporter, "_tw", None)
    width = getattr(writer, "fullwidth", None)
    if isinstance(width, int) and width > 0:
        return width
    import shutil

    return shutil.get_terminal_size().columns
