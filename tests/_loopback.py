"""Servers on 127.0.0.1 that fail the way real ones do, for the clients' transport tests.

Each mode is one way a call gets no answer: ``refused`` (a port nothing listens on),
``silent`` (accepts, never reads or answers: a read timeout, or a write timeout for a body
larger than the sockets' buffers), ``stalled`` (answers the status line, the headers and part
of the body, then nothing more), ``garbage`` (answers with no HTTP),
``truncated`` (closes halfway through the body) and ``plaintext`` (plain TCP where the client
expects TLS). ``full_queue`` gives a listener no connection gets through to (a connect
timeout), ``silent_once`` a server that stops listening once it has taken a connection (a
read timeout, then refusals). No test waits on a clock: each timeout is a tiny client
timeout.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

MODES = ("refused", "silent", "stalled", "garbage", "truncated", "plaintext")

_PARTIAL = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nContent-Type: text/plain\r\n\r\npartial"
_ANSWERS = {
    "garbage": b"this is not HTTP at all\r\n\r\n",
    "stalled": _PARTIAL,
    "truncated": _PARTIAL,
    "plaintext": b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
}


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _listener(backlog: int = 16) -> socket.socket:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(backlog)
    return listener


@contextmanager
def _served(
    listener: socket.socket,
    serve: Callable[[], None],
    held: list[socket.socket],
    scheme: str = "http",
) -> Iterator[str]:
    """The base URL of ``listener``, while ``serve`` answers on it in a thread; then the
    listener is stopped (``serve`` returns when its accept fails) and the connections it
    ``held`` are closed."""
    url = f"{scheme}://127.0.0.1:{listener.getsockname()[1]}"
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield url
    finally:
        with contextlib.suppress(OSError):  # not connected on some systems: nothing to stop
            listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(timeout=5)
        for conn in held:
            conn.close()


@contextmanager
def loopback(mode: str) -> Iterator[str]:
    """The base URL (``http://127.0.0.1:PORT``, ``https://`` for plaintext) of a server failing
    in ``mode``; the server stops when the block ends."""
    if mode == "refused":
        yield f"http://127.0.0.1:{_closed_port()}"
        return
    listener = _listener()
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # the listener was closed: the test is over
            held.append(conn)
            if mode == "silent":
                continue  # keep it open, say nothing
            try:
                conn.recv(65536)
                conn.sendall(_ANSWERS[mode])
            except OSError:
                pass
            if mode != "stalled":  # a stalled answer stays open, the rest never comes
                conn.close()

    with _served(listener, serve, held, "https" if mode == "plaintext" else "http") as url:
        yield url


@contextmanager
def answering(answer: bytes, *, hold: bool = False) -> Iterator[str]:
    """The base URL of a server on 127.0.0.1 that answers every request with ``answer`` (raw
    HTTP bytes) and closes the connection; with ``hold``, keeps it open instead, so a body
    shorter than its Content-Length never completes."""
    listener = _listener()
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            try:
                conn.recv(65536)
                conn.sendall(answer)
                if not hold:
                    conn.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            if hold:
                held.append(conn)
            else:
                conn.close()

    with _served(listener, serve, held) as url:
        yield url


@contextmanager
def silent_once() -> Iterator[str]:
    """The base URL of a server that takes one connection and never answers it, then refuses
    every other (its listener closed): a client that retries times out reading, then is
    refused."""
    listener = _listener(1)
    taken: list[socket.socket] = []

    def take_one() -> None:
        with contextlib.suppress(OSError):  # the test ended before a client came
            taken.append(listener.accept()[0])
        listener.close()

    with _served(listener, take_one, taken) as url:
        yield url


@contextmanager
def full_queue() -> Iterator[str]:
    """The base URL of a listener that accepts nothing and whose queue of pending connections
    is full: Linux drops the next connection's first packet, so connecting times out, as to a
    host that does not answer."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    address = listener.getsockname()
    waiting = [socket.socket() for _ in range(3)]
    try:
        for conn in waiting:
            conn.setblocking(False)
            with contextlib.suppress(BlockingIOError):  # queued, or left to time out
                conn.connect(address)
        # The queue holds one connection: wait until the first is in it, so the next is dropped.
        assert select.select([listener], [], [], 5)[0], "no connection reached the queue"
        yield f"http://127.0.0.1:{address[1]}"
    finally:
        for conn in waiting:
            conn.close()
        listener.close()


def large_body() -> bytes:
    """A request body larger than loopback sockets' buffers (about 4 MB): sent to the silent
    server, which never reads, its sending times out. Built per call, so no xdist worker holds
    16 MB all session."""
    return b"x" * 2**24
