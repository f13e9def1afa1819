"""While a FakeUpstream runs, the httpx and httpx2 clients a test builds share one TLS context.

httpx (and httpx2) builds a TLS context for every client it makes, when it makes it: on the
default settings that loads a whole certificate store (certifi's bundle for httpx, the system's
for httpx2, or the one ``SSL_CERT_FILE`` names), 25 to 55 ms of CPU on a small machine, many
times what the faked call itself costs. A tool that opens a client per call (``httpx.get(...)``,
``async with httpx.AsyncClient() as client``) paid it in every test and in every scenario of
its contract matrix.

So, while the fake runs, a client built on the default settings (``verify=True``, no
``cert``) gets a context built once per process by the library's own function, the way it
builds one for each client: one for each pair of ``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` values
(read at each client, as the library reads them, unless ``trust_env=False``), so a file that
does not exist still fails every client that names it. Sharing a context is what httpx's docs
advise for speed, and a faked request never reaches TLS anyway. Other settings (``verify=False``,
a path, your own context, a ``cert``) go to the library's function as before.
"""

from __future__ import annotations

import importlib
import os
import ssl
import threading
from collections.abc import Callable
from typing import Any

_NAME = "create_ssl_context"


class SharedDefaultContext:
    """Patches ``create_ssl_context`` in the module where a client library's transports call
    it (``httpx._transports.default``). One per library and process: the context outlives the
    fakes that start and stop it. The patch shares only while a fake runs: should something put
    it back after ``stop`` (``monkeypatch`` undoing a patch of its own made during the test),
    it builds as the library does."""

    def __init__(self, transports: str) -> None:
        self._transports = importlib.import_module(transports)
        self._own: Callable[..., ssl.SSLContext] | None = None
        self._patch: Callable[..., ssl.SSLContext] | None = None
        self._running = False
        self._shared: dict[tuple[str | None, str | None], ssl.SSLContext] = {}
        self._lock = threading.Lock()

    def start(self) -> None:
        current: Callable[..., ssl.SSLContext] | None = getattr(self._transports, _NAME, None)
        if current is None:  # a release that builds its contexts otherwise: nothing to share
            return
        if current is not self._patch:
            own = self._own = current

            def create_ssl_context(
                verify: Any = True, cert: Any = None, trust_env: bool = True
            ) -> ssl.SSLContext:
                if not self._running or verify is not True or cert is not None:
                    return own(verify=verify, cert=cert, trust_env=trust_env)
                return self._default(own, trust_env)

            self._patch = create_ssl_context
            setattr(self._transports, _NAME, create_ssl_context)
        self._running = True

    def stop(self) -> None:
        self._running = False
        if self._patch is not None and getattr(self._transports, _NAME, None) is self._patch:
            setattr(self._transports, _NAME, self._own)

    def _default(self, own: Callable[..., ssl.SSLContext], trust_env: bool) -> ssl.SSLContext:
        named = (os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
        key = named if trust_env else (None, None)
        with self._lock:  # two threads building their first client build one context
            context = self._shared.get(key)
            if context is None:  # a missing file raises here, every time, and is not kept
                context = self._shared[key] = own(verify=True, cert=None, trust_env=trust_env)
            return context
