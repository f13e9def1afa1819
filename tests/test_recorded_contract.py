"""ToolContracts whose matrix includes real recorded failures: a GitHub 403 rate limit, an S3
SlowDown, an nginx 502 page saved in a HAR file and a vendor's 200 with an error object."""

from __future__ import annotations

from pathlib import Path

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
