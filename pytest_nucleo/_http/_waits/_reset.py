"""Reset headers: when a rate limit's window starts again, as an epoch or as a delta.

``x-ratelimit-reset`` is an epoch at GitHub and GitLab and a delta elsewhere; ``RateLimit-Reset``
(the IETF drafts before the ``RateLimit`` field) a delta, and an epoch at GitLab;
``x-rate-limit-reset`` an epoch (Okta); ``x-ratelimit-reset-after`` a delta (Discord); Jira's
``X-RateLimit-Reset`` an ISO 8601 time (``2026-12-07T12:02Z``). So a number is told apart by
its size: a number past 2001-09-09 as epoch seconds (a delta that long
is past any cap) is a time of day, measured against the response's ``Date``; one past it in
milliseconds likewise; a smaller one is a delta. A reset counts as a wait only when its
``remaining`` header says 0, or on a 429 that does not say what remains: GitHub sends these
headers on every answer, and a 404's reset is no wait.

https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api
https://docs.gitlab.com/administration/settings/user_and_ip_rate_limits/
https://developer.okta.com/docs/reference/rl-best-practices/
https://discord.com/developers/docs/topics/rate-limits
https://developer.atlassian.com/cloud/jira/platform/rate-limiting/
"""

from __future__ import annotations

from datetime import UTC, datetime

from ._said import Said, decimal, until

# (reset header, the remaining header that says whether it applies)
_PAIRS = (
    ("x-ratelimit-reset-after", "x-ratelimit-remaining"),
    ("x-ratelimit-reset", "x-ratelimit-remaining"),
    ("x-rate-limit-reset", "x-rate-limit-remaining"),
    ("ratelimit-reset", "ratelimit-remaining"),
)


def wait(said: Said) -> float | None:
    for reset, remaining in _PAIRS:
        value = said.headers.get(reset)
        if value is None or not said.exhausted(remaining):
            continue
        number = decimal(value)
        if number is not None:
            return until(number, said.now)
        when = _iso_time(value)
        if when is not None:
            return when - said.now
    return None


def _iso_time(text: str) -> float | None:
    """An ISO 8601 time (a zone, or UTC) in epoch seconds, or None."""
    text = text.strip(" \t")
    if not (10 <= len(text) <= 40 and text[:4].isdigit() and text.isascii()):
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()
