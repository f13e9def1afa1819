"""requests: its transport failures and responses (its urllib3 causes via ``_urllib3``)."""

from __future__ import annotations

from typing import Any

import requests
import urllib3
from requests import exceptions as r

from pytest_nucleo._http._unseen import UNSEEN_BODY

from . import ResponseView, Seen, TransportSeen, frames_of, json_failure
from . import transport_failure as _any_client
from ._hooks import FailureCheck, replace_marked
from ._httpx_api import caused_by_tls
from ._kinds import Transport, host_of
from ._urllib3 import an_earlier_try_was_sent, last_answer

# Most specific first: ConnectTimeout is a ConnectionError and a Timeout; ProxyError and
# SSLError are ConnectionErrors. None: a request requests could not build (a header value
# with a newline, a body json cannot encode) was never sent; it is the tool's bug.
_KINDS: tuple[tuple[type[BaseException], Transport | None], ...] = (
    (r.ConnectTimeout, Transport.CONNECT_TIMEOUT),
    (r.ProxyError, Transport.PROXY),
    (r.SSLError, Transport.TLS),
    (r.ReadTimeout, Transport.READ_TIMEOUT),
    (r.Timeout, Transport.READ_TIMEOUT),
    (r.ChunkedEncodingError, Transport.PROTOCOL),
    (r.ContentDecodingError, Transport.DECODING),
    (r.JSONDecodeError, Transport.DECODING),  # an InvalidJSONError too: before it
    (r.InvalidHeader, None),
    (r.InvalidJSONError, None),
    (r.TooManyRedirects, Transport.TOO_MANY_REDIRECTS),
    (r.MissingSchema, Transport.UNSUPPORTED_PROTOCOL),
    (r.InvalidSchema, Transport.UNSUPPORTED_PROTOCOL),
    (r.InvalidURL, Transport.UNSUPPORTED_PROTOCOL),
    (r.ConnectionError, Transport.CONNECT),  # refined below by what it wraps
    (r.RequestException, Transport.OTHER),
)


def transport_kind(exc: BaseException) -> Transport | None:
    kind = next((k for cls, k in _KINDS if isinstance(exc, cls)), None)
    if kind is Transport.CONNECT:
        # requests raises one ConnectionError both for a refused connection (it wraps urllib3's
        # MaxRetryError of a NewConnectionError) and for one that broke after the request left
        # (a ProtocolError "Connection aborted"): the wrapped error tells them apart.
        wrapped = _wrapped(exc)
        seen = _any_client(wrapped) if wrapped is not None else None
        if isinstance(seen, TransportSeen):
            return seen.kind
        return Transport.TLS if caused_by_tls(exc) else Transport.OTHER
    return kind


def transport_failure(exc: BaseException) -> Seen | None:
    response = getattr(exc, "response", None)
    if isinstance(exc, r.HTTPError) and isinstance(response, requests.Response):
        return read_response(response)  # raised by raise_for_status(): an answer was received
    if isinstance(exc, r.RetryError):
        last = _gave_up_on(exc)
        if last is not None:
            return last
    if isinstance(exc, r.JSONDecodeError):
        answer = json_failure(exc, requests.Response, read_response)
        if answer is not None:
            return answer
    kind = transport_kind(exc)
    if kind is None:
        return None
    request: Any = getattr(exc, "request", None)
    method = getattr(request, "method", None)
    url = getattr(request, "url", None)
    wrapped = _wrapped(exc)
    return TransportSeen(
        kind, method if isinstance(method, str) else None, url if isinstance(url, str) else None,
        sent_before=_redirected(exc) or (wrapped is not None and an_earlier_try_was_sent(wrapped)),
    )  # fmt: skip


def _wrapped(exc: BaseException) -> BaseException | None:
    """The urllib3 error a requests ConnectionError wraps, as its first argument."""
    return exc.args[0] if exc.args and isinstance(exc.args[0], BaseException) else None


def _redirected(exc: BaseException) -> bool:
    """Whether ``exc`` was raised while a redirect was followed: the request answered with it
    reached the service."""
    return any(
        frame.f_code.co_name == "resolve_redirects"
        and isinstance(frame.f_locals.get("self"), requests.Session)
        for frame in frames_of(exc)
    )


def _gave_up_on(exc: r.RetryError) -> ResponseView | None:
    """The status urllib3's retries gave up on (an adapter's ``Retry(status_forcelist=...)``),
    with what the request carried to mask; None for a RetryError of anything else."""
    wrapped = exc.args[0] if exc.args else None
    if not isinstance(wrapped, urllib3.exceptions.MaxRetryError):
        return None
    answer = last_answer(wrapped)
    if answer is None:
        return None
    request: Any = exc.request
    if request is None:
        return answer
    url = str(request.url or answer.endpoint)
    return answer._replace(endpoint=url, known=_carried(request), host=host_of(url) or answer.host)


def _carried(request: Any) -> tuple[str, ...]:
    """What a prepared request carried that must never be shown (see ``values_sent``)."""
    from ._sent import values_sent

    return values_sent(
        str(request.method or "GET"), str(request.url or ""), request.headers.items(),
        request.body if isinstance(request.body, bytes | str) else None,
    )  # fmt: skip


def read_response(obj: object) -> ResponseView | None:
    if not isinstance(obj, requests.Response):
        return None
    response: Any = obj
    if response._content is False and response.raw is None:
        raise ValueError("the requests.Response holds no body to read: map it before closing it")
    # A streamed body the tool read already (iter_content), or closed unread (the response's
    # with-block ended), is gone: unseen, not empty.
    consumed = response._content is False and (
        response._content_consumed or bool(getattr(response.raw, "closed", False))
    )
    request = response.request
    known = _carried(request) if request is not None else ()
    url = response.url or (request.url if request is not None else None) or "/"
    body = UNSEEN_BODY if consumed else _content(response)
    return ResponseView(
        int(response.status_code), str(url), tuple(response.headers.items()), body, known,
        host_of(str(url)),
    )  # fmt: skip


def _content(response: Any) -> bytes:
    """The body, read now for a streamed response; unseen when the reading breaks off (a
    stalled or reset stream): the status still says what failed."""
    try:
        return bytes(response.content or b"")
    except (requests.RequestException, urllib3.exceptions.HTTPError, OSError):
        return UNSEEN_BODY


def hook_failures(client: object, check: FailureCheck, mark: str) -> bool:
    """A response hook on a ``requests.Session``: requests calls it with each response before
    it follows a redirect or hands the response back, so only statuses of 400 or more are
    checked (the body is read: ``.content`` loads a streamed one)."""
    if not isinstance(client, requests.Session):
        return False

    def on_response(response: requests.Response, *args: Any, **kwargs: Any) -> None:
        if response.status_code >= 400:
            check(response)

    hooks = client.hooks.setdefault("response", [])
    hooks[:] = replace_marked(hooks, on_response, mark)
    return True
