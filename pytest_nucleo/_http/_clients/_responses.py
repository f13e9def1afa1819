"""Any client's response as a failure: :func:`exception_for_response` and its raising twin."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from pytest_nucleo._exceptions import LLMReadableCheckedException
from pytest_nucleo._http._status import http_exception

from . import ResponseView, clients, read_response
from ._hooks import hook_failures

C = TypeVar("C")


def view_of(response: object, caller: str) -> ResponseView:
    """What ``response`` answered; TypeError, saying what is accepted, for anything else."""
    view = read_response(response)
    if view is None:
        raise TypeError(
            f"{caller}() takes a response of one of the clients {', '.join(clients())} (an "
            f"aiohttp one once its body was read); got a value of type "
            f"{type(response).__name__}. For another client, "
            "call http_exception(service, url, status, body, headers) with its parts"
        )
    return view


def _check_service(service: object, caller: str) -> None:
    if not isinstance(service, str) or not service.strip():
        raise TypeError(
            f"{caller}() needs the service's name as the model should read it (a non-empty "
            f'str, for example "PubChem") as its first argument; got {service!r}'
        )


def exception_for_response(
    service: str, response: object, *, known: Iterable[str] = ()
) -> LLMReadableCheckedException | None:
    """The failure a response of any supported client means, or None for a 2xx.

    The same mapping as :func:`http_exception` (status table, Retry-After, throttle-body rule,
    safe excerpts), with what the request carried (credential headers, query values, body
    values) masked wherever it shows up. ``known`` adds values to mask: a urllib3 response
    knows its URL but not the headers it was requested with, so pass its credentials there.
    An aiohttp response must have been read first (``await response.read()``): its body
    cannot be read without awaiting.
    """
    return _exception(service, response, "exception_for_response", known)


def _exception(
    service: str, response: object, caller: str, known: Iterable[str]
) -> LLMReadableCheckedException | None:
    _check_service(service, caller)
    return _failure_of(service, view_of(response, caller), known)


def _failure_of(
    service: str, view: ResponseView, known: Iterable[str]
) -> LLMReadableCheckedException | None:
    if 200 <= view.status <= 299:
        return None
    return http_exception(
        service, view.endpoint, view.status, view.body, view.headers, known=(*view.known, *known)
    )


def raise_for_response(service: str, response: object, *, known: Iterable[str] = ()) -> None:
    """Raise :func:`exception_for_response` for a response outside 2xx; return None for a 2xx."""
    failure = _exception(service, response, "raise_for_response", known)
    if failure is not None:
        raise failure


Leave = Iterable[int] | Callable[[Any], object]
"""What ``harden_client(leave=...)`` takes: statuses, or a predicate on the client's response."""


def harden_client(service: str, client: C, *, known: Iterable[str] = (), leave: Leave = ()) -> C:
    """Make every failing response ``client`` receives raise the mapped failure
    (:func:`raise_for_response`'s: status, Retry-After, what the server said), before the code
    that sent the request sees the response. Returns ``client``.

    For a session or client an SDK builds and then turns failing responses into its own
    exceptions, often losing the status, the wait and the server's words
    (``sdk = SearchClient(key); harden_client("Search", sdk.session)``). ``client`` is a
    ``requests.Session``, an ``httpx.Client``/``AsyncClient`` or an ``httpx2`` one. Statuses of
    400 or more raise; redirects and successes go on as before. The SDK then never sees a
    failing status, so its own retries or token refresh on one are skipped. Hooking twice for
    one service replaces the first hook. For a response in hand, use
    :func:`raise_for_response`; for a client of your own, :class:`ServiceClient`, which maps
    its responses already; for the provider SDKs, :func:`from_provider_error`.

    ``leave`` hands chosen failing responses to the code that sent the request as they are,
    for it (or the SDK) to read: statuses (``leave={404}``: the SDK reads its 404 as "nothing
    found"), or a predicate called with each failing response, the client's own object with
    its body read (``leave=lambda response: str(response.url).endswith("/robots.txt")``, a probe whose
    404 means "allowed"), true to leave it. What the predicate raises reaches the caller, as
    from any hook of the client. Only a failing response is ever checked, so only statuses of
    400 or more can be left.
    """
    _check_service(service, "harden_client")
    extra = tuple(known)
    left = _leave_rule(leave)

    def check(response: object) -> None:
        view = view_of(response, "harden_client")
        if left(view.status, response):
            return
        failure = _failure_of(service, view, extra)
        if failure is not None:
            raise failure

    if not hook_failures(client, check, mark=f"pytest_nucleo:{service}"):
        raise TypeError(
            "harden_client() takes a requests.Session, an httpx.Client or httpx.AsyncClient, or "
            f"an httpx2 one; got a value of type {type(client).__name__}. For a response in "
            "hand, call raise_for_response(service, response)"
        )
    return client


_LEAVE_FORMS = (
    "statuses, such as leave={404}, or a predicate called with each failing response, such as "
    'leave=lambda response: str(response.url).endswith("/robots.txt")'
)


def _leave_rule(leave: object) -> Callable[[int, object], bool]:
    """``harden_client``'s ``leave`` as one test of a failing response's status and object; a
    TypeError or ValueError, saying what is accepted, for anything else."""
    if inspect.iscoroutinefunction(leave):
        # Its coroutine would be true, unawaited: every failing response would be left.
        raise TypeError(
            "harden_client(leave=...) calls its predicate from the client's hook, without "
            f"awaiting it: pass a plain function, not the coroutine function {leave!r}"
        )
    if callable(leave):
        predicate = leave

        def left(status: int, response: object) -> bool:
            verdict = predicate(response)
            if inspect.isawaitable(verdict):
                # An object with an async __call__ passes the check above; its coroutine would
                # be true, unawaited, leaving every failing response.
                if inspect.iscoroutine(verdict):
                    verdict.close()
                raise TypeError(
                    "harden_client(leave=...) calls its predicate from the client's hook, "
                    f"without awaiting it: {predicate!r} returned an awaitable; pass a plain "
                    "function"
                )
            return bool(verdict)

        return left
    if isinstance(leave, str | bytes | int) or not isinstance(leave, Iterable):
        raise TypeError(f"harden_client(leave=...) takes {_LEAVE_FORMS}; got {leave!r}")
    listed = list(leave)
    wrong = [s for s in listed if isinstance(s, bool) or not isinstance(s, int)]
    if wrong:
        raise TypeError(
            f"harden_client(leave=...) takes {_LEAVE_FORMS}; {wrong[0]!r} is not a status"
        )
    statuses = frozenset(listed)
    never = sorted(s for s in statuses if not 400 <= s <= 999)
    if never:
        raise ValueError(
            f"harden_client(leave=...) names {never[0]}, which is never checked: only a "
            "failing response (a status of 400 to 999) raises, so only those can be left"
        )
    return lambda status, response: status in statuses
