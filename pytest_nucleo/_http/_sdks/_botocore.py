"""botocore (boto3's core): ``ClientError`` for an answer, its own errors for a call that got
none.

A ``ClientError`` keeps the answer parsed, as a dictionary: ``Error`` (``Code``, ``Message``
and the other fields of the error document) and ``ResponseMetadata`` (``HTTPStatusCode``,
``HTTPHeaders``), with the ``operation_name``. The raw body and the request are not in it, but
in the frame of ``BaseClient._make_api_call`` that raised it (``http``, ``request_dict``),
read when there: the body as AWS sent it is quoted when it holds the code botocore parsed (a
JSON API may send its code in the ``x-amzn-ErrorType`` header instead), else the parsed error
is written back as S3's error document (``<Error><Code>...</Code><Message>...</Message>
</Error>``), the form the ``aws`` profile and the throttle rules read for every service.
https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html
https://boto3.amazonaws.com/v1/documentation/api/latest/guide/error-handling.html

The endpoint is the request's path when it names something (a REST API's resource: S3's key),
else the operation's name: the JSON and query APIs send every operation to "/", and
"GetItem" says more than that. The service is named "AWS" and the service id ("AWS S3").
"""

from __future__ import annotations

import sys
from typing import Any
from urllib.parse import urlsplit
from xml.sax.saxutils import escape

from pytest_nucleo._http._clients import ResponseView, TransportSeen
from pytest_nucleo._http._clients._kinds import Transport, host_of
from pytest_nucleo._http._clients._sent import values_sent
from pytest_nucleo._text._values import text

from . import SdkReading
from ._frames import innermost_locals, plain
from ._values import headers_of

# botocore's own errors for a call that got no answer, most specific first (several derive
# from ConnectionError or HTTPClientError). https://github.com/boto/botocore/blob/develop/botocore/exceptions.py
_TRANSPORT = (
    ("ConnectTimeoutError", Transport.CONNECT_TIMEOUT),
    ("ReadTimeoutError", Transport.READ_TIMEOUT),
    ("ProxyConnectionError", Transport.PROXY),
    ("SSLError", Transport.TLS),
    ("EndpointConnectionError", Transport.CONNECT),
    ("ConnectionClosedError", Transport.PROTOCOL),
    ("ResponseStreamingError", Transport.PROTOCOL),
    ("ConnectionError", Transport.CONNECT),
    ("HTTPClientError", Transport.OTHER),
)
_TAG_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def read(exc: BaseException) -> SdkReading | None:
    exceptions = sys.modules.get("botocore.exceptions")
    if exceptions is None:
        return None
    client_error = getattr(exceptions, "ClientError", None)
    if isinstance(client_error, type) and isinstance(exc, client_error):
        return _answer(exc)
    for name, kind in _TRANSPORT:
        cls = getattr(exceptions, name, None)
        if isinstance(cls, type) and isinstance(exc, cls):
            return _transport(exc, kind)
    return None


def _answer(exc: Any) -> SdkReading | None:
    parsed = exc.response
    if not isinstance(parsed, dict):
        return None
    meta = parsed.get("ResponseMetadata")
    meta = meta if isinstance(meta, dict) else {}
    status = meta.get("HTTPStatusCode")
    if not isinstance(status, int):
        return None
    error = parsed.get("Error")
    error = error if isinstance(error, dict) else {}
    headers = meta.get("HTTPHeaders")
    call = innermost_locals(exc, "botocore.client", "_make_api_call") or {}
    raw = plain(call.get("http"), "_content")  # read already: botocore parsed it
    answered = headers_of(headers)
    body = _body(error, raw if isinstance(raw, bytes) else None)
    if body is not raw:  # the parsed error written back: its type is ours, not the server's
        answered = {k: v for k, v in answered.items() if k.lower() != "content-type"}
        answered["content-type"] = "application/xml"
    request = call.get("request_dict")
    url = text(request.get("url")) if isinstance(request, dict) else ""
    path = urlsplit(url).path if url else ""
    view = ResponseView(
        status,
        url if path not in ("", "/") else text(exc.operation_name),
        answered,
        body,
        _known(call),
        host_of(url),
    )
    return SdkReading(view, "aws", _service(call))


def _body(error: dict[str, Any], raw: bytes | None) -> bytes:
    """What AWS said: the raw body when it holds the parsed code (or the code is only the
    status, botocore's stand-in for a body it could not parse), else the parsed error as S3's
    error document."""
    code = text(error.get("Code"))
    if raw is not None and (not code or code.isdigit() or code.encode() in raw):
        return raw
    fields = {"Code": code, "Message": text(error.get("Message")), **error}
    parts = "".join(
        f"<{name}>{escape(str(value))}</{name}>"
        for name, value in fields.items()
        if name and set(name) <= _TAG_CHARS and isinstance(value, str | int | float) and value != ""
    )
    return f"<Error>{parts}</Error>".encode()


def _transport(exc: Any, kind: Transport) -> SdkReading:
    fields = getattr(exc, "kwargs", None)
    url = text(fields.get("endpoint_url")) if isinstance(fields, dict) else ""
    call = innermost_locals(exc, "botocore.client", "_make_api_call") or {}
    request = call.get("request_dict")
    method = text(request.get("method")) if isinstance(request, dict) else ""
    host = host_of(url)
    if urlsplit(url).path in ("", "/") and call.get("operation_name"):
        # As for an answer: the operation says more than "POST /" (its method is always POST).
        url, method = text(call.get("operation_name")), ""
    seen = TransportSeen(kind, method or None, url or None, host)
    return SdkReading(seen, "aws", _service(call))


def _service(call: Any) -> str:
    """The service as "AWS" and the service id of the client that made the call ("AWS S3"),
    or "AWS" alone."""
    model = plain(getattr(call.get("self"), "meta", None), "_service_model")
    metadata = plain(model, "_service_description")
    found = metadata.get("metadata") if isinstance(metadata, dict) else None
    service_id = text(found.get("serviceId")) if isinstance(found, dict) else ""
    return f"AWS {service_id}".strip()


def _known(call: Any) -> tuple[str, ...]:
    """What the request carried (its header, query and body values) and the client's
    credentials: masked wherever they show (S3 echoes the access key id in some errors)."""
    signer = plain(call.get("self"), "_request_signer")
    credentials = plain(signer, "_credentials")
    secrets = [
        text(plain(credentials, f"{prefix}{name}"))
        for name in ("access_key", "secret_key", "token")
        for prefix in ("", "_")
    ]
    request = call.get("request_dict")
    sent: tuple[str, ...] = ()
    if isinstance(request, dict):
        body = request.get("body")
        # The query protocol's parameters, sent as a form. Its Action and Version name the
        # operation and the API's version, not a value of the caller's: masked, the operation
        # named as the endpoint would show as a mask.
        form = (
            {k: v for k, v in body.items() if k not in ("Action", "Version")}
            if isinstance(body, dict)
            else None
        )
        sent = values_sent(
            text(request.get("method")) or "POST",
            text(request.get("url")),
            headers_of(request.get("headers")).items(),
            body if isinstance(body, bytes | str) else None,
            params=form,
        )
    return tuple(dict.fromkeys(v for v in (*secrets, *sent) if len(v) >= 4))
