"""A limiter's state shared by every process that names it, kept in Redis.

Why an optimistic transaction around the Python rules rather than the rules in Lua: the
rules must exist once (``_machine``), and a Lua copy would be a second state machine to keep in
step with the first. So each decision reads the state and the server's time, runs the rules in
Python, and writes the result back only if nobody wrote in between: a compare-and-set on a
version token, in a three-line script, retried with the fresh state on conflict. The state is
one hash per limiter (``v``: the version token, ``s``: the JSON state) with an expiry, so an
idle limiter leaves nothing behind.

Round trips: the keeper remembers the state and version it wrote last, and estimates the
server's time from the offset the server reported with its last reply. Its next decision is
then a single round trip when no other process wrote meanwhile; on a conflict the script
answers with the fresh state and the server's time, and the decision is run again on them.
WATCH/MULTI would cost three round trips (WATCH, read, MULTI/EXEC) for the same guarantee.

Time: every decision runs on the Redis server's clock (its ``TIME``, plus the local time
elapsed since it was read), so hosts whose clocks differ agree; a ``clock`` given to the store
(a FakeClock in tests) replaces it.

This module imports redis only when a :class:`RedisStore` is built.
"""

from __future__ import annotations

import logging
import math
import secrets
import threading
import time
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import quote

from pytest_nucleo._clock import Clock
from pytest_nucleo._text import one_line, seconds

from ._state import LimiterState
from ._stores import Change, LocalState, T

if TYPE_CHECKING:
    from ._machine import Rules

logger = logging.getLogger("pytest_nucleo")

_COMPARE_AND_SET = """
local version = redis.call('HGET', KEYS[1], 'v') or ''
local now = redis.call('TIME')
if version == ARGV[1] then
  redis.call('HSET', KEYS[1], 'v', ARGV[2], 's', ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  return {1, '', '', now[1], now[2]}
end
return {0, version, redis.call('HGET', KEYS[1], 's') or '', now[1], now[2]}
"""

_READ = "-"  # an expected version no write ever has (versions are hex): the script only reads
_MAX_CONFLICTS = 1000  # a decision lost this often to other writers is made in-process instead

_Request = tuple[str, str, str, int]  # expected version, new version, new state, expiry (ms)
_Reply = tuple[bool, str, str, float]  # written, current version, current state, server time


class _Contended(Exception):
    pass


class RedisStore:
    """Keep limiters' state in Redis, shared by every process whose limiter has the same name
    and ``prefix``: ``RateLimiter("github", ..., store=RedisStore(client, prefix="agents"))``.

    ``client`` is a ``redis.Redis`` or a ``redis.asyncio.Redis`` with a finite
    ``socket_timeout`` (a Redis that stops answering must not hold tool calls for long). With an
    asyncio client, use the limiter's awaitable methods (``aacquire``, ``arecord_success``, ...;
    ``arun_tool`` does).

    When Redis cannot be reached (or answers slower than the timeout) the limiter decides in
    its process alone, logs a WARNING once, counts the decisions in ``stats().fallbacks`` and
    tries Redis again every ``recheck_seconds`` (1) of its clock. ``fail_open`` (True) lets it
    admit calls meanwhile on its own window; ``fail_open=False`` refuses them instead, saying
    the limiter's store is unreachable (never blaming the upstream). State that vanished
    (a flush, a failover) is rebuilt as a closed circuit, with a WARNING.

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
            from redis.exceptions import RedisError
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
        """The clock the store reads the time on (tests); None: Redis's own time, synced."""
        self.errors: tuple[type[BaseException], ...] = (RedisError, OSError, _Contended)
        """The exceptions that mean Redis cannot be reached now."""
        self._script = client.register_script(_COMPARE_AND_SET)

    def key(self, name: str) -> str:
        """The Redis key of the limiter ``name``: the prefix, then the name quoted, so no two
        (prefix, name) pairs share a key."""
        return f"{self.prefix}:{quote(name, safe='')}"

    def bind(self, rules: Rules, clock: Clock, fallback: LocalState) -> SharedState:
        """The keeper of one limiter's state in Redis (the limiter calls it; you don't)."""
        return SharedState(self, rules, clock, fallback)

    def __repr__(self) -> str:
        return f"RedisStore(prefix={self.prefix!r}, fail_open={self.fail_open})"

    # --- the one script, both ways --------------------------------------------------------

    def call(self, key: str, request: _Request) -> _Reply:
        """Run the store's one compare-and-set script for ``key`` (the keeper calls it)."""
        return _parse(self._script(keys=[key], args=request))

    async def acall(self, key: str, request: _Request) -> _Reply:
        """As :meth:`call`, on an async client."""
        return _parse(await self._script(keys=[key], args=request))


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _parse(reply: list[Any]) -> _Reply:
    written, version, state, sec, usec = reply
    return bool(written), _text(version), _text(state), int(sec) + int(usec) / 1e6


class SharedState:
    """One limiter's keeper on a :class:`RedisStore` (see the module docstring)."""

    def __init__(self, store: RedisStore, rules: Rules, clock: Clock, fallback: LocalState) -> None:
        self.store = store
        self.rules = rules
        self.key = store.key(rules.s.name)
        self.is_async = store.is_async
        self._clock = clock
        self._fallback = fallback
        self._lock = threading.Lock()  # the cached copy is this process's, shared by threads
        self._version: str | None = None  # None: not read yet (or dropped after an error)
        self._state = rules.fresh()
        self._offset = 0.0  # the server's clock minus time.monotonic(), at its last reply
        self._kept_until = -math.inf  # local time until which the state must still exist
        self._down_until = -math.inf
        self._down = False
        self._fallbacks = 0

    @property
    def fallbacks(self) -> int:
        return self._fallbacks

    # --- the decision, free of I/O ----------------------------------------------------------

    def _now(self) -> float:
        if self.store.clock is not None:
            return self.store.clock.monotonic()
        return time.monotonic() + self._offset

    def _steps(self, change: Change[T], read: bool) -> Generator[_Request, _Reply, T]:
        budgets = self.rules.s.budgets
        if read:
            self._version = None  # a reading wants the fleet's state as it is now
        for _ in range(_MAX_CONFLICTS):
            if self._version is None:
                self._adopt((yield (_READ, "", "", 0)))
            if read:
                return change(self._state, self._now())
            now = self._now()
            result = change(self._state, now)
            version = secrets.token_hex(8)
            keep = self.rules.keep_for(self._state, now)
            expected = cast(str, self._version)
            reply = yield (expected, version, self._state.to_json(budgets), math.ceil(keep * 1000))
            if reply[0]:
                self._version = version
                self._synced(reply[3])
                self._kept_until = self._clock.monotonic() + keep
                return result
            self._adopt(reply)
        raise _Contended(f"{_MAX_CONFLICTS} writers in a row came first")

    def _adopt(self, reply: _Reply) -> None:
        """Take the state the server holds as this process's copy."""
        _, version, text, server_time = reply
        self._synced(server_time)
        if version:
            self._state = LimiterState.from_json(text, self.rules.s.budgets)
        else:
            if self._clock.monotonic() < self._kept_until:
                logger.warning(
                    "rate limiter %s: its shared state vanished from Redis (key %s: flushed, "
                    "failed over or evicted); rebuilt as a closed circuit with no throttle",
                    self.rules.s.name,
                    self.key,
                )
            self._kept_until = -math.inf
            self._state = self.rules.fresh()
        self._version = version

    def _synced(self, server_time: float) -> None:
        if self.store.clock is None:
            self._offset = server_time - time.monotonic()

    # --- the two drivers ---------------------------------------------------------------------

    def run(self, change: Change[T], *, admission: bool = False, read: bool = False) -> T:
        with self._lock:
            if self._clock.monotonic() >= self._down_until:
                steps = self._steps(change, read)
                try:
                    request = next(steps)
                    while True:
                        request = steps.send(self.store.call(self.key, request))
                except StopIteration as done:
                    self._rejoined()
                    return cast(T, done.value)
                except self.store.errors as exc:
                    self._went_down(exc)
            return self._alone(change, admission, read)

    async def arun(self, change: Change[T], *, admission: bool = False, read: bool = False) -> T:
        if not self.is_async:
            return self.run(change, admission=admission, read=read)  # a brief blocking call
        # Not under the thread lock: an event loop's tasks take turns between awaits, and a
        # lost turn is a conflict the transaction retries.
        if self._clock.monotonic() >= self._down_until:
            steps = self._steps(change, read)
            try:
                request = next(steps)
                while True:
                    request = steps.send(await self.store.acall(self.key, request))
            except StopIteration as done:
                self._rejoined()
                return cast(T, done.value)
            except self.store.errors as exc:
                self._went_down(exc)
        return self._alone(change, admission, read)

    # --- outages ----------------------------------------------------------------------------

    def _alone(self, change: Change[T], admission: bool, read: bool) -> T:
        if not read:
            self._fallbacks += 1
        if admission and not self.store.fail_open:
            off_for = max(self._down_until - self._clock.monotonic(), 0.0)
            rules = self.rules
            return cast(T, self._fallback.run(lambda s, _: rules.refuse(s, "unreachable", off_for)))
        return self._fallback.run(change)

    def forget_local(self) -> None:
        """Forget what this process kept of the shared state (its cached copy, an outage it
        saw, its fallback count); the fleet's state in Redis is left as it is."""
        self._version = None
        self._kept_until = -math.inf
        self._down_until = -math.inf
        self._down = False
        self._fallbacks = 0

    def _went_down(self, exc: BaseException) -> None:
        self._version = None  # the cached copy may hold a change that was never written
        self._down_until = self._clock.monotonic() + self.store.recheck_seconds
        if not self._down:
            self._down = True
            meanwhile = (
                "admits calls on this process's own window"
                if self.store.fail_open
                else "refuses calls"
            )
            logger.warning(
                "rate limiter %s: its shared state in Redis (key %s) is unreachable (%s: %s); "
                "until Redis answers again it %s, trying again every %s",
                self.rules.s.name,
                self.key,
                type(exc).__name__,
                one_line(str(exc), 200),
                meanwhile,
                seconds(self.store.recheck_seconds),
            )

    def _rejoined(self) -> None:
        if self._down:
            self._down = False
            logger.warning(
                "rate limiter %s: Redis answers again; back on the shared state (key %s)",
                self.rules.s.name,
                self.key,
            )
