"""Books from the Google Books API, read by two tools built on google-api-python-client.

The client raises its ``HttpError`` for every failing status, carrying the status, the
headers and Google's JSON error, and httplib2 under it raises its own errors (or the socket's
timeout) for a call that got no answer: ``llm_errors`` reads them all, so the tools map
nothing by hand. The API key travels in the URL's query; no text the model reads shows it.
"""

from __future__ import annotations

import functools
import os
from typing import Any

import httplib2
from googleapiclient.discovery import build

import pytest_nucleo as nucleo

SERVICE = "Google Books"
API_KEY = os.environ.get("BOOKS_API_KEY", "AIzaSyD-demo-books-key-00000000000000")


@functools.cache
def _books() -> Any:
    # The discovery document ships with the client (static_discovery): building the service
    # makes no request.
    return build(
        "books",
        "v1",
        developerKey=API_KEY,
        http=httplib2.Http(timeout=10),
        static_discovery=True,
        cache_discovery=False,
    )


def _answer(answer: object) -> dict[str, Any]:
    """The API's JSON object. The client hands back a 2xx body that is not JSON as a string
    (a proxy's sign-in page): that is the service failing, not a book."""
    if not isinstance(answer, dict):
        raise nucleo.ExternalServiceException(SERVICE, "the answer was not the JSON expected")
    return answer


def _volume(item: Any) -> dict[str, Any]:
    info = item.get("volumeInfo", {})
    return {
        "id": item["id"],
        "title": info.get("title", ""),
        "authors": info.get("authors", []),
        "published": info.get("publishedDate", ""),
    }


@nucleo.tool
@nucleo.llm_errors(service=SERVICE)
def fetch_volume(volume_id: str) -> dict[str, Any]:
    """One book by its Google Books volume id, such as ``zyTCAlFPjgYC``."""
    if not isinstance(volume_id, str) or not volume_id.isascii() or not volume_id.strip():
        raise nucleo.InvalidInputException(
            "volume_id", volume_id, "must be a volume id such as 'zyTCAlFPjgYC'"
        )
    return _volume(_answer(_books().volumes().get(volumeId=volume_id).execute()))


@nucleo.tool
@nucleo.llm_errors(service=SERVICE)
def search_volumes(query: str) -> list[dict[str, Any]]:
    """The books matching ``query`` (at most 10); an empty list when none does."""
    if not isinstance(query, str) or not query.strip():
        raise nucleo.InvalidInputException("query", query, "must name a title, such as 'dune'")
    answer = _answer(_books().volumes().list(q=query, maxResults=10).execute())
    return [_volume(item) for item in answer.get("items", [])]
