"""The seam between the runtime and the SDKs that raise an exception of their own for an HTTP
answer (botocore, google-api-python-client, google-api-core, slack_sdk, PyGithub, stripe,
twilio).

Such an exception carries what the response said (the status, the headers, the vendor's error
code and message) but not as any client's response object, so neither the client seam
(``_clients``) nor the carried-response reading finds it: unread, it reached the model as "A
system error occurred". Each SDK has one module here that reads its exceptions into an
:class:`SdkReading`, the facts of the response the exception stands for (or of the call that
got none) and the vendor profile to read them by; ``_failure`` sorts every reading by the same
rules a client's response gets (the profile first, then the status table). The LLM providers'
SDKs (openai, anthropic, google-genai) are not here: their errors are retry signals, sorted by
``_providers``.

A module is found from the top-level package of the classes of the exception seen, and
imported only then: its SDK is already imported, since one of its exceptions exists, and the
module reads the SDK's exception classes from ``sys.modules`` rather than importing them, so a
stubbed or older SDK without one of them reads as nothing here. Two import what comes with
their SDK: google-api-core's reader imports protobuf's ``json_format`` to write a gRPC error's
typed details as JSON (only once it holds one, a protobuf message, so protobuf is installed),
and google-api-python-client's reads its response with the httplib2 client's reading (the SDK
is built on httplib2). Adding an SDK is one module and one line in :data:`_SUPPORT`.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol, cast

from pytest_nucleo._http._clients import ResponseView, TransportSeen
from pytest_nucleo._registry import LazyRegistry

# Top-level package of an SDK's classes -> our module that reads its exceptions.
_SUPPORT = {
    "botocore": "_botocore",
    "googleapiclient": "_googleapiclient",
    # google-api-core (the google-cloud-* libraries); google-genai's errors, in the same
    # top-level package, are the providers' (see _providers/_google.py) and read as nothing here.
    "google": "_api_core",
    "slack_sdk": "_slack",
    "github": "_github",
    "stripe": "_stripe",
    "twilio": "_twilio",
}


class SdkReading(NamedTuple):
    """What an SDK's exception says: the response it stands for, or the call that got none."""

    seen: ResponseView | TransportSeen
    profile: str | None = None
    """The vendor profile to read the response by (see ``_profiles``), or None."""
    service: str | None = None
    """The service as the SDK names it ("AWS S3", "Slack"): the text's name for it when the
    caller gives none (before the host, which names a front door rather than a service)."""


class SdkSupport(Protocol):
    """What one SDK's module offers (each is a module with this function)."""

    def read(self, exc: BaseException) -> SdkReading | None:
        """What ``exc`` says, or None when it is not one of the SDK's exceptions that stand for
        an answer or a transport failure (a configuration error, a bad argument)."""


_REGISTRY = LazyRegistry(__name__, _SUPPORT)


def sdk_reading(exc: BaseException) -> SdkReading | None:
    """What an SDK's exception says; None for an exception of no known SDK, and for one its
    module could not read (the mapping never raises: such an exception reads as any other)."""
    try:
        support = cast(SdkSupport | None, _REGISTRY.find(exc))
        reading = None if support is None else support.read(exc)
    except Exception:
        return None
    if reading is not None and isinstance(reading.seen, ResponseView):
        status = reading.seen.status
        if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
            return None  # no HTTP status to sort by
    return reading


def sdks() -> tuple[str, ...]:
    """The top-level packages of the SDKs whose exceptions the runtime reads."""
    return tuple(_SUPPORT)
