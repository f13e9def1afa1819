"""Google APIs: a key that is not valid comes back as a 400 ``INVALID_ARGUMENT``, which the
generic reading takes for arguments the model could fix; only the ``ErrorInfo`` reason
``API_KEY_INVALID`` says the credentials are at fault.

https://cloud.google.com/apis/design/errors#http_mapping
"""

from __future__ import annotations

import re

from pytest_nucleo._exceptions import LLMReadableCheckedException, UnauthorizedException
from pytest_nucleo._http._clients import ResponseView

_KEY_INVALID = re.compile(rb'"reason"\s*:\s*"API_KEY_INVALID"')


def classify(service: str, view: ResponseView) -> LLMReadableCheckedException | None:
    if view.status == 400 and _KEY_INVALID.search(view.body[:4096]):
        return UnauthorizedException(service, "the API key is not valid (API_KEY_INVALID)")
    return None
