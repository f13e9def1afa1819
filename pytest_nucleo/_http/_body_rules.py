"""What an answer says beyond its status: that the service is throttling, or that a quota or
the billing of the account is used up. Each rule is a documented, tested list of what marks it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import httpx

from pytest_nucleo._text._secrets import holds_hint

Headers = Mapping[str, str] | httpx.Headers | Iterable[tuple[str, str]]
"""Response headers as a mapping, an ``httpx.Headers``, or (name, value) pairs."""

THROTTLE_PATTERNS: tuple[str, ...] = (
    r"rate[\s_-]?limit",  # "rate limit", GitHub's "secondary rate limit", rateLimitExceeded
    r"too[\s_-]?many[\s_-]?requests",  # "Too Many Requests", TooManyRequestsException
    r"throttl",  # AWS Throttling / ThrottlingException, "throttled"
    r"slow[\s_-]?down",  # AWS S3 SlowDown, "please slow down"
    r"reduce your request rate",
    r"rate exceeded",  # AWS "Rate exceeded"
    r"quota[\s_-]?exceeded",  # Google quotaExceeded, "quota exceeded"
    r"(?:daily|user)[\s_-]?limit[\s_-]?exceeded",  # Google dailyLimitExceeded
    r"request[\s_-]?limit[\s_-]?exceeded",  # AWS RequestLimitExceeded
    r"abuse[\s_-]?detection",  # GitHub's older secondary limit message
    r"login[\s_-]?attempts[\s_-]?exceeded",  # GitHub's lockout after failed logins
    r"provisioned[\s_-]?throughput[\s_-]?exceeded",  # DynamoDB, on a 400
    r"robot[\s_-]?detect",  # EPO CLIENT.RobotDetected
    r"are you a robot|not a robot",
    r"captcha",
)
"""What marks a 401/403/503 body as throttling: case-insensitive regexes, any one suffices.

Checked against the first :data:`THROTTLE_SCAN` characters of the body only. A body that says
no such thing (``"permission denied"``, ``"Bad credentials"``) keeps its status's meaning. A 400
is read with the stricter :data:`THROTTLE_400_PATTERNS`.
"""

THROTTLE_400_PATTERNS: tuple[str, ...] = (
    # AWS error codes as AWS sends them: the value of an XML <Code> or a JSON string (its
    # "__type" may prefix a namespace and "#"), not a word in a sentence about a field.
    r"(?:<Code>|[\"#])(?:Throttling|ThrottlingException|ThrottledException|RequestThrottled"
    r"|RequestLimitExceeded|TooManyRequestsException|SlowDown"
    r"|ProvisionedThroughputExceededException)(?:</Code>|\")",
    # Codes other services send as a whole JSON string: "rate_limited", "RATE_LIMIT_EXCEEDED",
    # Google's "rateLimitExceeded", "too_many_requests".
    r"(?i:\"(?:rate_?limit(?:ed|_?exceeded)|too_?many_?requests)\")",
    # Phrases, with spaces or hyphens: with underscores inside a sentence they name fields
    # ("rate_limited must be true or false").
    r"(?i:\brate[\s-]?limit(?:ed\b|[\s-](?:exceeded|reached)))",
    r"(?i:\btoo[\s-]many[\s-]requests)",
    r"(?i:\brate exceeded)",
)
"""What marks a 400 body as throttling. A 400 otherwise tells the model to fix its arguments, and
its body often names the fields at fault (``"rate_limit must be an integer"``, ``"captcha_token
is required"``), so only AWS's throttling codes and phrases that say a limit was hit count."""

THROTTLE_SCAN = 4096
"""Characters at the start of a body that the throttle rule reads."""

THROTTLE_RULE_STATUSES = frozenset({400, 401, 403, 503})
"""Statuses whose meaning the throttle rule can override (see :data:`THROTTLE_PATTERNS`)."""

_THROTTLE = re.compile("|".join(THROTTLE_PATTERNS), re.IGNORECASE)
_THROTTLE_400 = re.compile("|".join(THROTTLE_400_PATTERNS))
# GitHub answers an exhausted primary rate limit with a 403 and this header at 0.
_REMAINING_HEADERS = ("x-ratelimit-remaining", "ratelimit-remaining")


def header_values(headers: Headers | None, name: str) -> list[str]:
    if headers is None:
        return []
    if isinstance(headers, httpx.Headers):
        return headers.get_list(name)
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    return [str(value) for key, value in pairs if str(key).lower() == name]


# Literal cores of THROTTLE_PATTERNS (and so of THROTTLE_400_PATTERNS, which need one of them
# too) once case and ASCII separators are removed: every match holds one. On an ASCII prefix,
# no core present means no pattern can match, and that check runs at C speed, while the regex
# costs some 20 ns a character; the regex still decides when a core is present.
# Each core is filed under a mark it holds, a letter prose seldom uses or a word three of them
# share: one search for the mark (memchr, for a letter) skips the whole group when it is
# absent, where each core searched for costs about a nanosecond a character. ("x" filed the
# three "exceeded" cores, and JSON bodies hold many an "x": "max", "index", "context".)
_THROTTLE_CORE_GROUPS = (
    (b"m", (b"ratelimit",)),
    (b"q", (b"toomanyrequests", b"reduceyourrequestrate")),
    (b"h", (b"throttl",)),
    (b"w", (b"slowdown",)),
    (
        b"exceeded",
        (
            b"rateexceeded",
            b"limitexceeded",
            b"quotaexceeded",
            b"attemptsexceeded",
            b"throughputexceeded",
        ),
    ),
    # The three robot cores share their word: one search for it where three searched the
    # text (markup is full of "b": <body>, <b>), and only then the cores themselves.
    (b"robot", (b"robotdetect", b"areyouarobot", b"notarobot")),
    (b"b", (b"abusedetection",)),
    (b"p", (b"captcha",)),
)
_SEPARATORS = b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f_-"


def body_says_throttled(body: bytes | str | None, *, status: int | None = None) -> bool:
    """True when the start of ``body`` matches one of :data:`THROTTLE_PATTERNS`, or for
    ``status=400`` one of the stricter :data:`THROTTLE_400_PATTERNS`."""
    if not body:
        return False
    prefix = body[:THROTTLE_SCAN]
    raw = prefix if isinstance(prefix, bytes) else prefix.encode("utf-8", "replace")
    if raw.isascii():
        squeezed = raw.lower().translate(None, _SEPARATORS)
        if not holds_hint(squeezed, _THROTTLE_CORE_GROUPS):
            return False
    text = prefix.decode("utf-8", "replace") if isinstance(prefix, bytes) else prefix
    return (_THROTTLE_400 if status == 400 else _THROTTLE).search(text) is not None


def headers_say_throttled(headers: Headers | None) -> bool:
    return any(
        _is_zero(value) for name in _REMAINING_HEADERS for value in header_values(headers, name)
    )


QUOTA_PATTERNS: tuple[str, ...] = (
    # Error codes as a whole JSON string: OpenAI's insufficient_quota and billing codes,
    # Anthropic's billing_error, Google's quotaExceeded and dailyLimitExceeded reasons,
    # Resend's daily_quota_exceeded.
    r"\"(?:insufficient_quota|billing_hard_limit_reached|billing_not_active|billing_error"
    r"|quotaExceeded|dailyLimitExceeded|daily_quota_exceeded)\"",
    r"(?i:exceeded your current quota)",  # OpenAI's message for insufficient_quota
    r"(?i:credit balance is too low)",  # Anthropic's message for a used-up balance
    r"(?i:reached your (?:specified )?API usage limits?)",  # Anthropic's spend limits
    r"(?i:\b(?:not have enough|insufficient) credit\b(?! card))",  # RFC 9457's own example
)
"""What marks a 400, 403 or 429 body as a used-up quota or billing: waiting does not help, only
the user can act (a plan, a higher quota, billing). Checked before the throttle rule, against
the first :data:`THROTTLE_SCAN` characters, and only when the answer states no wait: a quota
that says when it comes back (Gemini's per-minute "You exceeded your current quota" with its
``RetryInfo``) is a throttle with that wait."""

QUOTA_RULE_STATUSES = frozenset({400, 403, 429})
"""Statuses whose meaning the quota rule can override. A 402 is always one."""

_QUOTA = re.compile("|".join(QUOTA_PATTERNS))


# Words every match of QUOTA_PATTERNS holds once lower-cased: on an ASCII prefix without any
# of them no pattern can match, found at C speed where the regex, whose alternatives start
# with no letter it can look for, costs some 100 ns a character.
_QUOTA_CORES = (b"quota", b"billing_", b"dailylimitexceeded", b"credit", b"usage limit")


def body_says_quota(body: bytes | str | None) -> bool:
    """True when the start of ``body`` matches one of :data:`QUOTA_PATTERNS`."""
    if not body:
        return False
    prefix = body[:THROTTLE_SCAN]
    raw = prefix if isinstance(prefix, bytes) else prefix.encode("utf-8", "replace")
    if raw.isascii():
        lowered = raw.lower()
        if not any(core in lowered for core in _QUOTA_CORES):
            return False
    text = prefix.decode("utf-8", "replace") if isinstance(prefix, bytes) else prefix
    return _QUOTA.search(text) is not None


def first_values(headers: Headers | None, names: frozenset[str]) -> dict[str, str]:
    """Lower-case name -> first value, for the headers in ``names`` (lower case)."""
    found: dict[str, str] = {}
    if headers is None:
        return found
    if isinstance(headers, httpx.Headers):
        pairs: Iterable[tuple[str, str]] = headers.multi_items()  # names already lower case
    else:
        pairs = headers.items() if isinstance(headers, Mapping) else headers
    for key, value in pairs:
        name = str(key).lower()
        if name in names and name not in found:
            found[name] = str(value)
    return found


def _is_zero(value: str) -> bool:
    """``"0"`` or ``"0.0"``: a remaining count of nothing, as the wait dialects read it."""
    whole, _, fraction = value.strip().partition(".")
    return (
        whole.isascii() and whole.isdigit() and int(whole[:18]) == 0 and fraction.strip("0") == ""
    )
