"""A wait in the JSON body: ``"retry_after": 1.234`` (Discord, in seconds), ``"retryAfter"``
(seconds, as a number or a string), Google's ``RetryInfo`` detail (``"retryDelay": "43s"``, a
protobuf duration), and OpenAI's message "Please try again in 2.4s" (a duration, as its reset
headers write them). Read with one pattern over the start of the body, so a body costs the
same whatever its size, and a word in a sentence ("retry_after must be set") is no wait: only
a key followed by its value counts.

https://discord.com/developers/docs/topics/rate-limits#exceeding-a-rate-limit
https://cloud.google.com/apis/design/errors#error_details
https://platform.openai.com/docs/guides/rate-limits
"""

from __future__ import annotations

import re

from ._durations import duration
from ._said import Said, decimal

SCAN = 4096
"""Characters at the start of the body read for a wait."""

_FIELD = re.compile(
    r'"(?:retry_after|retryAfter)"\s*:\s*"?(\d{1,12}(?:\.\d{1,9})?)"?(?=\s*[,}])'
    r'|"retryDelay"\s*:\s*"(\d{1,12}(?:\.\d{1,9})?)s"'
)
_TRY_AGAIN = re.compile(r"[Pp]lease try again in ((?:\d{1,9}(?:\.\d{1,9})?(?:ms|h|m|s)){1,4})\b")


def wait(said: Said) -> float | None:
    if not said.throttled:
        return None
    start = said.body[:SCAN]
    # Each pattern runs only when its literal is there: a search for it costs next to nothing,
    # and most error bodies hold neither.
    if "etry" in start and (match := _FIELD.search(start)) is not None:
        return decimal(match.group(1) or match.group(2))
    if "try again in" in start and (again := _TRY_AGAIN.search(start)) is not None:
        return duration(again.group(1))
    return None
