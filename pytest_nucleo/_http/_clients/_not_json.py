"""A 2xx answer that was not the JSON asked for, as the failure the model reads.

The service client raises it when decoding fails, and the client seams when a bare decoding
error of a client's ``.json()`` reaches the chain helpers.
"""

from __future__ import annotations

import logging

from pytest_nucleo._exceptions import ExternalServiceException
from pytest_nucleo._text._excerpt import body_excerpt, safe_endpoint
from pytest_nucleo._text._quote import said_of
from pytest_nucleo._text._render import (
    BODY_LENGTH_LIMIT,
    VALUE_LIMIT,
    fit_to_bound,
    next_step,
    one_line,
)

from . import ResponseView

logger = logging.getLogger("pytest_nucleo.http")

_TOO_DEEP = "could not be read: its JSON is nested more deeply than can be decoded"


def not_json_exception(
    service: str, view: ResponseView, content_type: str | None, reason: str, *, deep: bool = False
) -> ExternalServiceException:
    """The failure of a 2xx answer whose body is not the JSON asked for: the service answered,
    with something else (a login page, a proxy's notice). ``reason`` names the decoder's error.
    """
    path = safe_endpoint(view.endpoint)
    excerpt = body_excerpt(view.body, content_type=content_type, known=view.known)
    kind = f" ({one_line(content_type, VALUE_LIMIT)})" if content_type else ""
    then = next_step(None)
    first = fit_to_bound(
        lambda name, shown: (
            f"The external service {name} answered {shown} with HTTP {view.status}, but its "
            f"answer{kind} {_TOO_DEEP if deep else 'was not the JSON expected'}."
        ),
        one_line(service, VALUE_LIMIT),
        path,
        BODY_LENGTH_LIMIT - len(then) - 1,
    )
    said = said_of(excerpt, len(view.body or ""), BODY_LENGTH_LIMIT - len(first) - len(then))
    failure = ExternalServiceException(
        service,
        f"HTTP {view.status} at {path}: the body{kind} is not JSON ({reason}): {excerpt}",
        llm_message=f"{first}{said or ('' if view.body else ' The body was empty.')} {then}",
    )
    logger.debug("%s", failure)
    return failure
