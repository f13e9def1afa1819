"""ToolContracts whose matrix includes real recorded failures: a GitHub 403 rate limit, an S3
SlowDown, an nginx 502 page saved in a HAR file and a vendor's 200 with an error object."""

from __future__ import annotations

from pathlib import Path

import pytest
from recorded_tools import (
    AWS_TOKEN,
    GEOCODE_KEY,
    GITHUB_TOKEN,
    STATUS_TOKEN,
    get_incident,
    get_issue,
    get_report,
    lookup,
)

from pytest_nucleo.testing import ToolContract, respond

RECORDINGS = "tests/recordings"
SNAPSHOTS = Path(__file__).parent / "__snapshots__" / "test_recorded_contract.txt"


class TestGitHubIssue(ToolContract):
    tool = get_issue
    kind = "fetch"
    service_name = "GitHub"
    endpoint = "GET https://api.github.com/repos/octo-org/widgets/issues/42"
    valid_call = {"owner": "octo-org", "repo": "widgets", "number": 42}
    valid_response = respond(200, json={"number": 42, "title": "Widgets wobble"})
    secrets = (GITHUB_TOKEN,)
    recorded = [f"{RECORDINGS}/github_rate_limit.yaml"]


class TestMonthlyReport(ToolContract):
    tool = get_report
    kind = "fetch"
    service_name = "Reports bucket"
    endpoint = "GET https://widgets-bucket.s3.amazonaws.com/reports/2026-11.json"
    valid_call = {"month": "2026-11"}
    valid_response = respond(200, json={"month": "2026-11", "widgets": 1200})
    secrets = (AWS_TOKEN,)
    recorded = [f"{RECORDINGS}/s3_slowdown.json"]


class TestIncident(ToolContract):
    tool = get_incident
    kind = "fetch"
    service_name = "Status page"
    endpoint = "GET https://status.widgets.example/api/v1/incidents/1234"
    valid_call = {"incident_id": "1234"}
    valid_response = respond(200, json={"id": 1234, "state": "resolved"})
    secrets = (STATUS_TOKEN,)
    recorded = [f"{RECORDINGS}/*.har"]


class TestGeocodeLookup(ToolContract):
    tool = lookup
    kind = "search"
    service_name = "Geocode"
    endpoint = "GET https://api.geocode.example/v2/lookup?address=1+Main+St"
    valid_call = {"address": "1 Main St"}
    valid_response = respond(200, json={"status": "ok", "results": [{"lat": 1.0, "lng": 2.0}]})
    empty_response = respond(200, json={"status": "ok", "results": []})
    secrets = (GEOCODE_KEY,)
    recorded = [f"{RECORDINGS}/vendor_error_200.yaml"]


RECORDED_CANARIES = (
    "nucleoCanaryRecorded",
    "nucleoCanarySessionCookie",
    "AKIANUCLEORECORDED01",
    "nucleocanarysignature",
    "nucleoCanarySessionToken",
    "nucleoCanaryVendorKey",
    "nucleoCanaryQueryKey",
    "nucleoCanaryHarCookie",
    "nucleoCanaryHarBearer",
    "nucleoCanaryEdgeCookie",
)


def test_the_recorded_snapshots_hold_the_real_words_and_no_recorded_secret() -> None:
    texts = SNAPSHOTS.read_text()
    for name in (
        "TestGitHubIssue.test_contract[recorded-github_rate_limit-2]",
        "TestMonthlyReport.test_contract[recorded-s3_slowdown-1]",
        "TestIncident.test_contract[recorded-proxy_502-2]",
        "TestGeocodeLookup.test_contract[recorded-vendor_error_200-1]",
    ):
        assert f"# name: {name}" in texts
    assert "API rate limit exceeded for user ID 1234567" in texts
    assert "Please reduce your request rate." in texts
    assert "502 Bad Gateway" in texts
    leaked = [canary for canary in RECORDED_CANARIES if canary.lower() in texts.lower()]
    assert leaked == []


# -- through pytester: ids, bad recordings, the report --------------------------------------

PROJECT = """
import report_tools
from pytest_nucleo.testing import ToolContract, respond


class TestReport(ToolContract):
    tool = report_tools.{tool}
    kind = "fetch"
    service_name = "Reports bucket"
    endpoint = "GET https://widgets-bucket.s3.amazonaws.com/reports/2026-11.json"
    valid_call = {{"month": "2026-11"}}
    valid_response = respond(200, json={{"month": "2026-11"}})
    recorded = {recorded!r}
    not_applicable = {not_applicable!r}
"""

NAIVE_TOOL = """

def naive_report(month):
    # Raises the raw body: a leak the contract must catch, with the body as it was replayed.
    response = httpx.get(f"https://widgets-bucket.s3.amazonaws.com/reports/{month}.json")
    if response.status_code >= 400:
        raise RuntimeError(f"S3 said {response.status_code}: {response.text}")
    return response.json()
"""


def project(
    pytester: pytest.Pytester,
    recorded: list[str],
    *,
    tool: str = "get_report",
    not_applicable: dict[str, str] | None = None,
) -> None:
    here = Path(__file__).parent
    tools = (here / "recorded_tools.py").read_text() + NAIVE_TOOL
    # Its own name: the suite imported recorded_tools already, and pytester runs in-process.
    pytester.makepyfile(report_tools=tools)
    recordings = pytester.mkdir("recordings")
    for path in (here / "recordings").iterdir():
        (recordings / path.name).write_bytes(path.read_bytes())
    pytester.makepyfile(
        test_report=PROJECT.format(
            tool=tool, recorded=recorded, not_applicable=not_applicable or {}
        )
    )


def test_each_matching_recorded_failure_is_one_more_test(pytester: pytest.Pytester) -> None:
    project(pytester, ["recordings/*.json", "recordings/github_rate_limit.yaml"])
    result = pytester.runpytest("--snapshot-update", "-v")
    result.assert_outcomes(passed=23)
    result.stdout.fnmatch_lines(
        [
            "*test_contract?recorded-s3_slowdown-1? PASSED*",
            "*test_contract?recorded-s3_slowdown-2? PASSED*",
        ]
    )
    assert "github_rate_limit" not in result.stdout.str()  # another service's recording
    assert pytester.runpytest().ret == 0


def test_a_bad_recording_fails_alone_with_the_file_and_entry(pytester: pytest.Pytester) -> None:
    project(pytester, ["recordings/s3_slowdown.json", "recordings/broken/*"])
    broken = pytester.mkdir("recordings/broken")
    (broken / "truncated.har").write_text('{"log": {"entries": [{"request": ')
    (broken / "entry.yaml").write_text(
        "version: 1\ninteractions:\n- request: {method: GET, uri: 'https://x.example/a'}\n"
        "  response: {status: {code: 'oops'}}\n"
    )
    result = pytester.runpytest("--snapshot-update", "-v")
    result.assert_outcomes(passed=23, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*test_contract?recorded-entry-1? FAILED*",
            "*test_contract?recorded-truncated-unreadable? FAILED*",
            # Shown as pytest shows test files: relative to the rootdir.
            "recordings/broken/entry.yaml, entry 1: its response has no valid status code "
            "(got 'oops')*",
            "recordings/broken/truncated.har: is not valid JSON (the file looks truncated)*",
        ]
    )


def test_recorded_patterns_that_give_nothing_fail_saying_why(pytester: pytest.Pytester) -> None:
    project(
        pytester,
        ["recordings/github_rate_limit.yaml", "recordings/nothing-*.yaml"],
        not_applicable={"recorded-nope-1": "no such recording"},
    )
    result = pytester.runpytest("--snapshot-update", "-v")
    result.assert_outcomes(passed=21, failed=3)
    result.stdout.fnmatch_lines(
        [
            "*test_contract?recorded-missing-2? FAILED*",
            "*test_contract?recorded-none-matched? FAILED*",
            "*test_contract?recorded-not-applicable-unknown? FAILED*",
            "*the recorded pattern 'recordings/nothing-*.yaml' matches no file*",
            "*the recordings hold 1 failure(s), and none is a call to GET "
            "https://widgets-bucket.s3.amazonaws.com/reports/2026-11.json*",
            "*not_applicable names recorded-nope-1, which no recording produced*",
        ]
    )


def test_a_recorded_scenario_can_be_declared_not_applicable(pytester: pytest.Pytester) -> None:
    project(
        pytester,
        ["recordings/s3_slowdown.json"],
        not_applicable={"recorded-s3_slowdown-2": "this bucket is public: no signature is sent"},
    )
    result = pytester.runpytest("--snapshot-update", "-rs")
    result.assert_outcomes(passed=22, skipped=1)
    result.stdout.fnmatch_lines(["*not applicable: this bucket is public*"])


def test_recorded_secrets_reach_neither_output_nor_report(pytester: pytest.Pytester) -> None:
    project(pytester, ["recordings/s3_slowdown.json"], tool="naive_report")
    result = pytester.runpytest("--nucleo-report=out/nucleo")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*TestReport.test_contract?recorded-s3_slowdown-2? _*",
            "*the tool leaked RuntimeError: S3 said 403: <?xml*",
            "*SignatureDoesNotMatch*<AWSAccessKeyId>[[]REDACTED[]]</AWSAccessKeyId>*",
        ]
    )
    seen = result.stdout.str() + "".join(
        (pytester.path / "out" / name).read_text() for name in ("nucleo.json", "nucleo.md")
    )
    assert "recorded-s3_slowdown-2" in seen
    leaked = [canary for canary in RECORDED_CANARIES if canary.lower() in seen.lower()]
    assert leaked == []


def test_recorded_must_be_a_list_of_patterns(pytester: pytest.Pytester) -> None:
    project(pytester, [])
    source = (pytester.path / "test_report.py").read_text()
    (pytester.path / "test_report.py").write_text(
        source.replace("recorded = []", 'recorded = "recordings/*.yaml"')
    )
    result = pytester.runpytest()
    result.stdout.fnmatch_lines(
        ["*TestReport.recorded must be a list of recordings or glob patterns*"]
    )
