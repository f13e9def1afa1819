"""Tools on the client base whose upstreams failed for real, in tests/recordings/."""

from __future__ import annotations

from typing import Any

import httpx

import pytest_nucleo as nucleo

GITHUB_TOKEN = "ghp_nucleoContractToken000000000000000"
AWS_TOKEN = "nucleoContractAwsSessionToken0001"
STATUS_TOKEN = "nucleoContractStatusToken0001"
GEOCODE_KEY = "nucleoContractGeocodeKey0001"


class GitHub(nucleo.ServiceClient):
    service_name = "GitHub"
    base_url = "https://api.github.com"


class Reports(nucleo.ServiceClient):
    service_name = "Reports bucket"
    base_url = "https://widgets-bucket.s3.amazonaws.com"


class StatusPage(nucleo.ServiceClient):
    service_name = "Status page"
    base_url = "https://status.widgets.example/api/v1"


class Geocode(nucleo.ServiceClient):
    service_name = "Geocode"
    base_url = "https://api.geocode.example/v2"

    def classify(self, response: httpx.Response) -> nucleo.LLMReadableCheckedException | None:
        # This vendor answers 200 and says "error" in the body when a lookup failed.
        if response.is_success and b'"status":"error"' in response.content[:4096]:
            return nucleo.ExternalServiceException(
                self.service_name,
                f"HTTP 200 with an error object at {response.url.path}",
                llm_message=(
                    f"The external service {self.service_name} reported an error instead of "
                    "results. Use another way, or come back later."
                ),
            )
        return None


github = GitHub(httpx.Client(headers={"Authorization": f"Bearer {GITHUB_TOKEN}"}))
reports = Reports(httpx.Client(headers={"X-Amz-Security-Token": AWS_TOKEN}))
status_page = StatusPage(httpx.Client(headers={"Authorization": f"Bearer {STATUS_TOKEN}"}))
geocode = Geocode(httpx.Client(headers={"X-Api-Key": GEOCODE_KEY}))


def get_issue(owner: str, repo: str, number: int) -> Any:
    return github.get_json(f"/repos/{owner}/{repo}/issues/{number}")


def get_report(month: str) -> Any:
    return reports.get_json(f"/reports/{month}.json")


def get_incident(incident_id: str) -> Any:
    return status_page.get_json(f"/incidents/{incident_id}")


def lookup(address: str) -> Any:
    found = geocode.get_json("/lookup", params={"address": address}, empty_on_404=True)
    return found["results"] if found else []
