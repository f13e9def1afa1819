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
import itertools
import math
import re
from collections.abc import Iterable, Iterator
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
# the HTML5 doctype. No comment, no self-closing tag, no bare attribute. A value holds no "<"
# or ">", so a plain tag ends at the first ">" after its "<": the reader finds each piece with
# two C-speed searches (the regex engine spent some 10 ns on each character of a text) and
# checks a tag it has not seen before against this pattern.
_PLAIN_TAG = re.compile(
    r"<[a-zA-Z][a-zA-Z0-9]*(?: [a-zA-Z][a-zA-Z0-9_-]*=(?:\"[^\"<>&]*\"|'[^'<>&]*'))*>"
    r"|</[a-zA-Z][a-zA-Z0-9]*>"
    r"|(?i:<!doctype html>)"
)
_PLAIN_ATTRIBUTE = re.compile(r" ([a-zA-Z][a-zA-Z0-9_-]*)=(?:\"([^\"]*)\"|'([^']*)')")
# Elements whose content html.parser reads as text, in one Python version or another (title
# and textarea since 3.14, xmp, iframe, noembed, noframes since 3.13.4 or so): with only text
# inside, title, script and style read alike in all of them; the others are left to it.
_RAW_TEXT = frozenset({"title", "script", "style"})
_PARSER_ONLY = frozenset(
    {"textarea", "xmp", "iframe", "noembed", "noframes", "noscript", "plaintext"}
)


class _PlainPage:
    """What :func:`_read_plain` read: the state a :class:`_PageReader` has after reading the
    same markup (without building an html.parser for it)."""

    __slots__ = ("_hidden", "_in_title", "_open", "lines", "seen", "tags", "title")

    def __init__(self, title: list[str], lines: list[str], open_: list[tuple[str, bool]],
                 counts: tuple[int, int, int, bool]) -> None:  # fmt: skip
        self.title, self.lines, self._open = title, lines, open_
        self.tags, self.seen, self._hidden, self._in_title = counts


# What a tag, as written, does to the reading (see _tag_facts): a page repeats its tags, and
# working one out costs a microsecond or more (its attributes are read).
_START, _END, _OTHER = 0, 1, 2
_TagFacts = tuple[int, str, bool, bool, tuple[str, bool], str, int]
_FACTS: dict[str, _TagFacts] = {}
_FACTS_KEPT = 1024
# Markup that is no plain tag, and the end of the markup: a piece of text alone.
_NO_TAG: _TagFacts = (_OTHER, "", False, False, ("", False), "", 0)


def _tag_facts(body: str) -> _TagFacts:
    """What the tag whose markup between "<" and ">" is ``body`` does to the reading:
    ``(kind, name, is a block, is void, (name, hides its content), the raw-text element it
    opens or "", its width)``, the name in lower case. The doctype, and a start tag only
    html.parser reads, are ``_OTHER`` (the name of the latter is kept); markup
    :data:`_PLAIN_TAG` does not match is :data:`_NO_TAG`, whose width is 0."""
    facts = _FACTS.get(body)
    if facts is not None:
        return facts
    width = len(body) + 2
    name = ""
    if not _PLAIN_TAG.fullmatch(f"<{body}>"):
        facts = _NO_TAG
    elif body[0] == "!":
        facts = (_OTHER, "", False, False, ("", False), "", width)
    elif body[0] == "/":
        name = body[1:].lower()
        facts = (_END, name, name in _BLOCKS, False, (name, False), "", width)
    else:
        name, _, attributes = body.partition(" ")
        name = name.lower()
        if name in _PARSER_ONLY:
            facts = (_OTHER, name, False, False, (name, False), "", width)
        else:
            attrs = (
                (key.lower(), double or single)
                for key, double, single in _PLAIN_ATTRIBUTE.findall(" " + attributes)
            )
            void = name in _VOID
            hides = not void and _hides_content(name, attrs)
            raw = name if name in _RAW_TEXT else ""
            facts = (_START, name, name in _BLOCKS, void, (name, hides), raw, width)
    if len(_FACTS) >= _FACTS_KEPT:
        _FACTS.clear()
    _FACTS[body] = facts
    return facts


_SPLIT_AHEAD = 64
"""Pieces split off the markup at a time: reading stops after :data:`TAG_BUDGET` tags, most
often far before the end of the window it is handed."""


def _split_lazily(markup: str) -> Iterator[str]:
    """``markup.split("<")``, split :data:`_SPLIT_AHEAD` pieces at a time as they are read:
    splitting a window of 3 kB whole made a string of each of its hundreds of pieces, and
    reading stopped after the first few dozen."""
    return itertools.chain.from_iterable(_split_ahead(markup))


def _split_ahead(markup: str) -> Iterator[list[str]]:
    rest = markup
    while True:
        pieces = rest.split("<", _SPLIT_AHEAD)
        if len(pieces) <= _SPLIT_AHEAD:
            yield pieces
            return
        rest = pieces.pop()  # what follows the last "<" split at: a piece, not yet split
        yield pieces


def _read_plain(markup: str, need: int) -> _PlainPage | None:
    """The page read as :func:`_parsed` reads it, for plain markup (see ``_PLAIN_TAG``), one
    piece (a text and the tag after it) after another, doing what the reader's handlers do
    for the calls html.parser would make, in the same order, with the same checks at the end
    of each :data:`FEED` characters; None for any other markup. This reads an error page in
    a small part of html.parser's time: the handlers' work is done inline on local
    variables, and what a tag does is worked out once a page (a piece costs about a hundred
    bytecodes, nearly all of the reading: each one saved counts).

    The reader's state after each piece is what it is after html.parser read that piece: a
    tag is handed over once complete, text up to the end of the piece (html.parser holds back
    the text of a title, script or style element until its end tag, which changes nothing the
    reader counts; and a reading that ends inside one is left to html.parser).
    """
    if "&" in markup:  # an entity (pages often have one): known at once
        return None
    title: list[str] = []
    lines: list[str] = []  # the lines before the one being read, which is ``line``
    open_: list[tuple[str, bool]] = []
    line = ""
    tags = seen = hidden = 0
    in_title = False
    enough_seen = _text_enough(need)
    fed, inside = FEED, ""  # inside: the raw-text element open, if any
    # The markup split at each "<": a text, then each tag with the text after it (one C
    # call for a few dozen pieces, see _split_lazily; a search for each "<" and ">" cost more
    # than the rest of a piece's work). The last piece, the text after the last tag, is read
    # after the loop.
    segments = _split_lazily(markup)
    text = next(segments)
    pos = 0
    for segment in segments:
        body, closed, after = segment.partition(">")
        facts = _FACTS.get(body) if closed else _NO_TAG
        if facts is None:
            facts = _tag_facts(body)
        kind, name, block, void, entry, raw, width = facts
        end = pos + len(text) + width
        if end > fed:
            text_end = end - width
            while end > fed:  # html.parser stopped at ``fed`` with this piece incomplete
                cut = min(fed, text_end)
                if pos < cut:
                    data = markup[pos:cut]
                    if in_title:
                        title.append(data)
                    elif not hidden:
                        line += data
                        seen += len(data)
                    pos = cut
                if tags >= TAG_BUDGET or seen >= enough_seen:  # read enough
                    if inside:
                        return None
                    return _PlainPage(title, [*lines, line], open_, (tags, seen, hidden, in_title))
                fed += FEED
            text = markup[pos:text_end]  # what the loop left of it
        if not width:  # markup this reader refuses
            return None
        if text:
            if in_title:
                title.append(text)
            elif not hidden:
                line += text
                seen += len(text)
        pos, text = end, after
        if kind == _START:
            if inside:
                return None
            tags += 1
            if name == "title":
                in_title = True
            if block:
                lines.append(line)
                line = ""
            if not void:
                open_.append(entry)
                hidden += entry[1]
            inside = raw
        elif kind == _END:
            if inside and name != inside:
                return None
            if name == "title":
                in_title = False
            if block:
                lines.append(line)
                line = ""
            # Close back to the matching tag, as a browser does with unclosed ones; a stray
            # closing tag closes nothing.
            if open_ and open_[-1][0] == name:
                hidden -= open_.pop()[1]
            else:
                for index in range(len(open_) - 1, -1, -1):
                    if open_[index][0] == name:
                        hidden -= sum(hides for _, hides in open_[index:])
                        del open_[index:]
                        break
            inside = ""
        elif name or inside:  # a start tag only html.parser reads, or the doctype in a raw text
            return None
    # The last piece: the text after the last tag, to the end of the markup.
    end = pos + len(text)
    while end > fed:
        if pos < fed:
            data = markup[pos:fed]
            if in_title:
                title.append(data)
            elif not hidden:
                line += data
                seen += len(data)
            pos = fed
        if tags >= TAG_BUDGET or seen >= enough_seen:
            return None if inside else _PlainPage(title, [*lines, line], open_,
                                                  (tags, seen, hidden, in_title))  # fmt: skip
        fed += FEED
    if pos < end:
        data = markup[pos:end]
        if in_title:
            title.append(data)
        elif not hidden:
            line += data
            seen += len(data)
    return (
        None if inside else _PlainPage(title, [*lines, line], open_, (tags, seen, hidden, in_title))
    )


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
