"""What a request of any client carried that must never be shown, through ``sent_values``.

``sent_values`` reads an ``httpx.Request``; another client's request is copied into one (its
method, URL, headers and body), so every client's values are masked by the same rules.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import httpx

from pytest_nucleo._http._service import sent_values


def values_sent(
    method: str, url: str, headers: Iterable[tuple[str, str]], body: bytes | str | None
) -> tuple[str, ...]:
    """:func:`sent_values` of a request with these parts; never raises on odd parts."""
    pairs = [(str(name), str(value)) for name, value in headers]
    content = body.encode("utf-8", "replace") if isinstance(body, str) else body or b""
    try:
        parts = urlsplit(url)
        userinfo, _, _ = parts.netloc.rpartition("@")
        # sent_values reads the URL's userinfo and query only: the path (often the longest
        # part, and costly for httpx to parse) is left out of the copy.
        netloc = f"{userinfo}@invalid" if userinfo else "invalid"
        bare = urlunsplit(("http", netloc, "/", parts.query, ""))
    except ValueError:
        parts, bare = None, "http://invalid/"
    try:
        return sent_values(httpx.Request(method or "GET", bare, headers=pairs, content=content))
    except (httpx.InvalidURL, ValueError, TypeError, UnicodeError):
        pass
    # A userinfo or query httpx will not take: mask what the URL holds by hand.
    values = list(
        sent_values(httpx.Request("GET", "http://invalid/", headers=pairs, content=content))
    )
    if parts is not None:
        values.extend(part for part in (parts.username, parts.password) if part)
        values.extend(value for _, value in parse_qsl(parts.query))
    return tuple(dict.fromkeys(v for v in values if len(v) >= 4))
