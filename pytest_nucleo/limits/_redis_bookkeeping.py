"""What one shared limiter's keeper knows besides the state in Redis: whether Redis answered
lately (an outage, its warnings, when to try again), the decisions it made alone, and until
when its state must still exist in Redis (so a state that vanished early is told).

:class:`Bookkeeping` is the base of ``_redis.SharedState``, which sends the decisions and reads
their replies; the store's settings it reads (``fail_open``, ``recheck_seconds``) are
``_redis.RedisStore``'s. A base class rather than an object of its own because its lock is the
keeper's: ``_redis`` holds every keeper's ``_lock`` over a fork.
"""

from __future__ import annotations

import logging
import math
import threading
from typing import TYPE_CHECKING, Protocol

from pytest_nucleo._text._render import one_line, seconds

if TYPE_CHECKING:
    from pytest_nucleo._clock import Clock

    from ._machine import Rules
    from ._refusal import LimiterRefusalException
    from ._stores import LocalState

logger = logging.getLogger("pytest_nucleo")


class _Settings(Protocol):
    """What of ``_redis.RedisStore`` the bookkeeping reads (named here, not imported: that
    module imports this one)."""

    @property
    def fail_open(self) -> bool: ...

    @property
    def recheck_seconds(self) -> float: ...


class Bookkeeping:
    """A shared limiter's own bookkeeping (see the module). Written without the lock unless
    Redis was down, on the paths every decision takes: each write is one attribute, and a race
    between two replies can only repeat or miss a warning."""

    # Set by the keeper (SharedState) before it calls this class's __init__.
    store: _Settings
    rules: Rules
    key: str
    _clock: Clock
    _fallback: LocalState

    def __init__(self) -> None:
        self._lock = threading.Lock()  # the outage bookkeeping is shared by the threads
        self._kept_until = -math.inf  # local time until which the state must still exist
        self._down_until = -math.inf
        self._down = False
        self._fallbacks = 0

    @property
    def fallbacks(self) -> int:
        return self._fallbacks

    def _answered(self, code: int, read: bool = False) -> None:
        """Bookkeeping of every reply (its kept code, see ``_step.lua``): a state that
        vanished early, and how long it is kept."""
        if self._down:
            with self._lock:
                self._rejoined()
        now = self._clock.monotonic()
        if not code & 1:  # the state did not exist before this decision
            if now < self._kept_until:
                logger.warning(
                    "rate limiter %s: its shared state vanished from Redis (key %s: flushed, "
                    "failed over or evicted); rebuilt as a closed circuit with no throttle",
                    self.rules.s.name,
                    self.key,
                )
            if read:
                self._kept_until = -math.inf
        if not read:
            self._kept_until = now + (code >> 1) / 1000

    def _count_alone(self) -> None:
        with self._lock:
            self._fallbacks += 1

    def _refuse_alone(self) -> LimiterRefusalException | None:
        """A decision made alone: counted; with ``fail_open=False``, the refusal to give."""
        self._count_alone()
        if self.store.fail_open:
            return None
        off_for = max(self._down_until - self._clock.monotonic(), 0.0)
        return self._fallback.refuse_unreachable(off_for)

    def forget_local(self) -> None:
        """Forget what this process kept of the shared state (an outage it saw, its fallback
        count); the fleet's state in Redis is left as it is."""
        with self._lock:
            self._kept_until = -math.inf
            self._down_until = -math.inf
            self._down = False
            self._fallbacks = 0

    def _went_down(self, exc: BaseException) -> None:
        with self._lock:
            self._down_until = self._clock.monotonic() + self.store.recheck_seconds
            if self._down:
                return
            self._down = True
        meanwhile = (
            "admits calls on this process's own window" if self.store.fail_open else "refuses calls"
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
