"""The style of a model text, as checks: what a text and its hint line must not say together.

The rules are those of "How the texts are written" in the failure-contract explanation. Each
check reads only the words the text adds to what it quotes: a server's quote may say "try
again in a few minutes" without the text itself inviting a retry. A quote is what follows
``It said:`` or ``saying`` in double quotes.
"""

from __future__ import annotations

import math
import re

from pytest_nucleo._exceptions import CORRECTABLE_HINT, UNCORRECTABLE_HINT
from pytest_nucleo._text._quote import has_words
from pytest_nucleo._text._render import BODY_LENGTH_LIMIT as BODY_LENGTH_LIMIT


class TextProblem(str):
    """One problem of a model text: the sentence saying it, with the ``rule`` it broke (a
    short name such as ``"contradicts hint"``, the one the report's matrix shows)."""

    __slots__ = ("rule",)
    rule: str
    """The rule the text broke, in a few words, as the report's matrix names it."""

    def __new__(cls, rule: str, sentence: str) -> TextProblem:
        problem = super().__new__(cls, sentence)
        problem.rule = rule
        return problem


UNKNOWN_WAIT = object()
"""``retry_after`` when the check is not told the wait the text must state."""

# "It said" closes its quote with '".' (the form every text of the package writes), so a
# quote mark inside the server's words ('It said: "!" A".') does not end it early.
_QUOTE = re.compile(r'It said: "(.*?)"\.(?=\s|$)|saying "(.*?)"(?=[.,;)]?(?:\s|$))', re.S)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# What a text says when it asks for another call or for a smaller one.
_ASKS_RETRY = re.compile(
    r"\b(?:then call again|call (?:it |the tool |this tool )?again|before calling again|"
    r"try (?:it )?again|retry (?:it|the call|later)|send less|ask for less|a smaller input|"
    r"make the call smaller|shorter input)\b",
    re.I,
)
# What a text says when it gives up on the call: false under the correctable hint.
_GIVES_UP = re.compile(
    r"\b(?:will not help|won't help|unlikely to help|not correctable|cannot be corrected)\b", re.I
)
# What the uncorrectable hint line already says, said again in the text.
_RESTATES_UNCORRECTABLE = re.compile(
    r"\bcall(?:ing)? (?:it|the tool|this tool|them) again\b[^.]*\b(?:unlikely to|will not|"
    r"won't|does not|cannot) help\b|\bconsider an alternative approach\b|"
    r"\ba different call will not help\b|\banother call will not change that\b",
    re.I,
)
# What the correctable hint line already says.
_RESTATES_CORRECTABLE = re.compile(
    r"\bthen call (?:it )?again\b|\bretry with different parameters\b", re.I
)
# How a text names the service it is about: said twice, the model reads two failures.
_NAMES_SERVICE = re.compile(r"\bThe (?:external )?service\b|\bon the service\b")
# Words of waiting before a number of seconds, minutes or hours. A bare "for" or "in" leads a
# number of seconds only: "cached for 24 hours" states no wait.
_WAITING = (
    r"wait(?:s|ed)?(?: for| of)?|for about|for up to about|about|for the next|pause (?:of|for)"
    r"|retry after"
)
_WAIT = re.compile(
    rf"\b(?:{_WAITING}|for|in)\s+(\d+(?:\.\d+)?) (second)s?\b"
    rf"|\b(?:{_WAITING})\s+(\d+(?:\.\d+)?) (minute|hour)s?\b",
    re.I,
)
# A wait stated in minutes or hours is rounded (this package's texts give whole minutes, and
# hours to the half hour): it agrees with the enforced wait within half of that step.
_UNIT_SECONDS = {"second": 1.0, "minute": 60.0, "hour": 3600.0}
_ROUNDING = {"second": 0.5, "minute": 30.0, "hour": 900.0}
_THROTTLE = re.compile(r"\bthrottl|\blimiting our (?:requests|rate)\b", re.I)
# A used-up quota or billing: no wait helps, only the user can act.
_QUOTA = re.compile(
    r"\b(?:quota|credit|billing|payment)\b[^.]*\b(?:used up|exhausted|required|declined|"
    r"no \w+ left|too low)\b",
    re.I,
)
_COME_BACK = re.compile(r"\b(?:come|check) back later\b|\btry again later\b|\bwait a while\b", re.I)
_NO_WAIT = re.compile(r"\bno wait (?:was given|is known)\b", re.I)
_LOOPBACK = re.compile(
    r"\bservice (?:at )?(?:127(?:\.\d{1,3}){3}|localhost|\[?::1\]?)(?::\d+)?(?=[\s,.:;)]|$)", re.I
)
_INTERNALS = re.compile(
    r"\bnominal rate\b|\blonger than it may wait\b|\bholds at most \d+ units\b", re.I
)


def split_hint(text: str) -> tuple[str, str | None]:
    """The body of a model text and its hint line (None when its last line is no hint)."""
    body, _, last = text.rpartition("\n")
    if last in (CORRECTABLE_HINT, UNCORRECTABLE_HINT):
        return body, last
    return text, None


def wording_problems(
    text: str,
    *,
    retry_after: object = UNKNOWN_WAIT,
    body_limit: int = BODY_LENGTH_LIMIT,
) -> list[TextProblem]:
    """Every way ``text`` (a model text, with or without its hint line) breaks the style.

    - **contradicts hint**: under the uncorrectable hint the text asks to call again or to
      send something smaller; under the correctable one it says calling again will not help.
    - **says twice**: the text restates its hint line ("Calling it again is unlikely to
      help" above "not correctable"), holds one sentence twice, or names the service twice.
    - **wait**: the text states two different waits, a wait other than ``retry_after`` (the
      seconds the failure will really be held for; None says there is none, so no wait may
      be stated), none where ``retry_after`` is set, or it is a throttle saying neither a wait
      nor "no wait was given" (or "no wait is known", for an answer whose headers were lost).
    - **empty quote**: a quote of the server is only masked values, or has no letters.
    - **loopback service**: a loopback address (``127.0.0.1``, ``localhost``, ``::1``) named
      as the service.
    - **who acts**: the text is about a used-up quota or billing, which only the user can
      fix, yet tells the model to come back later.
    - **internals**: a rate limiter's settings (its nominal rate, its longest wait).
    - **too long**: more than ``body_limit`` characters before the hint line.
    """
    body, hint = split_hint(text)
    quotes = [m.group(1) if m.group(1) is not None else m.group(2) for m in _QUOTE.finditer(body)]
    ours = _QUOTE.sub("It said: (a quote).", body)
    problems: list[TextProblem] = []

    def problem(rule: str, sentence: str) -> None:
        problems.append(TextProblem(rule, sentence))

    if hint == UNCORRECTABLE_HINT and (match := _ASKS_RETRY.search(ours)):
        problem(
            "contradicts hint",
            f"it says {match.group(0)!r} above the line saying the error is not correctable",
        )
    if hint == CORRECTABLE_HINT and (match := _GIVES_UP.search(ours)):
        problem(
            "contradicts hint",
            f"it says {match.group(0)!r} above the line saying the error may be correctable",
        )
    restates = {
        UNCORRECTABLE_HINT: _RESTATES_UNCORRECTABLE,
        CORRECTABLE_HINT: _RESTATES_CORRECTABLE,
    }
    if hint is not None and (match := restates[hint].search(ours)):
        problem("says twice", f"it says {match.group(0)!r}, which its hint line already says")
    sentences = [" ".join(s.split()).casefold() for s in _SENTENCE_END.split(ours)]
    repeated = {s for s in sentences if len(s) > 15 and sentences.count(s) > 1}
    if repeated:
        problem("says twice", f"it holds the sentence {sorted(repeated)[0]!r} twice")
    if len(_NAMES_SERVICE.findall(ours)) > 1:
        problem("says twice", "it introduces the service twice: a model reads two failures")
    problems.extend(_wait_problems(ours, retry_after))
    for quote in quotes:
        if not has_words(quote):
            problem(
                "empty quote",
                f"it quotes the server saying {quote[:40]!r}, which has no words: leave it out",
            )
            break
    if match := _LOOPBACK.search(ours):
        problem(
            "loopback service",
            f"it names the {match.group(0)!r}: a loopback address names nothing the model "
            "can act on",
        )
    if _QUOTA.search(ours) and (match := _COME_BACK.search(ours)):
        problem(
            "who acts",
            f"it is about a used-up quota or billing yet says {match.group(0)!r}: no wait "
            "helps, only the user can act, so say to tell the user",
        )
    if match := _INTERNALS.search(ours):
        problem("internals", f"it shows the rate limiter's settings ({match.group(0)!r})")
    if len(body) > body_limit:
        problem(
            "too long",
            f"it has {len(body)} characters before its hint line, over the bound of {body_limit}",
        )
    return problems


def stated_waits(text: str) -> dict[float, float]:
    """The waits ``text`` states, in seconds, each with how far its rounding may be off."""
    waits: dict[float, float] = {}
    for match in _WAIT.finditer(text):
        number, unit = match.group(1, 2) if match.group(1) else match.group(3, 4)
        unit = unit.lower()
        waits[float(number) * _UNIT_SECONDS[unit]] = _ROUNDING[unit]
    return waits


def _wait_problems(ours: str, retry_after: object) -> list[TextProblem]:
    rounding = stated_waits(ours)
    waits = set(rounding)
    if len(waits) > 1:
        shown = " and ".join(f"{w:g} seconds" for w in sorted(waits))
        return [TextProblem("wait", f"it states two different waits ({shown})")]
    if retry_after is UNKNOWN_WAIT:
        if _THROTTLE.search(ours) and not waits and not _NO_WAIT.search(ours):
            return [
                TextProblem(
                    "wait",
                    "it is a throttle that states no wait: say the wait, or that no wait was given",
                )
            ]
        return []
    if retry_after is None:
        if waits:
            return [
                TextProblem(
                    "wait", f"it states a wait of {min(waits):g} seconds where none is enforced"
                )
            ]
        if _THROTTLE.search(ours) and not _NO_WAIT.search(ours):
            return [TextProblem("wait", "it is a throttle that does not say no wait was given")]
        return []
    expected = float(retry_after)  # type: ignore[arg-type]  # a number, as the caller passes it
    if not waits and expected < 1:
        return []  # a wait under a second is no wait to the model
    if not waits:
        return [TextProblem("wait", f"it states no wait where {expected:g} seconds are enforced")]
    stated = next(iter(waits))
    if abs(stated - expected) > max(0.001 * max(expected, 1.0), rounding[stated]):
        return [
            TextProblem(
                "wait",
                f"it states a wait of {stated:g} seconds where {expected:g} seconds are enforced",
            )
        ]
    return []


def enforced_wait(failure: BaseException) -> object:
    """The seconds ``failure`` will really be held for, as its text must state them: a rate
    limiter's refusal stays off for ``off_for`` (in whole seconds; none for a call too large
    to ever admit), anything else for its ``retry_after``; :data:`UNKNOWN_WAIT` for a failure
    that has neither, a correctable one, or rejected credentials (no wait helps those)."""
    from pytest_nucleo import UnauthorizedException
    from pytest_nucleo.limits._refusal import LimiterRefusalException

    if getattr(failure, "is_correctable", False) or isinstance(failure, UnauthorizedException):
        return UNKNOWN_WAIT  # the call or the configuration must change: no wait helps
    if isinstance(failure, LimiterRefusalException):
        if getattr(failure, "reason", None) == "too-large":
            return None
        return math.ceil(round(float(getattr(failure, "off_for", 0.0)), 3))
    value = getattr(failure, "retry_after", UNKNOWN_WAIT)
    if value is None or isinstance(value, int | float):
        return value
    return UNKNOWN_WAIT
