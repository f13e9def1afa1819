"""An SDK's exception as the failure it means: its reading, sorted by the vendor's profile
first, then by the rules every client's response gets."""

from __future__ import annotations

import logging

from pytest_nucleo._exceptions import LLMReadableCheckedException
from pytest_nucleo._http._clients import ResponseView
from pytest_nucleo._http._clients._recognise import answer_name, seen_failure

from . import sdk_reading

logger = logging.getLogger("pytest_nucleo.http")


def sdk_failure(
    exc: BaseException, component: str, service: str | None = None
) -> LLMReadableCheckedException | None:
    """The failure an SDK's exception means (a botocore ``ClientError``, a slack_sdk
    ``SlackApiError``...), or None for an exception of no SDK the runtime reads.

    The text names ``service`` when the caller gives it, else the service as the SDK names it
    ("AWS S3"), else the host. A response is read by the vendor's profile first (AWS's error
    codes, Slack's ``"ok": false``), then by the status table, the throttle and quota rules and
    the wait dialects, as any client's response is; a call that got no answer reads as a
    client's transport failure of the same kind. The result's cause is ``exc``. Never raises:
    a profile that fails leaves the answer to the generic rules, and rules that fail leave the
    exception to read as any other.
    """
    reading = sdk_reading(exc)
    if reading is None:
        return None
    named = service or reading.service
    seen = reading.seen
    if isinstance(seen, ResponseView) and reading.profile is not None:
        failure = _profile_failure(reading.profile, seen, component, named)
        if failure is not None:
            logger.debug("%s", failure)
            failure.__cause__ = exc
            return failure
    try:
        return seen_failure(seen, exc, component, named)
    except Exception:
        # A reading the rules could not sort (a value of an odd SDK the readers let through)
        # means nothing more than any other exception: the mapping never raises.
        return None


def _profile_failure(
    profile: str, seen: ResponseView, component: str, named: str | None
) -> LLMReadableCheckedException | None:
    """The failure the vendor's profile reads in ``seen``, or None: also when the profile
    raises, so that the answer is read by the generic rules as any client's would be."""
    from pytest_nucleo._http._profiles import profile_failure

    try:
        return profile_failure(profile, answer_name(seen, component, named), seen)
    except Exception:
        return None
