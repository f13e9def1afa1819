"""Masking of secret-looking tokens in any text that may reach a model or a log.

Two kinds of masking, both applied by :func:`redact`:

* patterns: credentials recognisable by their shape (``sk-...`` keys, ``Bearer`` tokens, AWS
  access key ids, GitHub and Slack tokens, JWTs, ``api_key=...`` pairs, URL userinfo, URL query
  strings);
* known values: the exact strings a caller knows it sent (an API key, a header value), masked
  wherever they appear, even when a server echoes them back in an error body.

The patterns are deliberately broad: masking a harmless token costs a little readability,
leaking a key costs the key.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

MASK = "[REDACTED]"

# Shapes of credentials that must never be shown. Each is anchored so that ordinary words are
# left alone; every one is covered by a test with a real-looking sample.
_TOKEN_PATTERNS = (
    r"\bsk-[A-Za-z0-9_\-]{16,}",  # OpenAI / Anthropic style secret keys
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",  # AWS access key ids
    r"\bgh[pousr]_[A-Za-z0-9]{20,}",  # GitHub tokens
    r"\bgithub_pat_[A-Za-z0-9_]{20,}",
    r"\bxox[abprs]-[A-Za-z0-9\-]{10,}",  # Slack tokens
    r"\bAIza[0-9A-Za-z_\-]{30,}",  # Google API keys
    r"\beyJ[A-Za-z0-9_\-]{6,}\.[A-Za-z0-9_\-]{6,}\.[A-Za-z0-9_\-]{6,}",  # JWTs
)
_TOKENS = re.compile("|".join(_TOKEN_PATTERNS))

# "Authorization: Bearer abc", "Basic dXNlcjpwYXNz": keep the scheme, mask the credential.
_AUTH_SCHEME = re.compile(r"(?i)\b(bearer|basic|token|digest)(\s+)[A-Za-z0-9._~+/=\-]{6,}")

# key=value or "key": "value" pairs whose key names a credential. The lookahead first checks,
# without backtracking, that the word at hand is followed by a separator at all: without it,
# every word of a long text was tried against every key name at every length (hundreds of
# microseconds per kilobyte).
_SECRET_PAIR = re.compile(
    r"""(?ix)
    \b(?=[a-z0-9_\-]++\s*+["']?\s*+[=:])(
      [a-z0-9_\-]*(?:api[_\-]?key|apikey|access[_\-]?token|auth[_\-]?token|refresh[_\-]?token
        |id[_\-]?token|client[_\-]?secret|secret[_\-]?key|secret|password|passwd|signature
        |x-amz-signature|x-amz-credential|x-amz-security-token|session[_\-]?token|private[_\-]?key
        |access[_\-]?key)[a-z0-9_\-]*
      |token|sig|authorization|cookie|set-cookie
    )
    (\s*["']?\s*[=:]\s*["']?\s*)
    (?!\[REDACTED\])[^\s&"',;<>}\]]+
    """
)

# scheme://user:password@host -> scheme://host
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@?#]+@")

# Query strings carry api_key=..., token=..., X-Amz-Signature=...: drop the whole query, the
# path alone says which endpoint failed.
_QUERY = re.compile(r"(?i)\b((?:https?|wss?)://[^\s?#\"'<>]+)\?[^\s#\"'<>]*")


# Substrings without which a pattern cannot match (checked on the case-folded text for the
# case-insensitive ones). Skipping a pattern whose hints are all absent is what keeps masking
# a kilobyte of ordinary text in the microseconds; the result is the same as running them all.
_TOKEN_HINTS = (
    "sk-", "AKIA", "ASIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "AIza",
    "eyJ",
)  # fmt: skip
_AUTH_HINTS = ("bearer", "basic", "token", "digest")
_PAIR_HINTS = ("key", "token", "secret", "passw", "sig", "x-amz", "authorization", "cookie")


def _fold(text: str) -> str:
    """Case-fold as the case-insensitive patterns match: they also let U+0130 and U+0131
    stand for "i" (U+017F and U+212A, which casefold() maps, for "s" and "k")."""
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
    return _redact(text, known)


_SHORT = 200


@functools.lru_cache(maxsize=4096)
def _redact_short(text: str) -> str:
    # Short texts recur (service names, resource kinds, fixed phrases); a hit is ~20x cheaper.
    return _redact(text, ())


def _redact(text: str, known: Iterable[str]) -> str:
    for value in sorted({v for v in known if len(v) >= 4}, key=len, reverse=True):
        text = text.replace(value, MASK)
    if "://" in text:
        text = _USERINFO.sub(r"\1", text)
        text = _QUERY.sub(r"\1", text)
    if any(hint in text for hint in _TOKEN_HINTS):
        text = _TOKENS.sub(MASK, text)
    folded = text.lower() if text.isascii() else _fold(text)
    if any(hint in folded for hint in _AUTH_HINTS):
        text = _AUTH_SCHEME.sub(rf"\1\2{MASK}", text)
    if any(hint in folded for hint in _PAIR_HINTS):
        text = _SECRET_PAIR.sub(rf"\1\2{MASK}", text)
    return text
