"""google-api-core (the ``google-cloud-*`` libraries, and the other Google clients generated
on it): ``GoogleAPICallError`` and its subclasses, one per HTTP status or gRPC code.

Over REST the error keeps the client's response it was made from (``response``, a
``requests.Response``), read as any client's. Over gRPC it keeps the HTTP status its class
stands for (``code``), the gRPC code (``grpc_status_code``), the message and the typed details
(``details``: ``ErrorInfo``, ``RetryInfo``, ``QuotaFailure``...); that is written back as the
JSON error Google's REST APIs send for the same failure, which the ``google`` profile and the
generic rules read (a ``RetryInfo`` states the wait).
https://cloud.google.com/apis/design/errors#http_mapping
https://googleapis.dev/python/google-api-core/latest/exceptions.html

``RESOURCE_EXHAUSTED`` (429) means a rate limit or a used-up quota: it is a throttle, with the
wait its ``RetryInfo`` states, unless its words say a quota or billing is used up and it states
no wait (the generic quota rule). ``DEADLINE_EXCEEDED`` with no HTTP answer is the call's own
time limit running out (gRPC's deadline), a transport failure; a 504 that came over REST is the
gateway's answer. ``UNAVAILABLE`` with no HTTP answer and no typed details is gRPC's own
status for a channel that could not carry the call (a refused connection), a transport failure
too; ``CANCELLED`` with no HTTP answer is the caller's own doing, and reads as any other
exception. ``RetryError`` (the library's retries gave up) reads as the last error. With no
client method in the traceback to name it, the endpoint of a gRPC call is "the call".

The registry finds this module for the exceptions of every ``google`` package: only
google-api-core's are read (google-genai's are the providers', see ``_providers/_google``).
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from typing import Any

from pytest_nucleo._http._clients import ResponseView, TransportSeen, frames_of, read_response
from pytest_nucleo._http._clients._kinds import Transport, host_of
from pytest_nucleo._http._clients._sent import values_sent
from pytest_nucleo._text._values import text

from . import SdkReading

# The gRPC code each of google-api-core's classes stands for, by class name: its
# ``grpc_status_code`` is None when grpcio is not installed (a REST-only install).
_STATUS_OF_CLASS = {
    "InvalidArgument": "INVALID_ARGUMENT", "FailedPrecondition": "FAILED_PRECONDITION",
    "OutOfRange": "OUT_OF_RANGE", "Unauthenticated": "UNAUTHENTICATED",
    "PermissionDenied": "PERMISSION_DENIED", "NotFound": "NOT_FOUND",
    "AlreadyExists": "ALREADY_EXISTS", "Aborted": "ABORTED",
    "ResourceExhausted": "RESOURCE_EXHAUSTED", "Cancelled": "CANCELLED",
    "InternalServerError": "INTERNAL", "Unknown": "UNKNOWN", "DataLoss": "DATA_LOSS",
    "MethodNotImplemented": "UNIMPLEMENTED", "ServiceUnavailable": "UNAVAILABLE",
    "DeadlineExceeded": "DEADLINE_EXCEEDED",
}  # fmt: skip
# The HTTP status of each gRPC code, as Google maps them (the design guide's table).
_HTTP_OF_STATUS = {
    "INVALID_ARGUMENT": 400, "FAILED_PRECONDITION": 400, "OUT_OF_RANGE": 400,
    "UNAUTHENTICATED": 401, "PERMISSION_DENIED": 403, "NOT_FOUND": 404, "ABORTED": 409,
    "ALREADY_EXISTS": 409, "RESOURCE_EXHAUSTED": 429, "CANCELLED": 499, "DATA_LOSS": 500,
    "UNKNOWN": 500, "INTERNAL": 500, "UNIMPLEMENTED": 501, "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
}  # fmt: skip
# "GET https://...: message": how the library writes the message of an error made from a REST
# answer it holds no client response of (google.auth's own response types).
_REST_MESSAGE = re.compile(r"([A-Z]{3,7}|None) (https?://\S+): (.*)", re.S)
_TYPE_PREFIX = "type.googleapis.com/"
# google-* packages that are plumbing, not the client whose method the tool called.
_PLUMBING = ("google.api_core", "google.auth", "google.oauth2", "google.protobuf", "google.rpc")
_SERVICE = "Google APIs"
# gRPC core's words for a call that never got a connection, so sent nothing.
_NEVER_CONNECTED = ("failed to connect to all addresses", "DNS resolution failed")
# The endpoint when no frame names the client method called: a gRPC call has no path, and "/"
# would send the model looking for a resource at the service's root.
_THE_CALL = "the call"


def read(exc: BaseException) -> SdkReading | None:
    exceptions = sys.modules.get("google.api_core.exceptions")
    call_error = getattr(exceptions, "GoogleAPICallError", None)
    retry_error = getattr(exceptions, "RetryError", None)
    if not isinstance(call_error, type):
        return None
    if isinstance(retry_error, type) and isinstance(exc, retry_error):
        cause = getattr(exc, "cause", None)
        if isinstance(cause, BaseException) and isinstance(cause, call_error):
            return read(cause)
        return None
    if not isinstance(exc, call_error):
        return None
    error: Any = exc
    try:
        view = read_response(error.response)
    except ValueError:  # a response whose body was not read: the error holds what it said
        view = None
    if view is not None and view.status >= 400:
        return SdkReading(view, "google")
    status_name = _status_name(error)
    status = error.code if isinstance(error.code, int) else _HTTP_OF_STATUS.get(status_name)
    message = text(error.message)
    rest = _REST_MESSAGE.fullmatch(message)
    url = rest.group(2) if rest else ""
    if rest:
        message = rest.group(3)
    details = [found for d in error.details if (found := _detail(d)) is not None]
    if not url:
        if status_name == "DEADLINE_EXCEEDED":
            return SdkReading(TransportSeen(Transport.TIME_LIMIT), "google", _SERVICE)
        if status_name == "CANCELLED":
            return None  # the caller's own cancelling of the call: nothing the service said
        if status_name == "UNAVAILABLE" and not details:
            # gRPC's own status for a channel that could not carry the call (a refused or
            # broken connection, a name that did not resolve), not an answer: one with typed
            # details (a RetryInfo) came from the server, and reads as the 503 it stands for.
            # gRPC's message alone tells whether anything was sent: a call that never got a
            # connection did not reach the service; any other (a reset, "Socket closed") may
            # have, and must not read as "the service did not act".
            never_sent = any(words in message for words in _NEVER_CONNECTED)
            kind = Transport.CONNECT if never_sent else Transport.OTHER
            return SdkReading(TransportSeen(kind), "google", _SERVICE)
    if not isinstance(status, int):
        return None
    body = {"code": status, "message": message, "status": status_name or None}
    body["details"] = details
    body["errors"] = [e for e in error.errors if isinstance(e, dict)]
    view = ResponseView(
        status,
        url or _called(exc) or _THE_CALL,
        {"content-type": "application/json; charset=UTF-8"},
        json.dumps({"error": {k: v for k, v in body.items() if v}}, default=str).encode(),
        values_sent("GET", url, (), None) if url else (),
        host_of(url),
    )
    return SdkReading(view, "google", None if url else _SERVICE)


def _status_name(error: Any) -> str:
    named = getattr(error.grpc_status_code, "name", None)
    if isinstance(named, str):
        return named
    for cls in type(error).__mro__:
        if cls.__name__ in _STATUS_OF_CLASS:
            return _STATUS_OF_CLASS[cls.__name__]
    return ""


def _detail(detail: object) -> dict[str, Any] | None:
    """A ``details`` entry as JSON: as it is when it came over REST, converted with protobuf's
    own JSON mapping (typed by its ``@type``) when it came over gRPC."""
    if isinstance(detail, dict):
        return detail
    descriptor = getattr(detail, "DESCRIPTOR", None)
    full_name = getattr(descriptor, "full_name", None)
    if not isinstance(full_name, str):
        return None
    try:  # protobuf is loaded: the detail is one of its messages
        json_format: Any = importlib.import_module("google.protobuf.json_format")
        found: dict[str, Any] = json_format.MessageToDict(detail)
    except Exception:
        return None
    return {"@type": f"{_TYPE_PREFIX}{full_name}", **found}


def _called(exc: BaseException) -> str:
    """The client method the tool called (``get_secret``): the outermost frame of a Google
    client's module that is not the library's plumbing; "" when no frame tells."""
    for frame in frames_of(exc):
        module = str(frame.f_globals.get("__name__", ""))
        if module.startswith("google.") and not module.startswith(_PLUMBING):
            name = frame.f_code.co_name
            if not name.startswith("_"):
                return name
    return ""
