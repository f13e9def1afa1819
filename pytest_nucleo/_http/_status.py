"""HTTP statuses as failures: the status table, its carriers, and the throttle-body rule.

Every carrier is a subclass of the exception whose meaning its status has (catch by meaning to
decide what to do) and of :class:`HttpErrorResponse` (test for it to read what the server said).

```
status           class                          is a
400 413 422      Http400/413/422Exception       InvalidInputException        correctable
401 403          Http401/403Exception           UnauthorizedException
404              Http404Exception               ResourceNotFoundException    correctable
429              Http429Exception               UpstreamThrottleException
500 502 503      Http500/502/503Exception       ExternalServiceException
any other        HttpUnmappedStatusException    ExternalServiceException
400 401 403 503  HttpThrottledStatusException   UpstreamThrottleException    (body says throttle)
any but 429      HttpThrottledStatusException   UpstreamThrottleException    (throttled=True)
402              HttpQuotaExhaustedException    ExternalServiceException     (only the user can act)
400 403 429      HttpQuotaExhaustedException    ExternalServiceException     (body says quota)
```

504, 520 to 526 and 529 are ``HttpUnmappedStatusException`` with words of their own
(:data:`STATUS_WORDS`). The wait comes from every documented dialect (``_waits``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, cast

from pytest_nucleo._exceptions import (
    ExternalServiceException,
    InvalidInputException,
    LLMReadableCheckedException,
    ResourceNotFoundException,
    UnauthorizedException,
    UpstreamThrottleException,
    check_seconds,
)
from pytest_nucleo._text._excerpt import body_excerpt, safe_endpoint
from pytest_nucleo._text._quote import said_of, size_of
from pytest_nucleo._text._render import (
    BODY_LENGTH_LIMIT,
    VALUE_LIMIT,
    Cleaned,
    clean_block,
    fit_to_bound,
    next_step,
    one_line,
    quota_step,
    seconds,
)
from pytest_nucleo._text._shapes import error_fields

from ._body_rules import (
    QUOTA_RULE_STATUSES,
    THROTTLE_RULE_STATUSES,
    Headers,
    body_says_quota,
    body_says_throttled,
    first_values,
    headers_say_throttled,
)
from ._unseen import UNSEEN_BODY, UNSEEN_HEADERS
from ._waits import HEADERS_READ, body_start, wait_in

# Our own reason phrases: the standard library renamed 413 and 422 in Python 3.13, and a model
# text must not change with the interpreter.
_PHRASES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    413: "Content Too Large",
    422: "Unprocessable Content",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


@functools.lru_cache(maxsize=1024)
def status_line(status: int) -> str:
    """``404`` -> ``"HTTP 404 Not Found"``; a status without a standard phrase -> ``"HTTP 599"``."""
    phrase = _PHRASES.get(status)
    if phrase is None:
        try:
            phrase = HTTPStatus(status).phrase
        except ValueError:
            phrase = ""
    return f"HTTP {status} {phrase}".rstrip()


class HttpErrorResponse:
    """What a server answered, carried by every exception made from a received HTTP response.

    A mixin: every carrier (:class:`Http404Exception`, ...) is also a subclass of the exception
    whose meaning its status has. Catch by meaning (``ResourceNotFoundException``,
    ``ExternalServiceException``) to decide what to do; test ``isinstance(exc,
    HttpErrorResponse)`` to read what the server said. A refused connection or a timeout
    received no response, so it is an ``ExternalServiceException`` that is not one of these.
    """

    status_code: int
    """The status the server really sent (a throttled 403 still says 403)."""
    service: str
    """The service name the client gave."""
    endpoint: str
    """The path that was called: no scheme, host, userinfo, query or fragment."""
    response_body: str
    """A bounded, cleaned, secret-free excerpt of the body (see ``body_excerpt``), never the raw body."""
    retry_after: float | None
    """Seconds the server asked us to wait (in any dialect it said it: see ``stated_wait``),
    or None."""


@dataclass(frozen=True, slots=True)
class _Answer:
    """The pieces every carrier text is made of, each already safe to show."""

    status_code: int
    service: str
    endpoint: str
    body: str
    retry_after: float | None
    name: str
    """The service name, one clean bounded line."""
    status: str
    """``"HTTP 404 Not Found"``."""

    size: int
    """How long the body was, in bytes or characters: what its shape is named by."""
    body_seen: bool = True
    """Whether the body was seen: False for :data:`UNSEEN_BODY`, of which nothing is said."""
    headers_seen: bool = True
    """Whether the headers were seen: False for :data:`UNSEEN_HEADERS` (no wait is known)."""

    def said(self, budget: int) -> str:
        """What the text says of the body, in at most about ``budget`` characters (see
        ``said_of``)."""
        if self.body or self.size:  # a body may have had nothing to show (a page of scripts)
            return said_of(self.body, self.size, budget)
        return " Its answer had no body." if self.body_seen else ""

    @property
    def technical(self) -> str:
        text = f"{self.name}: {self.status} at {self.endpoint}"
        if self.retry_after is not None:
            text += f" (Retry-After: {seconds(self.retry_after)})"
        if self.body:
            return f"{text}: {self.body}"
        if self.size:
            return f"{text} (a body of {size_of(self.size)} with no text to show)"
        return f"{text} (empty body)" if self.body_seen else f"{text} (body not seen)"

    def details(self) -> str:
        """The parent exception's detail field; the body is in ``response_body``."""
        return f"{self.status} at {self.endpoint}"


class _Shown(str):
    """Text :func:`http_exception` already made safe (an excerpt, an endpoint path), so a
    carrier does not clean it twice. Only ever passed in; carriers store plain ``str``.
    ``size`` is the length of the raw body an excerpt was made from; ``body_seen`` is False
    for an excerpt of :data:`UNSEEN_BODY`, ``headers_seen`` for one of an answer with
    :data:`UNSEEN_HEADERS`."""

    size: int
    body_seen: bool
    headers_seen: bool

    def __new__(
        cls,
        text: str,
        size: int | None = None,
        *,
        body_seen: bool = True,
        headers_seen: bool = True,
    ) -> _Shown:
        shown = super().__new__(cls, text)
        shown.size = len(text) if size is None else size
        shown.body_seen, shown.headers_seen = body_seen, headers_seen
        return shown


def _answer(
    status_code: int, service: str, endpoint: str, response_body: str, retry_after: float | None
) -> _Answer:
    check_seconds(retry_after)
    return _Answer(
        status_code,
        service,
        str(endpoint) if type(endpoint) is _Shown else safe_endpoint(endpoint),
        str(response_body) if type(response_body) is _Shown else body_excerpt(response_body),
        retry_after,
        _service_line(service),
        status_line(status_code),
        response_body.size if isinstance(response_body, _Shown) else len(response_body),
        not isinstance(response_body, _Shown) or response_body.body_seen,
        not isinstance(response_body, _Shown) or response_body.headers_seen,
    )


@functools.lru_cache(maxsize=256)
def _service_line(service: str) -> str:
    # A client names the same service in every failure it maps; masking and collapsing that
    # name each time was a tenth of a mapping.
    return one_line(service, VALUE_LIMIT)


def _status_of(cls: type[_Carrier], status_code: int | None) -> int:
    fixed = cls.status
    if fixed is not None:
        if status_code not in (None, fixed):
            raise ValueError(
                f"{cls.__name__} carries status {fixed}, not {status_code}; use http_exception() "
                "to get the right class for a status"
            )
        return fixed
    if status_code is None:
        raise TypeError(f"{cls.__name__} needs the status_code the server sent")
    if 200 <= status_code <= 299:
        raise ValueError(f"HTTP {status_code} is a success, not a failure")
    return status_code


class _Carrier(HttpErrorResponse):
    """One constructor for every carrier; each class adds its meaning and its model text."""

    status: ClassVar[int | None] = None
    """The one status this class carries; None for the classes that carry several."""

    if TYPE_CHECKING:  # every carrier is also an LLMReadableException, which defines these

        def _keep(self, **fields: Any) -> None: ...

        _message: str
        llm_message: str
        __cause__: BaseException | None

    def __init__(
        self,
        service: str,
        endpoint: str,
        response_body: str = "",
        retry_after: float | None = None,
        status_code: int | None = None,
    ) -> None:
        answer = _answer(
            _status_of(type(self), status_code), service, endpoint, response_body, retry_after
        )
        text, meaning = self._mean(answer)
        # What the meaning's __init__ sets, set here directly (as LimiterRefusalException
        # does): that __init__ would build and mask a technical message, a service line and a
        # details clause of its own, only for the texts below to replace them, and that
        # masking was a third of the cost of a mapping. A test checks that
        # every field the meaning keeps is kept here, with the value it would have.
        self._message = answer.technical  # made of pieces each already cleaned and masked
        self.llm_message = clean_block(text)
        self._keep(**meaning)
        self.status_code = answer.status_code
        self.service = service
        self.endpoint = answer.endpoint
        self.response_body = answer.body
        self.retry_after = answer.retry_after
        self._keep(
            service=service,
            endpoint=answer.endpoint,
            response_body=answer.body,
            retry_after=answer.retry_after,
            status_code=answer.status_code,
        )

    _text: ClassVar[str]
    """The first sentence of the model text, a template over ``name``, ``endpoint`` and
    ``status``: what failed and whose problem it is."""

    _then: ClassVar[str] = ""
    """The closing sentence: what to do next, in agreement with the hint line."""

    def _mean(self, a: _Answer) -> tuple[Cleaned, dict[str, object]]:
        """The model text, and the fields the exception whose meaning this status has keeps
        (its constructor arguments, by name). The quote gets what the length bound leaves."""
        then = self._advice(a)
        template = self._template(a)
        first = fit_to_bound(
            lambda name, path: template.format(name=name, endpoint=path, status=a.status),
            a.name,
            a.endpoint,
            BODY_LENGTH_LIMIT - len(then) - 1,
        )
        said = a.said(BODY_LENGTH_LIMIT - len(first) - len(then) - 1)
        return Cleaned(f"{first}{said} {then}"), self._meaning_fields(a)

    def _template(self, a: _Answer) -> str:
        return self._text

    def _advice(self, a: _Answer) -> str:
        return self._then

    def _meaning_fields(self, a: _Answer) -> dict[str, object]:
        raise NotImplementedError


class _BadRequest(_Carrier, InvalidInputException):
    """The correctable carriers: the model may change what it sent."""

    _names_fields: ClassVar[bool] = True
    """Whether the text names the fields the body says are at fault, as what to correct."""

    def _advice(self, a: _Answer) -> str:
        found = error_fields(a.body) if self._names_fields else ()
        # A field's name is the service's words said outside the quote: only a name that
        # reads as one (no spaces, no sentence) is said.
        fields = [f"'{f}'" for f in found if _FIELD_NAME.fullmatch(f)][:_FIELDS_NAMED]
        if not fields:
            return self._then
        named = fields[0] if len(fields) == 1 else f"{', '.join(fields[:-1])} and {fields[-1]}"
        return f"Correct {named}, which the service named as at fault."

    def _meaning_fields(self, a: _Answer) -> dict[str, object]:
        return {
            "parameter_name": "request",
            "invalid_value": a.endpoint,
            "validation_rule": a.details(),
        }


class Http400Exception(_BadRequest):
    """HTTP 400: the service found the request malformed. Correctable: fix the arguments."""

    status = 400
    """400: the status this class stands for (``status_code`` is the one the server sent)."""
    _text = "The service {name} rejected the request to {endpoint} as invalid ({status})."
    _then = "Correct the arguments to what the service accepts."


class Http413Exception(_BadRequest):
    """HTTP 413: the request was too large. Correctable: ask for less."""

    status = 413
    """413: the status this class stands for (``status_code`` is the one the server sent)."""
    _text = "The service {name} rejected the request to {endpoint} as too large ({status})."
    _then = "Ask for less: a smaller input, fewer items or a narrower range."
    _names_fields = False  # what is too large is the whole request


class Http422Exception(_BadRequest):
    """HTTP 422: well-formed, but the values were not acceptable. Correctable: fix the values."""

    status = 422
    """422: the status this class stands for (``status_code`` is the one the server sent)."""
    _text = (
        "The service {name} could not process the request to {endpoint} ({status}): it was "
        "well-formed, but its values were not acceptable."
    )
    _then = "Correct the values."


class _Refused(_Carrier, UnauthorizedException):
    """The credentials carriers: configuration must change, not the call."""

    def _meaning_fields(self, a: _Answer) -> dict[str, object]:
        return {"service_name": a.service, "reason": a.details()}


class Http401Exception(_Refused):
    """HTTP 401: the service rejected the tool's credentials. Needs configuration, not a retry."""

    status = 401
    """401: the status this class stands for (``status_code`` is the one the server sent)."""
    _text = "The service {name} rejected the tool's credentials for {endpoint} ({status})."
    _then = (
        "Only the user can fix this: tell them the tool needs valid credentials for this "
        "service; the model cannot supply them."
    )


class Http403Exception(_Refused):
    """HTTP 403: the tool's credentials may not do this. A 403 whose body says the service is
    throttling becomes :class:`HttpThrottledStatusException` instead."""

    status = 403
    """403: the status this class stands for (``status_code`` is the one the server sent)."""
    _text = (
        "The service {name} refused the tool access to {endpoint} with its credentials ({status})."
    )
    _then = (
        "Only the user can fix this: tell them the tool's credentials lack the permission "
        "this needs; the model cannot grant it."
    )


class Http404Exception(_Carrier, ResourceNotFoundException):
    """HTTP 404: nothing at this path. Correctable for a fetch by id (another id may work);
    a search that means "no results" by it asks ``get_json(..., empty_on_404=True)``."""

    status = 404
    """404: the status this class stands for (``status_code`` is the one the server sent)."""
    _text = "No resource was found at {endpoint} on the service {name} ({status})."
    _then = "Check the identifier, try another one, or use another tool to find the right one."

    def _meaning_fields(self, a: _Answer) -> dict[str, object]:
        return {"resource_type": "resource", "identifier": a.endpoint}


class _Throttled(_Carrier, UpstreamThrottleException):
    """The throttle carriers: the service asks us to slow down (and maybe how long to wait)."""

    def _advice(self, a: _Answer) -> str:
        return next_step(a.retry_after, throttled=True, wait_seen=a.headers_seen)

    def _meaning_fields(self, a: _Answer) -> dict[str, object]:
        return {
            "service_name": a.service,
            "error_details": a.details(),
            "retry_after": a.retry_after,
        }


class Http429Exception(_Throttled):
    """HTTP 429: the service is throttling us; ``retry_after`` says how long it asked us to wait."""

    status = 429
    """429: the status this class stands for (``status_code`` is the one the server sent)."""
    _text = (
        "The external service {name} is throttling our requests (too many requests): it "
        "answered {endpoint} with {status}."
    )


class HttpThrottledStatusException(_Throttled):
    """A 400, 401, 403 or 503 whose body says the service is throttling (rate limits, robot
    checks; see :data:`THROTTLE_PATTERNS`), or an answer of any status but 429 that the caller
    knows is a throttle (``http_exception(..., throttled=True)``: a vendor's throttle code).
    ``status_code`` is the status really sent."""

    _text = (
        "The external service {name} is throttling our requests: it answered {endpoint} with "
        "{status}, and its answer says it is limiting our rate or checking for robots."
    )


class _ServerError(_Carrier, ExternalServiceException):
    """The 5xx carriers and the unmapped one: one meaning, a first sentence per class."""

    def _advice(self, a: _Answer) -> str:
        return next_step(a.retry_after)

    def _meaning_fields(self, a: _Answer) -> dict[str, object]:
        return {"service_name": a.service, "error_details": a.details()}


class Http500Exception(_ServerError):
    """HTTP 500: the service failed while handling the request."""

    status = 500
    """500: the status this class stands for (``status_code`` is the one the server sent)."""
    _text = "The external service {name} failed with an internal error on {endpoint} ({status})."


class Http502Exception(_ServerError):
    """HTTP 502: a gateway in front of the service got no valid answer from it."""

    status = 502
    """502: the status this class stands for (``status_code`` is the one the server sent)."""
    _text = (
        "The external service {name} could not be reached through its gateway for {endpoint} "
        "({status}): the gateway got no valid answer from it."
    )


class Http503Exception(_ServerError):
    """HTTP 503: the service is unavailable (down, overloaded, in maintenance)."""

    status = 503
    """503: the status this class stands for (``status_code`` is the one the server sent)."""
    _text = "The external service {name} is unavailable for {endpoint} ({status})."


class HttpUnmappedStatusException(_ServerError):
    """Any received status without a class of its own (a 3xx not followed, a 418, a 599...).

    The statuses with a meaning of their own but no class (504, Cloudflare's 520 to 526,
    529) say it in words of their own: see :data:`STATUS_WORDS`."""

    _text = "The external service {name} answered {endpoint} with an unexpected status ({status})."

    def _template(self, a: _Answer) -> str:
        return STATUS_WORDS.get(a.status_code, self._text)


_GATEWAY = "The gateway in front of the external service {name}"
STATUS_WORDS: Mapping[int, str] = MappingProxyType(
    {
        504: f"{_GATEWAY} timed out waiting for its answer to {{endpoint}} ({{status}}), so the "
        "service may have acted on the request.",
        # Cloudflare's own statuses, between its edge and the service behind it:
        # https://developers.cloudflare.com/support/troubleshooting/http-status-codes/cloudflare-5xx-errors/
        520: f"{_GATEWAY} got an empty or unreadable answer to {{endpoint}} ({{status}}).",
        521: f"{_GATEWAY} was refused a connection for {{endpoint}} ({{status}}): the service "
        "is down or turning connections away.",
        522: f"{_GATEWAY} could not connect to it in time for {{endpoint}} ({{status}}).",
        523: f"{_GATEWAY} could not reach it for {{endpoint}} ({{status}}).",
        524: f"{_GATEWAY} connected but timed out waiting for its answer to {{endpoint}} "
        "({status}), so the service may have acted on the request.",
        525: f"{_GATEWAY} could not set up a secure connection to it for {{endpoint}} ({{status}}).",
        526: f"{_GATEWAY} found its certificate invalid for {{endpoint}} ({{status}}).",
        # Anthropic's, and others': https://docs.anthropic.com/en/api/errors
        529: "The external service {name} is overloaded and turning requests away for now: it "
        "answered {endpoint} with {status}.",
    }
)
"""Status -> the first sentence of its text, for the statuses that mean something of their
own without a class (they are :class:`HttpUnmappedStatusException`, and external failures)."""


class HttpQuotaExhaustedException(_Carrier, ExternalServiceException):
    """A 402, or a 400, 403 or 429 whose body says a quota or the billing of the account is
    used up (see :data:`QUOTA_PATTERNS`): waiting does not help, only the user can act.
    ``status_code`` is the status really sent."""

    _text = (
        "The service {name} refused {endpoint} because the account's quota or credit for it "
        "is used up ({status})."
    )
    _payment = (
        "The service {name} refused {endpoint} because a payment is required or was declined "
        "({status})."
    )

    def _template(self, a: _Answer) -> str:
        return self._payment if a.status_code == 402 else self._text

    def _advice(self, a: _Answer) -> str:
        return quota_step(a.retry_after)

    def _meaning_fields(self, a: _Answer) -> dict[str, object]:
        return {"service_name": a.service, "error_details": a.details()}


_TABLE: dict[int, type[_Carrier]] = {
    400: Http400Exception,
    401: Http401Exception,
    403: Http403Exception,
    404: Http404Exception,
    413: Http413Exception,
    422: Http422Exception,
    429: Http429Exception,
    500: Http500Exception,
    502: Http502Exception,
    503: Http503Exception,
}

HTTP_STATUS_TABLE: Mapping[int, type[HttpErrorResponse]] = MappingProxyType(_TABLE)
"""Status -> carrier class (a read-only view). A received status not in it gives
:class:`HttpUnmappedStatusException`; a 2xx is not a failure."""


def http_exception(
    service: str,
    endpoint: str,
    status: int,
    body: bytes | str | None,
    headers: Headers | None = None,
    *,
    known: Iterable[str] = (),
    default_wait: float | None = None,
    throttled: bool = False,
) -> LLMReadableCheckedException:
    """The exception for a received non-2xx response; it is always an :class:`HttpErrorResponse`.

    ``endpoint`` may be a full URL: only its path is kept. ``body`` is the raw body (bytes or
    text); only a bounded excerpt of it is kept. From ``headers`` (and the start of the body)
    comes the wait (as ``retry_after``, via :func:`stated_wait`: every documented dialect),
    from ``headers`` the content type (to read HTML and the charset) and GitHub-style
    ``x-ratelimit-remaining``; a header sent twice counts by its first value, an
    ``x-ratelimit-remaining`` by any value of 0. A 402, or a 400, 403 or 429 whose body says
    a quota or billing is used up (see :data:`QUOTA_PATTERNS`), gives
    :class:`HttpQuotaExhaustedException`. ``default_wait`` is the wait a throttle is held for
    when its answer states none, as a vendor may document (GitHub: a minute).
    ``known`` are values the caller sent (credentials, header and query values): they are
    masked wherever they appear. A 400, 401, 403 or 503 whose body says throttle (see
    :data:`THROTTLE_PATTERNS`, and :data:`THROTTLE_400_PATTERNS` for a 400), or a 401/403 with
    ``x-ratelimit-remaining: 0``, gives :class:`HttpThrottledStatusException`.
    ``throttled=True`` says the caller knows the answer is a throttle (a vendor's own throttle
    code, such as AWS's ``SlowDown`` or ``ThrottlingException``): it reads as one whatever its
    status and body say, :class:`Http429Exception` for a 429 and
    :class:`HttpThrottledStatusException` for any other, keeping the status sent and the wait
    stated. A 2xx status is not a failure: ValueError.
    """
    if 200 <= status <= 299:
        raise ValueError(
            f"HTTP {status} is a success, not a failure; use raise_for_status() to raise only "
            "for failures"
        )
    known = tuple(known)
    read = first_values(headers, _HEADERS_READ)
    content_type = read.get("content-type")
    retry_after = wait_in(read, body_start(body), status=status)
    said = _Shown(
        body_excerpt(body, content_type=content_type, known=known),
        len(body or ""),
        body_seen=body is not UNSEEN_BODY,
        headers_seen=headers is not UNSEEN_HEADERS,
    )
    shown = _Shown(safe_endpoint(endpoint, known))
    # A throttle the caller knows of is not read for a quota: the vendor's code says waiting
    # helps, whatever words of "limit" or "quota" its message holds.
    if not throttled and (
        status == 402
        or (status in QUOTA_RULE_STATUSES and retry_after is None and body_says_quota(body))
    ):
        return HttpQuotaExhaustedException(service, shown, said, retry_after, status)
    if (throttled and status != 429) or (
        status in THROTTLE_RULE_STATUSES
        and (
            body_says_throttled(body, status=status)
            or (status in (401, 403) and headers_say_throttled(headers))
        )
    ):
        return HttpThrottledStatusException(
            service, shown, said, _or(retry_after, default_wait), status
        )
    if status == 429:
        retry_after = _or(retry_after, default_wait)
    carrier = _TABLE.get(status)
    if carrier is None:
        return HttpUnmappedStatusException(service, shown, said, retry_after, status)
    # Every class in the table is also an LLMReadableCheckedException (a test checks it).
    return cast(LLMReadableCheckedException, carrier(service, shown, said, retry_after))


_HEADERS_READ = HEADERS_READ | {"content-type"}
_FIELDS_NAMED = 3  # more is a list the model cannot act on at once
_FIELD_NAME = re.compile(r"[\w.\[\]/$@-]{1,60}")


def _or(wait: float | None, default: float | None) -> float | None:
    return default if wait is None else wait


def raise_for_status(
    service: str,
    endpoint: str,
    status: int,
    body: bytes | str | None,
    headers: Headers | None = None,
    *,
    known: Iterable[str] = (),
) -> None:
    """Raise :func:`http_exception` for any status outside 2xx; return None for a 2xx.

    A 1xx or 3xx that reaches the caller (a redirect the client did not follow) is a failure
    too: :class:`HttpUnmappedStatusException`.
    """
    if not 200 <= status <= 299:
        raise http_exception(service, endpoint, status, body, headers, known=known)
