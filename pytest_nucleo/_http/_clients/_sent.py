"""What a request of any client carried that must never be shown: ``sent_values``.

``sent_values`` reads an ``httpx.Request``; another client's request is copied into one by
``values_sent`` (its method, URL, headers and body), so every client's values are masked by the
same rules.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, urlencode, urlsplit, urlunsplit

import httpx

# Request headers whose values are not secret; every other header value is masked wherever it
# shows up (a server may echo a key back in its error body).
_PLAIN_HEADERS = frozenset(
    {
        "accept",
        "accept-encoding",
        "accept-language",
        "connection",
        "content-length",
        "content-type",
        "host",
        "user-agent",
    }
)


def sent_values(request: httpx.Request) -> tuple[str, ...]:
    """What a request carried that must never be shown, to mask wherever it shows up.

    Header values (but those of the few plain headers such as Accept and User-Agent), the
    credential part of an ``Authorization`` value and each cookie's value; query values; the
    URL's user and password; the values of a form body, and the strings and integers of eight
    digits or more (card and account numbers) of a JSON body (up to 64 KiB, strings first, at
    most 256 values); and the percent-encoded forms of all of these. Values under four
    characters are left out (see ``redact``).
    """
    if _sends_nothing(request):
        return ()
    values: list[str] = []
    for name, value in request.headers.items():
        if name.lower() not in _PLAIN_HEADERS:
            values.append(value)
            values.extend(value.split()[1:])  # "Bearer abc" -> also "abc"
            if name.lower() == "cookie":  # "a=1; session=abc" -> also "abc"
                values.extend(v for _, _, v in (c.partition("=") for c in value.split(";")))
    values.extend(value for _, value in request.url.params.multi_items())
    values.extend(part for part in (request.url.username, request.url.password) if part)
    values.extend(_body_values(request))
    encoded = [
        form
        for value in values
        if not _UNRESERVED.fullmatch(value)
        for form in (quote(value, safe=""), quote_plus(value))
    ]
    return tuple(dict.fromkeys(v for v in (*values, *encoded) if len(v) >= 4))


_PLAIN_HEADER_NAMES = frozenset(name.encode("ascii") for name in _PLAIN_HEADERS)


def _sends_nothing(request: httpx.Request) -> bool:
    """Whether ``request`` carries nothing :func:`sent_values` reads: only plain headers, no
    query, no user or password, no body (a client's usual GET). Reading each part gave
    nothing then, at a tenth of a mapping's cost (httpx parses the query and decodes every
    header for it). Header names are compared as bytes, lowered: the one character beyond
    ASCII whose lower case is ASCII, the Kelvin sign, lowers to a "k", which no plain name
    holds, so a name is plain exactly when its decoded lower case is."""
    url = request.url
    if url.query or url.userinfo:
        return False
    if not all(name.lower() in _PLAIN_HEADER_NAMES for name, _ in request.headers.raw):
        return False
    try:
        return not request.content
    except httpx.RequestNotRead:  # a streamed body is not read (see _body_values)
        return True


# Characters quote() and quote_plus() never escape: a value made only of these is its own
# encoded form (most keys and tokens are), and the two quote calls per value were the larger
# part of the cost of sent_values. Skipping them changes nothing: duplicates are dropped.
_UNRESERVED = re.compile(r"[A-Za-z0-9_.~\-]*")


_BODY_SCAN = 65_536
_BODY_VALUES = 256


def _body_values(request: httpx.Request) -> list[str]:
    try:
        content = request.content
    except httpx.RequestNotRead:  # a streamed body: nothing we can read without consuming it
        return []
    if not content or len(content) > _BODY_SCAN:
        return []
    kind = request.headers.get("content-type", "")
    text = content.decode("utf-8", "replace")
    if "json" in kind:
        try:
            strings, numbers = _scalars(json.loads(text))
            # Strings first (credentials are strings), then long numbers; short values, never
            # masked anyway, take no place under the cap.
            return [v for v in (*strings, *numbers) if len(v) >= 4][:_BODY_VALUES]
        except (ValueError, RecursionError):  # not JSON, or nested too deeply to decode
            return [text]
    if "x-www-form-urlencoded" in kind:
        return [value for _, value in parse_qsl(text)][:_BODY_VALUES]
    return [text]


_LONG_NUMBER = 10_000_000
"""Integers from here up (eight digits: card, account and phone numbers) count as values sent;
shorter ones (a limit of 1000, a year) would blank out every number a model text quotes."""


def _scalars(value: Any) -> tuple[list[str], list[str]]:
    """The strings and the long integers of a decoded JSON value, in document order."""
    strings: list[str] = []
    numbers: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            strings.append(item)
        elif isinstance(item, int) and not isinstance(item, bool) and abs(item) >= _LONG_NUMBER:
            numbers.append(str(item))
        elif isinstance(item, dict):
            stack.extend(reversed(item.values()))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return strings, numbers


def values_sent(
    method: str,
    url: str,
    headers: Iterable[tuple[str, str]],
    body: bytes | str | None,
    *,
    params: Mapping[str, object] | None = None,
) -> tuple[str, ...]:
    """:func:`sent_values` of a request with these parts; never raises on odd parts.

    ``params`` are arguments the request carried that ``url`` and ``body`` do not show, as an
    SDK keeps them before encoding (a form's fields, a query's parameters): each string and
    number among their values counts as a query value (nested values are not read)."""
    pairs = [(str(name), str(value)) for name, value in headers]
    content = body.encode("utf-8", "replace") if isinstance(body, str) else body or b""
    try:
        parts = urlsplit(url)
        userinfo, _, _ = parts.netloc.rpartition("@")
        # sent_values reads the URL's userinfo and query only: the path (often the longest
        # part, and costly for httpx to parse) is left out of the copy.
        netloc = f"{userinfo}@invalid" if userinfo else "invalid"
        query = "&".join(q for q in (parts.query, _query_of(params)) if q)
    except ValueError:  # a malformed netloc
        parts, netloc, query = None, "invalid", _query_of(params)
    bare = urlunsplit(("http", netloc, "/", query, ""))
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
    values.extend(value for _, value in parse_qsl(query))
    return tuple(dict.fromkeys(v for v in values if len(v) >= 4))


def _query_of(params: Mapping[str, object] | None) -> str:
    """``params``' strings and numbers as a query string; "" for none. A flag (a bool) is
    left out: its "True" would mask that word wherever a text holds it. Never raises."""
    if not params:
        return ""
    try:
        return urlencode(
            [
                (str(name), str(value))
                for name, value in params.items()
                if isinstance(value, str | int | float) and not isinstance(value, bool)
            ]
        )
    except ValueError:  # an integer too long to write out
        return ""
