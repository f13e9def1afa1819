"""The seam between the runtime and the HTTP clients a tool may use.

Clients differ in how their exceptions and responses look; the runtime asks one small protocol
(:class:`ClientSupport`): is this exception a transport failure, and of which kind; what are
the status, URL path, headers, body and sent values of this response. Each client has one
module here implementing it, found by :func:`support_for` from the top-level package of the
classes of the object seen, and imported only then: a client's module is imported only once
an instance of one of its classes exists, so its client is already imported. An exception of
the standard library's classes is asked first of the client whose code it passed through
(aiohttp's total timeout is a bare ``TimeoutError``, httplib2 lets the socket's errors out as
they are, httpx's ``.json()`` lets the ``json`` module's error out); one no client claims may
still carry a client's failing response. Adding a client is one module and one line in
:data:`_SUPPORT`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future
from types import FrameType
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, cast

from pytest_nucleo._registry import LazyRegistry

from ._kinds import Transport

if TYPE_CHECKING:
    from pytest_nucleo._http._body_rules import Headers

# The standard library's client: urllib.error, http.client, and the socket's own errors they
# let out (a read timeout is a bare TimeoutError), which ``_urllib`` tells by where they were
# raised.
_STDLIB = ("urllib", "http", "builtins", "socket", "ssl")

# Top-level package of a client's classes -> our module that reads them.
_SUPPORT = {
    "httpx": "_httpx",
    "httpx2": "_httpx2",
    "requests": "_requests",
    "urllib3": "_urllib3",
    "aiohttp": "_aiohttp",
    "httplib2": "_httplib2",
    **dict.fromkeys(_STDLIB, "_urllib"),
}


class ResponseView(NamedTuple):
    """What the runtime reads of any client's response."""

    status: int
    endpoint: str
    """The URL (or only its path) the request went to; only its path is ever shown."""
    headers: Headers
    body: bytes
    known: tuple[str, ...]
    """What the request carried that must never be shown (see ``sent_values``)."""
    host: str | None = None
    """The host the request went to, when known: the service's name when no other is given."""


class TransportSeen(NamedTuple):
    """A call that got no response: the kind of failure, and the call when it is known."""

    kind: Transport
    method: str | None = None
    url: str | None = None
    host: str | None = None
    """The host called, when the exception knows it but not the URL."""
    sent_before: bool = False
    """Whether an earlier request of the call (a try the client retried, one answered with a
    redirect) got past connecting: then the service may have acted on it, whatever the last
    request's failure says."""


class UndecodedAnswer(NamedTuple):
    """A 2xx answer that the tool asked its client to decode as JSON, and was not JSON (a
    login page): the service answered, with something else."""

    view: ResponseView
    content_type: str | None
    reason: str
    """The decoder's error, by its class name."""


Seen = TransportSeen | ResponseView | UndecodedAnswer


class ClientSupport(Protocol):
    """What one client's module offers (each is a module with these two functions)."""

    def transport_failure(self, exc: BaseException) -> Seen | None:
        """The kind of transport failure ``exc`` is; the response an exception raised for a
        received status carries; the answer a decoding error was raised for; or None for an
        exception that is none of them."""

    def read_response(self, obj: object) -> ResponseView | None:
        """What ``obj`` answered, or None when it is not this client's response. Raises
        ValueError, saying what to do, for a response whose body was not read yet."""


_REGISTRY = LazyRegistry(__name__, _SUPPORT)


def _support_of(obj: object) -> ClientSupport | None:
    return cast(ClientSupport | None, _REGISTRY.find(obj))


def support_for(obj: object) -> ClientSupport | None:
    """The support module of the client ``obj`` (an exception or a response) comes from."""
    return _support_of(obj)


def _raised_by(exc: BaseException) -> ClientSupport | None:
    """For an exception of the standard library's classes, the support of the client whose
    code it was raised through, by the innermost of its traceback's frames that is a client's
    (the standard library's own are found by the class already): aiohttp's total timeout is a
    bare ``TimeoutError`` that aiohttp raised, httpx's ``Response.json()`` lets the ``json``
    module's error through, and httplib2 lets http.client's ``RemoteDisconnected`` out of a
    call it made. None for an exception of any other class."""
    if type(exc).__module__.partition(".")[0] not in ("builtins", "json", "http", "ssl"):
        return None
    found = None
    for frame in frames_of(exc):  # outermost first: the last client frame is the innermost
        package = str(frame.f_globals.get("__name__", "")).partition(".")[0]
        if package in _SUPPORT and package not in _STDLIB:
            found = package
    return None if found is None else cast(ClientSupport, _REGISTRY.for_package(found))


def _seen_by(support: ClientSupport | None, exc: BaseException) -> Seen | None:
    if support is None:
        return None
    try:
        return support.transport_failure(exc)
    except ToolsMistake:  # the client's error is the tool's own doing: no client failure
        return None
    except Exception:
        # What a client's support could not read (a status error whose response lost its
        # body) means nothing more than any other exception: the mapping never raises.
        return None


def transport_failure(exc: BaseException) -> Seen | None:
    """See :meth:`ClientSupport.transport_failure`; None for an exception of no known client
    (see the module's docstring for the order clients are asked in)."""
    seen = _seen_by(_raised_by(exc), exc)
    if seen is None:
        seen = _seen_by(support_for(exc), exc)
    return seen if seen is not None else _carried_answer(exc)


_CARRIERS = ("response", "raw_response")
"""Where an SDK's own error keeps the response it was raised for: Speakeasy's SDKs (mistralai
among them) as ``raw_response``, many others as ``response``."""


def _carried_answer(exc: BaseException) -> ResponseView | None:
    """The failing answer (status 400 or more) of a client that an exception of no client
    carries: an SDK that raises its own error for a status keeps the response it got, and
    that response says what failed. Only a client's own response object counts."""
    for carried in _carried(exc):
        try:
            view = read_response(carried) if carried is not None else None
        except Exception:  # a streamed body not read: not here
            continue
        if view is not None and view.status >= 400:
            return view
    return None


def _carried(exc: BaseException) -> Iterator[object]:
    for name in _CARRIERS:
        try:
            value = getattr(exc, name, None)
        except Exception:  # a property that raises: nothing kept there
            continue
        yield value
    # tenacity's RetryError when a retry on the result (retry_if_result) gave up: its last
    # attempt is a future holding what the call returned, the response it retried on. (One
    # that gave up on an exception has that exception as its cause, read as any cause is.)
    try:
        attempt = getattr(exc, "last_attempt", None)
    except Exception:  # a property that raises: nothing kept there
        return
    if not isinstance(attempt, Future) or not attempt.done() or attempt.cancelled():
        return
    if attempt.exception() is None:
        yield attempt.result()


def read_response(obj: object) -> ResponseView | None:
    """See :meth:`ClientSupport.read_response`; None for an object of no known client."""
    support = support_for(obj)
    return None if support is None else support.read_response(obj)


def clients() -> tuple[str, ...]:
    """The clients the runtime understands, by the name a user knows them by."""
    return (*(name for name in _SUPPORT if name not in _STDLIB), "urllib")


_NO_CONTENT = frozenset({204, 205})
"""Statuses that say the answer has no body, by design."""


class ToolsMistake(Exception):
    """Raised by a client's support for an error that is the tool's own mistake, not the
    service's failure (the ``.json()`` of an answer whose status says it has no body): the
    error then reads as any bug in the tool does."""


def json_failure(
    exc: BaseException, response_type: type, read: Callable[[Any], ResponseView | None]
) -> Seen | None:
    """What ``exc`` means when the ``.json()`` of a ``response_type`` raised it (the decoding
    error does not carry the response; the frame of the method that raised it does), read
    with ``read``: on a 2xx, an answer of something else than the JSON asked for (a login
    page); on any other status, that status (a 502 page). On a 204 or 205, whose status says
    there is no body, raises :class:`ToolsMistake`. None for any other ``exc``."""
    for frame in frames_of(exc):
        own = frame.f_locals.get("self")
        if frame.f_code.co_name == "json" and isinstance(own, response_type):
            response: Any = own
            view = read(response)
            if view is None:
                return None
            if view.status in _NO_CONTENT:
                raise ToolsMistake(f"the JSON of an answer with HTTP {view.status}")
            if 200 <= view.status <= 299:
                content_type = response.headers.get("content-type")
                return UndecodedAnswer(view, content_type, type(exc).__name__)
            return view
    return None


def frames_of(exc: BaseException) -> Iterator[FrameType]:
    """The frames ``exc`` was raised through, outermost first: where a client's exception does
    not carry what it was raised for (the request, the response), the frames that raised it do."""
    tb = exc.__traceback__
    while tb is not None:
        yield tb.tb_frame
        tb = tb.tb_next
