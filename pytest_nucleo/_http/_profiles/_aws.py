"""AWS: the error's ``Code`` says what a status alone does not. Several APIs answer a bad or
expired credential, and a missing resource, with a 400 that the generic reading would take
for a malformed request the model could fix.

The code comes from an XML ``<Code>`` (S3 and the query APIs) or a JSON ``__type`` / ``code``
(the JSON APIs, whose ``__type`` may carry a namespace before a ``#``).
https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html
https://docs.aws.amazon.com/STS/latest/APIReference/CommonErrors.html
https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/CommonErrors.html
"""

from __future__ import annotations

import re

from pytest_nucleo._exceptions import (
    LLMReadableCheckedException,
    ResourceNotFoundException,
    UnauthorizedException,
)
from pytest_nucleo._http._clients import ResponseView
from pytest_nucleo._text._excerpt import safe_endpoint

from ._json_error import json_object, text

_CREDENTIALS = frozenset(
    {
        "ExpiredToken", "ExpiredTokenException", "InvalidAccessKeyId", "InvalidClientTokenId",
        "InvalidToken", "SignatureDoesNotMatch", "UnrecognizedClientException",
        "IncompleteSignature", "MissingAuthenticationToken",
    }
)  # fmt: skip
_NOT_FOUND = re.compile(r"^(?:NoSuch\w+|ResourceNotFoundException|\w+NotFound(?:Exception)?)$")
_XML_CODE = re.compile(rb"<Code>([A-Za-z.]{1,80})</Code>")


def classify(service: str, view: ResponseView) -> LLMReadableCheckedException | None:
    if view.status != 400:  # other statuses already mean what their code says
        return None
    code = _code(view.body)
    if code in _CREDENTIALS:
        return UnauthorizedException(service, f"AWS answered with the error code {code}")
    if _NOT_FOUND.match(code):
        return ResourceNotFoundException(
            "resource", safe_endpoint(view.endpoint, view.known) or "(the path called)"
        )
    return None


def _code(body: bytes) -> str:
    found = _XML_CODE.search(body[:4096])
    if found:
        return found.group(1).decode("ascii")
    doc = json_object(body)
    if doc is None:
        return ""
    return (text(doc.get("__type")) or text(doc.get("code"))).rpartition("#")[2]
