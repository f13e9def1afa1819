"""The support of the clients with httpx's API (httpx itself, and its fork httpx2)."""

from __future__ import annotations

import ssl
from types import ModuleType
from typing import Any

from pytest_nucleo._causes import iter_chain
from pytest_nucleo._http._unseen import UNSEEN_BODY

from . import ResponseView, Seen, TransportSeen, frames_of, json_failure
from ._hooks import FailureCheck, replace_marked
from ._kinds import Transport


def caused_by_tls(exc: BaseException) -> bool:
    """Whether the chain of ``exc`` holds the standard library's TLS failure, or (as httpcore
    drops that cause) an error that repeats its message ("[SSL: WRONG_VERSION_NUMBER] ...")."""
    return any(
        isinstance(member, ssl.SSLError | ssl.CertificateError)
        or (bool(member.args) and str(member.args[0]).startswith("[SSL"))
        for member in iter_chain(exc)
    )


class HttpxApi:
    """Reads the exceptions and responses of ``lib``, a module with httpx's API."""

    def __init__(self, lib: ModuleType, *, plain_httpx: bool) -> None:
        self.lib = lib
        self.plain_httpx = plain_httpx
        # Most specific first: the first class an error is an instance of gives its kind.
        # None: a request httpx refused to send (a header value with a newline) is the
        # tool's bug, not the service's failure.
        self.kinds: tuple[tuple[type[BaseException], Transport | None], ...] = (
            (lib.ConnectTimeout, Transport.CONNECT_TIMEOUT),
            (lib.ConnectError, Transport.CONNECT),
            (lib.PoolTimeout, Transport.POOL_TIMEOUT),
            (lib.UnsupportedProtocol, Transport.UNSUPPORTED_PROTOCOL),
            (lib.ProxyError, Transport.PROXY),
            (lib.ReadTimeout, Transport.READ_TIMEOUT),
            (lib.WriteTimeout, Transport.WRITE_TIMEOUT),
            (lib.RemoteProtocolError, Transport.PROTOCOL),
            (lib.LocalProtocolError, None),
            (lib.TooManyRedirects, Transport.TOO_MANY_REDIRECTS),
            (lib.DecodingError, Transport.DECODING),
            (lib.HTTPError, Transport.OTHER),
        )

    def transport_kind(self, exc: BaseException) -> Transport | None:
        kind = next((k for cls, k in self.kinds if isinstance(exc, cls)), None)
        if kind is Transport.CONNECT and caused_by_tls(exc):
            return Transport.TLS  # httpx reports a failed handshake as a ConnectError
        return kind

    def transport_failure(self, exc: BaseException) -> Seen | None:
        if isinstance(exc, self.lib.HTTPStatusError):
            # raise_for_status() on a streamed response whose body was not read (its stream
            # is closed by then, mostly): the status says enough, the body is unseen.
            return self._view(exc.response, unread=UNSEEN_BODY)
        if isinstance(exc, ValueError):  # json's error, let through by Response.json()
            answer = json_failure(exc, self.lib.Response, self.read_response)
            if answer is not None:
                return answer
        kind = self.transport_kind(exc)
        if kind is None:
            return None
        request = self._request_of(exc)
        seen = TransportSeen(kind, sent_before=self._answered_before(exc))
        if request is None:
            return seen
        return seen._replace(method=str(request.method), url=str(request.url))

    def _answered_before(self, exc: BaseException) -> bool:
        """Whether the client had an answer to an earlier request of the call (a redirect it
        followed, an authentication challenge): the client's frames keep them in ``history``."""
        clients = (self.lib.Client, self.lib.AsyncClient)
        return any(
            isinstance(frame.f_locals.get("self"), clients) and bool(frame.f_locals.get("history"))
            for frame in frames_of(exc)
        )

    @staticmethod
    def _request_of(holder: Any) -> Any:
        try:
            return holder.request  # a property that raises when no request was attached
        except (RuntimeError, AttributeError):
            return None

    def read_response(self, obj: object) -> ResponseView | None:
        return self._view(obj, unread=None)

    def _view(self, obj: object, *, unread: bytes | None) -> ResponseView | None:
        """What ``obj`` answered; a body not read yet is ``unread``, or a ValueError saying to
        read it first when that is None."""
        if not isinstance(obj, self.lib.Response):
            return None
        response: Any = obj
        try:
            body = response.content
        except self.lib.ResponseNotRead:
            if unread is None:
                raise ValueError(
                    "the response's body was not read yet (a streamed response): call "
                    "response.read() (or await response.aread()) before mapping it"
                ) from None
            body = unread
        # httpx.Headers is read as it is; another client's as its (name, value) pairs, so a
        # header sent twice still counts by its first value.
        headers = response.headers if self.plain_httpx else tuple(response.headers.multi_items())
        request = self._request_of(response)
        if request is None:
            return ResponseView(response.status_code, "/", headers, body, ())
        return ResponseView(
            response.status_code,
            request.url.path,
            headers,
            body,
            self.known(request),
            request.url.host or None,
        )

    def known(self, request: Any) -> tuple[str, ...]:
        """What ``request`` carried that must never be shown."""
        if self.plain_httpx:
            from ._sent import sent_values

            return sent_values(request)
        from ._sent import values_sent

        try:
            content = request.content
        except self.lib.RequestNotRead:  # a streamed body: not readable without consuming it
            content = b""
        return values_sent(
            str(request.method), str(request.url), request.headers.multi_items(), content
        )

    def hook_failures(self, client: object, check: FailureCheck, mark: str) -> bool:
        """A response event hook on a ``Client`` or ``AsyncClient``: it runs before the body is
        read, so a failing response's body is read first (for the message), and for every
        response of a redirect chain, so only statuses of 400 or more are checked."""
        if isinstance(client, self.lib.AsyncClient):

            async def on_async_response(response: Any) -> None:
                if response.status_code >= 400:
                    await response.aread()
                    check(response)

            hook: Any = on_async_response
        elif isinstance(client, self.lib.Client):

            def on_response(response: Any) -> None:
                if response.status_code >= 400:
                    response.read()
                    check(response)

            hook = on_response
        else:
            return False
        hooks = client.event_hooks
        # Assigned back: httpx's event_hooks setter copies the lists it is given.
        client.event_hooks = {
            **hooks,
            "response": replace_marked(hooks.get("response", []), hook, mark),
        }
        return True
