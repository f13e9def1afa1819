"""A limiter's state shared by every process that names it, kept in Redis.

Each decision is one round trip: a server-side script (``_step.lua``, sent with ``EVALSHA``
and loaded again when the server answers ``NOSCRIPT``) reads the state, runs one step of the
rules on it and writes it back, atomically, on the server's clock (its ``TIME``, read inside
the script). So hosts whose clocks differ agree, no process works on a stale copy, and the
store never sends a decision twice (a client's own ``retry`` may); a ``clock`` given to the
store (a FakeClock in tests) replaces the server's clock.

A decision's cost is a ``PING``'s round trip plus what the script and this module add, so
both are kept small: the arguments that never change (the script's digest, the key, the
settings) are encoded once per limiter, and an admission or a success that repeats the last
(its takes, its permit, on the server's clock) is sent as that one was; the state is
fixed-size binary; a reply is one short string or a number on the paths every call takes (an
admission, an outcome). What this module does around a round trip counts for more than its
own time (see bench/README.md).

Why the rules run in Lua as well as in Python: a decision made in Python needs the state
brought over, changed and sent back, with a compare-and-set around it, which costs a round
trip more whenever another process wrote meanwhile, and makes a fleet conflict on every
busy key. The step is the same state machine as ``_machine`` (the same names, step for step),
and the two are held together by tests: every rule test runs against both stores, and a
property test drives both with the same random calls and compares each answer.

The state is one hash per limiter (see ``_step.lua`` for its fields) with an expiry, so an
idle limiter leaves nothing behind. This module imports redis only when a
:class:`RedisStore` is built.

This module holds the store and each limiter's keeper (:class:`SharedState`: the decisions,
their replies read). Beside it: ``_redis_framing``, the commands as the bytes sent, and why
they are framed by hand (the measured figures); ``_redis_connections``, the connections kept
for a blocking client's decisions and one decision's exchange on them; ``_redis_bookkeeping``,
a keeper's outages, fallbacks, the warning of a state that vanished, and what it tells Redis
after (a vanished window rebuilt full, the failures it recorded alone); ``_redis_arguments``,
the settings and arguments as the script reads them and its replies' fields decoded.
"""

from __future__ import annotations

import hashlib
import math
import threading
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import quote

from pytest_nucleo._clock import Clock
from pytest_nucleo._forks import hold_over_forks
from pytest_nucleo._text._render import one_line

from ._redis_arguments import (
    decode_failure,
    decode_state,
    decode_text,
    encode_failure,
    encode_permit,
    encode_seconds,
    encode_settings,
)
from ._redis_bookkeeping import Bookkeeping
from ._redis_connections import KeptConnections
from ._redis_framing import CommandFrames
from ._stores import LocalState, T, View

if TYPE_CHECKING:
    from ._failure import UpstreamFailure
    from ._machine import Reservation, Rules
    from ._refusal import LimiterRefusalException, RefusalReason

_STEP = (Path(__file__).parent / "_step.lua").read_text(encoding="utf-8")

# Error replies that say what state the server is in (busy, loading, out of memory, a replica
# or a failing-over primary, unable to persist), not what the script did: an outage, like a
# lost connection. Any other error reply to the script is a bug, raised (see ``RedisScriptError``).
_SERVER_STATES = frozenset(
    {"BUSY", "LOADING", "MASTERDOWN", "MISCONF", "NOREPLICAS", "OOM", "READONLY", "TRYAGAIN",
     "CLUSTERDOWN"}
)  # fmt: skip


# Error replies that say the client may not do what a decision needs: a wrong password or user
# (redis-py's AuthenticationError, or these codes in a reply it reads as another error), or an
# ACL user without the commands. A fault of the deployment, never an outage: raised, whatever
# ``fail_open`` says (see ``RedisStore.denied``).
_DENIALS = ("NOAUTH", "NOPERM", "WRONGPASS")

# Each blocking client's kept connections (``_redis_connections``), shared by its stores.
_kept_by_client: weakref.WeakKeyDictionary[Any, KeptConnections] = weakref.WeakKeyDictionary()
_kept_lock = threading.Lock()
_keepers: weakref.WeakSet[SharedState] = weakref.WeakSet()  # for a fork (below)


def _forget_kept_in_child() -> None:
    """In a forked child, the parent's sockets are not the child's own: it keeps its own.
    Done once at the fork, not checked on every decision (a system call each)."""
    for kept in list(_kept_by_client.values()):
        kept.idle = []


def _kept_connections(client: Any) -> KeptConnections:
    with _kept_lock:
        kept = _kept_by_client.get(client)
        if kept is None:
            kept = _kept_by_client[client] = KeptConnections()
        return kept


class RedisStore:
    """Keep limiters' state in Redis, shared by every process whose limiter has the same name
    and ``prefix``: ``RateLimiter("github", ..., store=RedisStore(client, prefix="agents"))``.

    ``client`` is a ``redis.Redis`` or a ``redis.asyncio.Redis`` with a finite
    ``socket_timeout`` (a Redis that stops answering must not hold tool calls for long). With an
    asyncio client, use the limiter's awaitable methods (``aacquire``, ``arecord_success``, ...;
    ``arun_tool`` does). A ``redis.Redis`` client's decisions go on connections taken from its
    pool and kept, shared by every store on that client: one per decision in flight, never
    given back, so a bounded pool (``max_connections``) needs room for them beside the
    application's own commands.

    When Redis cannot be reached (or answers slower than the timeout) the limiter decides in
    its process alone, logs a WARNING once, counts the decisions in ``stats().fallbacks`` and
    tries Redis again every ``recheck_seconds`` (1) of its clock. ``fail_open`` (True) lets it
    admit calls meanwhile on its own window; ``fail_open=False`` refuses them instead, saying
    the limiter's store is unreachable (never blaming the upstream). A limiter that last saw
    the fleet's circuit open keeps it open alone until that cooldown ends, and the failures it
    records alone are added to the fleet's count once Redis answers. State that vanished (a
    flush, a failover) is rebuilt as a closed circuit, with a WARNING, and its windows full for
    one window. A client Redis refuses (a wrong password or user, an ACL user without the
    commands) is raised as :class:`RedisScriptError`, whatever ``fail_open`` says.

    ``clock`` replaces the Redis server's clock as the time of decisions: for tests, where a
    FakeClock drives every process's limiter alike.
    """

    def __init__(
        self,
        client: Any,
        *,
        prefix: str,
        fail_open: bool = True,
        recheck_seconds: float = 1.0,
        clock: Clock | None = None,
    ) -> None:
        try:
            import redis
            import redis.asyncio
            from redis.exceptions import (
                AuthenticationError,
                AuthenticationWrongNumberOfArgsError,
                ClusterDownError,
                MasterDownError,
                NoPermissionError,
                NoScriptError,
                OutOfMemoryError,
                ReadOnlyError,
                RedisError,
                ResponseError,
                TryAgainError,
            )
        except ImportError as exc:
            raise ImportError(
                "RedisStore needs the redis client: pip install 'pytest-nucleo[redis]'"
            ) from exc

        if not (isinstance(prefix, str) and prefix.strip()):
            raise ValueError(
                f"RedisStore prefix must be a non-empty string naming the application, so two "
                f"applications on one Redis never share limiters; got {prefix!r}"
            )
        if isinstance(client, redis.asyncio.Redis):
            self.is_async = True
            """Whether the client is a ``redis.asyncio.Redis`` (its limiters then take the
            awaitable methods, ``aacquire`` and the rest)."""
        elif isinstance(client, redis.Redis):
            self.is_async = False
        else:
            raise TypeError(
                f"RedisStore needs a redis.Redis or a redis.asyncio.Redis client; got a "
                f"{type(client).__name__}"
            )
        timeout = client.connection_pool.connection_kwargs.get("socket_timeout")
        if not (isinstance(timeout, int | float) and math.isfinite(timeout) and timeout > 0):
            raise ValueError(
                f"RedisStore: the client's socket_timeout is {timeout!r}: give it a finite "
                "number of seconds (for example redis.Redis(..., socket_timeout=0.25)), so a "
                "Redis that stops answering cannot hold every tool call"
            )
        if not isinstance(fail_open, bool):
            raise TypeError(f"RedisStore fail_open must be True or False; got {fail_open!r}")
        if not (
            isinstance(recheck_seconds, int | float)
            and math.isfinite(recheck_seconds)
            and recheck_seconds > 0
        ):
            raise ValueError(
                f"RedisStore recheck_seconds={recheck_seconds!r} is impossible: use a finite "
                "number of seconds > 0"
            )
        if clock is not None and not isinstance(clock, Clock):
            raise TypeError(f"RedisStore clock must implement Clock; got a {type(clock).__name__}")
        self.client = client
        """The Redis client the state goes through."""
        self.prefix = prefix
        """The first part of every key, naming the application."""
        self.fail_open = fail_open
        """Whether a limiter decides alone (True) or refuses (False) while Redis cannot be reached."""
        self.recheck_seconds = float(recheck_seconds)
        """How long a limiter that lost Redis waits before trying it again."""
        self.clock = clock
        """The clock decisions are made on (tests); None: the Redis server's, read by each."""
        self.errors: tuple[type[BaseException], ...] = (RedisError, OSError)
        """The exceptions that mean Redis cannot be reached now (but a script's error, see
        :meth:`unreachable`)."""
        self._answer_errors = ResponseError
        self._denials = (
            AuthenticationError,
            AuthenticationWrongNumberOfArgsError,
            NoPermissionError,
        )
        self._server_states = (
            ClusterDownError, MasterDownError, OutOfMemoryError, ReadOnlyError, TryAgainError,
        )  # fmt: skip
        self._no_script = NoScriptError
        self._script = _STEP
        # EVALSHA names the script by its digest; on NOSCRIPT (a restarted or flushed server)
        # the script is loaded again. The digest is computed here, not asked of the server.
        self._sha = hashlib.sha1(_STEP.encode()).hexdigest()
        self._kept = _kept_connections(client)

    def denied(self, exc: BaseException) -> bool:
        """Whether ``exc``, raised by a decision, says the server refused the client itself: a
        wrong password or user, or an ACL user without the commands a decision needs. Redis
        was reached, and waiting will not mend it: a fault of the deployment, raised."""
        if isinstance(exc, self._denials):
            return True
        return isinstance(exc, self._answer_errors) and str(exc).startswith(_DENIALS)

    def unreachable(self, exc: BaseException) -> bool:
        """Whether ``exc``, raised by a decision, means Redis cannot be reached now (the
        limiter then decides alone); False for the server's error reply to the script (other
        than a state the server is in), which is a bug and must be seen, not read as an
        outage."""
        if not isinstance(exc, self._answer_errors):
            return True
        if isinstance(exc, self._server_states):
            return True
        code = getattr(exc, "status_code", None) or str(exc).split(" ", 1)[0]
        return code in _SERVER_STATES

    def run(self, frame: bytes) -> Any:
        """The server's reply to one decision, ``frame`` (the command as sent, see
        ``_redis_framing``), on a blocking client's kept connection, raising what redis-py
        raises. The client's ``retry`` applies, as to its own commands."""
        return self._kept.run(self.client, self._script, frame)

    def key(self, name: str) -> str:
        """The Redis key of the limiter ``name``: the prefix, then the name quoted, so no two
        (prefix, name) pairs share a key."""
        return f"{self.prefix}:{quote(name, safe='')}"

    def bind(self, rules: Rules, clock: Clock, fallback: LocalState) -> SharedState:
        """The keeper of one limiter's state in Redis (the limiter calls it; you don't)."""
        return SharedState(self, rules, clock, fallback)

    def __repr__(self) -> str:
        return f"RedisStore(prefix={self.prefix!r}, fail_open={self.fail_open})"


class RedisScriptError(RuntimeError):
    """Redis answered a limiter's decision with an error that is no outage: a bug in the
    script, a key of another type where the limiter's state belongs (another program writing
    under the store's prefix), or a refusal of the client itself (a wrong password or user, an
    ACL user without the commands the limiter runs). Raised, never read as Redis being
    unreachable: deciding alone would hide it for as long as it lasts."""


def _refused(store: RedisStore, name: str, key: str, exc: BaseException) -> RedisScriptError | None:
    """The error to raise for ``exc``, an error of a decision of the limiter ``name``, when it
    is no outage: the server refused the client itself (checked first: redis-py's
    AuthenticationError is also a connection error), or the script's error reply (a key of
    another type, or a bug). None for an outage. A function, not a step of the keeper: what
    the error says is read from the store and the names alone."""
    if store.denied(exc):
        return RedisScriptError(
            f"rate limiter {name!r}: Redis refused the client its decision on "
            f"the key {key} ({type(exc).__name__}: {one_line(str(exc), 300)}): the "
            "client's password or user is wrong, or its ACL user lacks the commands the "
            "limiter runs (EVALSHA, SCRIPT LOAD, and TIME, HGET, HMGET, HSET, HDEL, PEXPIRE on "
            "the store's prefix). Redis was reached, so the limiter does not decide alone, "
            "whatever fail_open says: fix the credentials given to the redis client, or "
            "grant that user those commands and keys"
        )
    if not store.unreachable(exc):
        return RedisScriptError(
            f"rate limiter {name!r}: Redis refused its decision on the key "
            f"{key} ({type(exc).__name__}: {one_line(str(exc), 300)}). Redis was "
            "reached, so the limiter does not decide alone: either another program keeps "
            "a value of another type under that key (give the RedisStore a prefix of its "
            "own), or this is a bug in pytest-nucleo's script, to be reported with this "
            "message"
        )
    return None


class SharedState(Bookkeeping):
    """One limiter's keeper on a :class:`RedisStore`: each decision one call of the script,
    or, while Redis cannot be reached, the process's own state (see the store). Its outages
    and fallbacks are kept by its base, ``_redis_bookkeeping.Bookkeeping``."""

    store: RedisStore

    def __init__(self, store: RedisStore, rules: Rules, clock: Clock, fallback: LocalState) -> None:
        super().__init__()
        self.store = store
        self.rules = rules
        self.key = store.key(rules.s.name)
        self.is_async = store.is_async
        self._clock = clock
        self._fallback = fallback
        # What every call sends but its own arguments, encoded once (see _redis_arguments).
        self._frames = CommandFrames(store._sha, self.key, encode_settings(rules))
        # What a blocking decision's exchange needs, read once and called from here, without
        # a method of the store between: a decision's own Python is measured against a
        # PING's (bench/README.md), and each call between costs a few percent of it.
        self._kept, self._client, self._script = store._kept, store.client, store._script
        self._texts: dict[tuple[int, ...], str] = {}  # takes as the script reads them
        self._full = self._units(tuple(budget.max_units for budget in rules.s.budgets))
        # The last admission's and the last success's frames, by their takes and permit: on
        # the server's clock, the calls of a limiter repeat them (its takes, the circuit's
        # epoch). An empty tuple is the key of no frame: no takes or permit equal it.
        self._last_admission: tuple[object, bytes] = ((), b"")
        self._last_success: tuple[object, bytes] = ((), b"")
        with _kept_lock:
            _keepers.add(self)

    def _now(self) -> str:
        clock = self.store.clock
        return "" if clock is None else repr(clock.monotonic())

    def _frame(self, op: str, *args: str) -> bytes:
        """The command as sent (RESP, see ``_redis_framing``), the decision's time first."""
        return self._frames.frame(op, self._now(), *args)

    def _keyed_frame(self, key: object, op: str, *args: str) -> tuple[object, bytes]:
        """A decision's frame, and the key under which a repeated decision may send it again:
        the key of no frame when the store's clock puts the time in every frame."""
        return (key if self.store.clock is None else ()), self._frame(op, *args)

    def _units(self, takes: tuple[int, ...]) -> str:
        text = self._texts.get(takes)
        if text is None:
            text = ",".join(map(str, takes))
            if len(self._texts) < 64:  # the few takes a limiter sees
                self._texts[takes] = text
        return text

    # --- the replies ------------------------------------------------------------------------

    def _reservation(self, reply: Any) -> Reservation | LimiterRefusalException:
        if type(reply) is not list:  # admitted: "code permit", then "wait start" if it waits
            numbers = reply.split()
            self._answered(int(numbers[0]))
            if len(numbers) == 2:
                return int(numbers[1])  # the call starts now, as the in-process rules say
            return int(numbers[1]), float(numbers[2]), float(numbers[3])
        self._answered(reply[0])
        budget_index, units = int(reply[3]), int(reply[4])
        budget = self.rules.s.budgets[budget_index - 1] if budget_index else None
        reason = cast("RefusalReason", decode_text(reply[1]))
        off_for, failure = float(reply[2]), decode_failure(reply[5:])
        if reason == "open":
            self._saw_open(off_for, failure)
        return self.rules.refusal(reason, off_for, failure, budget, units if budget else None)

    def _reading(self, reply: list[Any], view: View[T]) -> T:
        self._answered(reply[0], read=True)
        return view(decode_state(self.rules, reply))

    def _failed(self, exc: BaseException) -> None:
        """An error of a decision: an outage (remembered), or a fault of the deployment or a
        bug (raised, see ``_refused``)."""
        error = _refused(self.store, self.rules.s.name, self.key, exc)
        if error is not None:
            raise error from exc
        self._went_down(exc)

    # --- what a reply calls for: a fill, a tally (see _redis_bookkeeping) --------------------

    def _follow_up(self) -> None:
        if self.is_async:
            return  # sent before its next decision (see _acall)
        for op, args, failure, count in self._follow_ups():
            self._followed(self._call(op, *args), failure, count)

    async def _afollow_up(self) -> None:
        for op, args, failure, count in self._follow_ups():
            reply = await self._aexecute(self._frames.command(op, self._now(), *args))
            self._followed(reply, failure, count)

    # --- the decisions, blocking ------------------------------------------------------------

    def _call(self, op: str, *args: str) -> Any:
        """The script's reply, or None when Redis cannot be reached (now or lately)."""
        return self._send(self._frame(op, *args))

    def _send(self, frame: bytes) -> Any:
        if self._down and self._clock.monotonic() < self._down_until:  # the clock read only then
            return None
        try:
            return self._kept.run(self._client, self._script, frame)
        except self.store.errors as exc:
            self._failed(exc)
            return None

    def reserve(self, takes: tuple[int, ...]) -> Reservation | LimiterRefusalException:
        last = self._last_admission
        if last[0] != takes:
            last = self._last_admission = self._keyed_frame(takes, "reserve", self._units(takes))
        reply = self._send(last[1])
        if reply is None:
            return self._refuse_alone() or self._fallback.reserve(takes)
        return self._reservation(reply)

    def unreserve(self, start: float, takes: tuple[int, ...]) -> None:
        reply = self._call("unreserve", repr(start), self._units(takes))
        if reply is None:
            self._count_alone()
            self._fallback.unreserve(start, takes)
        else:
            self._answered(reply)

    def succeed(self, permit: int | None) -> None:
        last = self._last_success
        if last[0] != permit:
            last = self._last_success = self._keyed_frame(permit, "succeed", encode_permit(permit))
        reply = self._send(last[1])
        if reply is None:
            self._count_alone()
            self._fallback.succeed(permit)
        else:
            self._answered(reply)

    def fail(self, failure: UpstreamFailure, permit: int | None) -> None:
        reply = self._call("fail", *encode_failure(failure, permit))
        if reply is None:
            self._count_alone()
            self._failed_alone(failure)
            self._fallback.fail(failure, permit)
        else:
            self._answered(reply)

    def release(self, permit: int | None, retry_after: float | None) -> None:
        reply = self._call("release", encode_permit(permit), encode_seconds(retry_after))
        if reply is None:
            self._count_alone()
            self._fallback.release(permit, retry_after)
        else:
            self._answered(reply)

    def read(self, view: View[T]) -> T:
        reply = self._call("read")
        if reply is None:
            return self._fallback.read(view)
        return self._reading(reply, view)

    # --- the decisions, awaited -------------------------------------------------------------

    async def _acall(self, op: str, *args: str) -> Any:
        if not self.is_async:
            return self._call(op, *args)  # a brief blocking call
        if self._down and self._clock.monotonic() < self._down_until:
            return None
        if not self._down and (self._fill_due or self._tally[0]):
            await self._afollow_up()  # what the last reply called for (see _follow_up)
        return await self._aexecute(self._frames.command(op, self._now(), *args))

    async def _aexecute(self, command: tuple[Any, ...]) -> Any:
        client = self.store.client
        try:
            try:
                return await client.execute_command(*command)
            except self.store._no_script:
                await client.script_load(self.store._script)
                return await client.execute_command(*command)
        except self.store.errors as exc:
            self._failed(exc)
            return None

    async def areserve(self, takes: tuple[int, ...]) -> Reservation | LimiterRefusalException:
        reply = await self._acall("reserve", self._units(takes))
        if reply is None:
            return self._refuse_alone() or self._fallback.reserve(takes)
        return self._reservation(reply)

    async def aunreserve(self, start: float, takes: tuple[int, ...]) -> None:
        reply = await self._acall("unreserve", repr(start), self._units(takes))
        if reply is None:
            self._count_alone()
            self._fallback.unreserve(start, takes)
        else:
            self._answered(reply)

    async def asucceed(self, permit: int | None) -> None:
        reply = await self._acall("succeed", encode_permit(permit))
        if reply is None:
            self._count_alone()
            self._fallback.succeed(permit)
        else:
            self._answered(reply)

    async def afail(self, failure: UpstreamFailure, permit: int | None) -> None:
        reply = await self._acall("fail", *encode_failure(failure, permit))
        if reply is None:
            self._count_alone()
            self._failed_alone(failure)
            self._fallback.fail(failure, permit)
        else:
            self._answered(reply)

    async def arelease(self, permit: int | None, retry_after: float | None) -> None:
        reply = await self._acall("release", encode_permit(permit), encode_seconds(retry_after))
        if reply is None:
            self._count_alone()
            self._fallback.release(permit, retry_after)
        else:
            self._answered(reply)

    async def aread(self, view: View[T]) -> T:
        reply = await self._acall("read")
        if reply is None:
            return self._fallback.read(view)
        return self._reading(reply, view)


# A fork waits for the store's lock and each shared limiter's, which the child then finds free
# (see _forks), and the child keeps connections of its own.
hold_over_forks(
    lambda: _kept_lock, lambda: (keeper._lock for keeper in _keepers), _forget_kept_in_child
)
