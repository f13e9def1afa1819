"""One fake backend per HTTP client, all answering from the one route table of a FakeUpstream.

The route table is a respx router: it matches an ``httpx.Request`` and gives an outcome, which
is client-neutral. An answer is an ``httpx.Response`` (status, headers, body); a transport
failure is raised as one of httpx's transport errors, whose class names the kind of failure
(``ReadTimeout``, ``ConnectError``, ...). Each backend turns its client's request into an
``httpx.Request``, asks the router, and hands the answer back in its client's own types, or
raises its client's own exception for the failure, so a tool's ``except`` clauses run as in
production.

A backend is one module here with a ``ClientBackend`` class; adding a client is one module and
one line in ``_BACKENDS``. A backend is imported only when its client is: when a FakeUpstream
starts, for the clients imported by then; and, for a client first imported while it runs (an
SDK that imports aiohttp inside the function that calls it, a test that imports requests in its
body), the moment that import completes, by :func:`watch_imports`. So the plugin's import stays
light, a test pays only for the clients it uses, and no client is imported for the fake.

A backend that fakes its client with a library of its own (``responses``, ``aioresponses``)
names it as ``mock``, imports it only when it runs, and names as ``entry`` where its client's
requests enter. A client can be installed without that library (langchain brings requests, not
``responses``), or with one that does not import (a dependency of it missing): its backend is
then stood in for by ``_missing.MissingMock``, which refuses the client's requests naming the
extra to install (and the import's error), and every other client is faked as usual.
"""

from __future__ import annotations

import functools
import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import sys
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
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
    ("http.client", "_urllib"),  # the standard library's urllib.request, and http.client itself
    ("urllib3", "_urllib3"),  # and botocore, boto3 above it; not requests, answered before it
    ("httplib2", "_httplib2"),  # and google-api-python-client above it
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


def _factory(client: str) -> Callable[[], Backend]:
    factory = _loaded.get(client)
    if factory is None:
        module = dict(_BACKENDS)[client]
        loaded = importlib.import_module(f"{__name__}.{module}")
        factory = loaded.ClientBackend
        mock: str | None = getattr(factory, "mock", None)
        failure = _import_failure(mock) if mock is not None else None
        if mock is not None and failure is not None:
            from ._missing import MissingMock

            broken = failure if _is_broken(failure, mock) else None
            factory = functools.partial(MissingMock, loaded.ClientBackend, broken)
        _loaded[client] = factory
    return factory


def _import_failure(module: str) -> ImportError | None:
    """Why ``module`` does not import, or None when it does (it is then imported: its fake is
    about to use it)."""
    try:
        importlib.import_module(module)
    except ImportError as error:
        return error
    return None


def _is_broken(error: ImportError, module: str) -> bool:
    """Whether ``error`` is of ``module`` installed without what it needs (a dependency
    missing, or of a version without a name it imports), rather than of ``module`` missing.
    Either way only its client is refused, with the error in the message: a broken install
    must not fail every test that uses the fake."""
    missing = error.name if isinstance(error, ModuleNotFoundError) else None
    return missing is None or missing.partition(".")[0] != module.partition(".")[0]


def faked_clients() -> list[str]:
    """The clients the fake answers, as a refusal of the network guard names them. urllib3 only
    from version 2 on: 1.x builds its responses in ``urlopen``, above where its fake answers,
    so its backend leaves it alone (``_urllib3``). Its version is read from the module when it
    is imported, else from the installed distribution; without either it is named as the
    clients not installed are."""
    return [client for client, _ in _BACKENDS if client != "urllib3" or _urllib3_faked()]


def _urllib3_faked() -> bool:
    module = sys.modules.get("urllib3")
    version = getattr(module, "__version__", None)
    if not isinstance(version, str):
        try:
            version = importlib.metadata.version("urllib3")
        except importlib.metadata.PackageNotFoundError:
            return True
    major = version.partition(".")[0]
    return not major.isdigit() or int(major) >= 2


def backend_factories() -> list[Callable[[], Backend]]:
    """The backend classes of the clients imported so far, each backend loaded on first need.

    A client not yet imported cannot have sent a request, and loading every installed client
    up front would cost a test the imports of all of them (aiohttp alone takes about 0.3 s,
    enough to fail a hypothesis deadline on the first example). One imported later is met by
    :func:`watch_imports`.
    """
    return [_factory(client) for client, _ in _BACKENDS if client in sys.modules]


def watch_imports(on_import: Callable[[str, Callable[[], Backend]], None]) -> Callable[[], None]:
    """Until the returned function is called, call ``on_import(client, factory)`` each time a
    client not imported yet is, once its module has run (so its backend can patch it).

    A finder first in ``sys.meta_path`` sees the import of each client's top module, finds it
    as the other finders would, and wraps its loader for that one run; the module keeps its own
    loader. Imports of anything else pass it by at the cost of one lookup.
    """
    waiting = [client for client, _ in _BACKENDS if client not in sys.modules]
    if not waiting:
        return lambda: None
    finder = _ImportWatch(waiting, on_import)
    sys.meta_path.insert(0, finder)

    def unwatch() -> None:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)

    return unwatch


class _ImportWatch(importlib.abc.MetaPathFinder):
    def __init__(
        self, clients: list[str], on_import: Callable[[str, Callable[[], Backend]], None]
    ) -> None:
        self._clients = set(clients)
        self._on_import = on_import

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self._clients:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec: importlib.machinery.ModuleSpec | None = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None  # not installed: the import fails as it would without us
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        self._clients.discard(fullname)
        spec.loader = _Announcing(loader, lambda: self._on_import(fullname, _factory(fullname)))
        return spec


class _Announcing(importlib.abc.Loader):
    """A client's own loader, which reports once the client's module has run."""

    def __init__(self, loader: importlib.abc.Loader, done: Callable[[], None]) -> None:
        self._loader = loader
        self._done = done

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        # The module keeps its own loader, for anything that reads it later (resources).
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        module.__loader__ = self._loader
        self._loader.exec_module(module)
        self._done()


def start_mocker(mocker: type[Mocker]) -> None:
    """Patch a respx mocker's targets as ``mocker.start()`` does, more cheaply: respx builds a
    spec of every patched method and wraps each method again on every start (about 0.5 ms
    together, per test); here a method's wrapper is built once and patching is an attribute
    swap that ``mocker.stop()`` undoes."""
    if mocker._patches:
        return
    for target in mocker.targets:
        owner = _owners.get(target)
        if owner is None:
            where, _, name = target.rpartition(".")
            owner = _owners[target] = getattr(importlib.import_module(where), name)
        for method in mocker.target_methods:
            original = vars(owner).get(method)
            if original is not None:
                key = (mocker, original)
                replacement = _replacements.get(key)
                if replacement is None:
                    replacement = _replacements[key] = mocker.mock(original)  # type: ignore[no-untyped-call]
                patch = _Swap(owner, method, original, replacement)
                patch.start()
                mocker._patches.append(patch)  # type: ignore[arg-type]  # stop() is all it calls


# A respx wrapper depends only on its mocker and the method it wraps (it finds the routers when
# called), so one per pair serves every start.
_replacements: dict[tuple[type[Mocker], object], object] = {}
_owners: dict[str, type] = {}  # a target's class, by its dotted name


class _Swap:
    """An attribute of a class replaced until ``stop``: what ``mock.patch.object`` does for a
    method in the class's own dict, which respx's ``Mocker.stop`` undoes through ``stop()``."""

    __slots__ = ("_method", "_original", "_owner", "_replacement")

    def __init__(self, owner: type, method: str, original: object, replacement: object) -> None:
        self._owner, self._method = owner, method
        self._original, self._replacement = original, replacement

    def start(self) -> None:
        setattr(self._owner, self._method, self._replacement)

    def stop(self) -> None:
        setattr(self._owner, self._method, self._original)


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
