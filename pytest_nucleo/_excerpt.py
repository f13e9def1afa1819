"""What of an HTTP exchange may be shown: a bounded body excerpt and the endpoint path.

A server's error body can be 10 MB of HTML, binary data, or an echo of the request with its
credentials. :func:`body_excerpt` keeps a head and a tail of it (saying how much lies between),
reduces HTML to its visible text, collapses whitespace and masks secrets, and never decodes more
than two small windows of the bytes, so a 10 MB body costs what a 16 KiB one does.
:func:`safe_endpoint` keeps only the path of a URL.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from html.parser import HTMLParser

from ._secrets import redact

EXCERPT_HEAD = 600
"""Characters kept from the start of a body."""

EXCERPT_TAIL = 300
"""Characters kept from the end of a body that had to be cut."""

EXCERPT_LIMIT = 1000
"""Longest excerpt: a body whose cleaned text fits is shown whole; a cut one is shorter."""

ENDPOINT_LIMIT = 300
"""Characters kept of an endpoint path."""

# Bytes decoded at each end of a body. Text needs little; HTML spends most of its bytes on
# markup, and html.parser costs about a microsecond per tag, so its windows stay small too.
_TEXT_WINDOW = 4096
_HTML_HEAD_WINDOW = 3072
_HTML_TAIL_WINDOW = 1024
# Headroom masked past a cut, so a secret straddling it is still seen whole and masked.
_LOOKAHEAD = 256
_SNIFF = 512
_WORD_SLACK = 40

_WHITESPACE = re.compile(r"[\s\x00-\x1f\x7f\x85\u2028\u2029\ufffd]+")
_HTML_START = re.compile(rb"\s*(?:\xef\xbb\xbf)?\s*<(?:!doctype\s+html|html|head|body)\b", re.I)
_CHARSET = re.compile(r"(?i)\bcharset\s*=\s*[\"']?([A-Za-z0-9._:\-]+)")
_SCHEME_AUTHORITY = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.\-]*:)?//[^/]*")


class _VisibleText(HTMLParser):
    """Collects the text a browser would show; script, style and similar blocks are skipped."""

    _HIDDEN = frozenset({"script", "style", "template", "noscript", "svg", "head"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._hidden = 0
        self._title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._title = True  # shown in the tab, and often the only words on an error page
        elif tag in self._HIDDEN:
            self._hidden += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._title = False
        elif tag in self._HIDDEN and self._hidden:
            self._hidden -= 1

    def handle_data(self, data: str) -> None:
        if self._title or not self._hidden:
            self.parts.append(data)


def _visible_text(markup: str) -> str:
    parser = _VisibleText()
    try:
        parser.feed(markup)
        parser.close()
    except Exception:  # html.parser is lenient, but never let a hostile page break mapping
        pass
    return " ".join(parser.parts)


def _charset(content_type: str | None) -> str:
    match = _CHARSET.search(content_type or "")
    if match:
        name = match.group(1)
        try:
            "".encode(name)
        except LookupError:
            return "utf-8"
        return name
    return "utf-8"


def _collapse(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


def _is_html(content_type: str | None, start: bytes) -> bool:
    if content_type is not None and "html" in content_type.lower():
        return True
    return _HTML_START.match(start) is not None


def _is_binary(start: bytes) -> bool:
    return b"\x00" in start


def body_excerpt(
    body: bytes | str | None, *, content_type: str | None = None, known: Iterable[str] = ()
) -> str:
    """A short, clean, secret-free excerpt of a response body, for a model text or a log line.

    - A body whose cleaned text has at most :data:`EXCERPT_LIMIT` characters is shown whole;
      a longer one as its first :data:`EXCERPT_HEAD` and last :data:`EXCERPT_TAIL` characters
      with ``[... N of M bytes not shown ...]`` between them (characters, for a ``str`` body).
    - Only a window at each end of the bytes is ever decoded (with the charset of
      ``content_type``, UTF-8 by default, undecodable bytes dropped), so the cost does not grow
      with the body; a word the window boundary split is left out rather than shown in part.
    - HTML (by ``content_type``, or a body that starts like a page) is reduced to the text a
      browser shows (title included; scripts and styles left out); whitespace and control
      characters collapse to single spaces.
    - Secret-looking tokens, and every ``known`` value (what the caller sent: keys, header and
      query values), are masked as ``[REDACTED]``. A body with NUL bytes in its first 512
      bytes is binary and shown only by its size. An empty body gives ``""``.
    """
    if not body:
        return ""
    known = tuple(known)
    if isinstance(body, str):
        return _excerpt_text(body, content_type, known)
    start = body[:_SNIFF]
    if _is_binary(start):
        return f"<{len(body)} bytes of binary data>"
    html = _is_html(content_type, start)
    head_window, tail_window = (
        (_HTML_HEAD_WINDOW, _HTML_TAIL_WINDOW) if html else (_TEXT_WINDOW, _TEXT_WINDOW)
    )
    charset = _charset(content_type)
    total = len(body)
    if total <= head_window + tail_window:
        text = _clean(body.decode(charset, "replace"), html)
        return _cut(text, text, total, "bytes", known, whole=True)
    head = _clean(_drop_last_word(body[:head_window].decode(charset, "replace"), html), html)
    tail = _clean(_drop_first_word(body[-tail_window:].decode(charset, "replace"), html), html)
    return _cut(head, tail, total, "bytes", known, whole=False)


def _excerpt_text(body: str, content_type: str | None, known: tuple[str, ...]) -> str:
    html = _is_html(content_type, body[:_SNIFF].encode("utf-8", "replace"))
    total = len(body)
    head_window, tail_window = (
        (_HTML_HEAD_WINDOW, _HTML_TAIL_WINDOW) if html else (_TEXT_WINDOW, _TEXT_WINDOW)
    )
    if total <= head_window + tail_window:
        text = _clean(body, html)
        return _cut(text, text, total, "characters", known, whole=True)
    head = _clean(_drop_last_word(body[:head_window], html), html)
    tail = _clean(_drop_first_word(body[-tail_window:], html), html)
    return _cut(head, tail, total, "characters", known, whole=False)


def _clean(text: str, html: bool) -> str:
    return _collapse(_visible_text(text) if html else text)


def _drop_last_word(text: str, html: bool) -> str:
    """Cut a window's end back to a boundary the body really has (a tag, or whitespace)."""
    mark = text.rfind("<") if html else _last_space(text)
    return text[:mark] if mark > 0 else text


def _drop_first_word(text: str, html: bool) -> str:
    if html:
        mark = text.find(">")
        return text[mark + 1 :] if mark >= 0 else text
    match = re.search(r"\s", text[:_LOOKAHEAD])
    return text[match.end() :] if match else text


def _last_space(text: str) -> int:
    tail = text[-_LOOKAHEAD:]
    for index in range(len(tail) - 1, -1, -1):
        if tail[index].isspace():
            return len(text) - len(tail) + index
    return -1


def _cut(head: str, tail: str, total: int, unit: str, known: tuple[str, ...], whole: bool) -> str:
    """Mask, then bound: head and tail of the cleaned text with how much lies between them."""
    if whole and len(head) <= EXCERPT_LIMIT:
        shown = _collapse(redact(head, known))
        if len(shown) <= EXCERPT_LIMIT:
            return shown
        head = tail = shown
    start = _collapse(redact(head[: EXCERPT_HEAD + _LOOKAHEAD], known))
    if len(start) > EXCERPT_HEAD:  # end on a whole word when one ends near the cut
        space = start.rfind(" ", EXCERPT_HEAD - _WORD_SLACK, EXCERPT_HEAD + 1)
        start = start[: space if space > 0 else EXCERPT_HEAD].rstrip()
    end = _collapse(redact(tail[-(EXCERPT_TAIL + _LOOKAHEAD) :], known))
    if len(end) > EXCERPT_TAIL:
        space = end.find(" ", len(end) - EXCERPT_TAIL - 1, len(end) - EXCERPT_TAIL + _WORD_SLACK)
        end = end[space + 1 if space >= 0 else len(end) - EXCERPT_TAIL :].lstrip()
    size = len((start + end).encode("utf-8", "replace")) if unit == "bytes" else len(start + end)
    hidden = max(total - size, 0)
    return f"{start} [... {hidden} of {total} {unit} not shown ...] {end}".strip()


def safe_endpoint(url: str, known: Iterable[str] = ()) -> str:
    """The path of ``url``, fit to show: no scheme, host, userinfo, query or fragment.

    ``"https://user:pw@api.example/v1/orders/7?api_key=k#top"`` gives ``"/v1/orders/7"``; a
    bare path keeps its form (``"orders/7?x=1"`` gives ``"orders/7"``). Whitespace and control
    characters collapse, secret-looking tokens and ``known`` values in the path are masked, and
    the result is at most :data:`ENDPOINT_LIMIT` characters (cut with ``...``). An empty path is
    ``"/"``. Never raises.
    """
    path = url.split("#", 1)[0].split("?", 1)[0]
    path = _SCHEME_AUTHORITY.sub("", path, count=1)
    path = _collapse(redact(path[: ENDPOINT_LIMIT + _LOOKAHEAD], tuple(known)))
    if len(path) > ENDPOINT_LIMIT:
        path = path[: ENDPOINT_LIMIT - 3] + "..."
    return path or "/"
