"""``Retry-After``: delay-seconds or an HTTP-date (RFC 9110 section 10.2.3), and the decimal
seconds some services send (Shopify's ``Retry-After: 2.0``).

https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3
https://shopify.dev/docs/api/usage/limits#rate-limits
"""

from __future__ import annotations

from datetime import UTC, datetime

from pytest_nucleo._http._retry_after import RETRY_AFTER_CAP, parse_retry_after

from ._said import Said, decimal


def wait(said: Said) -> float | None:
    value = said.headers.get("retry-after")
    if value is None:
        return None
    seconds = decimal(value)
    if seconds is not None:
        return seconds
    # A date is read against the response's own Date (see the package's docstring), which is
    # within the years a datetime holds.
    when = datetime.fromtimestamp(said.now, UTC)
    return parse_retry_after(value, cap=RETRY_AFTER_CAP, now=when)
