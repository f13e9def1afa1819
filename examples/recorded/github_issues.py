"""The issue tool: fetch one GitHub issue by repository and number.

Its contract replays failures recorded from the real API (cassettes/github_issues.json): the
403 GitHub sends when the rate limit is spent, the HTML 502 its front end serves, and a 200
sign-in page a corporate proxy put in place of the JSON.
"""

from __future__ import annotations

import os
from typing import Any

import httpx

import pytest_nucleo as nucleo

TOKEN = os.environ.get("GITHUB_TOKEN", "ghp_demoTokenForTheExample0000000000")


class GitHub(nucleo.ServiceClient):
    service_name = "GitHub"
    base_url = "https://api.github.com"


github = GitHub(
    httpx.Client(
        headers={"Authorization": f"Bearer {TOKEN}", "Accept": "application/vnd.github+json"},
        timeout=10.0,
    )
)


@nucleo.tool
@nucleo.llm_errors
def get_issue(owner: str, repo: str, number: int) -> dict[str, Any]:
    """Fetch one issue: its number, title and state."""
    issue = github.get_json(f"/repos/{owner}/{repo}/issues/{number}")
    return {"number": issue["number"], "title": issue["title"], "state": issue["state"]}
