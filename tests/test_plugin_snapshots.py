"""llm_snapshot, plugin loading, and runs under pytest-xdist."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests._nested_runs import UNUSED_PLUGINS

SNAPSHOT_TESTS = """
import pytest
import pytest_nucleo as nucleo
from pytest_nucleo.testing import fails_with

TEXT = {text!r}

def test_not_found(llm_snapshot):
    with fails_with(nucleo.ResourceNotFoundException) as failure:
        raise nucleo.ResourceNotFoundException("order", "99")
    assert failure.explanation == llm_snapshot

@pytest.mark.parametrize("url", ["https://api.example/y?q=1", "https://api.example/y"])
def test_urls_as_ids(llm_snapshot, url):
    assert "text for " + url == llm_snapshot

def test_windows_newlines(llm_snapshot):
    assert TEXT == llm_snapshot
"""


def write_tests(pytester: pytest.Pytester, text: str = "one\r\ntwo") -> None:
    pytester.makepyfile(test_snap=SNAPSHOT_TESTS.format(text=text))


def test_update_writes_one_plain_text_file_per_module(pytester: pytest.Pytester) -> None:
    write_tests(pytester)
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=4)
    files = sorted(p.name for p in (pytester.path / "__snapshots__").iterdir())
    assert files == ["test_snap.txt"]
    stored = (pytester.path / "__snapshots__" / "test_snap.txt").read_bytes().decode()
    assert "\r" not in stored
    assert stored == (
        "# serializer version: nucleo-text-1\n"
        "# name: test_not_found\n"
        '  No order was found with the identifier "99". Check the identifier, try another one,'
        " or use another tool to find the right one.\n"
        "  [This error may be correctable - you can retry with different parameters or try a"
        " different approach]\n"
        "# ---\n"
        "# name: test_urls_as_ids[https://api.example/y?q=1]\n"
        "  text for https://api.example/y?q=1\n"
        "# ---\n"
        "# name: test_urls_as_ids[https://api.example/y]\n"
        "  text for https://api.example/y\n"
        "# ---\n"
        "# name: test_windows_newlines\n"
        "  one\n"
        "  two\n"
        "# ---\n"
    )
    # \r\n was normalised before storing, so the stored text keeps matching afterwards.
    pytester.runpytest().assert_outcomes(passed=4)


def test_a_changed_text_fails_with_a_readable_diff(pytester: pytest.Pytester) -> None:
    write_tests(pytester)
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=4)
    write_tests(pytester, text="one\ntoo")
    result = pytester.runpytest()
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*- two*", "*+ too*"])


def test_a_missing_snapshot_fails(pytester: pytest.Pytester) -> None:
    write_tests(pytester)
    result = pytester.runpytest()
    result.assert_outcomes(failed=4)
    result.stdout.fnmatch_lines(["*Snapshot 'test_not_found' does not exist!*"])


def test_unused_snapshots_are_detected(pytester: pytest.Pytester) -> None:
    write_tests(pytester)
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=4)
    result = pytester.runpytest("-k", "not_found")
    result.assert_outcomes(passed=1, deselected=3)
    assert result.ret == 0  # a filtered run does not judge unused snapshots
    write_tests(pytester)
    pytester.makepyfile(
        test_snap=SNAPSHOT_TESTS.format(text="x").replace("def test_windows", "def _off")
    )
    result = pytester.runpytest()
    result.stdout.fnmatch_lines(["*1 snapshot unused*"])
    assert result.ret == 1
    assert pytester.runpytest("--snapshot-warn-unused").ret == 0


def test_only_texts_are_stored(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_data(llm_snapshot):
            assert {"a": 1} == llm_snapshot
        """
    )
    result = pytester.runpytest("--snapshot-update")
    result.stdout.fnmatch_lines(["*llm_snapshot stores model texts (str), got dict*"])


def test_users_snapshot_fixture_is_untouched(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_data(snapshot, llm_snapshot):
            assert {"a": 1} == snapshot
            assert "text" == llm_snapshot
        """
    )
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=1)
    names = sorted(p.name for p in (pytester.path / "__snapshots__").iterdir())
    assert names == [
        "test_users_snapshot_fixture_is_untouched.ambr",
        "test_users_snapshot_fixture_is_untouched.txt",
    ]
    pytester.runpytest().assert_outcomes(passed=1)


@pytest.mark.slow
def test_runs_under_xdist(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_one="""
        import httpx

        def test_upstream(fake_upstream, llm_snapshot):
            fake_upstream.get("https://api.example/a").respond(503, text="down")
            assert httpx.get("https://api.example/a").status_code == 503
            assert "down" == llm_snapshot
        """,
        test_two="""
        import pytest

        @pytest.mark.parametrize("n", range(6))
        def test_many(llm_snapshot, n):
            assert f"text {n}" == llm_snapshot
        """,
    )
    # Each worker is a new process.
    written = pytester.runpytest("-n", "2", "--snapshot-update", *UNUSED_PLUGINS)
    written.assert_outcomes(passed=7)
    assert written.ret == 0
    # Both workers wrote into the same files: every snapshot is there, whole. (Reading them
    # back under xdist is what test_report_merges_xdist_workers does; one xdist run each.)
    folder = pytester.path / "__snapshots__"
    assert "  down\n" in (folder / "test_one.txt").read_text()
    many = (folder / "test_two.txt").read_text()
    assert [f"  text {n}" in many for n in range(6)] == [True] * 6
    result = pytester.runpytest()
    result.assert_outcomes(passed=7)
    assert result.ret == 0


def test_plugin_load_imports_no_heavy_library() -> None:
    code = (
        "import sys, pytest, httpx\n"
        "import pytest_nucleo.plugin\n"
        "print(' '.join(sorted({'hypothesis', 'respx', 'syrupy'} & set(sys.modules))))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


def test_loads_with_p_when_autoload_is_disabled(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(
        """
        import httpx

        def test_fake(fake_upstream):
            fake_upstream.get("https://api.example/a").respond(204)
            assert httpx.get("https://api.example/a").status_code == 204
        """
    )
    pytester.runpytest_subprocess("-p", "pytest_nucleo.plugin").assert_outcomes(passed=1)
    without = pytester.runpytest_subprocess()
    without.assert_outcomes(errors=1)
    without.stdout.fnmatch_lines(["*fixture 'fake_upstream' not found*"])


def test_llm_snapshot_works_with_p_alone_when_autoload_is_disabled(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `-p pytest_nucleo.plugin` loads syrupy's plugin too: llm_snapshot is its snapshot fixture.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(
        """
        def test_text(llm_snapshot):
            assert "The order was not found." == llm_snapshot
        """
    )
    written = pytester.runpytest_subprocess("-p", "pytest_nucleo.plugin", "--snapshot-update")
    written.assert_outcomes(passed=1)
    assert list((pytester.path / "__snapshots__").glob("*.txt"))
    pytester.runpytest_subprocess("-p", "pytest_nucleo.plugin").assert_outcomes(passed=1)
    # Blocked by the user, syrupy stays out, and the fixture says what is missing.
    blocked = pytester.runpytest_subprocess("-p", "pytest_nucleo.plugin", "-p", "no:syrupy")
    blocked.assert_outcomes(errors=1)
    blocked.stdout.fnmatch_lines(["*fixture 'snapshot' not found*"])
