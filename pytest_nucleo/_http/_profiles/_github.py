"""GitHub: a secondary rate limit sent without a wait means "wait at least one minute".

"If the retry-after response header is present, you should not retry your request until after
that many seconds has elapsed. If the x-ratelimit-remaining header is 0, you should not retry
your request until after the time ... specified by the x-ratelimit-reset header. Otherwise,
wait for at least one minute before retrying."
https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#exceeding-the-rate-limit
"""

from __future__ import annotations

import re

from pytest_nucleo._exceptions import LLMReadableCheckedException
from pytest_nucleo._http._clients import ResponseView
from pytest_nucleo._http._status import http_exception

SECONDARY_WAIT = 60.0
"""The wait GitHub asks for when a secondary rate limit states none."""


_SECONDARY = re.compile(rb"secondary rate limit", re.IGNORECASE)


def classify(service: str, view: ResponseView) -> LLMReadableCheckedException | None:
    if view.status not in (403, 429) or not _SECONDARY.search(view.body[:4096]):
        return None
    return http_exception(
        service,
        view.endpoint,
        view.status,
        view.body,
        view.headers,
        known=view.known,
        default_wait=SECONDARY_WAIT,
    )
