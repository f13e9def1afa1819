"""What of an HTTP exchange may be shown: a bounded body excerpt and the endpoint path.

A server's error body can be 10 MB of HTML, binary data, or an echo of the request with its
credentials. :func:`body_excerpt` keeps a head and a tail of it (saying how much lies between),
reduces HTML to its visible text, collapses whitespace and masks secrets, and never decodes more
than two small windows of the bytes, so a 10 MB body costs what a 16 KiB one does.
:func:`safe_endpoint` keeps only the path of a URL.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable

from ._markup import page_text, xml_text
from ._render import INVISIBLE, SURROGATES
from ._render import _collapse as collapse_text
from ._secrets import _fragment_end, redact, redact_piece

EXCERPT_HEAD = 600
"""Characters kept from the start of a body."""

EXCERPT_TAIL = 300
"""Characters kept from the end of a body that had to be cut."""

EXCERPT_LIMIT = 1000
"""Longest excerpt: a body whose cleaned text fits is shown whole; a cut one is shorter."""

ENDPOINT_LIMIT = 300
"""Characters kept of an endpoint path."""

# Bytes decoded at each end of a body: enough for the head and tail kept, with room for the
# markup of an HTML page.
_TEXT_WINDOW = 4096
_HTML_HEAD_WINDOW = 3072
_HTML_TAIL_WINDOW = 1024
# Headroom masked past a cut, so a secret straddling it is still seen whole and masked.
_LOOKAHEAD = 256
_SNIFF = 512
_WORD_SLACK = 40

_ODD = re.compile(rf"[\x00-\x08\x0e-\x1b\x7f\ufffd{INVISIBLE}{SURROGATES}]+")
# XML error bodies (AWS's <Error><Code>SlowDown</Code>...) are markup too: the model reads
# their words, not their tags.
_HTML_START = re.compile(
    rb"\s*(?:\xef\xbb\xbf)?\s*<(?:!doctype\s+html|html|head|body|\?xml)\b", re.I
)
_HTML_IN = re.compile(rb"<(?:!doctype\s+html|html)\b", re.I)
_CHARSET = re.compile(r"(?i)\bcharset\s*=\s*[\"']?([A-Za-z0-9._:\-]+)")
_SCHEME_AUTHORITY = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.\-]*:)?//[^/]*")


def _visible_text(markup: str, kind: str, need: int = 0) -> str:
    """The words of a page (see ``page_text``, which stops reading once it has ``need``
    characters), or of an XML error (see ``xml_text``)."""
    return xml_text(markup) if kind == "xml" else page_text(markup, need)


# Python's codecs for what is not a page's text: domain names (idna, punycode: Python 3.13
# decodes any bytes as punycode, into nonsense), Python's string escapes and its bare
# charmap, no encoding at all, and UTF-7, which no browser reads and which turns "C++" into
# "C" and a replacement character.
_NOT_CHARSETS = frozenset(
    {"idna", "punycode", "undefined", "unicode-escape", "raw-unicode-escape", "charmap", "utf-7"}
)


def _charset(content_type: str | None) -> str:
    """The charset ``content_type`` names when Python has a text codec by that name, else
    UTF-8 (the server chooses it: ``charset=rot13`` or ``base64`` are not text encodings,
    ``idna`` or ``punycode`` not a body's)."""
    match = _CHARSET.search(content_type or "")
    if match:
        try:
            info = codecs.lookup(match.group(1))
        except LookupError:
            return "utf-8"
        if getattr(info, "_is_text_encoding", True) and info.name not in _NOT_CHARSETS:
            return info.name
    return "utf-8"


def _decode(data: bytes, charset: str) -> str:
    """``data`` decoded with ``charset``, undecodable bytes replaced. A codec that refuses the
    replacing mode, or anything in the bytes (``idna``, ``punycode``, ``undefined``), gives
    way to UTF-8: an excerpt never fails."""
    try:
        return data.decode(charset, "replace")
    except (UnicodeError, LookupError, ValueError, TypeError):
        return data.decode("utf-8", "replace")


def _collapse(text: str) -> str:
    # As the model texts collapse, with U+FFFD (left by undecodable bytes) a control too.
    return collapse_text(text, _ODD)


def _markup_kind(content_type: str | None, start: bytes) -> str:
    """``"html"`` for a page, ``"xml"`` for other XML (an API's error document), ``""`` for
    text: by ``content_type``, else by how the body starts. XHTML is a page."""
    kind = (content_type or "").lower()
    if "html" in kind:
        return "html"
    if "xml" in kind:
        return "html" if _HTML_IN.search(start) else "xml"
    match = _HTML_START.match(start)
    if match is None:
        return ""
    return "xml" if b"?xml" in match.group(0).lower() and not _HTML_IN.search(start) else "html"


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
      ``content_type``, UTF-8 by default, undecodable bytes replaced), and only as much of it
      is cleaned as the excerpt needs, so the cost does not grow with the body; a word a
      window boundary split is left out rather than shown in part.
    - HTML (by ``content_type``, or a body that starts like a page) is reduced to the text a
      browser shows (title first; scripts, styles and comments left out; entities decoded);
      whitespace and control characters collapse to single spaces.
    - Secret-looking tokens, and every ``known`` value (what the caller sent: keys, header and
      query values), are masked as ``[REDACTED]``. A body with NUL bytes in its first 512
      bytes is binary and shown only by its size (unless its charset is UTF-16 or UTF-32).
      An empty body gives ``""``.
    """
    if not body:
        return ""
    # Matched after whitespace collapses, so collapse the known values the same way.
    known = tuple(_collapse(value) for value in known)
    if isinstance(body, str):
        html = _markup_kind(content_type, body[:_SNIFF].encode("utf-8", "replace"))
        head_window, tail_window = _windows(html)
        total, unit = len(body), "characters"
        if total <= head_window + tail_window:
            head_raw = tail_raw = body
        else:
            head_raw = _drop_last_word(body[:head_window], html)
            tail_raw = _drop_first_word(body[-tail_window:], html)
    else:
        start = body[:_SNIFF]
        charset = _charset(content_type)
        wide = charset.lower().replace("-", "").replace("_", "").startswith(("utf16", "utf32"))
        if not wide and _is_binary(start):  # UTF-16 and UTF-32 text is full of NUL bytes
            return f"<{len(body)} bytes of binary data>"
        html = _markup_kind(content_type, start)
        head_window, tail_window = _windows(html)
        total, unit = len(body), "bytes"
        if total <= head_window + tail_window:
            head_raw = tail_raw = _decode(body, charset)
        else:
            head_raw = _drop_last_word(_decode(body[:head_window], charset), html)
            tail_raw = _drop_first_word(_decode(body[-tail_window:], charset), html)
    whole = head_raw is tail_raw
    head = _clean_prefix(head_raw, html, EXCERPT_LIMIT + 1)
    if whole and len(head) <= EXCERPT_LIMIT:
        shown = redact(head, known).strip()
        if len(shown) <= EXCERPT_LIMIT:
            return shown
        head = tail = shown
    else:
        tail = _clean_suffix(tail_raw, html, EXCERPT_TAIL + _LOOKAHEAD)
    return _cut(head, tail, total, unit, known)


def _windows(html: str) -> tuple[int, int]:
    return (_HTML_HEAD_WINDOW, _HTML_TAIL_WINDOW) if html else (_TEXT_WINDOW, _TEXT_WINDOW)


def _clean(text: str, html: str) -> str:
    return _collapse(_visible_text(text, html) if html else text)


def _clean_prefix(raw: str, html: str, need: int) -> str:
    """Clean the start of ``raw``, growing the piece until ``need`` characters come out (or
    all of it was cleaned): a 4 KiB window rarely needs more than its first kilobyte."""
    if html:  # a page is parsed once, from its start: a cut could fall in a hidden element
        return _collapse(_visible_text(raw, html, need))
    size = 2 * need
    while True:
        text = _clean(raw[:size], html)
        if len(text) >= need or size >= len(raw):
            return text
        size *= 4


def _clean_suffix(raw: str, html: str, need: int) -> str:
    if html:
        # The end of a long page is its footer and closing tags, and a parser reading from
        # the middle of a page cannot tell which element it is in: a cut page shows its head.
        return ""
    size = 2 * need
    while True:
        text = _clean(raw[-size:], html)
        if len(text) >= need or size >= len(raw):
            return text
        size *= 4


def _drop_last_word(text: str, html: str) -> str:
    """Cut a window's end back to a boundary the body really has (a tag, or whitespace)."""
    mark = text.rfind("<") if html else _last_space(text)
    return text[:mark] if mark > 0 else text


def _drop_first_word(text: str, html: str) -> str:
    """Cut a window's start forward past the word it split. With no space near the start,
    the run of credential characters there is left out whatever its length: it may be the end
    of a long token whose recognisable start lies before the window."""
    if html:
        mark = text.find(">")
        return text[mark + 1 :] if mark >= 0 else text
    match = re.search(r"\s", text[:_LOOKAHEAD])
    return text[match.end() :] if match else text[_fragment_end(text) :]


def _last_space(text: str) -> int:
    tail = text[-_LOOKAHEAD:]
    for index in range(len(tail) - 1, -1, -1):
        if tail[index].isspace():
            return len(text) - len(tail) + index
    return -1


def _cut(head: str, tail: str, total: int, unit: str, known: tuple[str, ...]) -> str:
    """Mask, then bound: head and tail of the cleaned text with how much lies between them.

    Masking runs on a little more than is kept, so a secret straddling the cut is seen whole;
    a known value split by the cut is masked for the part kept, and the word the tail's cut
    split is left out (see ``redact_piece``).
    """
    start = redact_piece(head[: EXCERPT_HEAD + _LOOKAHEAD], known, cut_end=True).strip()
    if len(start) > EXCERPT_HEAD:  # end on a whole word when one ends near the cut
        space = start.rfind(" ", EXCERPT_HEAD - _WORD_SLACK, EXCERPT_HEAD + 1)
        start = start[: space if space > 0 else EXCERPT_HEAD].rstrip()
    end = redact_piece(tail[-(EXCERPT_TAIL + _LOOKAHEAD) :], known, cut_start=True).strip()
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
    piece = path[: ENDPOINT_LIMIT + _LOOKAHEAD]
    path = _collapse(redact_piece(piece, tuple(known), cut_end=len(piece) < len(path)))
    if len(path) > ENDPOINT_LIMIT:
        path = path[: ENDPOINT_LIMIT - 3] + "..."
    return path or "/"
