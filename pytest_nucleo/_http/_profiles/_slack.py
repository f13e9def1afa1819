"""Slack's Web API: a failure is often an HTTP 200 whose JSON says ``"ok": false`` and names
the error (``channel_not_found``, ``invalid_auth``); a generic reading sees a success.

https://docs.slack.dev/apis/web-api/#responses and each method's list of errors
(https://docs.slack.dev/reference/methods/chat.postMessage#errors).
"""

from __future__ import annotations

from pytest_nucleo._exceptions import (
    ExternalServiceException,
    InvalidInputException,
    LLMReadableCheckedException,
    ResourceNotFoundException,
    UnauthorizedException,
    UpstreamThrottleException,
)
from pytest_nucleo._http._clients import ResponseView
from pytest_nucleo._http._waits import stated_wait
from pytest_nucleo._text._excerpt import safe_endpoint
from pytest_nucleo._text._render import VALUE_LIMIT, one_line
from pytest_nucleo._text._values import text

from ._json_error import json_object

_REJECTED = frozenset(
    {"not_authed", "invalid_auth", "account_inactive", "token_revoked", "token_expired"}
)
_NOT_PERMITTED = frozenset(
    {
        "no_permission", "missing_scope", "not_allowed_token_type", "ekm_access_denied",
        "team_access_not_granted",
    }
)  # fmt: skip
_CODE_LIMIT = 60
_DETAILS_LIMIT = 200
_ARGUMENTS = frozenset(
    {
        "invalid_arguments", "invalid_arg_name", "invalid_array_arg", "invalid_charset",
        "invalid_form_data", "invalid_post_type", "missing_post_type", "invalid_blocks",
        "invalid_blocks_format", "msg_too_long", "no_text", "too_many_attachments",
        "invalid_cursor", "invalid_ts_latest", "invalid_ts_oldest", "is_archived",
    }
)  # fmt: skip


def classify(service: str, view: ResponseView) -> LLMReadableCheckedException | None:
    doc = json_object(view.body)
    if doc is None or doc.get("ok") is not False:
        return None
    # Slack's own codes are short words; anything else is bounded and masked like a quote.
    error = one_line(text(doc.get("error")), _CODE_LIMIT, view.known) or "unknown_error"
    method = safe_endpoint(view.endpoint, view.known).rpartition("/")[2] or "the method"
    name = one_line(service, VALUE_LIMIT)
    said = f"{name} answered {method} with the error {error}"
    details = one_line(_messages(doc), _DETAILS_LIMIT, view.known)
    if details:
        said += f" ({details})"
    if error == "ratelimited":
        return UpstreamThrottleException(
            service, said, stated_wait(view.headers, view.body, status=429)
        )
    if error in _REJECTED:
        return UnauthorizedException(service, said)
    if error in _NOT_PERMITTED:
        return UnauthorizedException(
            service,
            said,
            llm_message=(
                f"{said}. Only the user can fix this: tell them the tool's credentials lack the "
                "permission this needs; the model cannot grant it."
            ),
        )
    if error.endswith("_not_found") and error != "_not_found":
        thing = error.removesuffix("_not_found").replace("_", " ")
        return ResourceNotFoundException(
            thing,
            method,
            llm_message=(
                f"{name} found no {thing} for the call {method} ({error}). Check the {thing} "
                "given, try another one, or use another tool to find the right one."
            ),
        )
    if error in _ARGUMENTS:
        return InvalidInputException(
            "arguments",
            method,
            said,
            llm_message=f"{said}. Correct the arguments to what {method} accepts.",
        )
    return ExternalServiceException(service, said)  # fatal_error, internal_error and the rest


def _messages(doc: dict[str, object]) -> str:
    """Slack's ``response_metadata.messages`` ("[ERROR] missing required field: channel")."""
    meta = doc.get("response_metadata")
    found = meta.get("messages") if isinstance(meta, dict) else None
    if not isinstance(found, list):
        return ""
    return "; ".join(m for m in found[:3] if isinstance(m, str))
