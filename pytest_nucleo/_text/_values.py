"""A foreign value read as text, totally: an SDK's attribute or a vendor's JSON field may hold
anything (an SDK built by hand in a test, an older release, a field of another type), and the
code reading it must never raise."""

from __future__ import annotations


def text(value: object) -> str:
    """``value`` when it is a string, else ``""``."""
    return value if isinstance(value, str) else ""
