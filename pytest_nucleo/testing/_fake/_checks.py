"""The checks on what a test gives the fake upstream: statuses, response headers, route URLs and
``base_url``.

Each refuses, as soon as the test writes it, a value that could never answer or match a request,
with a message that says what to write instead: a status outside 100 to 599, a header name or
value that is not a str, a URL no client can send (not absolute http(s), a port out of range, a
host that is neither a name nor an address).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import unquote

import httpx

from ._hosts import ip_of


def check_status(status: object) -> int:
    """``status`` when it is an HTTP status (an int from 100 to 599), else a ``ValueError``."""
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        raise ValueError(
            f"unknown HTTP status {status!r}: give an int from 100 to 599, such as 404 or 503"
        )
    return status


def checked_headers(headers: object) -> list[tuple[str, str]]:
    """``headers`` as (name, value) pairs, each a str; anything else is a ``TypeError`` that says
    which header and how to write it."""
    if headers is None:
        return []
    if not isinstance(headers, Mapping):
        raise TypeError(
            "respond(headers=...) takes a mapping of header names to str values, such as "
            f"{{'Retry-After': '30'}}; got {type(headers).__name__} {headers!r}"
        )
    pairs = list(headers.items())
    for name, value in pairs:
        if not isinstance(name, str):
            raise TypeError(
                f"respond(headers=...): the header name {name!r} ({type(name).__name__}) is "
                "not a str; "
                "give header names as str, such as 'Retry-After'"
            )
        if not isinstance(value, str):
            raise TypeError(
                f"respond(headers=...): the header {name!r} has the value {value!r} "
                f"({type(value).__name__}); give header values as str, such as "
                f"{{{name!r}: {str(value)!r}}}"
            )
    return pairs


_HOST_NAME = re.compile(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?")


def never_matching(url: str, what: str) -> None:
    """Refuse ``url`` when no request can ever go to it (``what`` is how messages name it): not
    an absolute http(s) URL, a port out of 1 to 65535, a host no client can send."""
    how = "give an absolute http(s) URL such as 'https://api.example/v1'"
    if what != "base_url":
        how = (
            "give an absolute http(s) URL such as 'https://api.example/items/1', or set "
            "base_url (marker @pytest.mark.nucleo(base_url=...) or FakeUpstream(base_url=...))"
        )
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as error:
        raise ValueError(f"{what} {url!r} can never match a request ({error}): {how}") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ValueError(f"{what} {url!r} can never match a request: {how}")
    if parsed.port is not None and not 1 <= parsed.port <= 65535:
        raise ValueError(
            f"{what} {url!r} can never match a request: its port {parsed.port} is not one of "
            "1 to 65535"
        )
    host = parsed.raw_host.decode("ascii", "replace")
    if ip_of(host) is None and not _HOST_NAME.fullmatch(host):
        raise ValueError(
            f"{what} {url!r} can never match a request: its host {unquote(parsed.host)!r} is not "
            "a host "
            "name (letters, digits, '-', '.') nor an address"
        )


def check_base_url(base_url: object) -> None:
    """Refuse a ``base_url`` that is not a str (``TypeError``) or that no request can go to
    (``ValueError``, see :func:`never_matching`)."""
    if not isinstance(base_url, str):
        raise TypeError(
            "base_url takes an absolute http(s) URL string such as "
            f"'https://api.example/v1', got {type(base_url).__name__} {base_url!r}"
        )
    never_matching(base_url, "base_url")
