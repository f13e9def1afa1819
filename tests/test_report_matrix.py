"""The failure matrix and the report: verdicts, the text the model read, the terminal view."""

from __future__ import annotations

import json

import pytest
from test_contract import FETCH_SCENARIOS, TOOLS, contract

import pytest_nucleo as nucleo
from pytest_nucleo.testing import text_problems


def _section(lines: list[str]) -> list[str]:
    start = next(n for n, line in enumerate(lines) if "nucleo failure matrix" in line)
    rest = lines[start + 1 :]
    end = next(
        (n for n, line in enumerate(rest) if line.startswith("=") or "snapshot report" in line),
        None,
    )
    return rest if end is None else rest[:end]


def _rows(lines: list[str]) -> list[str]:
    return [line for line in _section(lines) if line.startswith("Test")]  # maybe cut short


def test_a_green_run_shows_a_summary_and_the_whole_matrix_on_request(
    pytester: pytest.Pytester,
) -> None:
    contract(pytester, "Good", "get_order", "fetch")
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=FETCH_SCENARIOS)
    green = pytester.runpytest()
    assert _rows(green.outlines) == []
    green.stdout.fnmatch_lines(
        [
            f"1 tool(s), {FETCH_SCENARIOS} scenario(s): {FETCH_SCENARIOS} ok, 0 broken, 0 not"
            " applicable (every row: -v or",
            "  --nucleo-matrix=all)",
        ]
    )
    for flag in ("-v", "--nucleo-matrix=all"):
        whole = pytester.runpytest(flag)
        assert len(_rows(whole.outlines)) == FETCH_SCENARIOS, flag


@pytest.mark.parametrize(("columns", "table"), [(60, False), (100, False), (200, True)])
def test_the_matrix_keeps_within_the_terminal(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, columns: int, table: bool
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    contract(pytester, "Good", "get_order", "fetch")
    result = pytester.runpytest("--snapshot-update", "-v")
    section = _section(result.outlines)
    assert len(_rows(result.outlines)) == FETCH_SCENARIOS
    assert max(len(line) for line in section) <= columns
    # A table when it fits; else each row as a heading with its details wrapped below it.
    assert any(line.startswith("tool  ") for line in section) is table
    assert "TestGood.get_order [status-404]: ok" in section or table


def test_a_missing_snapshot_is_new_and_the_user_is_told_once(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # each sentence on one line
    contract(pytester, "Good", "get_order", "fetch")
    first = pytester.runpytest("--nucleo-report=report")
    rows = json.loads((pytester.path / "report.json").read_text())["observations"]
    verdicts = {row["verdict"] for row in rows if row["scenario"] != "valid-call"}
    assert verdicts == {"new"}
    assert "changed" not in first.stdout.str()
    hint = [line for line in first.outlines if "--snapshot-update" in line]
    assert len(hint) == 1
    # Each new text fails its scenario, as syrupy fails a missing snapshot, with the text alone.
    first.stdout.fnmatch_lines(
        [
            "_* TestGood.test_contract[[]status-404[]] _*",
            "TestGood.get_order [status-404]: no snapshot stores this text yet (a new text; the "
            "end of the run says how to store it). The model read:",
            'No order was found with the identifier "00000042". *',
            "[[]This error may be correctable*",
            "_* TestGood.test_contract[[]status-413[]] _*",
        ],
        consecutive=True,
    )
    assert "does not exist!" not in first.stdout.str()  # syrupy's own message, per scenario
    # Said once, last, just above pytest's last line.
    first.stdout.fnmatch_lines(
        [
            f"*{FETCH_SCENARIOS - 1} new (no snapshot yet)*",
            "=* short test summary info =*",
            "FAILED test_get_order.py::TestGood::test_contract[[]status-400[]] - *",
        ]
    )
    assert first.outlines[-2:] == [
        f"{FETCH_SCENARIOS - 1} scenario text(s) have no snapshot yet (verdict new): read them "
        "in the failures above, then run pytest --snapshot-update to store them, and commit the "
        "snapshot files",
        first.outlines[-1],
    ]
    assert first.outlines[-1].startswith("=")
    assert " failed, 1 passed in " in first.outlines[-1]


def test_each_json_row_has_its_verdict_and_the_bounded_text_the_model_read(
    pytester: pytest.Pytester,
) -> None:
    contract(pytester, "Good", "html_in_text", "fetch")
    pytester.runpytest("--snapshot-update", "--nucleo-report=report")
    report = (pytester.path / "report.json").read_text()
    assert len(report) < 60_000  # 21 rows; the page is 300 KB
    rows = {row["scenario"]: row for row in json.loads(report)["observations"]}
    assert rows["html-error-page"]["verdict"] == "broken"
    assert rows["html-error-page"]["text"].startswith("The external service Shop failed: ")
    assert "characters cut ..." in rows["html-error-page"]["text"]
    assert rows["status-404"]["verdict"] == "ok"
    assert rows["status-404"]["text"].startswith("No order was found with the identifier")
    assert rows["valid-call"]["text"] is None
    assert {row["verdict"] for row in rows.values()} <= {"ok", "broken"}


SLOPPY = """
import pytest_nucleo as nucleo
from pytest_nucleo.testing import ToolContract
import tools


def get_order(number):
    try:
        return tools.get_order(number)
    except nucleo.ExternalServiceException as exc:
        if exc.is_correctable or isinstance(exc, nucleo.UpstreamThrottleException):
            raise
        failure = nucleo.ExternalServiceException("Shop", "down")
        failure.llm_message = f"Shop failed, see https://shop.example/status?ticket=T-{number}"
        raise failure from exc


class TestSloppy(ToolContract):
    tool = get_order
    kind = "fetch"
    service_name = "Shop"
    endpoint = "GET https://shop.example/orders/00000042"
    valid_call = {"number": "00000042"}
    secrets = (tools.API_KEY,)
"""


def test_the_model_read_quotes_the_real_text(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(tools=TOOLS)
    pytester.makepyfile(test_sloppy=SLOPPY)
    result = pytester.runpytest("--snapshot-update", "-p", "no:randomly")
    result.stdout.fnmatch_lines(
        [
            "*it holds a secret-looking token or a URL with userinfo or a query string*"
            "The model read:",
            "Shop failed, see https://shop.example/status?ticket=T-00000042",
        ]
    )


def test_a_planted_secret_is_listed_once(pytester: pytest.Pytester) -> None:
    contract(pytester, "Broken", "key_in_text", "fetch")
    result = pytester.runpytest("--snapshot-update")
    result.stdout.fnmatch_lines(["*it holds 1 planted secret(s) (test...)*"])
    assert "(test..., test...)" not in result.stdout.str()


def test_a_row_whose_text_broke_a_style_rule_names_the_rule() -> None:
    # The matrix says which rule a text broke, so a reviewer knows where to look.
    from pytest_nucleo.testing._contract._report import markdown, terminal_lines

    text = (
        "The external service Shop failed. Calling it again now is unlikely to help.\n"
        + nucleo.UNCORRECTABLE_HINT
    )
    problems = text_problems(text)
    entry = {
        "tool": "get_order",
        "scenario": "status-500",
        "expected": "ExternalServiceException (uncorrectable)",
        "failed": True,
        "class": "ExternalServiceException",
        "correctable": False,
        "leaked": False,
        "unclean": list(problems),
        "rules": [p.rule for p in problems],
        "violation": "the model text is not clean",
        "snapshot": "matches",
        "not_applicable": None,
        "text": text,
        "verdict": "broken",
    }
    assert [p.rule for p in problems] == ["says twice"]
    assert "broken (says twice)" in "\n".join(terminal_lines([entry]))
    assert "| broken (says twice) |" in markdown([entry])
