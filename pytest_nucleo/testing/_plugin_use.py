"""The plugin's work for the tests that use it: the ``nucleo`` marker's options, the bodies of
the ``fake_upstream`` and ``llm_snapshot`` fixtures, and what a fake upstream's problems and a
contract's skip change in a test's report.

The plugin (``pytest_nucleo/plugin.py``) imports this module only once a test carries the
marker or requests one of the fixtures, so that a run that uses none of them never loads it.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

from pytest_nucleo.testing import _extras
from pytest_nucleo.testing._settings import MARKER_FLAGS, MARKER_OPTIONS, UPSTREAM_OPTIONS

if TYPE_CHECKING:
    from syrupy.assertion import SnapshotAssertion

    from pytest_nucleo.testing import FakeUpstream

_call_failed = pytest.StashKey[bool]()
_upstream = pytest.StashKey["FakeUpstream"]()


def marker_options(item: pytest.Item) -> dict[str, Any]:
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
        for flag in MARKER_FLAGS:
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


def marker_hosts(hosts: object) -> list[str]:
    """The marker's ``allow_hosts``, checked: a usage error names what is wrong with it."""
    where = "@pytest.mark.nucleo(allow_hosts=...)"
    if isinstance(hosts, str) or not (
        isinstance(hosts, list | tuple) and all(isinstance(h, str) for h in hosts)
    ):
        raise pytest.UsageError(
            f"{where} takes a list of host names, patterns, addresses or networks, such as "
            f"['db.internal.example', '10.0.0.0/8']; got {hosts!r}"
        )
    from pytest_nucleo.testing._fake._hosts import AllowList

    try:
        AllowList(hosts, where)
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
    return list(hosts)


def fake_upstream_fixture(
    request: pytest.FixtureRequest, options: dict[str, Any] | None
) -> Generator[FakeUpstream, None, None]:
    """The ``fake_upstream`` fixture; ``options`` are the marker's, as the test's setup read
    them (None when the fixture was requested before that hook ran)."""
    require("fake_upstream", ("respx",))
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

    if options is None:
        options = marker_options(request.node)
    # Failed outside the except clauses, so that the message is not shown twice (chained).
    problem = None
    try:
        upstream = FakeUpstream(**{k: v for k, v in options.items() if k in UPSTREAM_OPTIONS})
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


def llm_snapshot_fixture(request: pytest.FixtureRequest) -> SnapshotAssertion:
    """The ``llm_snapshot`` fixture."""
    require("llm_snapshot", ("syrupy",))
    from pytest_nucleo.testing import LLMTextSnapshotExtension, _snapshot

    snapshot: SnapshotAssertion = request.getfixturevalue("snapshot")
    # A snapshot file that rewriting mends (another serializer's, not UTF-8) is refused with
    # its name, unless the run rewrites it.
    _snapshot.updating = bool(request.config.getoption("update_snapshots", default=False))
    return snapshot.use_extension(LLMTextSnapshotExtension)


def require(fixture: str, modules: tuple[str, ...]) -> None:
    message = _extras.needs(fixture, modules)
    if message is not None:
        pytest.fail(message, pytrace=False)


def after_report(item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport) -> None:
    """A test's report, once a fake upstream may have run in it."""
    upstream = item.stash.get(_upstream, None)
    if upstream is None or report.when not in ("setup", "call"):
        return
    if upstream.problems:
        _lead_with_upstream_problems(report, call, upstream)
    item.stash[_call_failed] = report.failed  # (no call after a failed setup)


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


def skip_at_contract_class(item: pytest.Item, report: pytest.TestReport) -> None:
    """A contract's not-applicable scenario is reported as skipped at the user's contract
    class (where ``not_applicable`` says why), not at the line of ours that skipped it."""
    from pytest_nucleo.testing._contract._report import SKIP_WHERE

    where = item.stash.get(SKIP_WHERE, None)
    if where is not None and isinstance(report.longrepr, tuple):
        report.longrepr = (where[0], where[1], report.longrepr[2])


def text_diff(left: str, right: str) -> list[str]:
    """pytest's explanation of two model texts that differ: a line diff."""
    import difflib

    diff = difflib.ndiff(right.splitlines(), left.splitlines())
    return ["model texts differ (- expected, + actual):", *(line.rstrip("\n") for line in diff)]
