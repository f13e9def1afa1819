"""Every way get_issue can fail, the recorded ones included, as the model reads it."""

from __future__ import annotations

from github_issues import TOKEN, get_issue

from pytest_nucleo.testing import FakeUpstream, ToolContract, respond

ISSUE = {"number": 42, "title": "Widgets wobble", "state": "open"}


class TestGetIssueContract(ToolContract):
    tool = get_issue
    kind = "fetch"
    service_name = "GitHub"
    endpoint = "GET https://api.github.com/repos/octo-org/widgets/issues/42"
    valid_call = {"owner": "octo-org", "repo": "widgets", "number": 42}
    valid_response = respond(200, json=ISSUE)
    secrets = (TOKEN,)
    # Recorded with vcrpy (serializer="json"); relative to pytest's rootdir.
    recorded = ["examples/recorded/cassettes/*.json"]


def test_an_issue_is_fetched(fake_upstream: FakeUpstream) -> None:
    fake_upstream.get("https://api.github.com/repos/octo-org/widgets/issues/42").respond(
        200, json=ISSUE
    )
    assert get_issue("octo-org", "widgets", 42) == ISSUE
