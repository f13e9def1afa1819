"""A blocking Redis client's connections kept for the store's decisions, and one decision's
exchange on them: the frame sent, the reply read, the script loaded again on ``NOSCRIPT``.

The frames come from ``_redis_framing``; ``_redis`` keeps one :class:`KeptConnections` per
client (in a registry it holds over forks, so a forked child keeps connections of its own) and
sends every blocking decision of every store on that client through it. An asyncio client's
decisions go through redis-py's ``execute_command`` instead (see ``SharedState._acall``).
"""

from __future__ import annotations

import select
import socket
from typing import Any

_poll = getattr(select, "poll", None)  # not on Windows: the pool's own check there


class KeptConnections:
    """A blocking client's connections kept for decisions: taken from its pool once, one per
    decision in flight, and never given back, because the pool's way (take a connection, check
    it has nothing to read, give it back, each time) costs about as much as the round trip
    (see ``_redis_framing``'s figures). Shared by every store on the client, so that many stores
    (one per limiter, say) keep no more connections than decisions in flight, which a bounded
    pool could not otherwise give.

    It holds no reference to its client (each call is given it): the registry that finds it
    is keyed weakly by the client, which must be free to go."""

    def __init__(self) -> None:
        from redis.exceptions import NoScriptError, RedisError, ResponseError

        self.idle: list[list[Any]] = []  # [connection, its socket, the socket's poll]
        self._answer_errors = ResponseError
        self._no_script = NoScriptError
        self._errors: tuple[type[BaseException], ...] = (RedisError, OSError)

    def run(self, client: Any, script: str, frame: bytes) -> Any:
        """The server's reply to ``frame`` (a command as sent, one decision), on a kept
        connection of ``client``, raising what redis-py raises; ``script`` is loaded again
        when the server has forgotten it. The client's ``retry`` applies, as to its own
        commands. (The frame last: a keeper binds the first two once, see ``_redis``.)"""
        idle = self.idle
        try:
            kept = idle.pop()
        except IndexError:
            kept = [_connection(client), None, None]
        else:
            if self._stale(kept):
                kept[0].disconnect()
        connection = kept[0]
        try:
            return connection.retry.call_with_retry(
                lambda: self._exchange(connection, frame, script), connection.disconnect
            )
        except self._answer_errors:
            raise  # the server answered: the connection is sound
        except BaseException:
            connection.disconnect()  # a reply may be left unread; it reconnects when used
            raise
        finally:
            idle.append(kept)

    def _stale(self, kept: list[Any]) -> bool:
        """Whether a kept connection (with its socket and that socket's poll object, as
        ``run`` keeps them) was closed by the server meanwhile (restarted, an idle timeout,
        CLIENT KILL): its socket is readable then, with no request in flight. It reconnects
        when used, so that is no outage. What the pool checks before it hands a connection
        out, but with one poll of the socket: the pool's check costs several system calls,
        a tenth of a round trip."""
        connection, polled, poller = kept
        sock = getattr(connection, "_sock", None)
        if sock is polled:  # the socket polled before: the common case first
            return sock is not None and bool(poller.poll(0))
        if sock is None:
            return False  # not connected: it connects when used
        if _poll is None or not isinstance(sock, socket.socket):
            try:
                return bool(connection.can_read())
            except self._errors:
                return True
        poller = _poll()  # connected anew since last polled
        poller.register(sock, select.POLLIN)
        kept[1], kept[2] = sock, poller
        return bool(poller.poll(0))

    def _exchange(self, connection: Any, frame: bytes, script: str) -> Any:
        connection.send_packed_command([frame])
        try:
            return connection.read_response()
        except self._no_script:  # a restarted or flushed server: the script is loaded again
            connection.send_command("SCRIPT", "LOAD", script)
            connection.read_response()
            connection.send_packed_command([frame])
            return connection.read_response()


def _connection(client: Any) -> Any:
    pool = client.connection_pool
    try:
        return pool.get_connection()
    except TypeError:  # redis-py before 5.3 wants a command's name
        return pool.get_connection("EVALSHA")
