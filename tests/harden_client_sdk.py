"""A search SDK written as published ones are, for the harden_client tests: it builds its own
requests session and turns each failing response into an exception of its own, losing the
status, the Retry-After and what the server said (a 429 becomes a UsageLimitExceededError with
an empty message)."""

from __future__ import annotations

from typing import Any

import requests


class SearchError(Exception):
    """Anything the search service refused."""


class UsageLimitExceededError(SearchError):
    pass


class InvalidAPIKeyError(SearchError):
    pass


class SearchClient:
    def __init__(self, api_key: str, base_url: str = "https://api.search.example") -> None:
        self.base_url = base_url
        self.session = requests.Session()
        self.session.headers.update({"Authorization": f"Bearer {api_key}"})

    def search(self, query: str, max_results: int = 5) -> list[dict[str, Any]]:
        try:
            response = self.session.post(
                f"{self.base_url}/search",
                json={"query": query, "max_results": max_results},
                timeout=30,
            )
        except requests.RequestException as exc:
            raise SearchError(str(exc)) from exc
        if response.status_code == 429:
            raise UsageLimitExceededError(_detail(response))
        if response.status_code in (401, 403):
            raise InvalidAPIKeyError(_detail(response))
        if response.status_code != 200:
            raise SearchError(f"search failed ({response.status_code})")
        results: list[dict[str, Any]] = response.json()["results"]
        return results


def _detail(response: requests.Response) -> str:
    try:
        return str(response.json().get("detail", {}).get("error", ""))
    except ValueError:
        return ""
