"""A client base on httpx that turns every way a service call fails into the right exception.

Subclass :class:`ServiceClient` (or :class:`AsyncServiceClient`), give ``service_name`` and
``base_url``, and call ``get_json`` / ``request``: a received non-2xx status becomes its carrier
from the status table, a failure to get any answer an :class:`ExternalServiceException` that says
whether the request was sent, and a 2xx body that is not JSON an ExternalServiceException too.
A service's quirks go in a ``classify`` override. The sync and async classes share everything
but the sending.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import ssl
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, Self

import httpx

from pytest_nucleo._exceptions import (
    ExternalServiceException,
    LLMReadableCheckedException,
    ResourceNotFoundException,
)
from pytest_nucleo._text._render import (
    VALUE_LIMIT,
    one_line,
)

from ._clients import ResponseView, TransportSeen, read_response, transport_failure
from ._clients._kinds import Transport, transport_exception
from ._clients._not_json import not_json_exception
from ._profiles import check_profile, profile_failure
from ._status import http_exception

if TYPE_CHECKING:
    import httpx2

logger = logging.getLogger("pytest_nucleo.http")

# What a JSON text may start with after its whitespace: a value (NaN and Infinity as Python
# reads them), or a byte-order mark or NUL byte of a UTF-16 or UTF-32 text; or more whitespace
# than is looked at.
_JSON_START = re.compile(rb"[ \t\n\r]*+(?:[\[{\"\-0-9tfnNI]|\xef\xbb\xbf|\xff|\xfe|\x00|\Z)")


def _may_be_json(content: bytes) -> bool:
    """False when ``content`` cannot be JSON by its first bytes: an HTML page or a plain text
    of 50 MB then fails at once, instead of being decoded whole to fail."""
    return not content or _JSON_START.match(content, 0, 4096) is not None


class _ServiceClientBase:
    """What the sync and async clients share: configuration, mapping, decoding."""

    service_name: ClassVar[str]
    """The service's name as the model should read it (``"PubChem"``)."""
    base_url: ClassVar[str]
    """Prefix of every path given to ``request`` / ``get_json``."""
    profile: ClassVar[str | None] = None
    """A vendor profile to read the service's answers by (``"github"``, ``"slack"``,
    ``"stripe"``, ``"aws"``): its own documented rules, after ``classify`` and before the
    generic ones. See "What services say" in the docs."""

    def __init__(self) -> None:
        missing = [
            name
            for name in ("service_name", "base_url")
            if not isinstance(getattr(type(self), name, None), str) or not getattr(type(self), name)
        ]
        if missing:
            raise TypeError(
                f"{type(self).__name__} must set the class attribute(s) {', '.join(missing)}: "
                'for example service_name = "PubChem" and base_url = '
                '"https://pubchem.ncbi.nlm.nih.gov/rest/pug"'
            )
        check_profile(type(self).profile, type(self).__name__)

    def classify(self, response: httpx.Response) -> LLMReadableCheckedException | None:
        """Map a service's quirk: return an exception to raise for ``response``, or None.

        Called for every response, 2xx included, before the status table. Return an existing
        type (``ResourceNotFoundException`` for a "not found" that comes as a 200 with an error
        JSON, ``http_exception(...)`` with another status...); never add a type for one
        service. The default returns None: the status table decides. With an httpx2 client,
        ``response`` is an ``httpx2.Response``, whose API is httpx's.
        """
        return None

    def _url(self, path: str) -> str:
        if path.startswith(("http://", "https://")):
            return path
        return f"{self.base_url.rstrip('/')}/{path.lstrip('/')}"

    def _name(self) -> str:
        return one_line(self.service_name, VALUE_LIMIT)

    def _failure(self, response: httpx.Response) -> LLMReadableCheckedException | None:
        """The exception for ``response``, or None when it is a success."""
        failure = self.classify(response)
        profile = type(self).profile
        if failure is None and profile is not None:
            failure = profile_failure(profile, self.service_name, _view(response))
        if failure is None and not response.is_success:
            view = _view(response)
            failure = http_exception(
                self.service_name,
                view.endpoint,
                view.status,
                view.body,
                view.headers,
                known=view.known,
            )
        if failure is not None:
            logger.debug("%s", failure)
        return failure

    def _transport_failure(self, error: Exception, method: str, url: str) -> Exception:
        """An ExternalServiceException for a call that got no response (texts: ``_kinds``)."""
        seen = transport_failure(error)
        kind = seen.kind if isinstance(seen, TransportSeen) else Transport.OTHER
        return transport_exception(self.service_name, error, kind, method, url)

    def _decode(self, response: httpx.Response, empty_on_404: bool) -> Any:
        failure = self._failure(response)
        if failure is not None:
            if empty_on_404 and isinstance(failure, ResourceNotFoundException):
                return None
            raise failure
        if response.status_code == 204:
            return None
        if not _may_be_json(response.content):  # not decoded whole only to fail
            raise self._not_json(response, "JSONDecodeError")
        try:
            return json.loads(response.content)
        except (ValueError, UnicodeDecodeError) as error:  # JSONDecodeError is a ValueError
            reason = type(error).__name__
        except RecursionError:  # the decoder's stack ran out: a mapping never lets that escape
            raise self._not_json(response, "nested too deeply to be read", deep=True) from None
        raise self._not_json(response, reason) from None  # the decoder's error holds the body

    def _not_json(
        self, response: httpx.Response, reason: str, *, deep: bool = False
    ) -> ExternalServiceException:
        return not_json_exception(
            self.service_name, _view(response), response.headers.get("content-type"), reason,
            deep=deep,
        )  # fmt: skip


def _view(response: httpx.Response) -> ResponseView:
    view = read_response(response)
    if view is None:  # only an httpx or httpx2 client sends: it always gives one of theirs
        raise TypeError(f"not an httpx or httpx2 response: {type(response).__name__}")
    return view


_CLIENT_PACKAGES = ("httpx", "httpx2")


def _checked(client: Any, owner: str, kind: str) -> Any:
    """``client`` when it is an httpx or httpx2 ``kind``; a TypeError saying what to pass."""
    # Read from the class names, so checking an httpx2 client does not import httpx2 itself.
    if not any(
        cls.__name__ == kind and cls.__module__.partition(".")[0] in _CLIENT_PACKAGES
        for cls in type(client).__mro__
    ):
        raise TypeError(
            f"{owner}(client=...) takes an httpx.{kind} or an httpx2.{kind}; got a "
            f"{type(client).__module__}.{type(client).__name__}. For another client, call it "
            "yourself and map its responses with raise_for_response(service, response)"
        )
    return client


@functools.cache
def _tls() -> ssl.SSLContext:
    """The TLS context of the clients a service client builds for itself: httpx's default
    (certifi's bundle, the SSL_CERT_FILE and SSL_CERT_DIR variables as they are when it is first
    needed), built once per process. httpx builds one for every client it makes, loading the
    bundle each time, about 40 ms: a tool that opens a service client per call (``async with
    Shop() as shop``, the way an asyncio tool run by ``asyncio.run`` per call must) would pay
    that on every call. A context is made to be shared, by threads and event loops alike."""
    return httpx.create_ssl_context()


class ServiceClient(_ServiceClientBase):
    """Base of a synchronous client for one HTTP service. Subclass it:

    ``class PubChem(ServiceClient): service_name = "PubChem"; base_url = "https://..."``

    ``client`` is an ``httpx.Client`` or an ``httpx2.Client`` carrying your auth headers,
    timeouts and transport (both map the same way); without
    one, a client is built once for this object (following redirects, on httpx's default TLS
    settings, whose context all such clients share) and closed by :meth:`close` or ``with``.
    For asyncio use :class:`AsyncServiceClient`.
    """

    def __init__(self, client: httpx.Client | httpx2.Client | None = None) -> None:
        super().__init__()
        self._owned = client is None
        self.client: Any = (
            _checked(client, "ServiceClient", "Client")
            if client is not None
            else httpx.Client(follow_redirects=True, verify=_tls())
        )
        """The httpx (or httpx2) client requests go through: the one given, or one built for this
        object."""

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """Send a request to ``base_url + path`` (keyword arguments go to ``httpx``) and return
        the response when it is a success; otherwise raise the mapped failure."""
        response = self._send(method, path, **kwargs)
        failure = self._failure(response)
        if failure is not None:
            raise failure
        return response

    def get_json(self, path: str, *, params: Any = None, empty_on_404: bool = False) -> Any:
        """GET ``path`` and return its decoded JSON (None for a 204).

        ``empty_on_404=True`` is the search case: a not-found (a 404, or what ``classify`` maps
        to ResourceNotFoundException) means "no results" and returns None instead of raising.
        """
        return self._decode(self._send("GET", path, params=params), empty_on_404)

    def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        url = self._url(path)
        try:
            response: httpx.Response = self.client.request(method, url, **kwargs)
        except Exception as error:
            if not isinstance(transport_failure(error), TransportSeen):
                raise  # not a failure to get an answer: a bug, or the caller's to handle
            raise self._transport_failure(error, method, url) from error
        return response

    def close(self) -> None:
        """Close the httpx client if this object built it (a client you passed stays open)."""
        if self._owned:
            self.client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class AsyncServiceClient(_ServiceClientBase):
    """The asyncio twin of :class:`ServiceClient`: same mapping, ``await`` on every call.

    ``client`` is an ``httpx.AsyncClient`` or an ``httpx2.AsyncClient``; without one, a client is built once for this object
    and closed by :meth:`aclose` or ``async with``.
    """

    def __init__(self, client: httpx.AsyncClient | httpx2.AsyncClient | None = None) -> None:
        super().__init__()
        self._owned = client is None
        self.client: Any = (
            _checked(client, "AsyncServiceClient", "AsyncClient")
            if client is not None
            else httpx.AsyncClient(follow_redirects=True, verify=_tls())
        )
        """The async httpx (or httpx2) client requests go through: the one given, or one built for
        this object."""

    async def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """See :meth:`ServiceClient.request`."""
        response = await self._send(method, path, **kwargs)
        failure = self._failure(response)
        if failure is not None:
            raise failure
        return response

    async def get_json(self, path: str, *, params: Any = None, empty_on_404: bool = False) -> Any:
        """See :meth:`ServiceClient.get_json`."""
        return self._decode(await self._send("GET", path, params=params), empty_on_404)

    async def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        url = self._url(path)
        try:
            response: httpx.Response = await self.client.request(method, url, **kwargs)
        except Exception as error:
            if not isinstance(transport_failure(error), TransportSeen):
                raise  # not a failure to get an answer: a bug, or the caller's to handle
            raise self._transport_failure(error, method, url) from error
        return response

    async def aclose(self) -> None:
        """Close the httpx client if this object built it."""
        if self._owned:
            await self.client.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
