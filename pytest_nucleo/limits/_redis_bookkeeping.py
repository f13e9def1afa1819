"""What one shared limiter's keeper knows besides the state in Redis: whether Redis answered
lately (an outage, its warnings, when to try again), the decisions it made alone, until
when its state must still exist in Redis (so a state that vanished early is told), until when
it last saw the fleet's circuit open, and what it must tell Redis once it answers again.

Two things a keeper sends Redis besides the limiter's decisions, each once, after the reply
that calls for it (a blocking client's at once, an asyncio client's before its next decision):

- *fill*, when a state vanished while this process knew it held calls: the window is rebuilt
  full (see ``_step.lua``), so a flushed Redis does not admit a second budget on top of the
  calls made just before.
- *tally*, when Redis answers again after an outage: the failures this process recorded alone
  meanwhile are added to the fleet's count, the last one quoted.

And one thing it does alone: a process that last saw the fleet's circuit open keeps it open
on its own through an outage, until the cooldown it saw ends, then probes once by itself
(its own circuit's rules), instead of admitting every call the moment Redis is lost.

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

from ._redis_arguments import encode_failure

if TYPE_CHECKING:
    from pytest_nucleo._clock import Clock

    from ._failure import UpstreamFailure
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
    _full: str  # a full window's units, as a fill sends them

    def __init__(self) -> None:
        self._lock = threading.Lock()  # the outage bookkeeping is shared by the threads
        self._kept_until = -math.inf  # local time until which the state must still exist
        self._down_until = -math.inf
        self._down = False
        self._fallbacks = 0
        # Until when (this process's clock) the fleet's circuit was last seen open, and the
        # failure that last refused: kept open alone through an outage until then.
        self._open_until = -math.inf
        self._open_failure: UpstreamFailure | None = None
        self._fill_due = False  # the state vanished: its window to be rebuilt full
        self._tally: tuple[int, UpstreamFailure | None] = (0, None)  # failures seen alone

    @property
    def fallbacks(self) -> int:
        return self._fallbacks

    def _answered(self, code: int, read: bool = False) -> None:
        """Bookkeeping of every reply (its kept code, see ``_step.lua``): a state that
        vanished early, and how long it is kept."""
        follow_up = False
        if self._down:
            with self._lock:
                self._rejoined()
                follow_up = self._tally[0] > 0
        now = self._clock.monotonic()
        if not code & 1:  # the state did not exist before this decision
            if now < self._kept_until:
                logger.warning(
                    "rate limiter %s: its shared state vanished from Redis (key %s: flushed, "
                    "failed over or evicted); rebuilt as a closed circuit with no throttle, "
                    "and its window full until one window has passed",
                    self.rules.s.name,
                    self.key,
                )
                self._fill_due = follow_up = True
            if read:
                self._kept_until = -math.inf
        if not read:
            self._kept_until = now + (code >> 1) / 1000
        if follow_up:
            self._follow_up()

    def _follow_up(self) -> None:
        """Send what a reply called for (a fill, a tally; see the module): the keeper's."""
        raise NotImplementedError

    def _follow_ups(self) -> list[tuple[str, tuple[str, ...], UpstreamFailure | None, int]]:
        """The follow-ups due, each taken: its decision, arguments, and a tally's failure and
        count (given back when Redis does not take it). Here, not in the keeper: what is due
        is this bookkeeping's; the keeper only sends it (blocking or awaited)."""
        due: list[tuple[str, tuple[str, ...], UpstreamFailure | None, int]] = []
        if self._fill_due:
            self._fill_due = False
            due.append(("fill", (self._full,), None, 0))
        count, failure = self._take_tally()
        if count and failure is not None:
            due.append(("tally", encode_failure(failure, count), failure, count))
        return due

    def _followed(self, reply: int | None, failure: UpstreamFailure | None, count: int) -> None:
        """A follow-up's reply, or None when Redis did not take it (a tally then given back)."""
        if reply is not None:
            self._kept_for(reply)
        elif failure is not None:
            self._failed_alone(failure, count)

    def _kept_for(self, code: int) -> None:
        """A follow-up's reply: how long the state is kept now (never a vanished state's
        warning: the follow-up made it, or another process did)."""
        self._kept_until = self._clock.monotonic() + (code >> 1) / 1000

    def _take_tally(self) -> tuple[int, UpstreamFailure | None]:
        with self._lock:
            tally, self._tally = self._tally, (0, None)
            return tally

    def _failed_alone(self, failure: UpstreamFailure, count: int = 1) -> None:
        """A failure recorded alone (or a tally Redis did not take): told once it answers."""
        with self._lock:
            self._tally = (self._tally[0] + count, failure)

    def _saw_open(self, off_for: float, failure: UpstreamFailure | None) -> None:
        """The fleet refused a call because its circuit is open, for ``off_for`` seconds."""
        self._open_until = self._clock.monotonic() + off_for
        self._open_failure = failure

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
            self._open_until = -math.inf
            self._open_failure = None
            self._fill_due = False
            self._tally = (0, None)

    def _went_down(self, exc: BaseException) -> None:
        with self._lock:
            now = self._clock.monotonic()
            self._down_until = now + self.store.recheck_seconds
            if self._down:
                return
            self._down = True
            open_until, failure = self._open_until, self._open_failure
        if now < open_until:  # the fleet's circuit, kept open alone (outside this lock)
            self._fallback.hold_open(open_until, failure)
        meanwhile = (
            "admits calls on this process's own window" if self.store.fail_open else "refuses calls"
        )
        if self.store.fail_open and now < open_until:
            meanwhile = (
                f"keeps the circuit open, as last seen, for the {seconds(open_until - now)} left "
                f"of its cooldown, then {meanwhile}"
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
