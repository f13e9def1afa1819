"""The store's script calls as the bytes sent to Redis (RESP), framed here rather than by
redis-py, and why.

``_redis`` builds one :class:`CommandFrames` per limiter and sends its frames through
``_redis_connections`` (connections kept out of the client's pool) on a blocking client; an
asyncio client gets :meth:`CommandFrames.command` instead, which redis-py packs itself.

Why not redis-py's own path (a ``Script`` object, or ``client.evalsha``, through the client's
pool): measured by ``bench/bench_redis_framing.py`` on 2026-12-07, on a 2-core machine at load
average 0.5 to 1.5, redis-py 8.2.0 with hiredis 3.5.0, a ``redis.Redis`` client over TCP on
loopback, one admission of the real script with the same key and arguments each way, 15
interleaved rounds of 300 calls, as the median ratio to a PING on a kept connection measured
in the same rounds (the least and the greatest in brackets), wall time, then this process's CPU:

==========================================  ======================  ======================
operation                                   wall vs PING            CPU vs PING
==========================================  ======================  ======================
PING through the pool, ``client.ping()``    1.81x (1.24-1.84)       2.11x (1.92-2.17)
the store's ``acquire()``, framed here      1.46x (0.98-1.48)       1.03x (0.94-1.04)
its frame alone, ``RedisStore.run``         1.37x (0.91-1.52)       0.90x (0.83-0.92)
redis-py ``Script(keys, args)``, pooled     2.80x (1.93-2.89)       2.87x (2.57-2.92)
redis-py ``client.evalsha(...)``, pooled    2.46x (1.68-2.57)       2.41x (2.16-2.49)
redis-py's packing, on a kept connection    1.64x (1.07-1.78)       1.29x (1.15-1.34)
==========================================  ======================  ======================

Two later runs on a loaded machine (load average 5) kept the order: ``Script`` 3.30x and
3.35x, ``evalsha`` 3.00x and 2.96x, the store's admission 1.65x and 1.66x (bench/README.md).

The project's target for an admission is 1.3x a PING: redis-py's path misses it by about
twice, most of it the pool (taking a connection, checking it, giving it back: a PING through
the pool costs 1.8x one on a kept connection), the rest its packing of each argument on every
call (1.64x against this module's 1.37x on the same kept connection). The store's own path
misses it too, by less (the rest is the script's work on the server, see bench/README.md's
section on the shared limiter). So the store keeps connections, and frames here: the parts of
a call that never change (the digest, the key, the settings) once per limiter, the rest per
call. An asyncio client's decisions take redis-py's path (``execute_command``): there an
admission measured 1.53x, ``evalsha`` 1.48x and ``Script`` 1.60x, and the event loop's own
work is most of a round trip. tests/test_redis_framing.py holds these frames to the bytes
redis-py's own encoder gives for the same command.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

Arg = str | bytes | int | float
"""What a command's argument may be here, as redis-py's encoder takes it."""

OPERATIONS = ("reserve", "unreserve", "succeed", "fail", "release", "read", "fill", "tally")
"""The script's operations (its first argument, see ``_step.lua``)."""


def encode(arg: Arg) -> bytes:
    """One argument's bytes, as redis-py's ``Encoder`` gives them (with its default encoding,
    UTF-8): text encoded, bytes as they are, a number by its ``repr``."""
    if isinstance(arg, str):
        return arg.encode()
    if isinstance(arg, bytes):
        return arg
    if isinstance(arg, bool):  # redis-py refuses it too: True is no number a command means
        raise TypeError("a bool is no Redis argument: send an int or a string")
    if isinstance(arg, int | float):
        return repr(arg).encode()
    raise TypeError(f"a {type(arg).__name__} is no Redis argument: send bytes, str, int or float")


def bulk(parts: Iterable[bytes]) -> bytes:
    """``parts`` as RESP bulk strings, one after the other (a command without its count)."""
    return b"".join(b"$%d\r\n%s\r\n" % (len(part), part) for part in parts)


class CommandFrames:
    """One limiter's calls of the script, one command per operation: ``EVALSHA``, the digest,
    one key, the operation and the settings, encoded once; each call adds its own arguments."""

    __slots__ = ("_encoded", "_heads")

    def __init__(self, sha: str, key: str, settings: Sequence[bytes]) -> None:
        self._heads: dict[str, tuple[Arg, ...]] = {}
        self._encoded: dict[str, tuple[int, bytes]] = {}
        for op in OPERATIONS:
            head = (b"EVALSHA", sha.encode(), b"1", key.encode(), op.encode(), *settings)
            # The command's name as text for redis-py's execute_command, which looks its
            # reply's handling up by that name.
            self._heads[op] = ("EVALSHA", *head[1:])
            self._encoded[op] = (len(head), bulk(head))

    def frame(self, op: str, *args: Arg) -> bytes:
        """The call of ``op`` with ``args`` as sent: on a blocking client, sent as it is,
        which costs redis-py no packing."""
        count, head = self._encoded[op]
        parts = [b"*%d\r\n" % (count + len(args)), head]
        for arg in args:
            data = arg.encode() if type(arg) is str else encode(arg)  # the store sends text
            parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
        return b"".join(parts)

    def command(self, op: str, *args: Arg) -> tuple[Arg, ...]:
        """The same call as the arguments of redis-py's ``execute_command`` (an asyncio
        client, which packs them itself)."""
        return (*self._heads[op], *args)
