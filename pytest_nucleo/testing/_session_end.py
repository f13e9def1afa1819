"""What the plugin does when a run ends: the failure matrix in the terminal, the report files
and the CI step summary, and strict mode's verdict (the exit status, a test case in the
``--junitxml`` file, pytest's last line).

The plugin (``pytest_nucleo/plugin.py``) imports this module only when the run observed
something (the failure matrix's module was imported) or a setting asks for a report or for
strict mode, so that a run that uses nothing of the plugin loads neither this module nor the
failure matrix's machinery.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import pytest

from pytest_nucleo.testing import _settings
from pytest_nucleo.testing._contract import _report

_report_error = pytest.StashKey[str]()

STRICT_NODEID = "pytest-nucleo::strict"
"""The test case that stands for strict mode's problems in a ``--junitxml`` file."""


def finish(session: pytest.Session) -> None:
    """On the controller (or the only process): write the report, add to the CI summary,
    and fail the run for strict mode's problems."""
    config = session.config
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
    problems = strict_problems(config, entries)
    if problems:
        _tell_junitxml(config, problems)
    if (
        session.exitstatus == pytest.ExitCode.OK  # never hide an interruption or internal error
        and problems
    ):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


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
    failed = pytest.TestReport(STRICT_NODEID, location, {}, "failed", text, "call")
    closed = pytest.TestReport(STRICT_NODEID, location, {}, "passed", None, "teardown")
    for report in (failed, closed):  # a test case is written once its teardown is reported
        xml.pytest_runtest_logreport(report)


def strict_problems(config: pytest.Config, entries: list[dict[str, Any]]) -> list[str]:
    """What --nucleo-strict fails the run for; nothing without the option."""
    if not _settings.setting(config, "nucleo_strict"):
        return []
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


def terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """The failure matrix's section of the terminal summary, when there is anything to say."""
    entries = _report.observations(config)
    problems = strict_problems(config, entries)
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


def new_snapshots(terminalreporter: Any, config: pytest.Config) -> None:
    """The one line that says how to store the scenario texts no snapshot holds yet."""
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
