"""Reading a vendor's small JSON error body, totally: the profiles' one way to look inside it."""

from __future__ import annotations

import json
from typing import Any

_READ_LIMIT = (
    64 * 1024
)  # a vendor's error JSON is small; a bigger body is left to the generic rules


def json_object(body: bytes) -> dict[str, Any] | None:
    """``body`` as a JSON object, or None (not JSON, not an object, too big, too deep)."""
    if not body or len(body) > _READ_LIMIT or body.lstrip()[:1] != b"{":
        return None
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None
