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

from pytest_nucleo._http._clients._httplib2 import _view as httplib2_view
from pytest_nucleo._http._clients._sent import values_sent
from pytest_nucleo._text._values import text

from . import SdkReading


def read(exc: BaseException) -> SdkReading | None:
    errors = sys.modules.get("googleapiclient.errors")
    http_error = getattr(errors, "HttpError", None)
    if not isinstance(http_error, type) or not isinstance(exc, http_error):
        return None
    error: Any = exc
    uri = text(error.uri)
    # The answer as httplib2's reading of its response has it (the status, the headers, the
    # URI: the one the answer gave, else the one asked for).
    view = httplib2_view(error.resp, error.content, uri or None)
    if view is None:
        return None
    if uri and view.endpoint != uri:
        # The answer named a location of its own: the API key is in the URI asked for.
        view = view._replace(known=(*view.known, *values_sent("GET", uri, (), None)))
    return SdkReading(view, "google")
