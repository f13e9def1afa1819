"""Reading an SDK's values totally: an attribute may hold anything (an SDK built by hand in a
test, an older release), and a reader never raises."""

from __future__ import annotations

import json
from collections.abc import Mapping


def headers_of(value: object) -> dict[str, str]:
    """The headers an SDK kept (a dict, requests' case-insensitive one, httplib2's response),
    as names and values; ``{}`` for anything else."""
    if not isinstance(value, Mapping):
        return {}
    return {str(name): str(found) for name, found in value.items()}


def body_of(value: object) -> bytes:
    """A body an SDK kept, as bytes: bytes and text as they are, the JSON it parsed written
    back (a dict, a list), nothing (None) as no body."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "replace")
    if value is None:
        return b""
    try:
        return json.dumps(value, ensure_ascii=False, default=str).encode()
    except (TypeError, ValueError):  # a circular structure: nothing faithful to write
        return b""
