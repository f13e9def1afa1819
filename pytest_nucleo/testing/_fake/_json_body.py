"""The bytes of a faked JSON body, the same whatever the installed HTTP client and its version.

``respond(json=...)`` used to leave encoding to httpx, which wrote ``{"error": "x"}`` up to
0.27 and ``{"error":"x"}`` from 0.28: a snapshot of a text quoting the body changed when a
transitive dependency moved. The fake encodes its bodies here, once, as httpx 0.28 does
(compact, UTF-8 rather than ``\\u`` escapes, no NaN), so that the reviewed texts stay put; every
backend answers with these bytes, since every backend answers from the one route table.
"""

from __future__ import annotations

import json
from typing import Any

JSON_CONTENT_TYPE = "application/json"


def json_body(value: Any) -> bytes:
    """``value`` as the compact JSON bytes a faked answer carries.

    Raises ``ValueError`` naming what JSON cannot carry (an object it does not know, a NaN or
    an infinity), when the route is declared rather than when a request reaches it.
    """
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"respond(json=...) takes what JSON can carry (dicts, lists, str, int, finite "
            f"float, bool, None): {error}. For any other body, pass content=bytes"
        ) from None
    return text.encode()
