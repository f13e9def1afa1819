"""HAR 1.2 files (what browsers and proxies save) read into recorded exchanges.

Bodies are ``content.text``, base64-decoded when ``content.encoding`` says so; browsers store
them already decompressed, so ``Content-Encoding`` is dropped. An entry without a response
(status 0: blocked or cancelled in the browser) is left out: there is nothing to replay.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ._recording import RecordedExchange, RecordingError

# A JSON file is HAR when its top-level object opens with "log" (browsers write it so).
_HAR_START = re.compile(r'\A\ufeff?\s*\{\s*"log"\s*:')


def claims(path: Path, text: str) -> bool:
    suffix = path.suffix.lower()
    return suffix == ".har" or (suffix == ".json" and _HAR_START.match(text) is not None)


def read(path: Path, text: str) -> list[RecordedExchange | RecordingError]:
    try:
        document = json.loads(text.lstrip("\ufeff"))
    except ValueError as error:
        truncated = " (the file looks truncated)" if "Expecting" in str(error) else ""
        raise RecordingError(path, None, f"is not valid JSON{truncated}: {error}") from None
    log = document.get("log") if isinstance(document, Mapping) else None
    entries = log.get("entries") if isinstance(log, Mapping) else None
    if not isinstance(entries, list):
        raise RecordingError(path, None, 'is not a HAR file: it has no "log.entries" list')
    found: list[RecordedExchange | RecordingError] = []
    for number, entry in enumerate(entries, start=1):
        try:
            exchange = _exchange(path, number, entry)
        except RecordingError as error:
            found.append(error)
        else:
            if exchange is not None:
                found.append(exchange)
    return found


def _exchange(path: Path, number: int, entry: Any) -> RecordedExchange | None:
    def bad(problem: str) -> RecordingError:
        return RecordingError(path, number, problem)

    if not isinstance(entry, Mapping):
        raise bad("is not an object with a request and a response")
    request, response = entry.get("request"), entry.get("response")
    if not isinstance(request, Mapping) or not isinstance(response, Mapping):
        raise bad("needs a request and a response, each an object")
    method, url = request.get("method"), request.get("url")
    if not isinstance(method, str) or not isinstance(url, str) or not url:
        raise bad("its request needs a method and a url, as strings")
    status = response.get("status")
    if status == 0:
        return None
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        raise bad(f"its response has no valid status (got {status!r})")
    request_headers = _headers(request, bad, "request")
    if not any(name.lower() == "cookie" for name, _ in request_headers):
        request_headers += _cookies(request, "cookie")
    headers = _headers(response, bad, "response") + _cookies(response, "set-cookie")
    post = request.get("postData")
    request_text = post.get("text") if isinstance(post, Mapping) else None
    return RecordedExchange(
        source=str(path),
        entry=number,
        method=method.upper(),
        url=url,
        request_headers=request_headers,
        request_body=request_text.encode() if isinstance(request_text, str) else b"",
        status=status,
        headers=tuple((n, v) for n, v in headers if n.lower() != "content-encoding"),
        body=_body(response.get("content"), bad),
    )


def _headers(
    part: Mapping[str, Any], bad: Callable[[str], RecordingError], which: str
) -> tuple[tuple[str, str], ...]:
    raw = part.get("headers", [])
    if not isinstance(raw, list):
        raise bad(f"its {which} headers are not a list of name/value objects")
    pairs = []
    for header in raw:
        if not isinstance(header, Mapping) or not isinstance(header.get("name"), str):
            raise bad(f"its {which} headers hold {header!r}, not a name/value object")
        pairs.append((header["name"], str(header.get("value", ""))))
    return tuple(pairs)


def _cookies(part: Mapping[str, Any], header: str) -> tuple[tuple[str, str], ...]:
    cookies = part.get("cookies")
    if not isinstance(cookies, list):
        return ()
    return tuple(
        (header, f"{cookie.get('name', '')}={cookie.get('value', '')}")
        for cookie in cookies
        if isinstance(cookie, Mapping) and cookie.get("value")
    )


def _body(content: Any, bad: Callable[[str], RecordingError]) -> bytes:
    if not isinstance(content, Mapping):
        raise bad("its response has no content object")
    text = content.get("text")
    if text is None:
        if content.get("size", 0) not in (0, -1, None):
            raise bad(
                "its response body was not saved (content.text is missing): save the HAR "
                "with content (in a browser: Save all as HAR with content)"
            )
        return b""
    if not isinstance(text, str):
        raise bad("its response content.text is not a string")
    encoding = content.get("encoding")
    if encoding is None:
        return text.encode("utf-8", "surrogateescape")
    if encoding != "base64":
        raise bad(f"its response body has the encoding {encoding!r}; HAR knows only base64")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise bad("its response body says base64, but is not valid base64") from None
