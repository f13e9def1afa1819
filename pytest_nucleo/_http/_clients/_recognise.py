"""A bare client exception as the failure it means, for the cause-chain helpers."""

from __future__ import annotations

from pytest_nucleo._exceptions import LLMReadableCheckedException

from . import ResponseView, Seen, UndecodedAnswer, transport_failure
from ._kinds import host_of, service_host, transport_exception


def client_failure(
    exc: BaseException, component: str, service: str | None = None
) -> LLMReadableCheckedException | None:
    """The failure a client's exception means, or None when no supported client raised it.

    ``service`` names the service when the caller knows it (``llm_errors(service=...)``,
    ``wrap_with_context``); else the request's host does when the exception carries it and it
    is not a loopback address, else "called by ``component``". The host alone never holds
    userinfo, port or query. The result's cause is ``exc``.
    """
    seen = transport_failure(exc)
    return None if seen is None else seen_failure(seen, exc, component, service)


def seen_failure(
    seen: Seen, exc: BaseException, component: str, service: str | None = None
) -> LLMReadableCheckedException | None:
    """The failure ``seen`` means, read from ``exc`` (see :func:`client_failure` for the name
    it gets); None for a 2xx answer. The SDK seam (``_sdks``) sorts its readings here too,
    once their vendor's profile has had its say."""
    failure: LLMReadableCheckedException
    if isinstance(seen, UndecodedAnswer):
        from ._not_json import not_json_exception

        named = service or service_host(seen.view.host) or f"called by {component}"
        failure = not_json_exception(named, seen.view, seen.content_type, seen.reason)
    elif isinstance(seen, ResponseView):
        from pytest_nucleo._http._status import (
            http_exception,  # imports httpx: only once a response is seen
        )

        if 200 <= seen.status <= 299:
            return None
        failure = http_exception(
            answer_name(seen, component, service),
            seen.endpoint,
            seen.status,
            seen.body,
            seen.headers,
            known=seen.known,
        )
    else:
        called = service or service_host(seen.host or host_of(seen.url))
        failure = transport_exception(
            called or component, exc, seen.kind, seen.method, seen.url,
            service_known=bool(called), sent_before=seen.sent_before,
        )  # fmt: skip
    failure.__cause__ = exc
    return failure


def answer_name(view: ResponseView, component: str, service: str | None = None) -> str:
    """The name a text gives the service that answered ``view``: ``service`` when given, else
    the host, else "called by ``component``" (a loopback host names nothing: "The external
    service called by get_order ...")."""
    return service or service_host(view.host or host_of(view.endpoint)) or f"called by {component}"
