"""The Google Books tools keep the whole failure contract with one decorator as hardening."""

from __future__ import annotations

import pytest

pytest.importorskip(
    "googleapiclient",
    reason="google-api-python-client is not installed: pip install 'pytest-nucleo[google-api]'",
)

from books_google import API_KEY, fetch_volume, search_volumes

from pytest_nucleo.testing import ToolContract, respond

BASE = "https://books.googleapis.com/books/v1/volumes"

# A volume as the API returns it (fields trimmed), and a search that matched nothing, which
# carries no "items". https://developers.google.com/books/docs/v1/reference/volumes
VOLUME = {
    "kind": "books#volume",
    "id": "zyTCAlFPjgYC",
    "volumeInfo": {
        "title": "The Google Story",
        "authors": ["David A. Vise", "Mark Malseed"],
        "publishedDate": "2005-11-15",
    },
}


class TestFetchVolume(ToolContract):
    tool = fetch_volume
    kind = "fetch"
    service_name = "Google Books"
    endpoint = f"GET {BASE}/zyTCAlFPjgYC?key={API_KEY}&alt=json"
    valid_call = {"volume_id": "zyTCAlFPjgYC"}
    valid_response = respond(200, json=VOLUME)
    secrets = (API_KEY,)


class TestSearchVolumes(ToolContract):
    tool = search_volumes
    kind = "search"
    service_name = "Google Books"
    endpoint = f"GET {BASE}?q=dune&maxResults=10&key={API_KEY}&alt=json"
    valid_call = {"query": "dune"}
    valid_response = respond(
        200, json={"kind": "books#volumes", "totalItems": 1, "items": [VOLUME]}
    )
    empty_response = respond(200, json={"kind": "books#volumes", "totalItems": 0})
    secrets = (API_KEY,)
    not_applicable = {
        "status-404": "no match is a 200 with totalItems 0; a 404 is a failure",
    }
