"""PyGithub (``github``): ``GithubException`` and its subclasses for an answer.

It keeps the status (``status``), the headers (``headers``, GitHub's ``x-ratelimit-*`` and
``retry-after`` among them) and the parsed body (``data``: ``{"message": ...,
"documentation_url": ...}``), but not the request: the frame of PyGithub's ``Requester`` that
raised it holds the path called (``verb``, ``url``). The subclass (``UnknownObjectException``,
``BadCredentialsException``, ``RateLimitExceededException``) is PyGithub's own reading of the
same facts, not needed here. Read by the ``github`` profile (a secondary rate limit that
states no wait means a minute), then the generic rules (a 403 or 429 with
``x-ratelimit-remaining: 0`` waits for ``x-ratelimit-reset``).
https://docs.github.com/en/rest/using-the-rest-api/troubleshooting-the-rest-api
https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#exceeding-the-rate-limit
https://pygithub.readthedocs.io/en/stable/utilities.html#github.GithubException.GithubException

A call that got no answer raises requests' own error, read by the client seam.
"""

from __future__ import annotations

import sys
from typing import Any

from pytest_nucleo._http._clients import ResponseView
from pytest_nucleo._text._values import text

from . import SdkReading
from ._frames import innermost_locals, plain
from ._values import body_of, headers_of


def read(exc: BaseException) -> SdkReading | None:
    errors = sys.modules.get("github.GithubException")
    github_exception = getattr(errors, "GithubException", None)
    if not isinstance(github_exception, type) or not isinstance(exc, github_exception):
        return None
    error: Any = exc
    status = error.status
    if not isinstance(status, int):
        return None
    call = innermost_locals(exc, "github.Requester", holding="verb") or {}
    requester = call.get("self")
    host = text(plain(requester, "_Requester__hostname"))
    auth = plain(requester, "_Requester__auth")
    known = tuple(v for v in (text(plain(auth, "_token", "_password")),) if len(v) >= 4)
    view = ResponseView(
        status,
        text(call.get("url")),
        headers_of(error.headers),
        body_of(error.data),  # the JSON PyGithub decoded, written back as GitHub sent it
        known,
        host or None,
    )
    return SdkReading(view, "github", "GitHub")
