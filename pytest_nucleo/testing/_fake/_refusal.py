"""What a refusal of the network guard says: what was blocked, who tried, and the fix.

A lookup or a connection is refused with a message naming the host and port, the library that
tried (read from the call stack: the outermost library above the socket call, and the one it
went through), whether the running fake has a route for the host, and, when it has one, why
the request did not reach it: for a library the fake does not reach, why (it opens its own
connections) and what usually fakes it. It never advises adding a route that exists.
"""

from __future__ import annotations

import functools
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from pytest_nucleo.testing._docs import docs_ref

from ._hosts import bracketed

DOCS = docs_ref("docs/how-to/fake-upstream.md", "The network guard")

# Modules a socket call passes through on its way from a client, never the client itself.
_PLUMBING = frozenset(
    {
        "socket",
        "asyncio",
        "selectors",
        "ssl",
        "concurrent",
        "threading",
        "contextlib",
        "functools",
        "anyio",
        "sniffio",
        "trio",
        "pytest_nucleo",
        "_pytest",
        "pluggy",
        "pytest",
    }
)


@functools.cache
def _library_dirs() -> tuple[str, tuple[str, ...]]:
    """The standard library's folder, and every folder libraries are installed in, resolved.
    Read when the guard first names a caller, not at import: reading sysconfig and resolving
    the paths cost about 1 ms of every pytest session's start."""
    paths = sysconfig.get_paths()
    dirs = {
        str(Path(path).resolve())
        for key in ("stdlib", "platstdlib", "purelib", "platlib")
        if (path := paths.get(key))
    }
    return str(Path(paths["stdlib"]).resolve()), tuple(dirs)


@dataclass(frozen=True)
class Caller:
    """Who made a socket call: a library (and the one it went through), or the code under
    test itself (``code`` is where), or nobody the stack names (a call in a worker thread)."""

    library: str | None = None
    through: str | None = None
    code: str | None = None

    def phrase(self) -> str:
        if self.library is not None:
            return f" by {self.library}" + (f" (through {self.through})" if self.through else "")
        if self.code is not None:
            return f" by the code under test ({self.code})"
        return ""


def find_caller(depth: int) -> Caller:
    """The caller of the frame ``depth`` levels above this function's caller."""
    try:
        frame = sys._getframe(depth + 1)
    except ValueError:  # pragma: no cover - a stack shallower than the guard's own frames
        return Caller()
    libraries: list[str] = []  # innermost first
    stdlib_dir, library_dirs = _library_dirs()
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        top = module.partition(".")[0]
        if top not in _PLUMBING:
            path = str(Path(frame.f_code.co_filename).resolve())
            if not path.startswith(library_dirs):
                if libraries:
                    break
                where = f"{Path(path).name}:{frame.f_lineno}, in {frame.f_code.co_name}"
                return Caller(code=where)
            # A package is named by its top level (requests); the standard library by its
            # module, as its packages hold several clients (urllib.request, http.client).
            stdlib = path.startswith(stdlib_dir) and "-packages" not in path
            named = module if stdlib else top
            if named not in libraries:
                libraries.append(named)
        frame = frame.f_back  # type: ignore[assignment]
    if not libraries:
        return Caller()
    outer = libraries[-1]
    below = [n for n in libraries[:-1] if n.partition(".")[0] != outer.partition(".")[0]]
    return Caller(outer, below[-1] if below else None)


@dataclass(frozen=True)
class Tried:
    """What was refused: a ``"lookup"`` or a ``"connect"`` of ``host`` and ``port``."""

    kind: str
    host: str
    port: object

    @property
    def place(self) -> str:
        shown = bracketed(self.host)
        return f"{shown}:{self.port}" if self.port not in (None, "", 0) else shown


def refusal_message(
    tried: Tried,
    caller: Caller,
    *,
    routes: list[str],
    fake_routes: list[str] | None,
    faked_clients: list[str],
    fake_name: str | None = None,
) -> str:
    """The whole message. ``routes`` are the running fakes' routes for the host (for
    ``fake_name``, the host the fake gave this address to); ``fake_routes`` all their routes,
    None when no fake runs; ``faked_clients`` the clients the fake answers."""
    what = "a DNS lookup of" if tried.kind == "lookup" else "a connection to"
    head = (
        f"pytest-nucleo blocked {what} {tried.place}{caller.phrase()}: tests do not reach the "
        "network."
    )
    clients = ", ".join(faked_clients[:-1]) + " and " + faked_clients[-1]
    if fake_name is not None:
        listed = f", which its routes name ({'; '.join(routes)})" if routes else ""
        body = (
            f"The fake upstream gave this address to {fake_name}{listed}, and only the fake "
            f"answers it: {_why_not_faked(caller, faked_clients, clients)}."
        )
    elif routes:
        body = (
            f"The fake upstream has a route for {tried.host} ({'; '.join(routes)}), but "
            f"{_why_not_faked(caller, faked_clients, clients)}."
        )
    else:
        opt_out = (
            "if the test really needs the network, mark it "
            "@pytest.mark.nucleo(allow_network=True) or allow the host with --nucleo-allow-hosts"
        )
        route = f"fake_upstream.get('{_url(tried)}').respond(200, json=...)"
        if fake_routes is not None:
            body = (
                f"The fake upstream has no route for {tried.host} (its routes: "
                f"{'; '.join(fake_routes) or 'none'}). Add one, e.g. {route}; or, {opt_out}."
            )
        else:
            body = f"Fake the upstream with the fake_upstream fixture, e.g. {route}; or, {opt_out}."
    return f"{head} {body} See {DOCS}."


def _why_not_faked(caller: Caller, faked: list[str], clients: str) -> str:
    """Why a request for a routed host reached the socket instead of the fake."""

    def is_faked(name: str | None) -> bool:
        return name is not None and (name in faked or name.partition(".")[0] in faked)

    if caller.library is not None and is_faked(caller.library):
        return (
            f"{caller.library} is a client the fake answers, yet this request went past the "
            "fake (through a transport, adapter or connection of its own)"
        )
    if caller.library is not None and is_faked(caller.through):
        return (
            f"{caller.library} sends through {caller.through}, a client the fake answers, yet "
            "this request went past the fake (through a transport, adapter or connection of "
            "its own)"
        )
    if caller.library is not None:
        why = _NOT_REACHED.get(caller.library.partition(".")[0])
        if why is None and caller.through is not None:
            # The library below it may be what the fake misses (botocore through urllib3 1.x).
            why = _NOT_REACHED.get(caller.through.partition(".")[0])
        why = why or _OWN_CONNECTIONS
        return f"{caller.library} is not a client the fake answers ({clients}): {why}"
    if caller.code is not None:
        return (
            "the code under test opened the connection itself, and the fake answers only "
            f"requests sent with {clients}: send HTTP with one of them, or, for another "
            "protocol on a raw socket, serve its peer on 127.0.0.1 (socketserver)"
        )
    return f"the request did not go through a client the fake answers ({clients})"


_OWN_CONNECTIONS = (
    "it opens its connections itself (its own connection pool, or its own connect()). If it "
    "takes a session or transport of one of these clients, give it one; else fake it where "
    "the tool calls it (unittest.mock), or serve the upstream on 127.0.0.1"
)
"""Why a library the guard has no entry for missed the fake, and what to do instead."""

_DATABASE = (
    "it speaks its database's protocol through connections of its own, not HTTP; run the "
    "database on 127.0.0.1 for the test, or mock the tool's data layer"
)
_WEBSOCKET = (
    "a WebSocket is a connection it keeps open, not a request the fake answers; serve the "
    "socket on 127.0.0.1 (websockets.serve)"
)
_TWISTED = "Twisted opens its own connections; fake treq's calls with treq.testing.StubTreq"
_NOT_REACHED: dict[str, str] = {
    "grpc": (
        "gRPC speaks HTTP/2 through its own C core; fake the service in process with grpc's "
        "testing module (grpc_testing), or serve it with grpc.server on 127.0.0.1"
    ),
    "pycurl": (
        "libcurl opens its own connections, below Python's HTTP clients; serve the upstream on "
        "127.0.0.1 (pytest-httpserver), or mock pycurl.Curl"
    ),
    "redis": (
        "it speaks Redis's protocol through its own connection pool, not HTTP; use fakeredis, "
        "or a redis-server on 127.0.0.1"
    ),
    "websocket": _WEBSOCKET,
    "websockets": _WEBSOCKET,
    "urllib3": (
        "urllib3 1.x is installed, and the fake answers urllib3 from version 2 on (1.x builds "
        "its responses in urlopen, above where the fake answers); upgrade urllib3 (pip install "
        "'urllib3>=2'), or mock the call where the tool makes it (unittest.mock)"
    ),
    "tornado": (
        "tornado's HTTP client opens its own connections; serve the upstream on 127.0.0.1 "
        "(tornado.testing's AsyncHTTPTestCase)"
    ),
    "twisted": _TWISTED,
    "treq": _TWISTED,
    "paramiko": "SSH is not HTTP; mock paramiko.SSHClient where the tool calls it",
    "smtplib": (
        "mail is not HTTP; serve SMTP on 127.0.0.1 (aiosmtpd), or mock smtplib.SMTP where the "
        "tool calls it"
    ),
    "pymongo": (
        "it speaks MongoDB's protocol through its own connection pool, not HTTP; use mongomock, "
        "or a mongod on 127.0.0.1"
    ),
    "psycopg": _DATABASE,
    "psycopg2": _DATABASE,
    "asyncpg": _DATABASE,
    "pymysql": _DATABASE,
}
"""Libraries the fake does not reach, by top-level name (the standard library's by module):
why, and what usually fakes them in a test. urllib3 is one only before version 2, when the
clients a refusal names leave it out (``_backends.faked_clients``)."""


def _url(tried: Tried) -> str:
    """The URL of a route for the host, its scheme guessed from the port."""
    shown = bracketed(tried.host)
    port = str(tried.port) if tried.port is not None else ""
    if port in ("", "0", "443", "https"):
        return f"https://{shown}/..."
    if port in ("80", "http"):
        return f"http://{shown}/..."
    return f"http://{shown}:{port}/..."
