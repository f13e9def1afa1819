"""Masking of secret-looking tokens in any text that may reach a model or a log.

Two kinds of masking, both applied by :func:`redact`:

* patterns: credentials recognisable by their shape: the high-confidence rules of the common
  secret scanners (OpenAI, Anthropic, Stripe, GitHub, GitLab, Slack, Twilio, SendGrid, npm,
  PyPI, Hugging Face, Google (API keys, OAuth tokens and client secrets), Azure and AWS keys,
  Shopify, DigitalOcean, Square, Groq, xAI, Mailgun, Atlassian, Linear, Notion, Databricks,
  Postman and Heroku tokens, Stripe webhook secrets, JWTs, PEM private-key blocks, card numbers
  that pass the Luhn check, a lone AWS secret access key), the credential after an
  ``Authorization`` scheme of any name (``Bearer``, ``SSWS``, ``Bot``, ...), ``api_key=...``,
  ``"password": "..."`` and ``"password" => "..."`` pairs (quoted values whole, JSON escaped
  inside a string or HTML-escaped too; a bare value to the end of its field), URL userinfo
  (database URLs included), URL query strings (of a relative URL too), credentials carried in
  a URL path (Telegram bot tokens, Slack and Discord webhooks), and any of these written
  percent-encoded or base64-encoded;
* known values: the exact strings a caller knows it sent (an API key, a header value), masked
  wherever they appear, even when a server echoes them back in an error body, whatever the
  case of their percent-escapes, and in the altered forms servers echo them in (see
  ``ECHO_MIN`` and ``PIECE_MIN`` in :mod:`._echoes`); a ``Basic`` credential also masks the
  password it encodes.

A text is always masked before it is cut (:func:`redact_piece` masks a piece cut out of a
longer text, so that the part of a secret left on one side of the cut is not shown either).

The patterns are deliberately broad: masking a harmless token costs a little readability,
leaking a key costs the key.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from collections.abc import Callable, Iterable
from typing import AnyStr
from urllib.parse import unquote

from ._anchored import (
    found_at,
    hint_starts,
    pair_starts,
    query_starts,
    sub_at,
    token_starts,
    url_starts,
)
from ._echoes import ECHO_MIN as ECHO_MIN
from ._echoes import PIECE_MIN as PIECE_MIN
from ._echoes import _known_forms
from ._known import _ESCAPE, _broken_candidates, _mask_broken, _mask_split_end, _mask_split_start
from ._known import MASK as MASK
from ._known import _mask_value as _mask_value

# Shapes of credentials that must never be shown. Each is anchored so that ordinary words are
# left alone; every one is covered by a test with a real-looking sample.
_TOKEN_PATTERNS = (
    r"\bsk-[A-Za-z0-9_\-]{16,}",  # OpenAI / Anthropic style secret keys
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",  # AWS access key ids
    r"\bgh[pousr]_[A-Za-z0-9]{20,}",  # GitHub tokens
    r"\bgithub_pat_[A-Za-z0-9_]{20,}",
    r"\bgl(?:pat|dt|rt|ptt|cbt|ft|imt|oas|soat|agent)-[A-Za-z0-9_\-]{20,}",  # GitLab tokens
    r"\bx(?:ox[abprse]|app)-[A-Za-z0-9\-]{10,}",  # Slack tokens
    r"\b(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,}",  # Stripe secret and restricted keys
    r"\bSK[0-9a-fA-F]{32}\b",  # Twilio API keys
    r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}",  # SendGrid API keys
    r"\bnpm_[A-Za-z0-9]{36}\b",  # npm access tokens
    r"\bpypi-AgE[A-Za-z0-9_\-]{50,}",  # PyPI upload tokens
    r"\b(?:hf_|api_org_)[A-Za-z0-9]{30,}",  # Hugging Face tokens
    r"\bAIza[0-9A-Za-z_\-]{30,}",  # Google API keys
    r"\beyJ[A-Za-z0-9_\-]{6,}\.[A-Za-z0-9_\-]{6,}\.[A-Za-z0-9_\-]{6,}",  # JWTs
    # Each below after the scanner rule it comes from (gitleaks rule ids unless named otherwise),
    # with the rule's length and alphabet: "key-" and "secret_" alone are ordinary words.
    r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}",  # shopify-access-token, -shared-secret, ...
    r"\bdo[opr]_v1_[a-f0-9]{64}",  # digitalocean-pat, -access-token, -refresh-token
    r"\bsq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}",  # square-access-token, square-secret
    r"\bgsk_[A-Za-z0-9]{48,}",  # groq-api-key
    r"\bxai-[A-Za-z0-9_]{80,}",  # TruffleHog's xAI detector: xai- and 80 characters
    r"\bya29\.[A-Za-z0-9_\-]{22,}",  # CredSweeper's "Google OAuth Access Token"
    r"\bGOCSPX-[A-Za-z0-9_\-]{28,}",  # Nosey Parker's np.google.2, Google OAuth client secret
    r"\bkey-[a-fA-F0-9]{32}\b",  # mailgun-private-api-token (its key-, 32 hex digits)
    r"\bATATT3[A-Za-z0-9_\-=]{150,}",  # atlassian-api-token (its ATATT3 form, 192 long)
    r"\blin_api_[A-Za-z0-9]{40}",  # linear-api-key
    r"\bsecret_[A-Za-z0-9]{43}\b",  # TruffleHog's Notion detector (integration tokens)
    r"\bntn_[0-9]{11}[A-Za-z0-9]{35}",  # notion-api-token (the newer prefix)
    r"\bdapi[a-h0-9]{32}",  # databricks-api-token
    r"\bPMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}",  # postman-api-token
    r"\bHRKU-AA[A-Za-z0-9_\-]{58}",  # heroku-api-key-v2
    # Stripe's webhook signing secrets ("whsec_", then base64 or, from the Stripe CLI, hex).
    r"\bwhsec_[A-Za-z0-9+/=]{24,}",
)
_TOKENS = re.compile("|".join(_TOKEN_PATTERNS))

# Shapes that start with no fixed prefix, kept apart: in the alternation above they made every
# position of a text try every pattern (twenty times slower).
_UNPREFIXED = re.compile(
    r"[A-Za-z0-9_~.](?<![A-Za-z0-9_~.].)[A-Za-z0-9_~.]{2}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}"  # Azure
    r"|[0-9](?<![0-9].)[0-9]{4,15}:A[A-Za-z0-9_\-]{32,}"  # Telegram bot tokens, /bot<token>/ paths
)

# A PEM private-key block, from its BEGIN line to its END line (or to the end of the text, when
# a cut took the END away); and the base64 lines before an END whose BEGIN a cut took away.
_PEM_LABEL = r"-----{}[A-Z0-9 ]{{0,40}}PRIVATE KEY(?: BLOCK)?-----"
_PEM = re.compile(
    rf"{_PEM_LABEL.format('BEGIN')}.*?(?:{_PEM_LABEL.format('END')}|\Z)"
    rf"|(?<![A-Za-z0-9+/=])(?:[A-Za-z0-9+/=]{{16,}}+(?:\s|\\[rn])*+)++{_PEM_LABEL.format('END')}",
    re.S,
)

# Webhook URLs whose path is the credential: keep the host and the kind, mask the rest.
_WEBHOOK = re.compile(
    r"(services(?:\\?/))T[A-Z0-9]{6,}(?:\\?/)B[A-Z0-9]{6,}(?:\\?/)[A-Za-z0-9]{16,}"  # Slack
    r"|(webhooks(?:\\?/))\d{15,}(?:\\?/)[A-Za-z0-9_\-]{30,}"  # Discord
)

# 13 to 19 digits, maybe grouped by spaces or dashes: masked when they pass the Luhn check
# and start as a card scheme's numbers do (see _is_card).
# The first digit comes before the look behind it: a pattern that starts with a character class
# lets the regex engine skip the other characters fast (three times faster than the look first).
_CARD = re.compile(r"[0-9](?<![0-9.\-].)(?:[ \-]?[0-9]){12,18}(?![0-9.]|-[0-9])")

# "Authorization: Bearer abc", "Basic dXNlcjpwYXNz": keep the scheme, mask the credential.
# Besides the common schemes, those of vendors whose credential follows a word of their own:
# Okta's "SSWS", DeepL's "DeepL-Auth-Key" (its keys end in ":fx"), Elasticsearch's "ApiKey".
_AUTH_SCHEME = re.compile(
    r"(?i)\b(bearer|basic|token|digest|ssws|deepl-auth-key|apikey)(\s+)[A-Za-z0-9._~+/=:\-]{6,}"
)

# An Authorization header names a scheme of any name ("Bot" for Discord), then the credential:
# whatever the scheme, keep it and mask what follows it.
_AUTH_HEADER = re.compile(
    r"""(?ix)\b(
      (?:proxy-)?authorization(?:\\*["'])?[ \t]*[:=][ \t]*(?:\\*["'])?[ \t]*
      [a-z][a-z0-9._\-]{0,30}
    )([ \t]+)(?!\[REDACTED\])[^\s"'\\,;<>&]+"""
)

# key=value or "key": "value" pairs whose key names a credential. A quoted value is masked up
# to its closing quote (a passphrase has spaces), also inside an escaped JSON string
# ({\"password\": \"...\"}, escaped once or more); a percent-encoded separator
# (api_key%3D...) counts too.
_PAIR_BODY = r"""
    (?P<key>
      [a-z0-9_\-]*(?:api[_\-]?key|apikey|access[_\-]?token|auth[_\-]?token|refresh[_\-]?token
        |id[_\-]?token|client[_\-]?secret|secret[_\-]?key|secret
        |(?P<phrase>password|passwd|pass[_\-]?phrase)|signature
        |x-amz-signature|x-amz-credential|x-amz-security-token|session[_\-]?token|private[_\-]?key
        |access[_\-]?key|account[_\-]?key)[a-z0-9_\-]*
      |token|sig|authorization|cookie|set-cookie|pwd
    )
    (?P<sep>\s*(?:\\*["']|&(?:quot|\#34|\#x22|apos|\#39);)?\s*(?:=>|=|(?P<colon>:)|%3[ad])\s*
      (?:\\*["']|&(?:quot|\#34|\#x22|apos|\#39);)?\s*)
    (?!\[REDACTED\]|[a-z][a-z0-9._\-]*[ \t]+\[REDACTED\])  # masked, or a scheme kept
    (?:(?<=\\")[^\\"\n]+  # in an escaped JSON string: up to its \" (or \\\")
      |(?<=")(?:[^"\\\n]|\\.)+  # in a JSON string: up to its closing quote
      |(?<=')[^'\n]+
      |(?!\{\s*["}]|\[\s*["{\[\]])  # bare, but not a JSON object or array opening:
        (?:\{[^{}\n"]{1,256}\}  # an ODBC value in braces, which may hold a ";"
          # Else a word; a password's after a ":" (a header, YAML, a sentence) up to the end of
          # the field: words separated by spaces or tabs (a passphrase), but not past a "," ";"
          # quote or bracket, nor past a word ending a sentence, nor into the next key ("user:
          # bob"). A token has no spaces: "Invalid token: signature has expired" keeps its
          # reason. After a "=" a space ends the value, as in a query string, logfmt or a shell.
          |[^\s&"',;<>}\]]++
          (?(colon)(?(phrase)(?:(?<![.!?:])[ \t]++(?![a-z0-9_.\-]+\s*[=:])[^\s&"',;<>}\]]++)*+))
          # and on past a ";" into a piece with no "=" before the next ";" (a connection
          # string's Password=semi;colon; names the next key as Server=...).
          (?:;[^\s&"',;<>}\]=]++(?=;|\Z))*+
        )
    )
"""
# The lookahead first checks, without backtracking, that the word at hand is followed by a
# separator at all: without it, every word of a long text was tried against every key name at
# every length (hundreds of microseconds per kilobyte).
_SECRET_PAIR = re.compile(
    r"(?ix)\b(?=[a-z0-9_\-]++\s*+(?:\\*+[\"']|&(?:quot|\#34|\#x22|apos|\#39);)?+\s*+(?:[=:]|%3[ad]))"
    + _PAIR_BODY
)

# "Invalid API Key provided: abc123": the words before the key name it, not a key=value pair.
# A key the server already showed starred ("sk_test_****1234", Stripe's and OpenAI's way) is
# left as it is.
_KEY_PROVIDED = re.compile(
    r"(?i)\b(api[ \t]key(?:[ \t]provided)?)([ \t]*:[ \t]*)(?!\[REDACTED\]|[^\s\"',;<>]*\*\*\*)"
    r"[^\s\"',;<>]*[^\s\"',;<>.]"
)

# scheme://user:password@host -> scheme://host (database URLs too; a password may hold an "@",
# and in escaped JSON the slashes are "\/").
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*:(?:\\*/){2})[^/\\\s?#\"'<>]+@")

# Query strings carry api_key=..., token=..., X-Amz-Signature=...: drop the whole query, the
# path alone says which endpoint failed.
_QUERY = re.compile(r"(?i)\b((?:https?|wss?):(?:\\*/){2}[^\s?#\"'<>]+)\?[^\s#\"'<>]*")


# A query string after a path with no scheme or host ("GET /v1/geocode?key=..."): dropped
# like an absolute URL's, when it starts with a name and a "=" (so "/help?" ending a question
# stays).
_RELATIVE_QUERY = re.compile(
    r"(?<![\w.~%:/\\-])((?:\\?/)[A-Za-z0-9_.~%\-][^\s?#\"'<>]*)"
    r"\?(?=[A-Za-z0-9_.~%\-\[\]]+=)[^\s#\"'<>]*"
)

# An AWS secret access key has no prefix: 40 characters of base64's alphabet. A run of exactly
# 40 of them standing alone is masked when it mixes upper and lower case and digits (a hex
# digest has no upper case; a word, no digit) and does not read as a path (see _aws_secret).
_AWS_SECRET = re.compile(
    r"[A-Za-z0-9+/](?<![A-Za-z0-9+/_\-].)[A-Za-z0-9+/]{39}(?![A-Za-z0-9+/=_\-])"
)

# Secrets written in an encoding: a run of URL characters holding a percent-escape (a key in a
# path, "sk%5Flive%5F...", percent-encoded JSON), and a run of base64 (a key encoded whole).
# Each run is decoded and masked whole when what it decodes to holds a secret.
_PERCENT_RUN = re.compile(r"(?<![A-Za-z0-9._~+%\-])[A-Za-z0-9._~+\-]*+%[A-Za-z0-9._~+%\-]*+")
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_\-](?<![A-Za-z0-9+/_\-].)[A-Za-z0-9+/_\-]{23,}+={0,2}")
_BASE64_LIMIT = 8192  # longer runs are data (an image), not an encoded key
_ENCODED_LIMIT = 4096  # the same for percent-encoded runs (unquote costs a call per escape)
# The two patterns above scanned every character of a text in Python's regex engine (some
# 40 microseconds a kilobyte); _sub_long_runs finds their candidates at C speed instead: each
# character of base64's alphabets becomes "b", then a search for 24 "b" in a row (a literal,
# which the engine looks for as fast as str.find) finds each run of 24 or more. The patterns
# stay the reference the tests compare that way with.
_RUN_MAP = bytes(
    0x62 if chr(byte).isascii() and (chr(byte).isalnum() or chr(byte) in "+/_-") else 0x78
    for byte in range(256)
)
_LONG_RUN = re.compile(b"b" * 24 + rb"b*+")
# What _RELATIVE_QUERY needs after its "?": found by its literal "?" at C speed, where the
# pattern itself, which starts with a look behind, tries every character.
_QUERY_HINT = re.compile(r"\?[A-Za-z0-9_.~%\-\[\]]+=")


# Substrings without which a pattern cannot match (checked on the case-folded text for the
# case-insensitive ones). Skipping a pattern whose hints are all absent is what keeps masking
# a kilobyte of ordinary text in the microseconds; the result is the same as running them all.
# The hints are grouped under a character each holds, one that prose seldom uses (or under
# the start they share): a hint costs about a nanosecond a character to look for, one
# character (memchr) a tenth of that, and a kilobyte excerpt was checked for some twenty hints,
# twice. (The tokens' own starts are found where they end: see _anchored.token_starts.)
_UNPREFIXED_HINT_GROUPS = (("~", ("Q~",)), (":", (":A",)))
_URL_HINT_GROUPS = ((":", ("://", ":\\")),)  # the second for escaped slashes, ":\/\/"
_WEBHOOK_HINT_GROUPS = (("v", ("services",)), ("k", ("webhooks",)))
# Each digit byte becomes "d", every other byte "x": a run of 13 digits is then a substring.
_DIGIT_MAP = bytes(0x64 if 0x30 <= byte <= 0x39 else 0x78 for byte in range(256))
_THIRTEEN_DIGITS = b"d" * 13
# These two are looked for in the case-folded text.
_AUTH_HINT_GROUPS = (
    ("b", ("bearer", "basic")),
    ("k", ("token", "apikey", "deepl-auth-key")),
    ("g", ("digest",)),
    ("w", ("ssws",)),
)
_AUTH_HEADER_HINT = "authorization"
_PAIR_HINT_GROUPS = (
    ("k", ("key", "token", "cookie")),
    ("pass", ("passw", "passp", "pass-p", "pass_p")),
    ("g", ("sig",)),
    ("z", ("x-amz", "authorization")),
    ("c", ("secret",)),
    ("w", ("pwd",)),
)
_PEM_HINT = "PRIVATE KEY"
# The words a match of _KEY_PROVIDED starts with (lower case).
_KEY_PROVIDED_STARTS = ("api key", "api\tkey")


def fold(text: str) -> str:
    """Case-fold as the case-insensitive patterns match: they also let U+0130 and U+0131
    stand for "i" (U+017F and U+212A, which casefold() maps, for "s" and "k"). ASCII text is
    only lowered, the cheaper way to the same result."""
    if text.isascii():
        return text.lower()
    folded = text.casefold()  # U+0130 folds to "i" + U+0307
    if "\u0307" in folded or "\u0131" in folded:
        folded = folded.replace("\u0307", "").replace("\u0131", "i")
    return folded


def redact(text: str, known: Iterable[str] = ()) -> str:
    """Return ``text`` with every secret-looking token and every ``known`` value masked.

    ``known`` values shorter than four characters are ignored: masking every "1" or "ab" in a
    text would destroy it, and such short values are not credentials.
    """
    if len(text) <= _SHORT and not known:
        return _redact_short(text)
    return _redact(text, _known_forms(known))


def redact_piece(
    text: str, known: Iterable[str] = (), *, cut_start: bool = False, cut_end: bool = False
) -> str:
    """Like :func:`redact`, for a piece cut out of a longer text: ``cut_start`` when the text
    went on before the piece, ``cut_end`` when it went on after it.

    A ``known`` value split by a cut is masked for the part of it the piece holds (four
    characters or more). After a cut at the start, the piece's first word is left out: it may
    be the end of a key whose recognisable start lies before the cut (the word: the run of
    characters a credential can hold, letters, digits and ``_.~+/=%-``).
    """
    values = _known_forms(known)
    if cut_end and values:
        text = _mask_split_end(text, values)
    if cut_start:
        if values:
            text = _mask_split_start(text, values)
        text = text[_fragment_end(text) :]
    return _redact(text, values) if values else redact(text)


_SHORT = 200
# Characters a credential is made of (base64, URL-safe base64, JWT dots, percent-escapes).
_CREDENTIAL_RUN = re.compile(r"[A-Za-z0-9_.~+/=%\-]*")


def _fragment_end(text: str) -> int:
    """Where the run of credential characters that starts ``text`` ends."""
    match = _CREDENTIAL_RUN.match(text)
    return match.end() if match else 0


@functools.lru_cache(maxsize=4096)
def _redact_short(text: str) -> str:
    # Short texts recur (service names, resource kinds, fixed phrases); a hit is ~20x cheaper.
    return _redact(text, [])


def _luhn(digits: str) -> bool:
    total = 0
    for position, digit in enumerate(reversed(digits)):
        value = int(digit) * (2 if position % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def _is_card(digits: str) -> bool:
    """Whether ``digits`` have the length and leading digits of a card scheme's numbers (Visa,
    Mastercard, American Express, Diners, JCB, Discover, UnionPay) and pass the Luhn check."""
    size, two = len(digits), digits[:2]
    if digits[0] == "4":
        shape = size in (13, 16, 19)
    elif digits[0] == "5":
        shape = size == 16 and "51" <= two <= "55"
    elif digits[0] == "2":
        shape = size == 16 and "2221" <= digits[:4] <= "2720"
    elif digits[0] == "3":
        shape = (
            (size == 15 and two in ("34", "37"))
            or (size == 14 and two in ("30", "36", "38", "39"))
            or (16 <= size <= 19 and two == "35")
        )
    elif digits[0] == "6":
        shape = 16 <= size <= 19 and two in ("60", "62", "64", "65")
    else:
        shape = False
    return shape and _luhn(digits)


def _card(match: re.Match[str]) -> str:
    digits = match.group().replace(" ", "").replace("-", "")
    return MASK if _is_card(digits) else match.group()


def _may_hold_card(text: str) -> bool:
    """False when ``text`` has no run of 13 digits, spaces and dashes left out (found at C
    speed for ASCII text, the usual case: a regex scan costs more than the card pattern)."""
    if not text.isascii():
        return True
    return _THIRTEEN_DIGITS in text.encode("ascii").translate(_DIGIT_MAP, b" -")


def holds_hint(text: AnyStr, groups: tuple[tuple[AnyStr, tuple[AnyStr, ...]], ...]) -> bool:
    """Whether ``text`` holds one of the hints of ``groups``, each filed under a character it
    holds: one search for that character (memchr) skips its whole group."""
    for mark, hints in groups:  # loops, not any() over generators: a third faster here
        if mark in text:
            for hint in hints:
                if hint in text:
                    return True
    return False


def _redact(text: str, values: list[str], *, decode: bool = True) -> str:
    for value in values:
        if "%" in value:
            text = _mask_value(text, value)
        elif value in text:  # the usual case, without a call: a value has a dozen forms
            text = text.replace(value, MASK)
    if values:
        text = _mask_broken(text, _broken_candidates(tuple(values)))
    if _PEM_HINT in text:
        text = _PEM.sub(MASK, text)
    # In ASCII text (the usual case) the patterns below that would try every character are
    # tried only where a match can start (see _anchored); the others run whole.
    ascii_ = text.isascii()
    if holds_hint(text, _URL_HINT_GROUPS):
        if "@" in text:  # which ends a URL's userinfo
            text = _sub_where(_USERINFO, _first_group, text, url_starts, ascii_)
        if "?" in text:  # which starts a query
            text = _sub_where(_QUERY, _first_group, text, query_starts, ascii_)
    if "?" in text and "/" in text and _QUERY_HINT.search(text):
        text = _RELATIVE_QUERY.sub(r"\1", text)
    if holds_hint(text, _WEBHOOK_HINT_GROUPS):
        text = _WEBHOOK.sub(lambda match: f"{match.group(1) or match.group(2)}{MASK}", text)
    # Where a token's start is, in any text (the pattern is case-sensitive); none, none found.
    text = sub_at(_TOKENS, MASK, text, token_starts(text))
    if holds_hint(text, _UNPREFIXED_HINT_GROUPS):
        text = _UNPREFIXED.sub(MASK, text)
    if _may_hold_card(text):
        text = _CARD.sub(_card, text)
    folded = fold(text)
    if not ascii_:
        return _mask_named(text, folded, decode)
    unmasked = text
    # The words that start an Authorization scheme's match, as its hints are found.
    text = sub_at(_AUTH_SCHEME, _two_groups_masked, text, hint_starts(folded, _AUTH_HINT_GROUPS))
    if _AUTH_HEADER_HINT in folded:
        text = _AUTH_HEADER.sub(rf"\1\2{MASK}", text)
    # The pair's hints decide, read in the text as it was before the masks above (as in
    # _mask_named); where they are is read in the text as it is now, when those moved them.
    if text is unmasked:
        hints = hint_starts(folded, _PAIR_HINT_GROUPS)
        pairs = bool(hints)
    else:
        pairs = holds_hint(folded, _PAIR_HINT_GROUPS)
        hints = hint_starts(text.lower(), _PAIR_HINT_GROUPS) if pairs else set()
    if pairs:
        text = sub_at(_SECRET_PAIR, _pair_masked, text, pair_starts(text, hints))
        if "api key" in folded:
            starts = found_at(text.lower(), _KEY_PROVIDED_STARTS)
            text = sub_at(_KEY_PROVIDED, _two_groups_masked, text, starts)
    return _mask_runs(text, decode)


def _mask_named(text: str, folded: str, decode: bool) -> str:
    """The rest of :func:`_redact` for a text that is not ASCII: the patterns whole."""
    if holds_hint(folded, _AUTH_HINT_GROUPS):
        text = _AUTH_SCHEME.sub(_two_groups_masked, text)
    if _AUTH_HEADER_HINT in folded:
        text = _AUTH_HEADER.sub(rf"\1\2{MASK}", text)
    if holds_hint(folded, _PAIR_HINT_GROUPS):
        text = _SECRET_PAIR.sub(_pair_masked, text)
        if "api key" in folded:
            text = _KEY_PROVIDED.sub(_two_groups_masked, text)
    return _mask_runs(text, decode)


def _mask_runs(text: str, decode: bool) -> str:
    """The last steps of :func:`_redact`: long runs (an AWS secret, base64) and percent-encoded
    runs."""
    if len(text) >= 24:
        text = _sub_long_runs(text, 24, _aws_or_base64_run if decode else _aws_run)
    if decode and "%" in text and _ESCAPE.search(text):
        text = _PERCENT_RUN.sub(_encoded_percent, text)
    return text


def _sub_where(
    pattern: re.Pattern[str],
    repl: Callable[[re.Match[str]], str],
    text: str,
    starts: Callable[[str], Iterable[int]],
    ascii_: bool,
) -> str:
    return sub_at(pattern, repl, text, starts(text)) if ascii_ else pattern.sub(repl, text)


# The replacements of the patterns above, as functions: the same texts as their templates
# (r"\1", r"\1\2[REDACTED]", r"\g<key>\g<sep>[REDACTED]"), none of them parsed at each call.
def _first_group(match: re.Match[str]) -> str:
    return match.group(1)


def _two_groups_masked(match: re.Match[str]) -> str:
    return match.group(1) + match.group(2) + MASK


def _pair_masked(match: re.Match[str]) -> str:
    return match.group("key") + match.group("sep") + MASK


def _aws_or_base64_run(run: str) -> str:
    masked = _aws_run(run)
    return _base64_run(run) if masked == run else masked


def _sub_long_runs(text: str, least: int, replace: Callable[[str], str]) -> str:
    """``text`` with each whole run of ``least`` or more characters of base64's alphabets (and
    the one or two "=" after it) given to ``replace``, as ``_AWS_SECRET`` and ``_BASE64_RUN``
    would find them."""
    mapped = text.encode("ascii", "replace").translate(_RUN_MAP)  # one byte a character
    if b"b" * least not in mapped:
        return text
    shown: list[str] = []
    copied = 0
    for match in _LONG_RUN.finditer(mapped):
        start, end = match.span()
        if end - start < least:
            continue
        end += len(text[end : end + 2]) - len(text[end : end + 2].lstrip("="))
        run = text[start:end]
        masked = replace(run)
        if masked != run:
            shown += (text[copied:start], masked)
            copied = end
    return "".join(shown) + text[copied:] if shown else text


def _aws_secret(match: re.Match[str]) -> str:
    return _aws_run(match.group())


def _aws_run(run: str) -> str:
    """A run of base64's characters masked when it reads as an AWS secret access key (see
    ``_AWS_SECRET``); it is given with the "=" after it, which makes it something else."""
    if (
        len(run) != 40
        or "=" in run
        or "_" in run
        or "-" in run
        or run[0] == "/"
        or run.count("/") > 2  # a path ("v1/Orders/2024/Items..."), seldom a key
        or not any(c.isupper() for c in run)
        or not any(c.islower() for c in run)
        or not any(c.isdigit() for c in run)
    ):
        return run
    return MASK


def _holds_secret(decoded: str) -> bool:
    """Whether a decoded run holds a secret: it is text (no control characters), and masking
    it, without decoding again, changes it."""
    if not decoded.isprintable() and not decoded.replace("\n", "").isprintable():
        return False
    return _redact(decoded, [], decode=False) != decoded


def _encoded_percent(match: re.Match[str]) -> str:
    run = match.group()
    if len(run) > _ENCODED_LIMIT:
        return run
    decoded = unquote(run)
    return MASK if decoded != run and MASK not in decoded and _holds_secret(decoded) else run


def _encoded_base64(match: re.Match[str]) -> str:
    return _base64_run(match.group())


def _base64_run(run: str) -> str:
    if len(run) > _BASE64_LIMIT:
        return run
    body = run.rstrip("=").replace("-", "+").replace("_", "/")
    if len(body) % 4 == 1:  # a run cut short: its last character encodes no whole byte
        body = body[:-1]
    try:
        decoded = base64.b64decode(body + "=" * (-len(body) % 4)).decode("utf-8")
    except (binascii.Error, ValueError):
        return run
    return MASK if _holds_secret(decoded) else run
