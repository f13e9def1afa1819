"""How a provider's error sorts into the failure set and the retry signals.

Read from the provider's answer only (its status and its JSON error's code, type and message),
never from the request: words inside the conversation never change the classification. Every
text is masked with what the request carried (the API key, the conversation), so neither
appears in any message of the chain.
"""

from __future__ import annotations

import re

from pytest_nucleo._exceptions import (
    ContextOverflowException,
    ExternalServiceException,
    InvalidInputException,
    LLMReadableException,
    ModelNotFoundException,
    OverloadRetryException,
    QuotaExhaustedException,
    RateLimitRetryException,
    TransientErrorRetryException,
    UnauthorizedException,
    UpstreamRetryException,
)
from pytest_nucleo._text._quote import without_instructions
from pytest_nucleo._text._render import VALUE_LIMIT, one_line

from . import ProviderAnswer, provider_answer

DETAIL_LIMIT = 300
"""Characters of the provider's message a text quotes."""

_QUOTA_CODES = frozenset({"insufficient_quota", "billing_error"})
_CREDIT = re.compile(r"credit balance is too low", re.IGNORECASE)
_OVERLOADED = "overloaded_error"
_TRANSIENT_STATUSES = frozenset({500, 502, 503, 504})
_MODEL_CODES = frozenset({"model_not_found"})
_CONTEXT_CODES = frozenset({"context_length_exceeded", "string_above_max_length_context"})
_CONTEXT = re.compile(
    r"context[\s_-](?:length|window)|prompt is too long|maximum context"
    r"|input token count .{0,40}exceeds the maximum",  # Gemini's
    re.IGNORECASE,
)
_KEY_CODES = frozenset({"API_KEY_INVALID"})
"""A rejected key that is not a 401: Google answers a 400 whose ErrorInfo says so."""
_NO_ACCOUNT = "configured for the tool"


def from_provider_error(exc: BaseException) -> LLMReadableException | UpstreamRetryException | None:
    """The failure or retry signal an LLM provider SDK's error means; None for any other.

    openai, anthropic and google-genai errors sort as their providers document them:

    - a 429 whose error code or type is ``insufficient_quota``, or a 400 "credit balance is too
      low", is :class:`QuotaExhaustedException` (money, not time: never retried);
    - any other 429 is a :class:`RateLimitRetryException` carrying the server's Retry-After
      (Google's: the ``RetryInfo`` of its error);
    - a 529 or an ``overloaded_error`` is an :class:`OverloadRetryException`;
    - a 500, 502, 503 or 504, a connection that got no answer and a timeout are a
      :class:`TransientErrorRetryException`;
    - a model the provider does not know is :class:`ModelNotFoundException`, a prompt over the
      context window :class:`ContextOverflowException`;
    - a 413 (a request over the provider's size limit) is a correctable
      :class:`InvalidInputException` saying to send less, as an HTTP 413 is;
    - a 401 or 403, or Google's 400 for a key that is not valid, is
      :class:`UnauthorizedException`; any other status an uncorrectable
      :class:`ExternalServiceException`, each quoting the provider's message.

    The result's cause is ``exc``.
    """
    answer = provider_answer(exc)
    if answer is None:
        return None
    try:
        result = _sorted(answer)
    except Exception:  # an answer read from a stand-in SDK: the generic reading takes over
        return None
    result.__cause__ = exc
    return result


def _said(answer: ProviderAnswer) -> str:
    if not answer.message:
        return ""
    return without_instructions(one_line(answer.message, DETAIL_LIMIT, answer.known))


def _sorted(a: ProviderAnswer) -> LLMReadableException | UpstreamRetryException:
    provider = one_line(a.provider, VALUE_LIMIT)
    said = _said(a)
    if a.status is None:
        what = "timed out" if a.timed_out else "got no answer (the connection failed)"
        return TransientErrorRetryException(f"{provider}: the call {what}")
    marks = {a.code, a.type}
    status = f"HTTP {a.status}"
    if (
        (a.status == 429 and marks & _QUOTA_CODES)
        or "billing_error" in marks
        or (a.status == 400 and _CREDIT.search(a.message))
    ):
        return QuotaExhaustedException(
            a.provider, a.account or _NO_ACCOUNT, a.model, said or a.code or a.type or None
        )
    if a.status == 429:
        return RateLimitRetryException(
            f"{provider} is rate limiting ({status}): {said}", retry_after=a.retry_after
        )
    if a.status == 529 or _OVERLOADED in marks:
        return OverloadRetryException(
            f"{provider} is overloaded ({status}): {said}", retry_after=a.retry_after
        )
    if a.status in _TRANSIENT_STATUSES:
        return TransientErrorRetryException(
            f"{provider} failed ({status}): {said}", retry_after=a.retry_after
        )
    if marks & _MODEL_CODES or (a.status == 404 and "model" in a.message.lower()):
        return ModelNotFoundException(a.model or "(not named in the request)")
    if marks & _CONTEXT_CODES or (a.status in (400, 413) and _CONTEXT.search(a.message)):
        return ContextOverflowException()
    detail = f"{status}: {said}" if said else status
    quoted = f": {said.rstrip('.')}" if said else ""
    if a.status == 413:  # what the tool sent is too large: less of it may pass
        return InvalidInputException(
            "request",
            f"a call to {provider}",
            detail,
            llm_message=(
                f"The model provider {provider} rejected the call as too large ({status})"
                f"{quoted}. Send less: a smaller input or fewer items."
            ),
        )
    if a.status in (401, 403) or marks & _KEY_CODES:
        return UnauthorizedException(a.provider, detail)
    return ExternalServiceException(
        a.provider,
        detail,
        llm_message=(
            f"The model provider {provider} rejected the call ({status}){quoted}. Use another "
            "way, or tell the user."
        ),
    )
