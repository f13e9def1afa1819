"""One fake backend per HTTP client, all answering from the one route table of a FakeUpstream.

The route table is a respx router: it matches an ``httpx.Request`` and gives an outcome, which
is client-neutral. An answer is an ``httpx.Response`` (status, headers, body); a transport
failure is raised as one of httpx's transport errors, whose class names the kind of failure
(``ReadTimeout``, ``ConnectError``, ...). Each backend turns its client's request into an
``httpx.Request``, asks the router, and hands the answer back in its client's own types, or
raises its client's own exception for the failure, so a tool's ``except`` clauses run as in
production.

A backend is one module here with a ``ClientBackend`` class; adding a client is one module and
one line in ``_BACKENDS``. A backend is imported only when a FakeUpstream starts and only if
its client has been imported by then (a tool imports its client before its test runs), so the
plugin's import stays light and a test pays only for the clients it uses.
"""

from __future__ import annotations

import importlib
import sys
import unittest.mock
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol

import httpx
from respx.mocks import Mocker

if TYPE_CHECKING:
    import respx

# (the client's import name, the backend module) in the order the backends start.
_BACKENDS = (
    ("httpx", "_httpx"),
    ("httpx2", "_httpx2"),
    ("requests", "_requests"),
    ("aiohttp", "_aiohttp"),
)


class Backend(Protocol):
    """What a FakeUpstream needs from one client's fake."""

    client: str

    def refusal(self) -> str | None:
        """Why this client cannot be faked now (another mock already patches it), or None."""

    def start(self, router: respx.Router) -> None:
        """Send the client's requests to ``router`` until ``stop``."""

    def stop(self) -> None: ...


_loaded: dict[str, Callable[[], Backend]] = {}


def backend_factories() -> list[Callable[[], Backend]]:
    """The backend classes of the clients imported so far, each backend loaded on first need.

    A client not yet imported cannot have sent a request, and loading every installed client
    up front would cost a test the imports of all of them (aiohttp alone takes about 0.3 s,
    enough to fail a hypothesis deadline on the first example).
    """
    found = []
    for client, module in _BACKENDS:
        if client not in sys.modules:
            continue
        factory = _loaded.get(client)
        if factory is None:
            loaded = importlib.import_module(f"{__name__}.{module}")
            factory = _loaded[client] = loaded.ClientBackend
        found.append(factory)
    return found


def start_mocker(mocker: type[Mocker]) -> None:
    """Patch a respx mocker's targets as ``mocker.start()`` does, without ``mock.patch``'s spec:
    respx builds a spec of every patched method on each start (about 0.5 ms), per test."""
    if mocker._patches:
        return
    for target in mocker.targets:
        where, _, name = target.rpartition(".")
        owner = getattr(importlib.import_module(where), name)
        for method in mocker.target_methods:
            original = vars(owner).get(method)
            if original is not None:
                replacement = mocker.mock(original)  # type: ignore[no-untyped-call]
                patch = unittest.mock.patch.object(owner, method, new=replacement)
                patch.start()
                mocker._patches.append(patch)


def translate(
    error: httpx.TransportError,
    table: Mapping[type[httpx.TransportError], Callable[[httpx.TransportError], Exception]],
) -> Exception:
    """The client's exception for a neutral failure: the entry of ``error``'s nearest class in
    ``table`` (which must hold ``httpx.TransportError`` itself, for kinds it does not name)."""
    for kind in type(error).__mro__:
        build = table.get(kind)
        if build is not None:
            return build(error)
    return table[httpx.TransportError](error)
