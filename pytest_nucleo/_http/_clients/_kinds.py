"""The kinds of transport failure every HTTP client can report, and the texts they give.

A transport failure is a call that got no HTTP answer. What matters to the model is what
happened and whether the request left us: a refused connection or a wait for a pooled
connection sent nothing, so the service did not act; past that, the server may have received
the request and acted on it, which matters before repeating a write.
"""

from __future__ import annotations

import enum
import logging
from urllib.parse import urlsplit

from pytest_nucleo._exceptions import ExternalServiceException
from pytest_nucleo._text._excerpt import safe_endpoint
from pytest_nucleo._text._render import (
    BODY_LENGTH_LIMIT,
    VALUE_LIMIT,
    fit_to_bound,
    next_step,
    one_line,
)

logger = logging.getLogger("pytest_nucleo.http")

_NOT_SENT = "nothing was sent, so the service did not act on the request"
_MAYBE_SENT = "the request was sent, so the service may have acted on it"
_PART_SENT = "part of the request was sent, so the service may have acted on it"
_SOME_SENT = "the request, or part of it, was sent, so the service may have acted on it"
_SENT_BEFORE = "an earlier request of this call reached the service, so it may have acted on it"


class Transport(enum.Enum):
    """A kind of transport failure: ``what`` happened, and whether anything was ``sent``."""

    CONNECT_TIMEOUT = ("the connection attempt timed out", _NOT_SENT)
    CONNECT = ("the connection was refused or could not be made", _NOT_SENT)
    POOL_TIMEOUT = ("no connection became free in time", _NOT_SENT)
    UNSUPPORTED_PROTOCOL = ("the URL's protocol is not supported", _NOT_SENT)
    PROXY = ("the proxy refused the request", _NOT_SENT)
    TLS = ("the secure (TLS) connection could not be set up", _NOT_SENT)
    READ_TIMEOUT = ("it did not answer in time (the read timed out)", _MAYBE_SENT)
    WRITE_TIMEOUT = ("sending the request timed out", _PART_SENT)
    PROTOCOL = ("the connection broke before a complete answer", _MAYBE_SENT)
    # A time limit on the whole call (aiohttp's total) ends it in whichever phase it is in:
    # past connecting, the request may still have been on its way.
    TIME_LIMIT = ("the call's time limit ran out before a complete answer", _SOME_SENT)
    TOO_MANY_REDIRECTS = ("it redirected the request too many times", _MAYBE_SENT)
    DECODING = ("its answer could not be decoded", _MAYBE_SENT)
    OTHER = ("the connection failed while talking to it", _MAYBE_SENT)

    def __init__(self, what: str, sent: str) -> None:
        self.what = what
        self.sent = sent

    @property
    def sent_nothing(self) -> bool:
        """Whether nothing of the request left, so the service did not act on it."""
        return self.sent == _NOT_SENT


def service_host(host: str | None) -> str | None:
    """``host`` as the name of a service, or None for a loopback address (``127.0.0.1``,
    ``localhost``, ``::1``): a test server's address names nothing the model can act on, so
    the text names the component that made the call instead."""
    if not host:
        return None
    bare = host.strip("[]").lower()
    if bare in ("localhost", "::1") or bare.endswith(".localhost") or bare.startswith("127."):
        return None
    return host


def host_of(url: str | None) -> str | None:
    """The host of ``url`` (no userinfo, port, path or query), or None when it has none."""
    if not url:
        return None
    try:
        return urlsplit(url).hostname or None
    except ValueError:  # a malformed netloc ("http://[::1")
        return None


def transport_exception(
    service: str,
    error: BaseException,
    kind: Transport,
    method: str | None = None,
    url: str | None = None,
    *,
    service_known: bool = True,
    sent_before: bool = False,
) -> ExternalServiceException:
    """The ExternalServiceException for a call to ``service`` that got no response.

    ``str(error)`` is never used: client messages can hold the URL with its userinfo and
    query. ``method`` and ``url`` name the call when they are known; only the URL's path shows.
    ``service_known=False`` says ``service`` is only the component that made the call;
    ``sent_before=True`` that an earlier request of the call (a try the client retried, one
    answered with a redirect) got past connecting, so a last one that sent nothing does not
    say the service did not act.
    """
    name = one_line(service, VALUE_LIMIT)
    if not service_known:
        name = f"called by {name}"
    verb = f"{one_line(method, 16)} " if method and url else ""
    path = safe_endpoint(url) if url else ""
    call = f"{verb}{path}"
    sent = _SENT_BEFORE if sent_before and kind.sent_nothing else kind.sent
    then = next_step(None)
    first = fit_to_bound(
        lambda who, shown: (
            f"The external service {who} gave no answer{' to ' + verb + shown if url else ''}: "
            f"{kind.what}. {sent[0].upper()}{sent[1:]}."
        ),
        name,
        path,
        BODY_LENGTH_LIMIT - len(then) - 1,
    )
    failure = ExternalServiceException(
        service,
        f"{call + ' ' if call else ''}got no response ({type(error).__name__}): "
        f"{kind.what}; {sent}",
        llm_message=f"{first} {then}",
    )
    logger.debug("%s", failure)
    return failure
