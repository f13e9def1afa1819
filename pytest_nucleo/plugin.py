"""The pytest11 entry point of pytest-nucleo: the ``nucleo`` marker, fixtures and hooks.

Loaded through the ``nucleo`` entry point, or with ``-p pytest_nucleo.plugin`` when
``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` is set. It stays light: importing it pulls in neither respx,
syrupy nor hypothesis; each fixture imports what it needs when it runs.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from syrupy.assertion import SnapshotAssertion

    from pytest_nucleo.testing import FakeUpstream

MARKER_OPTIONS = ("assert_all_called", "base_url")

_call_failed = pytest.StashKey[bool]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "nucleo(assert_all_called=True, base_url=None): configure the fake_upstream fixture "
        "(assert_all_called=False lets routes go uncalled; base_url makes relative route URLs).",
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.when == "call":
        item.stash[_call_failed] = report.failed
    return report


def _marker_options(request: pytest.FixtureRequest) -> dict[str, Any]:
    marker = request.node.get_closest_marker("nucleo")
    if marker is None:
        return {}
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
    return dict(marker.kwargs)


@pytest.fixture
def fake_upstream(request: pytest.FixtureRequest) -> Generator[FakeUpstream, None, None]:
    """The upstream services of the tool under test, faked for httpx (sync and async).

    ``fake_upstream.get(url).respond(404, text=...)``, ``.timeout()``, ``.connect_error()``,
    ``.throttle(retry_after=...)``, ``.html_error(...)``, ``.not_json()``, ``.sequence(...)``.
    Strict: an unmatched request and a route never called fail the test.
    """
    for other in ("httpx_mock", "respx_mock"):
        if other in request.fixturenames:
            raise pytest.UsageError(
                f"fake_upstream and {other} both patch httpx in {request.node.nodeid}: they would "
                "both answer requests. Use one of them per test."
            )
    from pytest_nucleo.testing import FakeUpstream

    upstream = FakeUpstream(**_marker_options(request))
    with upstream:
        yield upstream
        if request.node.stash.get(_call_failed, False):
            upstream.problems.clear()  # the test already failed; don't bury its message
            upstream.assert_all_called = False


@pytest.fixture
def llm_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    """syrupy's ``snapshot``, storing model texts exactly as the model reads them, one ``.txt``
    file per test module. ``pytest --snapshot-update`` writes them."""
    from pytest_nucleo.testing import LLMTextSnapshotExtension

    return snapshot.use_extension(LLMTextSnapshotExtension)


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
