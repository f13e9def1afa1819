"""httpx: its transport failures and responses (see ``_httpx_api``)."""

from __future__ import annotations

import httpx

from ._httpx_api import HttpxApi

_API = HttpxApi(httpx, plain_httpx=True)
transport_failure = _API.transport_failure
read_response = _API.read_response
hook_failures = _API.hook_failures
