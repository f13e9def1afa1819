"""google-api-python-client (``googleapiclient``): ``HttpError`` for an answer.

It keeps the answer whole: ``resp`` (an ``httplib2.Response``, a dictionary of the headers with
the ``status``), ``content`` (the body as Google sent it: its JSON error, with ``code``,
``message``, ``status`` and ``errors`` or ``details``) and ``uri``, the request's URL, whose
query carries the API key (``key=``): every query value is masked wherever it shows, and only
the path is ever shown. Read by the ``google`` profile, then the generic rules.
https://cloud.google.com/apis/design/errors#http_mapping
https://googleapis.github.io/google-api-python-client/docs/epy/googleapiclient.errors.HttpError-class.html

A call that got no answer raises httplib2's or the socket's own error (the client retries the
socket's once in a while, then lets it out), read by the client seam.
"""

from __future__ import annotations

import sys
from typing import Any

from pytest_nucleo._http._clients import ResponseView
from pytest_nucleo._http._clients._kinds import host_of
from pytest_nucleo._http._clients._sent import values_sent

from . import SdkReading
from ._values import headers_of, text


def read(exc: BaseException) -> SdkReading | None:
    errors = sys.modules.get("googleapiclient.errors")
    http_error = getattr(errors, "HttpError", None)
    if not isinstance(http_error, type) or not isinstance(exc, http_error):
        return None
    error: Any = exc
    resp = error.resp
    status = getattr(resp, "status", None)
    if isinstance(status, str) and status.isdigit():
        status = int(status)
    if not isinstance(status, int):
        return None
    headers = {k: v for k, v in headers_of(resp).items() if k != "status"}
    content = error.content
    uri = text(error.uri)
    view = ResponseView(
        status,
        uri,
        headers,
        content if isinstance(content, bytes) else b"",
        values_sent("GET", uri, (), None) if uri else (),
        host_of(uri),
    )
    return SdkReading(view, "google")
