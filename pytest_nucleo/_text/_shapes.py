"""The message of a JSON error body, and the fields it says are at fault, read by its shape.

Services put what went wrong in a few common shapes: a top-level ``message`` or ``detail``; an
``error`` object (Google's ``{"error": {"message", "status", "details"}}``, Stripe's ``{"error":
{"message", "param"}}``); ``errors`` as a string (Shopify), a list of strings or of objects
(GitHub, SendGrid, JSON:API, GraphQL, RFC 9457's validation example), or a map from field to
messages (Shopify, Rails, Laravel, Atlassian's ``errors`` beside its ``errorMessages``); RFC 7807's
``invalid-params``; Google's ``BadRequest`` field violations; FastAPI's ``detail`` list. A regex
over the text finds one message key; reading the document finds the field at fault too, which is
often the one thing a model must change ("title" in GitHub's "Validation Failed").

Only an excerpt that holds a whole document is read: a cut one (``[... N of M bytes not shown
...]``) is not JSON, and its caller reads it with a regex. Reading is bounded (the first few
items of a list, a fixed depth) and total: any JSON value, however odd, gives an answer.
"""

from __future__ import annotations

import html
import itertools
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ._markup import page_text
from ._render import _collapse
from ._secrets import MASK, redact

MESSAGE_KEYS = (
    "message", "error_description", "detail", "error_message", "errorMessage", "description",
    "reason", "title", "msg", "error",
)  # fmt: skip
"""Keys whose string value is a service's own message, most telling first."""

PY_STRUCTURE = re.compile(r"\{\s*'[^'\\\n]{1,80}'\s*:")
"""The start of a Python dict's repr (``{'error': ...``): a structure printed by a program,
never JSON (which quotes with ``"``), so a model text never quotes one whole."""

FIELD_LIMIT = 60
"""Characters kept of a field name; a longer one is cut and ends with ``...``."""

FIELDS_KEPT = 8
"""Field names kept at most."""

CUT_MARK = re.compile(r"\[\.\.\. \d+ of \d+ (?:bytes|characters) not shown \.\.\.\]")
"""The mark ``body_excerpt`` puts where it cut a body. It starts with its literal ``[... ``,
which the regex engine looks for at C speed."""

# Items read of a list (of errors, of messages), keys of a field map: an error body says what
# matters first, and the reading must not grow with the body.
_ITEMS_READ = 5
# Excerpts are at most a kilobyte; a caller's own text may be longer, and is not parsed past this.
_PARSE_LIMIT = 4096
# Depth of field maps read ({"errors": {"address": {"city": [...]}}}; Discord nests a list's
# index and the field in it: {"errors": {"activities": {"0": {"platform": {"_errors": ...}}}}}).
_MAP_DEPTH = 4
# Errors kept for the message: more than a model reads in one sentence.
_ITEMS_KEPT = 10

# The headline of an object: its message keys but "error", which is often a code
# ("invalid_grant") beside its description, or an object of its own.
_HEADLINE_KEYS = tuple(key for key in MESSAGE_KEYS if key != "error")
# The message of one error among several: JSON:API's "detail" says more than its "title".
_ITEM_KEYS = (
    "message", "detail", "msg", "description", "reason", "title", "error_description",
    "error_message", "errorMessage", "error",
)  # fmt: skip
_CODE_KEYS = ("code", "errorCode", "error_code")
_FIELD_KEYS = ("field", "param", "parameter", "pointer", "property")
# Lists of errors, under these keys: GitHub's and JSON:API's "errors", FastAPI's "detail",
# Google's and others' "details", RFC 7807's "invalid-params".
_LIST_KEYS = ("errors", "detail", "details", "invalid-params", "invalid_params")
# The first step of a FastAPI "loc": where the value was, not which field.
_LOCATIONS = frozenset({"body", "query", "path", "header", "cookie"})
# Keys of a field map that name no field: Rails' errors of the record as a whole, Discord's list
# of the errors of the field it is under.
_NOT_A_FIELD = frozenset({"base", "_errors", ""})
# HTML in a message: a tag a page uses, or an entity. Words in angle brackets that are not
# tags ("<e2-medium>", "<value>") stay as they are.
_TAG = (
    r"</?(?:a|abbr|b|blockquote|body|br|center|code|div|em|font|h[1-6]|head|hr|html|i|img|kbd"
    r"|li|ol|p|pre|small|span|strong|style|script|sub|sup|table|td|th|title|tr|tt|u|ul)\b[^<>]*>"
)
_MARKUP = re.compile(
    _TAG + r"|&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z][a-zA-Z0-9]{1,31});", re.I
)
_TAGS = re.compile(_TAG, re.I)
_ENDS_SENTENCE = (".", "!", "?", ":", ";")


@dataclass(frozen=True, slots=True)
class ErrorShape:
    """What a JSON error body says: its ``message`` (None when it has none of the shapes read
    here) and the ``fields`` it says are at fault."""

    message: str | None = None
    fields: tuple[str, ...] = ()


def is_cut(excerpt: str) -> bool:
    """Whether ``excerpt`` is a cut body: a head and a tail with what lies between left out."""
    return CUT_MARK.search(excerpt) is not None


def parse_document(text: str) -> dict[str, object] | list[object] | None:
    """The JSON object or array ``text`` is, or None: not JSON, another JSON value, too long or
    too deeply nested to parse. ``text`` must be a whole body, not a cut excerpt."""
    text = text.strip()
    if not text or text[0] not in "{[" or len(text) > _PARSE_LIMIT:
        return None
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return document if isinstance(document, dict | list) else None


def read_body(text: str) -> ErrorShape:
    """The message and fields at fault of the whole JSON body ``text`` (see :func:`read`); no
    message and no field for a body that is not a JSON object or array.

    A JSON escape can spell a secret the masking of the raw text did not see (``sk\\u002d...``
    or ``\\/`` in a key): when ``text`` has one, the document is masked again once decoded,
    as the excerpt was, before anything in it is read.
    """
    document = parse_document(text)
    if document is not None and "\\" in text:
        document = _masked_again(document)
    return ErrorShape() if document is None else read(document)


def _masked_again(
    document: dict[str, object] | list[object],
) -> dict[str, object] | list[object] | None:
    """``document`` with its decoded strings masked; None when that cannot be done."""
    try:
        decoded = json.dumps(document, ensure_ascii=False)
        again = json.loads(redact(decoded))
    except (ValueError, RecursionError):
        return None
    return again if isinstance(again, dict | list) else None


def error_fields(excerpt: str) -> tuple[str, ...]:
    """The names of the fields or parameters a body says are at fault, in the order it names
    them, each once, each at most :data:`FIELD_LIMIT` characters and free of control
    characters; at most :data:`FIELDS_KEPT` of them. Empty when the body names none, is not a
    JSON object or array, or was cut (``excerpt`` is a ``body_excerpt``). Never raises."""
    if is_cut(excerpt):
        return ()
    # Stripped as quote_of strips it: quote marks around a whole answer are not the body's.
    return read_body(excerpt.strip().strip("\"'").strip()).fields


def best_message(document: object) -> str | None:
    """The message of a parsed JSON error body, on one line, its parts joined ("Validation
    Failed: title (missing_field)"); None when the body has none of the shapes read here, for
    the caller to look for a message key anywhere in its text. Never raises."""
    return read(document).message


def read(document: object) -> ErrorShape:
    """The message (see :func:`best_message`) and the fields at fault (see
    :func:`error_fields`) of a parsed JSON error body. Never raises."""
    reading = _Reading()
    if isinstance(document, dict):
        reading.read_object(document, nested=False)
    elif isinstance(document, list):
        reading.read_list(document)
    return ErrorShape(reading.message(), reading.kept_fields())


def plain_words(text: str) -> str:
    """``text`` with any HTML in it reduced to its words (``<a href="...">quota</a>`` to
    ``quota``, ``&amp;`` to ``&``), on one line."""
    if ("<" in text or "&" in text) and _MARKUP.search(text):
        # The page reader leaves out what a page hides (scripts) or what reads as its
        # boilerplate ("Error code 1020"): with nothing left, the tags alone go.
        text = page_text(text) or html.unescape(_TAGS.sub(" ", text))
    if text.isprintable():  # no control, format or space character but the ASCII space
        return " ".join(text.split()) if "  " in text else text.strip()
    return _collapse(text)


def has_markup(text: str) -> bool:
    """Whether ``text`` holds an HTML tag or entity."""
    return ("<" in text or "&" in text) and _MARKUP.search(text) is not None


class _Reading:
    """What is read of a document so far: its headline, its items (one per error), the fields
    at fault, and whether an error shape was seen that gave neither (an ``error`` object)."""

    __slots__ = ("fields", "headline", "items", "shaped")

    def __init__(self) -> None:
        self.headline = ""
        self.items: list[str] = []
        self.fields: list[str] = []
        self.shaped = False

    def read_object(self, obj: dict[str, object], *, nested: bool) -> None:
        """An error document or an ``error`` object: its own message, the errors it lists."""
        headline = _first_words(obj, _HEADLINE_KEYS)
        error = obj.get("error")
        if isinstance(error, dict) and not nested:  # Google, Stripe: the error is an object
            self.shaped = True
            inner = _Reading()
            inner.read_object(error, nested=True)
            headline = headline or inner.headline
            self.items += inner.items
            self.fields += inner.fields
        errors = obj.get("errors")
        if isinstance(errors, str):  # Shopify: {"errors": "Exceeded 2 calls per second..."}
            self.shaped = True
            words = _words(errors)
            if headline:
                self._add_item(words)
            else:
                headline = words
        elif isinstance(errors, dict):
            if _looks_like_one_error(errors):
                self._add_item(self._error_item(errors))
            else:
                self.read_map(errors, (), 0)
        for key in _LIST_KEYS:
            value = obj.get(key)
            if isinstance(value, list):
                self.read_list(value, names_are_fields=key.startswith("invalid"))
        messages = obj.get("errorMessages")  # Atlassian: general messages beside "errors"
        if isinstance(messages, list):
            said = [words for words in map(_words, messages[:_ITEMS_READ]) if words]
            self.shaped = self.shaped or bool(said)
            if said and not headline:
                headline, said = said[0], said[1:]
            for words in said:
                self._add_item(words)
        own = _fields_of(obj, names_are_fields=False)
        if own:  # Stripe's "param", or a single error object's "field"
            self.shaped = True
            self.fields += own
            headline = _phrase(own, headline, _first_words(obj, _CODE_KEYS))
        if not headline and self.items and isinstance(error, str):
            headline = _words(error)  # {"error": "Bad Request", "errors": [...]}
        self.headline = self.headline or headline

    def read_list(
        self, items: list[object], *, names_are_fields: bool = False, typed: bool = True
    ) -> None:
        """A list of errors: strings, or objects each with a message, a field, a code; with
        ``typed``, Google's typed details too."""
        for item in items[:_ITEMS_READ]:
            if isinstance(item, str):
                self._add_item(_words(item))
            elif isinstance(item, dict):
                if "@type" in item:  # Google's typed details: only BadRequest names fields
                    violations = item.get("fieldViolations")
                    if typed and isinstance(violations, list):
                        self.read_list(violations, typed=False)
                    continue
                self._add_item(self._error_item(item, names_are_fields=names_are_fields))

    def read_map(self, mapping: dict[str, object], steps: tuple[str, ...], depth: int) -> None:
        """A map from field to its messages: ``{"title": ["can't be blank"]}``, maybe nested
        (``steps`` is the path to ``mapping``)."""
        for key, value in itertools.islice(mapping.items(), _ITEMS_READ):
            path = steps if key in _NOT_A_FIELD else (*steps, key)
            if isinstance(value, dict):
                if depth + 1 < _MAP_DEPTH:
                    self.read_map(value, path, depth + 1)
                continue
            if isinstance(value, str):
                said = _words(value)
            elif isinstance(value, list):
                said = ", ".join(
                    words
                    for words in (
                        _words(v) if isinstance(v, str) else _first_words(v, _ITEM_KEYS)
                        for v in value[:_ITEMS_READ]
                        if isinstance(v, str | dict)
                    )
                    if words
                )
            else:
                continue
            fields = _clean_fields([_joined_path(path)])
            self.fields += fields
            self._add_item(_phrase(fields, said, ""))

    def _error_item(self, item: dict[str, object], *, names_are_fields: bool = False) -> str:
        fields = _fields_of(item, names_are_fields=names_are_fields)
        self.fields += fields
        message = _first_words(item, _ITEM_KEYS)
        return _phrase(fields, message, "" if message else _first_words(item, _CODE_KEYS))

    def _add_item(self, words: str) -> None:
        if words and len(self.items) < _ITEMS_KEPT:
            self.items.append(words)

    def message(self) -> str | None:
        """The headline and the items, one line; None when no shape was seen (an empty list of
        errors is none) or nothing in it has words."""
        if not (self.shaped or self.items or self.fields):
            return None
        headline = self.headline
        seen = headline.casefold()
        items: list[str] = []
        for item in dict.fromkeys(self.items):  # each once, in order
            folded = item.casefold().rstrip(".!? ")
            if folded and folded not in seen:  # Google repeats its message in "errors"
                items.append(item)
                seen += " " + folded
        # "a; b; c.": a period before a semicolon reads as a stray mark.
        listed = "; ".join([item.rstrip(".") for item in items[:-1]] + items[-1:])
        if not headline:
            text = listed
        elif items:
            text = (
                f"{headline} {listed}"
                if headline.endswith(_ENDS_SENTENCE)
                else _joined(headline, listed, ". ")
            )
        else:
            text = headline
        return text if _has_words(text) else None

    def kept_fields(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.fields))[:FIELDS_KEPT]


def _words(value: object) -> str:
    """A string value as words to quote: markup reduced, one line; "" for anything else, or a
    string with no words (a masked value, a number)."""
    if not isinstance(value, str):
        return ""
    words = plain_words(value)
    return words if _has_words(words) else ""


def _has_words(text: str) -> bool:
    return any(c.isalpha() for c in text.replace(MASK, ""))


def _first_words(obj: object, keys: Iterable[str]) -> str:
    """The words of the first of ``keys`` whose value in ``obj`` has some."""
    if not isinstance(obj, dict):
        return ""
    for key in keys:
        value = obj.get(key)
        if isinstance(value, str):  # most keys are absent: no call for them
            words = _words(value)
            if words:
                return words
    return ""


def _looks_like_one_error(mapping: dict[str, object]) -> bool:
    """Whether an ``errors`` object is one error ({"message": ..., "code": ...}) rather than a
    map from field to messages."""
    return isinstance(mapping.get("message"), str) or isinstance(mapping.get("detail"), str)


def _fields_of(item: dict[str, object], *, names_are_fields: bool) -> list[str]:
    """The fields an error object names: its ``field``, ``param`` or ``pointer``, JSON:API's
    ``source``, FastAPI's ``loc``, Salesforce's ``fields``, the ``location`` of a Google
    parameter error, RFC 7807's ``name`` (in ``invalid-params`` only)."""
    found: list[object] = [item.get(key) for key in _FIELD_KEYS]
    source = item.get("source")
    if isinstance(source, dict):
        found += [source.get("pointer"), source.get("parameter")]
    if names_are_fields:
        found.append(item.get("name"))
    if item.get("locationType") == "parameter":
        found.append(item.get("location"))
    loc = item.get("loc")
    if isinstance(loc, list):
        found.append(_path_of(loc))
    many = item.get("fields")
    if isinstance(many, list):
        found += many[:_ITEMS_READ]
    # Only the strings: most of these keys are absent, and an empty name is left out anyway.
    return _clean_fields([_pointer_field(f) for f in found if isinstance(f, str) and f])


def _pointer_field(value: str) -> str:
    """A JSON pointer as a field name: ``/data/attributes/firstName`` -> ``firstName``,
    ``#/profile/color`` -> ``profile.color``; ``/data`` (the whole resource) -> ``""``. Any
    other value is returned as it is."""
    if not value.startswith(("/", "#/")):
        return value
    steps = [s.replace("~1", "/").replace("~0", "~") for s in value.lstrip("#").split("/")[1:]]
    if steps[:1] == ["data"]:  # JSON:API: the resource, its index in a list, its members
        steps = steps[1:]
        if steps[:1] and steps[0].isdigit():
            steps = steps[1:]
        if steps[:1] in (["attributes"], ["relationships"]):
            steps = steps[1:]
    return _path_of(steps)


def _path_of(steps: Sequence[object]) -> str:
    """``["body", "items", 0, "qty"]`` -> ``items[0].qty``."""
    if len(steps) > 1 and isinstance(steps[0], str) and steps[0] in _LOCATIONS:
        steps = steps[1:]
    return _joined_path(steps)


def _joined_path(steps: Sequence[object]) -> str:
    """``["items", 0, "qty"]`` or ``["items", "0", "qty"]`` -> ``items[0].qty``: its first
    few steps."""
    path = ""
    for step in steps[: _MAP_DEPTH + 1]:
        if isinstance(step, bool):
            continue
        if isinstance(step, int) or (isinstance(step, str) and step.isdigit()):
            path += f"[{step}]"
        elif isinstance(step, str):
            path += f".{step}" if path else step
    return path


def _clean_fields(names: Iterable[str]) -> list[str]:
    """Field names fit to show: one line, no control characters, bounded; none masked."""
    kept = []
    for name in names:
        if not name:
            continue
        name = _collapse(name)
        if not name or MASK in name or name in _NOT_A_FIELD:
            continue
        kept.append(name if len(name) <= FIELD_LIMIT else name[: FIELD_LIMIT - 3] + "...")
    return kept


def _phrase(fields: list[str], message: str, code: str) -> str:
    """One error in words: ``"title: can't be blank"``, ``"title (missing_field)"``, the
    message or the code alone when no field is named. The field is named even when the message
    seems to name it: "from" in SendGrid's "The from address ..." is a word, not the field
    ``from.email``."""
    field = ", ".join(fields)
    if field and _names_a_secret(field):
        # A one-word message or a code with digits under a credential's name may be the value
        # itself, echoed: "password": ["hunter2hunter2"]. A sentence or a plain code is not.
        if message and len(message.split()) == 1:
            message = MASK
        if code and not code.replace("_", "").isalpha():
            code = MASK
    if message:
        return _joined(field, message) if field else message
    if field:
        return f"{field} ({code})" if code else field
    return code


def _names_a_secret(left: str) -> bool:
    """Whether the masking reads the last word of ``left`` as a credential's name."""
    words = left.rsplit(None, 1)
    probe = f"{words[-1] if words else left}: x"
    return redact(probe) != probe


def _joined(left: str, right: str, instead: str = " - ") -> str:
    """``"left: right"``; ``left``, ``instead`` and ``right`` when the masking would read the
    last word of ``left`` as a credential's name and ``right`` as its value: ``"password: The
    password provided is ..."`` would lose its message to a mask, and reads as a leaked secret."""
    return f"{left}{instead}{right}" if _names_a_secret(left) else f"{left}: {right}"
