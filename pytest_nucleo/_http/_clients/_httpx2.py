"""httpx2, the fork of httpx under the openai and anthropic SDKs (see ``_httpx_api``)."""

from __future__ import annotations

import httpx2

from ._httpx_api import HttpxApi

_API = HttpxApi(httpx2, plain_httpx=False)
transport_failure = _API.transport_failure
read_response = _API.read_response
hook_failures = _API.hook_failures
known = _API.known
