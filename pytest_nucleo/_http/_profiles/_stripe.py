"""Stripe: a declined card says why in ``decline_code``, and only the customer can act on it.

A 402 ``card_error`` carries ``message`` ("Your card has insufficient funds.") and a
``decline_code`` ("insufficient_funds") that the generic reading, which quotes the message
only, would drop; this profile quotes both. Other answers follow the generic rules.
https://docs.stripe.com/api/errors and https://docs.stripe.com/declines/codes
"""

from __future__ import annotations

from pytest_nucleo._exceptions import LLMReadableCheckedException
from pytest_nucleo._http._clients import ResponseView
from pytest_nucleo._http._status import HttpQuotaExhaustedException
from pytest_nucleo._text._excerpt import body_excerpt, safe_endpoint
from pytest_nucleo._text._values import text

from ._json_error import json_object


def classify(service: str, view: ResponseView) -> LLMReadableCheckedException | None:
    if view.status != 402:
        return None
    doc = json_object(view.body)
    error = doc.get("error") if doc is not None else None
    if not isinstance(error, dict) or not text(error.get("decline_code")):
        return None
    said = text(error.get("message")) or "The card was declined."
    said = f"{said.rstrip('.')} (decline code: {text(error.get('decline_code'))})."
    return HttpQuotaExhaustedException(
        service,
        safe_endpoint(view.endpoint, view.known),
        body_excerpt(said, known=view.known),
        None,
        402,
    )
