"""httplib2 (and google-api-python-client, google-auth-httplib2 above it): its connections get
the standard library fake's socket.

httplib2's ``HTTPConnectionWithTimeout`` and ``HTTPSConnectionWithTimeout`` subclass
http.client's connections with a ``connect`` of their own (its proxies, its TLS context), which
the standard library's fake leaves alone. Here that ``connect`` is replaced by the one of
``_urllib``: the connection gets a socket the router answers, and everything above it is the
real code, httplib2's included: its redirects (``RedirectLimit`` past its limit), its
decompression, its cache, and its own retry of a request whose connection closed without an
answer (it sends it once more: a route that disconnects is called twice).

A failure arises where a real one does, as the socket raises it, and httplib2 lets it out as
it is: a refused connection is a bare ``ConnectionRefusedError``, a connect, write or read
timeout a bare ``TimeoutError`` (``socket.timeout``), a reset a ``ConnectionResetError``, a
server that closed without answering http.client's ``RemoteDisconnected``, after the retry. A
name that does not resolve (``httplib2.ServerNotFoundError``) cannot happen: every routed host
is answered, an unrouted one fails as an unmatched request.

No mocking library is used. None is made for httplib2; googleapiclient's own
``HttpMock``/``HttpMockSequence`` stand in for the ``Http`` object, so httplib2's redirects,
retries and errors never run, and they read canned files rather than the route table. The
socket-level mocks that would reach it replace the socket module, which the network guard
wraps: httpretty (last release 2021) and mocket. The stdlib fake's socket, tested with urllib
and http.client, serves as it is.
"""

from __future__ import annotations

import httplib2

from ._urllib import ConnectBackend, real_connects


class ClientBackend(ConnectBackend):
    client = "httplib2"
    connects = real_connects(
        httplib2, {"HTTPConnectionWithTimeout": "http", "HTTPSConnectionWithTimeout": "https"}
    )
