from __future__ import annotations

import importlib
from collections.abc import Generator
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import pytest_nucleo.testing as _testing
from pytest_nucleo.testing._fake._backends import backend_factories


@pytest.fixture(scope="session", autouse=True)
def imported_once() -> None:
    """pytester's in-process runs forget every module first imported during a run: import
    these once, before the first test, so runs share one copy of each (and hypothesis and the
    installed pytest plugins are not imported again, at a second or more, in every run).

    The fake of each client imported so far (aiohttp, requests, httpx2 and their mocks) loads
    when a FakeUpstream starts: the clients are imported and their fakes loaded here, for the
    same reason (a fake loaded inside a run would patch a copy of its client the next run
    forgets). A fixture, not module code: under pytest-xdist the main process, which runs no
    test, then starts its workers about a second and a half sooner."""
    import hypothesis  # noqa: F401

    for name in _testing.__all__:
        getattr(_testing, name)
    for plugin in entry_points(group="pytest11"):
        importlib.import_module(plugin.value.partition(":")[0])
    for client in ("aiohttp", "httpx2", "requests"):
        importlib.import_module(client)
    backend_factories()


pytest_plugins = ["pytester"]

# Every test here fails if anything really sleeps: time is injected.
from _timing import no_real_sleep  # noqa: E402, F401

# The runs pytester starts must read the same wherever the suite runs. pytest prints whole
# failure messages in its short summary when CI or BUILD_NUMBER is set; the report appends to
# GITHUB_STEP_SUMMARY when set; syrupy takes a run for an xdist worker's (locks its files and
# reports no unused snapshots) when PYTEST_XDIST_WORKER is set, as it is while this suite itself
# runs under xdist. A test that wants one of them sets it itself.
_OUTER_VARIABLES = (
    "CI",
    "BUILD_NUMBER",
    "GITHUB_STEP_SUMMARY",
    "PYTEST_XDIST_WORKER",
    "PYTEST_XDIST_WORKER_COUNT",
    "PYTEST_XDIST_TESTRUNUID",
)


@pytest.fixture(autouse=True)
def without_outer_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _OUTER_VARIABLES:
        monkeypatch.delenv(name, raising=False)


# A real redis-server for the shared-limiter tests, started once when a test asks for it; and
# the socket functions beneath the network guard, recorded instead of called (below_guard).
from _guard_stand_in import below_guard  # noqa: E402, F401
from _redis_server import redis_server  # noqa: E402, F401

# A test module that needs an optional framework which is not installed is kept out of
# collection (see tests/_frameworks.py, left_out, for why not skipped), and listed at the end
# of the run with the extra that brings it. What each module needs is a table there (NEEDS).
from tests._frameworks import left_out, not_collected  # noqa: E402

_TESTS = Path(__file__).parent


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    return True if left_out(collection_path) is not None else None


_FIRST = ("slow", "packaging")


@pytest.hookimpl(trylast=True)  # after pytest's own reordering
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # The tests marked slow or packaging, each seconds long, run first: pytest-xdist deals
    # tests out in order, and one dealt last would keep a worker busy while the other has
    # finished. (A module's slow tests then run apart from its others: a module-scoped fixture
    # both use is set up twice, cheap beside the seconds saved; tests that share a costly one
    # are marked together.)
    items.sort(key=lambda item: not any(item.get_closest_marker(m) for m in _FIRST))


_DIST_CHOSEN = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config: pytest.Config) -> Generator[None, object, object]:
    # Whether a --dist (or -d) was given anywhere (command line, PYTEST_ADDOPTS, addopts),
    # read before pytest-xdist turns -n's "no" into "load".
    config.stash[_DIST_CHOSEN] = getattr(config.option, "dist", "no") != "no" or bool(
        getattr(config.option, "distload", False)
    )
    return (yield)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook, if it is installed
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    # pytest-xdist's default (--dist load) hands each of two workers a first batch of an
    # eighth of the suite, in order: the worker whose batch held the slow tests finished up
    # to half a minute after the other. Work stealing hands the rest of a busy worker's queue
    # to an idle one, so both end together. A --dist given anywhere is kept.
    if config.stash.get(_DIST_CHOSEN, True):
        return None
    from xdist.scheduler import WorkStealingScheduling

    return WorkStealingScheduling(config, log)  # type: ignore[arg-type]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if lines := not_collected(_TESTS):
        terminalreporter.section("test modules not collected: their frameworks are not installed")
        for line in lines:
            terminalreporter.line(line)
