"""OpenAI's reset durations: ``x-ratelimit-reset-requests: 1s`` and ``x-ratelimit-reset-tokens:
6m0s`` say when each limit is whole again, in Go's duration form (``1h2m3s``, ``2.4s``,
``20ms``). Only the limit whose ``x-ratelimit-remaining-*`` is 0 was hit, so only its reset
is a wait; when neither is 0 (a request too big for what is left of a limit), the reset says
when the limit is whole again, not when this request fits, and the body's "Please try again
in 2.4s" says that.

https://platform.openai.com/docs/guides/rate-limits#rate-limits-in-headers
"""

from __future__ import annotations

import re

from ._said import Said, decimal

_KINDS = ("requests", "tokens")
_PART = re.compile(r"(\d{1,12}(?:\.\d{1,9})?)(ms|h|m|s)")
_UNIT = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def duration(text: str) -> float | None:
    """``"1m30s"`` -> 90.0, ``"2.4s"`` -> 2.4, ``"20ms"`` -> 0.02; None for anything else."""
    text = text.strip(" \t")
    if not text or len(text) > 40:
        return None
    total, at = 0.0, 0
    for match in _PART.finditer(text):
        if match.start() != at:
            return None
        total += float(match.group(1)) * _UNIT[match.group(2)]
        at = match.end()
    return total if at == len(text) else None


def wait(said: Said) -> float | None:
    if not said.throttled:
        return None
    hit = []
    for kind in _KINDS:
        value = said.headers.get(f"x-ratelimit-reset-{kind}")
        seconds = None if value is None else duration(value)
        left = said.headers.get(f"x-ratelimit-remaining-{kind}")
        if seconds is not None and left is not None and decimal(left) == 0:
            hit.append(seconds)
    return max(hit) if hit else None
