"""AWS: the error's ``Code`` says what a status alone does not. Several APIs answer a bad or
expired credential, and a missing resource, with a 400 that the generic reading would take
for a malformed request the model could fix; and a throttle comes under a 400, a 503 or a 429
with a code of its own, which the generic rules know only in part.

The code comes from an XML ``<Code>`` (S3 and the query APIs) or a JSON ``__type`` / ``code``
(the JSON APIs, whose ``__type`` may carry a namespace before a ``#``).
https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html
https://docs.aws.amazon.com/STS/latest/APIReference/CommonErrors.html
https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/CommonErrors.html
"""

from __future__ import annotations

import html
import re

from pytest_nucleo._exceptions import (
    LLMReadableCheckedException,
    ResourceNotFoundException,
    UnauthorizedException,
)
from pytest_nucleo._http._clients import ResponseView
from pytest_nucleo._http._status import http_exception
from pytest_nucleo._text._excerpt import safe_endpoint
from pytest_nucleo._text._render import VALUE_LIMIT, one_line
from pytest_nucleo._text._values import text

from ._json_error import json_object

_CREDENTIALS = frozenset(
    {
        "ExpiredToken", "ExpiredTokenException", "InvalidAccessKeyId", "InvalidClientTokenId",
        "InvalidToken", "SignatureDoesNotMatch", "UnrecognizedClientException",
        "IncompleteSignature", "MissingAuthenticationToken",
    }
)  # fmt: skip
# The codes the AWS SDKs retry as throttling, on whatever status they come (botocore's
# standard retry mode, ThrottledRetryableChecker, and the legacy mode's _retry.json):
# https://github.com/boto/botocore/blob/develop/botocore/retries/standard.py
# https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html
# All but LimitExceededException: botocore lists every code seen as a throttle anywhere (this
# one for Kinesis), but CloudFormation sends it under a 400 for a resource quota reached (too
# many stacks), where telling the model to wait is wrong. Under a 400 it reads as the 400 it
# came with; under a 429 it is a throttle by the generic rules.
THROTTLING_CODES = frozenset(
    {
        "Throttling", "ThrottlingException", "ThrottledException", "RequestThrottledException",
        "TooManyRequestsException", "ProvisionedThroughputExceededException",
        "TransactionInProgressException", "RequestLimitExceeded", "BandwidthLimitExceeded",
        "RequestThrottled", "SlowDown", "PriorRequestNotComplete", "EC2ThrottledException",
    }
)  # fmt: skip
_NOT_FOUND = re.compile(r"^(?:NoSuch\w+|ResourceNotFoundException|\w+NotFound(?:Exception)?)$")
_XML_CODE = re.compile(rb"<Code>([A-Za-z.]{1,80})</Code>")
_XML_MESSAGE = re.compile(rb"<Message>([^<]{1,1000})</Message>")
_MESSAGE_LIMIT = 200


def classify(service: str, view: ResponseView) -> LLMReadableCheckedException | None:
    if view.status < 400:
        # A success, even with an error document in its body (S3's CopyObject and
        # CompleteMultipartUpload may answer 200 with one): not a failure the status says.
        return None
    code = _code(view.body)
    if code in THROTTLING_CODES:
        return http_exception(
            service,
            view.endpoint,
            view.status,
            view.body,
            view.headers,
            known=view.known,
            throttled=True,
        )
    if view.status != 400:  # other statuses already mean what their code says
        return None
    if code in _CREDENTIALS:
        return UnauthorizedException(service, f"AWS answered with the error code {code}")
    if _NOT_FOUND.match(code):
        where = safe_endpoint(view.endpoint, view.known) or "(the path called)"
        if where.startswith("/"):
            return ResourceNotFoundException("resource", where)
        return _not_found_by(service, where, code, view)
    return None


def _not_found_by(
    service: str, operation: str, code: str, view: ResponseView
) -> ResourceNotFoundException:
    """A missing resource named by an operation rather than a path (the reading of botocore's
    ``ClientError``: its JSON APIs send every operation to "/"): what AWS said names it."""
    name = one_line(service, VALUE_LIMIT)
    said = one_line(_message(view.body), _MESSAGE_LIMIT, view.known)
    quoted = f', saying "{said.rstrip(".")}"' if said else ""
    return ResourceNotFoundException(
        "resource",
        operation,
        llm_message=(
            f"{name} found no resource for the call {operation}: it answered {code}{quoted}. "
            "Check the identifier given, try another one, or use another tool to find the "
            "right one."
        ),
    )


def _code(body: bytes) -> str:
    found = _XML_CODE.search(body[:4096])
    if found:
        return found.group(1).decode("ascii")
    doc = json_object(body)
    if doc is None:
        return ""
    return (text(doc.get("__type")) or text(doc.get("code"))).rpartition("#")[2]


def _message(body: bytes) -> str:
    found = _XML_MESSAGE.search(body[:4096])
    if found:
        return html.unescape(found.group(1).decode("utf-8", "replace"))
    doc = json_object(body)
    if doc is None:
        return ""
    return text(doc.get("message")) or text(doc.get("Message"))
