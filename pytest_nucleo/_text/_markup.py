"""The words of an HTML or XML error body, read with a real parser.

A server's error page is mostly markup and boilerplate: attributes, scripts, styles,
navigation, Cloudflare's status boxes and footer, nginx's signature. :func:`page_text` keeps
what a reader of the page is told (the title, the headings, the message) and leaves the rest
out; :func:`xml_text` keeps the code and message of an XML error (AWS's ``<Error>``) without its
request ids and signing details.

Both use the standard library's parsers rather than regexes: a regex over markup lets
attribute fragments through (``Error b">Service down``) and cannot tell a comment, a CDATA
section or a script from text. They only ever see the bounded windows of a body that
``body_excerpt`` decodes, so their cost does not grow with the body. The XML parser refuses
every entity declaration, so an entity bomb stops at its first line instead of expanding.
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
from collections.abc import Iterable
from html.parser import HTMLParser
from xml.parsers import expat

from ._secrets import fold

# Elements whose content a reader is not told: code, styling, metadata, navigation, controls.
# A form is read: a sign-in page puts its message inside one.
_HIDDEN = frozenset(
    {"script", "style", "template", "noscript", "svg", "head", "nav", "footer", "aside",
     "button", "select", "iframe", "object", "canvas", "math"}
)  # fmt: skip
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
     "track", "wbr"}
)  # fmt: skip
# Elements that end a line of text: what they hold is read as its own statement.
_BLOCKS = frozenset(
    {"p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "li", "tr", "td", "th", "br", "hr",
     "center", "section", "header", "main", "article", "table", "pre", "blockquote", "dd",
     "dt", "title", "body"}
)  # fmt: skip
# A class or id naming page furniture: navigation, footers, cookie banners, and Cloudflare's
# browser / Cloudflare / host status boxes.
_FURNITURE = re.compile(
    r"(?:^|[\s_-])(?:nav|navbar|menu|footer|breadcrumbs?|cookies?|banner|sidebar|skip)"
    r"(?:$|[\s_-])|\bcf-[a-z]+-status\b|\bcf-footer|\bcode-label\b",
    re.I,
)
# Lines that are a server's signature or instructions meant for a person visiting the page:
# whole lines, matched from the start; and phrases anywhere in a line, looked for only when
# their words are there (a regex search costs some 80 ns a character, and an error page may
# hold a stack trace of kilobytes on one line).
_BOILERPLATE_LINE = re.compile(
    r"(?:nginx|apache|openresty|cloudflare|microsoft-iis|envoy|caddy)(?:/[\w.]+)?(?: \(\w+\))?$"
    r"|error code \d+$|visit \S+ for more information\.?$"
    r"|performance (?:&|and) security by\b|what happened\??$",
    re.I,
)
_BOILERPLATE_PHRASE = re.compile(
    r"\bray id\b|\b(?:owner|visitor) of this website\b|\bapplication owner\b", re.I
)
_BOILERPLATE_HINTS = ("ray id", "of this website", "application owner")
"""Words without which no _BOILERPLATE_PHRASE can match, in the case-folded line."""


def _is_boilerplate(line: str) -> bool:
    if _BOILERPLATE_LINE.match(line):
        return True
    folded = fold(line)  # folds as the case-insensitive regex matches
    return any(hint in folded for hint in _BOILERPLATE_HINTS) and bool(
        _BOILERPLATE_PHRASE.search(line)
    )


# A heading after which a page only tells a person what to do.
_STOP = re.compile(r"^what can i do\??$", re.I)


def _hides_content(tag: str, attrs: Iterable[tuple[str, str | None]]) -> bool:
    """Whether an element hides what it holds: a hidden kind, or page furniture by its class
    or id. ``attrs`` as html.parser gives them: names in lower case."""
    return tag in _HIDDEN or any(
        name in ("class", "id") and value and _FURNITURE.search(value) for name, value in attrs
    )


class _PageReader(HTMLParser):
    """Collects the title and the lines of visible text, outside hidden elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title: list[str] = []
        self.lines: list[str] = [""]
        self._open: list[tuple[str, bool]] = []  # (tag, hides its content)
        self._hidden = 0
        self._in_title = False
        self.tags = 0
        """Tags read so far."""
        self.seen = 0
        """Characters of visible text read so far (before duplicates are dropped)."""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags += 1
        if tag == "title":
            self._in_title = True
        if tag in _BLOCKS:
            self.lines.append("")
        if tag in _VOID:
            return
        hides = _hides_content(tag, attrs)
        self._open.append((tag, hides))
        self._hidden += hides

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCKS:
            self.lines.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in _BLOCKS:
            self.lines.append("")
        # Close back to the matching tag, as a browser does with unclosed ones; a stray
        # closing tag closes nothing.
        for index in range(len(self._open) - 1, -1, -1):
            if self._open[index][0] == tag:
                for _, hides in self._open[index:]:
                    self._hidden -= hides
                del self._open[index:]
                return

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)
        elif not self._hidden:
            self.lines[-1] += data
            self.seen += len(data)


FEED = 128
"""Characters of markup handed to the parser at a time; reading stops between two pieces."""

TAG_BUDGET = 40
"""Tags read at most: html.parser costs microseconds a tag, and an error page says what it
has to say in its first tags (a Cloudflare page, among the longest, in its first 32)."""


def _enough(reader: _PageReader, need: int) -> bool:
    return reader.tags >= TAG_BUDGET or reader.seen >= _text_enough(need)


def _text_enough(need: int) -> float:
    """Characters of text after which reading stops (half as many again as needed: some go
    as duplicates); no number of them when nothing in particular is needed."""
    return need + need // 2 if need else math.inf


def _parsed(markup: str, need: int) -> _PageReader:
    """The page read by html.parser, :data:`FEED` characters at a time, until :func:`_enough`."""
    reader = _PageReader()
    # html.parser raises on nothing in practice, but an excerpt never fails.
    with contextlib.suppress(Exception):
        for start in range(0, len(markup), FEED):
            reader.feed(markup[start : start + FEED])
            if _enough(reader, need):
                break
    return reader


# Plain markup, whose reading every supported html.parser agrees on: text without "<" or "&"
# (no entity, no stray bracket), start tags whose attributes all have quoted values, end tags,
# the HTML5 doctype. No comment, no self-closing tag, no bare attribute. Each match is the
# text before a tag (maybe none) and the tag, or the text before the end of the markup. The
# text is taken whole (possessive): giving some back cannot help a tag match, and trying it
# cost a step for each character of a long text before markup this reader refuses.
_PLAIN_PIECE = re.compile(
    r"(?P<text>[^<&]*+)(?:"
    r"<(?P<start>[a-zA-Z][a-zA-Z0-9]*)"
    r"(?P<attributes>(?: [a-zA-Z][a-zA-Z0-9_-]*=(?:\"[^\"<>&]*\"|'[^'<>&]*'))*)>"
    r"|</(?P<end>[a-zA-Z][a-zA-Z0-9]*)>"
    r"|(?i:<!doctype html>)"
    r"|(?P<last>\Z))"
)
_TEXT_RUN = re.compile(r"[^<&]*+")
_PLAIN_ATTRIBUTE = re.compile(r" ([a-zA-Z][a-zA-Z0-9_-]*)=(?:\"([^\"]*)\"|'([^']*)')")
# Elements whose content html.parser reads as text, in one Python version or another (title
# and textarea since 3.14, xmp, iframe, noembed, noframes since 3.13.4 or so): with only text
# inside, title, script and style read alike in all of them; the others are left to it.
_RAW_TEXT = frozenset({"title", "script", "style"})
_PARSER_ONLY = frozenset(
    {"textarea", "xmp", "iframe", "noembed", "noframes", "noscript", "plaintext"}
)


@functools.lru_cache(maxsize=512)
def _plain_tag_hides(tag: str, attributes: str) -> bool:
    """:func:`_hides_content` for a plain start tag's attributes, as written. Cached: a page
    repeats its tags, and reading one's attributes costs a microsecond."""
    attrs = (
        (name.lower(), double or single)
        for name, double, single in _PLAIN_ATTRIBUTE.findall(attributes)
    )
    return _hides_content(tag, attrs)


def _reader_with(
    reader: _PageReader, tags: int, seen: int, hidden: int, in_title: bool
) -> _PageReader:
    """``reader`` holding the counts :func:`_read_plain` kept in local variables."""
    reader.tags, reader.seen, reader._hidden, reader._in_title = tags, seen, hidden, in_title
    return reader


def _read_plain(markup: str, need: int) -> _PageReader | None:
    """The page read as :func:`_parsed` reads it, for plain markup (see ``_PLAIN_PIECE``), by
    one regex match after another doing what the reader's handlers do for the calls
    html.parser would make, in the same order, with the same checks at the end of each
    :data:`FEED` characters; None for any other markup. This reads an error page in about
    a quarter of html.parser's time (60 against 215 us): the handlers' work is done inline,
    on local variables, and a text and the tag after it are one match. (Each match starts
    where the last ended: a search would try again at every character of a long text before
    markup it refuses.)

    The reader's state after each piece is what it is after html.parser read that piece: a
    tag is handed over once complete, text up to the end of the piece (html.parser holds back
    the text of a title, script or style element until its end tag, which changes nothing the
    reader counts; and a reading that ends inside one is left to html.parser).
    """
    if "&" in markup:  # an entity (pages often have one): known at once
        return None
    reader = _PageReader()
    title, lines, open_ = reader.title, reader.lines, reader._open
    tags = seen = hidden = 0
    in_title = False
    enough_seen = _text_enough(need)
    pos, fed, inside = 0, FEED, ""  # inside: the raw-text element open, if any
    while True:
        piece = _PLAIN_PIECE.match(markup, pos)
        if piece is None:  # markup this reader refuses, maybe after a text read up to a stop
            text_end = end = _TEXT_RUN.match(markup, pos).end()  # type: ignore[union-attr]
        else:
            text_end, end = piece.end("text"), piece.end()
        while end > fed:  # html.parser stopped at ``fed`` with this piece incomplete
            cut = min(fed, text_end)
            if pos < cut:
                data = markup[pos:cut]
                if in_title:
                    title.append(data)
                elif not hidden:
                    lines[-1] += data
                    seen += len(data)
                pos = cut
            if tags >= TAG_BUDGET or seen >= enough_seen:  # read enough
                return None if inside else _reader_with(reader, tags, seen, hidden, in_title)
            fed += FEED
        if piece is None:
            return None
        # The same as in the loop above, written out: one loop for both cost a sixth of
        # the whole reading (most pieces cross no boundary).
        if pos < text_end:
            data = markup[pos:text_end]
            if in_title:
                title.append(data)
            elif not hidden:
                lines[-1] += data
                seen += len(data)
        pos = end
        kind = piece.lastgroup
        if kind == "attributes":  # a start tag
            tag = piece.group("start").lower()
            if inside or tag in _PARSER_ONLY:
                return None
            tags += 1
            if tag == "title":
                in_title = True
            if tag in _BLOCKS:
                lines.append("")
            if tag not in _VOID:
                hides = _plain_tag_hides(tag, piece.group("attributes"))
                open_.append((tag, hides))
                hidden += hides
            inside = tag if tag in _RAW_TEXT else ""
        elif kind == "end":
            tag = piece.group("end").lower()
            if inside and tag != inside:
                return None
            if tag == "title":
                in_title = False
            if tag in _BLOCKS:
                lines.append("")
            # Close back to the matching tag, as a browser does with unclosed ones; a stray
            # closing tag closes nothing.
            if open_ and open_[-1][0] == tag:
                hidden -= open_.pop()[1]
            else:
                for index in range(len(open_) - 1, -1, -1):
                    if open_[index][0] == tag:
                        hidden -= sum(hides for _, hides in open_[index:])
                        del open_[index:]
                        break
            inside = ""
        elif kind == "last":
            return None if inside else _reader_with(reader, tags, seen, hidden, in_title)
        elif inside:  # the doctype, inside a raw-text element
            return None


def page_text(markup: str, need: int = 0) -> str:
    """The text an HTML page tells its reader: the title first, then each heading and
    paragraph once, without boilerplate. Reading stops once ``need`` characters of text were
    seen (0: read it all) or :data:`TAG_BUDGET` tags were. Never raises; a page cut mid-tag
    reads up to the cut."""
    reader = _read_plain(markup, need) or _parsed(markup, need)
    title_line = " ".join("".join(reader.title).split())
    kept: list[str] = []
    seen = ""
    read: set[str] = set()
    for line in [title_line, *reader.lines]:
        # A line read before is left out whatever it was (kept: a duplicate; boilerplate or
        # empty: left out again), at the cost of a set lookup: a page repeats its lines.
        if line in read:
            continue
        read.add(line)
        line = " ".join(line.split())
        if not line or _is_boilerplate(line):
            continue
        if _STOP.match(line):
            break
        folded = line.casefold().rstrip(".!?:; ")
        if folded in seen:  # nginx's and Django's pages repeat the title as their heading
            continue
        kept.append(line)
        seen += " " + folded
    title = title_line.casefold()
    if (
        len(kept) > 1
        and title
        and kept[0].casefold() == title
        and kept[1].casefold().startswith(title.rstrip(".!?:; "))
    ):
        del kept[0]  # the page's text starts with its title: read it once
    return _sentences(kept)


def _sentences(lines: list[str]) -> str:
    """Lines joined as statements: a line that does not end a sentence gets a period."""
    return " ".join(
        line if line[-1] in ".!?:;" or line is lines[-1] else f"{line}." for line in lines
    )


# XML elements whose text says what failed, by local name, lower case.
_XML_MESSAGE = frozenset(
    {"code", "message", "reason", "title", "description", "detail", "details", "summary",
     "errormessage", "errorcode", "faultstring", "text"}
)  # fmt: skip
# XML elements that only identify or sign the request: nothing a model can use.
_XML_NOISE = re.compile(
    r"request-?id|host-?id|canonical|stringtosign|signature|accesskey|token|bytes|trace",
    re.I,
)


class _EntityRefused(Exception):
    """An XML body declared an entity: it is read up to there and no further."""


def _refuse_entity(*_: object) -> int:
    raise _EntityRefused


def xml_text(markup: str) -> str:
    """The words of an XML error body: the text of its code and message elements when it has
    any, else all its text; never request ids or signing details. Entity declarations are
    refused (the text read before one is kept), so no entity is ever expanded."""
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.EntityDeclHandler = _refuse_entity
    parser.UnparsedEntityDeclHandler = _refuse_entity
    parser.ExternalEntityRefHandler = _refuse_entity
    path: list[str] = []
    found: list[tuple[str, str]] = []  # (local name, text)

    def start(name: str, attrs: dict[str, str]) -> None:
        path.append(name.rsplit(":", 1)[-1].rsplit("}", 1)[-1].lower())
        found.append((path[-1], ""))

    def end(name: str) -> None:
        if path:
            path.pop()

    def data(text: str) -> None:
        if path and found:
            name, held = found[-1]
            if name == path[-1]:
                found[-1] = (name, held + text)
            else:
                found.append((path[-1], text))

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = data
    # A window cut mid-element, an undefined entity, a refused declaration: keep what came
    # before it.
    with contextlib.suppress(expat.ExpatError, _EntityRefused, ValueError):
        parser.Parse(markup, False)
    texts = [
        (name, " ".join(text.split()))
        for name, text in found
        if text.strip() and not _XML_NOISE.search(name)
    ]
    telling = [text for name, text in texts if name in _XML_MESSAGE]
    return _sentences(list(dict.fromkeys(telling or [text for _, text in texts])))
