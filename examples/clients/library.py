"""What the library's two tools share, whichever HTTP client calls the service.

The fetch tool takes one book by its ISBN-13; the search tool takes the books whose title
matches a query. The service answers a search that matches nothing with a 404, which the search
tools turn into an empty list: a valid answer, not a failure.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

import pytest_nucleo as nucleo

SERVICE = "Library"
BASE_URL = "https://library.example/api"
API_KEY = os.environ.get("LIBRARY_API_KEY", "demo-library-key-0001")
HEADERS = {"X-Api-Key": API_KEY}

ISBN = re.compile(r"97[89][0-9]{10}")


def check_isbn(isbn: str) -> None:
    if not isinstance(isbn, str) or not ISBN.fullmatch(isbn):
        raise nucleo.InvalidInputException(
            "isbn", isbn, "must be an ISBN-13 of 13 digits without dashes, such as 9780306406157"
        )


def check_query(query: str) -> None:
    if not isinstance(query, str) or not query.strip():
        raise nucleo.InvalidInputException("query", query, "must name a title, such as 'dune'")


def parsed(body: str | bytes) -> Any:
    """The JSON of a 2xx answer; an answer that is not JSON (a login page) is the service's
    failure, which calling again will not mend."""
    try:
        return json.loads(body)
    except ValueError:  # json.JSONDecodeError and UnicodeDecodeError are both ValueErrors
        raise nucleo.ExternalServiceException(
            SERVICE, "the answer was not the JSON expected"
        ) from None


def book_of(data: Any) -> dict[str, Any]:
    return {"isbn": data["isbn"], "title": data["title"], "year": data["year"]}


def books_of(data: Any) -> list[dict[str, Any]]:
    return [book_of(item) for item in data["books"]]
