"""What the server said when a call failed, as the limiters remember and quote it.

The refusal that quotes it, :class:`LimiterRefusalException`, is in ``_refusal``, which
imports this module; this one knows a refusal only as an :class:`OwnRefusal` (below), so the
two do not import each other.
"""

from __future__ import annotations

import abc
import dataclasses
import math
from typing import TypeGuard

from pytest_nucleo._causes import iter_chain
from pytest_nucleo._exceptions import ExternalServiceException, check_seconds
from pytest_nucleo._http._retry_after import RETRY_AFTER_CAP
from pytest_nucleo._text._quote import quote_of
from pytest_nucleo._text._render import VALUE_LIMIT, one_line, render_value

DETAIL_LIMIT = 120
"""Characters of a server's detail quoted in a refusal."""


class OwnRefusal(abc.ABC):  # noqa: B024  # a kind to test against, with nothing to implement
    """A refusal the package raised instead of calling the upstream: a chain holding one says
    nothing about the server. :class:`LimiterRefusalException` registers itself as one
    (``_refusal``): declared here, below it, since the refusal quotes an
    :class:`UpstreamFailure` and so imports this module."""


@dataclasses.dataclass(frozen=True, slots=True)
class UpstreamFailure:
    """What the server said when a call failed: the status (None when no response came back),
    the service, the detail, and the seconds it asked us to wait (None when it did not say).

    The runner builds one with :meth:`from_exception` and reports it to every limiter of the
    tool; report one yourself with :meth:`RateLimiter.record_failure` when you use a limiter
    outside the runner.
    """

    service: str
    """The service that failed."""
    detail: str
    """What went wrong, for logs and :class:`LimiterStats`."""
    status: int | None = None
    """The HTTP status; None when no response came back."""
    retry_after: float | None = None
    """The seconds the server asked us to wait; None when it did not say."""

    def __post_init__(self) -> None:
        check_seconds(self.retry_after)

    @classmethod
    def from_exception(cls, exc: BaseException) -> UpstreamFailure | None:
        """What the server said, read from the :class:`ExternalServiceException` in the chain of
        ``exc``; None when the chain holds none (the failure was not the upstream's).

        The carrier is the first one that knows an HTTP status (so the true status survives
        ``wrap_with_context``, whose result is an outer ExternalServiceException without one),
        else the first with a Retry-After, else the deepest. ``status_code`` and
        ``retry_after`` are read duck-typed, so any carrier that has them is understood. A
        chain holding a :class:`LimiterRefusalException` is never an upstream failure.
        """
        chain = list(iter_chain(exc))
        if any(isinstance(m, OwnRefusal) for m in chain):
            # A refusal readdressed by wrap_with_context is still ours, not the upstream's.
            return None
        carriers = [m for m in chain if isinstance(m, ExternalServiceException)]
        if not carriers:
            return None
        with_status = [c for c in carriers if isinstance(_status_of(c), int)]
        with_wait = [c for c in carriers if _retry_after_of(c) is not None]
        carrier = (with_status or with_wait or carriers[-1:])[0]
        retry_after = _retry_after_of(carrier)
        if retry_after is None and with_wait:
            retry_after = _retry_after_of(with_wait[0])
        # What the server said: an HTTP carrier's body excerpt; its error_details only say
        # "HTTP 503 Service Unavailable at /path", which the status already tells.
        body = getattr(carrier, "response_body", None)
        detail = body if isinstance(body, str) and body else None
        return cls(
            service=str(getattr(carrier, "service_name", "the service")),
            detail=detail or str(getattr(carrier, "error_details", carrier.llm_message)),
            status=_status_of(carrier),
            retry_after=retry_after,
        )

    def describe(self) -> str:
        """One clean sentence fragment quoting the response, for model-facing text; a blank
        service or detail is left out rather than shown as an empty quote."""
        service = one_line(self.service, VALUE_LIMIT)
        if self.status is not None:
            text = f"HTTP {self.status} from {service}" if service else f"HTTP {self.status}"
        else:
            text = f"a failure of {service or 'the service'} with no HTTP status"
        # The words worth quoting only (no masked values, no brackets), and no wait: the
        # refusal states the one wait the limiter enforces.
        quote = quote_of(self.detail, len(self.detail), DETAIL_LIMIT)
        if quote.words:
            text += f", saying {render_value(quote.words, DETAIL_LIMIT)}"
        return text


def _status_of(carrier: BaseException) -> int | None:
    status = getattr(carrier, "status_code", None)
    return status if isinstance(status, int) and not isinstance(status, bool) else None


def _retry_after_of(carrier: BaseException) -> float | None:
    value = getattr(carrier, "retry_after", None)
    if _finite(value) and value >= 0:
        return min(float(value), RETRY_AFTER_CAP)
    return None


def _finite(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
