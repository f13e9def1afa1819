"""What a request of any client carried that must never be shown, through ``sent_values``.

``sent_values`` reads an ``httpx.Request``; another client's request is copied into one (its
method, URL, headers and body), so every client's values are masked by the same rules.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import parse_qsl, urlsplit

import httpx

from pytest_nucleo._client import sent_values


def values_sent(
    method: str, url: str, headers: Iterable[tuple[str, str]], body: bytes | str | None
) -> tuple[str, ...]:
    """:func:`sent_values` of a request with these parts; never raises on odd parts."""
    pairs = [(str(name), str(value)) for name, value in headers]
    content = body.encode("utf-8", "replace") if isinstance(body, str) else body or b""
    try:
        return sent_values(httpx.Request(method or "GET", url, headers=pairs, content=content))
    except (httpx.InvalidURL, ValueError, TypeError, UnicodeError):
        pass
    # A URL httpx will not parse: mask what the URL itself holds by hand, the rest as usual.
    values = list(
        sent_values(httpx.Request("GET", "http://invalid/", headers=pairs, content=content))
    )
    try:
        parts = urlsplit(url)
        values.extend(part for part in (parts.username, parts.password) if part)
        values.extend(value for _, value in parse_qsl(parts.query))
    except ValueError:
        pass
    return tuple(dict.fromkeys(v for v in values if len(v) >= 4))
