"""aiohttp: an ``aioresponses`` mock whose one catch-all callback per method asks the router.

A neutral failure is raised as the exception aiohttp raises for it (``ClientConnectorError``,
``SocketTimeoutError`` and the other ``ServerTimeoutError`` kinds, ``ServerDisconnectedError``,
``ClientOSError``), with aiohttp's own messages.

``aioresponses`` is imported only when this fake runs; without it, aiohttp's requests are
refused (``_missing``).
"""

from __future__ import annotations

import functools
import inspect
import json
import re
import sys
import unittest.mock
import urllib.parse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import aiohttp
import httpx
import respx
from aiohttp.client_reqrep import ConnectionKey
from multidict import CIMultiDict

from . import translate

if TYPE_CHECKING:
    from aioresponses import CallbackResult, aioresponses

_ANY_URL = re.compile(r".*")
_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")


class ClientBackend:
    client = "aiohttp"
    mock = "aioresponses"

    @staticmethod
    def entry() -> tuple[type, str]:
        return aiohttp.ClientSession, "_request"

    def __init__(self) -> None:
        self._mock: aioresponses | None = None

    def refusal(self) -> str | None:
        request = aiohttp.ClientSession._request
        if getattr(request, "__module__", None) != "aiohttp.client" or hasattr(
            request, "assert_called"
        ):
            return (
                "aiohttp's ClientSession._request is already patched (an active `aioresponses` "
                "mock, most likely). Two mocks would both answer requests. Use one HTTP mock per "
                "test: fake_upstream fakes aiohttp too."
            )
        return None

    def start(self, router: respx.Router) -> None:
        from aioresponses import aioresponses

        mock = aioresponses()
        # aioresponses patches with autospec, about 1 ms a start; a plain function standing in
        # for ClientSession._request does the same job for a fraction of that.
        mock.patcher = unittest.mock.patch.object(
            aiohttp.ClientSession, "_request", new=_delegate(mock)
        )
        mock.start()
        for method in _METHODS:
            callback = functools.partial(_answer, router, method)
            mock.add(_ANY_URL, method=method, callback=callback, repeat=True)
        self._mock = mock

    def stop(self) -> None:
        if self._mock is not None:
            self._mock.stop()
            self._mock = None


class _SentRequest:
    """Stands for the writer of a request already sent, which the aiohttp releases that take a
    ``stream_writer`` ask a response for (``output_size``); aioresponses 0.7 builds responses
    without one."""

    output_size = 0


# Older aiohttp releases (3.13 and before) have no such argument and reject it.
_TAKES_STREAM_WRITER = "stream_writer" in inspect.signature(aiohttp.ClientResponse).parameters


class _Response(aiohttp.ClientResponse):
    def __init__(self, method: str, url: Any, **kwargs: Any) -> None:
        if _TAKES_STREAM_WRITER:
            kwargs.setdefault("stream_writer", _SentRequest())
        super().__init__(method, url, **kwargs)

    @property
    def content(self) -> aiohttp.StreamReader:
        return self._whole_body

    @content.setter
    def content(self, stream: aiohttp.StreamReader) -> None:
        # aioresponses feeds the whole body at once into a reader with a 64 KiB limit, whose
        # stand-in protocol fails an assertion when asked to pause past 128 KiB: a large error
        # page would never arrive. Give the reader room for any body.
        stream._high_water = sys.maxsize
        self._whole_body = stream


def _delegate(mock: aioresponses) -> Callable[..., Any]:
    async def _request(session: aiohttp.ClientSession, *args: Any, **kwargs: Any) -> Any:
        return await mock._request_mock(session, *args, **kwargs)

    return _request


def _answer(router: respx.Router, method: str, url: Any, **kwargs: Any) -> CallbackResult:
    from aioresponses import CallbackResult

    headers = dict(kwargs.get("headers") or {})
    content = _body(kwargs, headers)
    request = httpx.Request(method, str(url), headers=headers, content=content)
    try:
        response = router.handler(request)
    except httpx.TransportError as error:
        raise _failure(error, request) from None
    return CallbackResult(
        status=response.status_code,
        body=response.content,
        headers=CIMultiDict(response.headers.multi_items()),  # type: ignore[arg-type]
        content_type=response.headers.get("content-type", "application/octet-stream"),
        response_class=_Response,
        # aioresponses leaves a callback's reason None, and aiohttp's raise_for_status()
        # asserts one is set ("" for a status without a phrase).
        reason=response.reason_phrase,
    )


def _body(kwargs: dict[str, Any], headers: dict[str, str]) -> bytes:
    if kwargs.get("json") is not None:
        headers.setdefault("Content-Type", "application/json")
        return json.dumps(kwargs["json"]).encode()
    data = kwargs.get("data")
    if data is None:
        return b""
    if isinstance(data, str):
        return data.encode()
    if isinstance(data, bytes | bytearray):
        return bytes(data)
    if isinstance(data, dict):
        headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        return urllib.parse.urlencode(data).encode()
    return str(data).encode()


def _failure(error: httpx.TransportError, request: httpx.Request) -> Exception:
    url = request.url
    port = url.port or (443 if url.scheme == "https" else 80)
    key = ConnectionKey(url.host, port, url.scheme == "https", True, None, None, None)
    origin = f"{url.scheme}://{url.host}:{port}"

    def connector(e: httpx.TransportError) -> Exception:
        return aiohttp.ClientConnectorError(key, ConnectionRefusedError(111, "Connection refused"))

    table: dict[type[httpx.TransportError], Callable[[httpx.TransportError], Exception]] = {
        httpx.ReadTimeout: lambda e: aiohttp.SocketTimeoutError(
            "Timeout on reading data from socket"
        ),
        httpx.WriteTimeout: lambda e: aiohttp.SocketTimeoutError(
            "Timeout on writing data to socket"
        ),
        httpx.ConnectTimeout: lambda e: aiohttp.ConnectionTimeoutError(
            f"Connection timeout to host {origin}"
        ),
        httpx.PoolTimeout: lambda e: aiohttp.ConnectionTimeoutError(
            f"Connection timeout to host {origin}"
        ),
        httpx.ConnectError: connector,
        httpx.RemoteProtocolError: lambda e: aiohttp.ServerDisconnectedError(),
        httpx.ReadError: lambda e: aiohttp.ClientOSError(104, "Connection reset by peer"),
        httpx.TransportError: lambda e: aiohttp.ClientConnectionError(str(e)),
    }
    return translate(error, table)
