"""The IETF ``RateLimit`` field: ``RateLimit: "default";r=0;t=30`` says the quota policy
"default" has 0 units left and resets in 30 seconds. A policy with units left asks for no wait;
of the policies with none left, the longest reset counts.

https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/
"""

from __future__ import annotations

from ._said import Said, decimal

_MAX_ITEMS = 16  # a field lists a few policies; more is not worth reading


def wait(said: Said) -> float | None:
    value = said.headers.get("ratelimit")
    if value is None or not said.throttled:
        return None
    waits = []
    for item in value.split(",")[:_MAX_ITEMS]:
        params = dict(
            (key.strip().lower(), number.strip())
            for key, _, number in (part.partition("=") for part in item.split(";")[1:])
        )
        left, reset = params.get("r"), params.get("t")
        if left is None or reset is None or decimal(left) != 0:
            continue
        seconds = decimal(reset)
        if seconds is not None:
            waits.append(seconds)
    return max(waits) if waits else None
