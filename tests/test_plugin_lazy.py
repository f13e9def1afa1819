"""Where nothing of the plugin is used, it loads nothing of ours beyond its own module and its
settings; and where a test uses something mid-test, the plugin still does for it what it did
when it loaded everything at the start (the guard, the testing switch, the limiters' reset).

Each session runs in a subprocess, in a folder with no conftest, so that the process starts
with none of our modules imported. What the sessions import is compared with the same session
under ``-p no:nucleo`` (and, on bare pytest, without the plugin), so that what pytest and the
other installed plugins import is not blamed on us. No test here measures time: the cost is
bench/bench_plugin.py's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_nucleo import plugin
from pytest_nucleo.testing import _extras, _settings
from pytest_nucleo.testing._contract import _report
from pytest_nucleo.testing._fake import _names

PROBE = """
import json
import os
import sys

import pytest


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    with open(os.environ["NUCLEO_MODULES_OUT"], "w", encoding="utf-8") as out:
        json.dump(sorted(sys.modules), out)
"""

FOREIGN = """
import pytest


def test_one():
    assert True


def test_skipped():
    pytest.skip("a skip of someone else's")


def test_a_text_comparison_that_fails():
    assert "one text" == "another text"
"""

# What a foreign session may import because of the plugin: its module and its settings.
OURS_ALLOWED = {
    "pytest_nucleo",
    "pytest_nucleo._lazy",
    "pytest_nucleo.plugin",
    "pytest_nucleo.testing",
    "pytest_nucleo.testing._settings",
}
# Never because of the plugin in a session that does not use it.
NEVER = (
    "asyncio",
    "hypothesis",
    "respx",
    "syrupy",
    "httpx",
    "pytest_nucleo.limits",
    "pytest_nucleo._clock",
    "pytest_nucleo._exceptions",
    "pytest_nucleo._hypothesis",
    "pytest_nucleo._text",
    "pytest_nucleo._http",
    "pytest_nucleo.testing._failure",
    "pytest_nucleo.testing._fake",
    "pytest_nucleo.testing._contract",
    "pytest_nucleo.testing._session_end",
    "pytest_nucleo.testing._plugin_use",
)

BARE = ("-p", "no:syrupy")  # both sides: the plugin's own pytest_plugins would load it on one


def _modules(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *args: str) -> set[str]:
    out = pytester.path / "modules.json"
    monkeypatch.setenv("NUCLEO_MODULES_OUT", str(out))
    result = pytester.runpytest_subprocess("-p", "probe", "-p", "no:cacheprovider", *args)
    result.assert_outcomes(passed=1, skipped=1, failed=1)
    modules: set[str] = set(json.loads(out.read_text(encoding="utf-8")))
    out.unlink()
    return modules


def _blamed(modules: set[str]) -> list[str]:
    return sorted(
        name
        for name in modules
        if (name.startswith("pytest_nucleo") and name not in OURS_ALLOWED)
        or any(name == never or name.startswith(f"{never}.") for never in NEVER)
    )


@pytest.mark.slow
def test_a_foreign_session_imports_nothing_of_ours_beyond_the_plugin(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Installed as a project has it, every installed plugin loaded: hypothesis' among them,
    # whose entry point would register our types' strategies once the failure set loads.
    pytester.makepyfile(probe=PROBE, test_foreign=FOREIGN)
    with_plugin = _modules(pytester, monkeypatch)
    without = _modules(pytester, monkeypatch, "-p", "no:nucleo")
    assert "pytest_nucleo.plugin" in with_plugin
    assert _blamed(with_plugin - without) == []


def test_on_bare_pytest_the_plugin_imports_nothing_of_the_test_stack(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No other plugin: here neither asyncio nor hypothesis is imported by anyone else.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(probe=PROBE, test_foreign=FOREIGN)
    with_plugin = _modules(pytester, monkeypatch, "-p", "pytest_nucleo.plugin", *BARE)
    without = _modules(pytester, monkeypatch, *BARE)
    assert "pytest_nucleo.plugin" in with_plugin
    assert _blamed(with_plugin - without) == []
    assert not {"asyncio", "hypothesis", "respx"} & with_plugin


def _bare(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *args: str
) -> pytest.RunResult:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    return pytester.runpytest_subprocess(
        "-p", "pytest_nucleo.plugin", "-p", "no:cacheprovider", *args
    )


# Below the guard, whenever the plugin installs it: a lookup that gets past it is recorded
# and fails, so nothing leaves the machine.
STAND_IN = """
import socket
import sys

import pytest

REACHED = []


def _stand_in(host, *args, **kwargs):
    REACHED.append(host)
    raise OSError(f"stand-in: {host} would have left the machine")


socket.getaddrinfo = _stand_in
"""

GUARD_AT_A_MARKED_TEST = (
    STAND_IN
    + """

def test_a_plain_test_is_not_guarded():
    assert "pytest_nucleo.testing._fake._guard" not in sys.modules  # nothing installed yet
    with pytest.raises(OSError, match="stand-in"):
        socket.getaddrinfo("db.internal.example", 5432)


@pytest.mark.nucleo
def test_a_marked_test_is_guarded():
    with pytest.raises(ConnectionRefusedError, match="pytest-nucleo blocked"):
        socket.getaddrinfo("db.internal.example", 5432)


def test_a_plain_test_after_it_is_not_guarded_either():
    with pytest.raises(OSError, match="stand-in"):
        socket.getaddrinfo("db.internal.example", 5432)
    assert REACHED == ["db.internal.example", "db.internal.example"]
"""
)

GUARD_AT_A_FAKE_STARTED_MID_TEST = (
    STAND_IN
    + """

def test_a_fake_started_mid_test_guards_its_test():
    assert "pytest_nucleo.testing._fake._upstream" not in sys.modules
    from pytest_nucleo.testing import FakeUpstream

    with FakeUpstream(assert_all_called=False):
        with pytest.raises(ConnectionRefusedError, match="pytest-nucleo blocked"):
            socket.getaddrinfo("db.internal.example", 5432)
    assert REACHED == []
"""
)


def test_the_guard_is_installed_for_the_first_test_that_uses_the_plugin(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_guard=GUARD_AT_A_MARKED_TEST)
    result = _bare(pytester, monkeypatch)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*pytest-nucleo blocked a DNS lookup of db.internal.example*",
            "FAILED test_guard.py::test_a_marked_test_is_guarded*",
        ]
    )


def test_a_fake_upstream_imported_mid_test_installs_the_guard_for_that_test(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The default scope guards a test that uses no fixture or marker of ours while a fake
    # upstream runs in it: here the fake's module is first imported inside the test.
    pytester.makepyfile(test_guard=GUARD_AT_A_FAKE_STARTED_MID_TEST)
    result = _bare(pytester, monkeypatch)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*pytest-nucleo blocked a DNS lookup of db.internal.example*"])
    assert "stand-in" not in result.stdout.str()


CLOCK_AND_LIMITERS = """
import sys

import pytest

LIMITERS = []


def test_the_switch_is_on_once_its_module_comes_in_mid_test():
    assert "pytest_nucleo._clock" not in sys.modules
    assert "pytest_nucleo.limits._limiter" not in sys.modules
    import pytest_nucleo as nucleo

    assert nucleo.is_testing()
    limiter = nucleo.RateLimiter(
        "shop", max_requests=1, window_seconds=60, failures_to_open=1, max_throttle=0
    )
    limiter.record_failure(nucleo.UpstreamFailure("S", "down", 503), limiter.acquire())
    assert limiter.state == "open"
    LIMITERS.append(limiter)


@pytest.mark.nucleo(real_waits=True)
def test_real_waits_still_work():
    import pytest_nucleo as nucleo

    assert not nucleo.is_testing()


def test_the_first_test_s_limiter_is_reset_and_waits_are_skipped_again():
    import pytest_nucleo as nucleo

    assert nucleo.is_testing()
    assert LIMITERS[0].state == "closed"
"""

CLOCK_FIRST_IN_A_REAL_WAITS_TEST = """
import sys

import pytest


@pytest.mark.nucleo(real_waits=True)
def test_real_waits_when_the_module_comes_in():
    assert "pytest_nucleo._clock" not in sys.modules
    import pytest_nucleo as nucleo

    assert not nucleo.is_testing()


def test_then_waits_are_skipped():
    import pytest_nucleo as nucleo

    assert nucleo.is_testing()
"""


@pytest.mark.parametrize(
    "tests",
    [CLOCK_AND_LIMITERS, CLOCK_FIRST_IN_A_REAL_WAITS_TEST],
    ids=["plain-first", "real-waits-first"],
)
def test_the_testing_switch_and_the_limiters_when_their_modules_come_in_mid_test(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tests: str
) -> None:
    pytester.makepyfile(test_clock=tests)
    result = _bare(pytester, monkeypatch, "-p", "no:randomly")
    result.assert_outcomes(passed=tests.count("\ndef test_"))


NESTED = (
    STAND_IN
    + '''
pytest_plugins = ["pytester"]

INNER = """
import socket

import pytest


@pytest.mark.nucleo
def test_marked():
    with pytest.raises(ConnectionRefusedError, match="pytest-nucleo blocked"):
        socket.getaddrinfo("db.internal.example", 5432)
"""


def test_a_session_inside_a_test_guards_its_own_tests_and_leaves_this_one_alone(pytester):
    pytester.makepyfile(test_inner=INNER)
    result = pytester.inline_run("-p", "pytest_nucleo.plugin", "-p", "no:cacheprovider")
    result.assertoutcome(failed=1)  # the inner test: refused (and recorded)
    with pytest.raises(OSError, match="stand-in"):
        socket.getaddrinfo("db.internal.example", 5432)
    assert REACHED == ["db.internal.example"]
'''
)


def test_a_session_run_inside_a_test_of_a_session_not_guarded_yet(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_nested=NESTED)
    result = _bare(pytester, monkeypatch)
    result.assert_outcomes(passed=1)


PYTESTER_FORGETS = (
    STAND_IN
    + '''
pytest_plugins = ["pytester"]

INNER = """
from pytest_nucleo.testing import FakeUpstream


def test_inner():
    with FakeUpstream(assert_all_called=False) as fake:
        fake.get("https://api.example/x").respond(200)
"""


def test_a_run_inside_imports_the_fake_first(pytester):
    pytester.makepyfile(test_inner=INNER)
    result = pytester.inline_run("-p", "pytest_nucleo.plugin", "-p", "no:cacheprovider")
    result.assertoutcome(passed=1)
    assert "pytest_nucleo.testing._fake._upstream" not in sys.modules  # the run forgot it


def test_then_a_fake_of_this_session_still_answers_its_names():
    # (By its module: pytest_nucleo.testing keeps the name it first gave out.)
    from pytest_nucleo.testing._fake._upstream import FakeUpstream

    with FakeUpstream(assert_all_called=False) as fake:
        fake.get("https://api.example/x").respond(200)
        assert socket.getaddrinfo("api.example", 443)[0][4][0].startswith("192.31.196.")
    assert REACHED == []
'''
)


def test_the_guard_a_run_inside_installed_is_the_one_a_later_fake_meets(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pytester forgets the modules first imported during its run; the guard's, installed in
    # that run for this session too, must not be among them.
    pytester.makepyfile(test_runs=PYTESTER_FORGETS)
    result = _bare(pytester, monkeypatch, "-p", "no:randomly")
    result.assert_outcomes(passed=2)


def test_the_names_the_plugin_spells_without_importing_their_modules() -> None:
    assert _settings.ADDRESS_CHOICES == _names.ADDRESS_CHOICES
    assert plugin._WORKER_KEY == _report.WORKER_KEY
    assert plugin._TEST_STACK == _extras.TEST_STACK
    for name in (
        plugin._CLOCK,
        plugin._LIMITERS,
        plugin._FAKE,
        plugin._NAMES,
        plugin._REPORT,
        plugin._FAILURE,
        plugin._SESSION_END,
        plugin._PLUGIN_USE,
    ):
        assert Path(__file__).parent.parent.joinpath(*name.split(".")).with_suffix(".py").is_file()


HOOK_PROBE = """
import json
import os

import pytest

PER_TEST = ("pytest_runtest_setup", "pytest_runtest_call", "pytest_runtest_teardown",
            "pytest_runtest_makereport")


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    names = sorted({impl.plugin_name for hook in PER_TEST
                    for impl in getattr(config.hook, hook).get_hookimpls()})
    with open(os.environ["NUCLEO_HOOKS_OUT"], "w", encoding="utf-8") as out:
        json.dump(names, out)
"""

A_TEST_USING_THE_PLUGIN = """
def test_uses(llm_snapshot):
    assert llm_snapshot is not None
"""


def _per_test_hooks(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tests: str
) -> set[str]:
    out = pytester.path / "hooks.json"
    monkeypatch.setenv("NUCLEO_HOOKS_OUT", str(out))
    pytester.makepyfile(probe=HOOK_PROBE, test_it=tests)
    result = _bare(pytester, monkeypatch, "-p", "probe")
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    return set(json.loads(out.read_text(encoding="utf-8")))


def test_no_hook_of_ours_runs_for_each_test_of_a_session_that_does_not_use_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each per-test hook costs every test of a foreign suite about what pytest's own do.
    ours = {"pytest_nucleo.plugin", plugin._EACH_TEST}  # the module's and the per-test hooks'
    assert not ours & _per_test_hooks(pytester, monkeypatch, FOREIGN)
    assert plugin._EACH_TEST in _per_test_hooks(pytester, monkeypatch, A_TEST_USING_THE_PLUGIN)


LEAK_FROM_A_RUNNER_IMPORTED_MID_TEST = """
import sys


def test_a_leak_the_test_does_not_see():
    assert "pytest_nucleo._runner" not in sys.modules
    import pytest_nucleo as nucleo

    assert nucleo.run_tool(lambda: {}["x"], {}).is_error
"""


def test_a_runner_imported_mid_test_is_watched_for_the_rest_of_that_test(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # --nucleo-strict reports the leak of a test whose module did not import the runner.
    pytester.makepyfile(test_books=LEAK_FROM_A_RUNNER_IMPORTED_MID_TEST)
    result = _bare(pytester, monkeypatch, "--nucleo-strict")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*--nucleo-strict failed the run:*"])
    assert "test_books.py::test_a_leak_the_test_does_not_see" in result.stdout.str()
    assert result.ret == 1
