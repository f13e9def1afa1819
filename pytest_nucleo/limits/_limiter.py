"""Rate limiters with a circuit: slow down as an upstream fails, stop when it keeps failing.

A :class:`RateLimiter` admits at most ``max_requests`` calls per sliding window (and, with
``budgets``, at most so many units of each budget per its window). Each upstream failure the
runner reports raises a *throttle level* (``window x (1 + level)`` is the window in force);
successes lower it again. When failures go on at the maximum level the circuit opens: no call
is admitted until a cooldown has passed, then exactly one *probe* call goes through; its
success closes the circuit, its failure reopens it with a doubled cooldown.

The rules live in ``_machine``; where the state lives is a store's business (``_stores``): in
the process by default, under one ``threading.Lock`` held only for the bookkeeping (never across
the tool call or a wait), or in Redis (``_redis``), shared by a fleet of processes. Every
decision goes through the store's keeper, one call each, but an admission and a success on
the process's own state: the limiter makes their steps itself, under that keeper's lock (a
call of a method costs about as much as the lock; see ``RateLimiter.acquire``). The
limiter's own pieces are its siblings: its settings checked (``_settings``), the units a call
takes (``_units``), the wait of a call admitted to start later (``_waits``) and its
statistics (``_stats``).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable
from typing import Any, NewType

from pytest_nucleo._clock import SYSTEM_CLOCK, Clock
from pytest_nucleo._exceptions import check_seconds
from pytest_nucleo._forks import hold_over_forks

from ._circuit import CLOSED, State
from ._failure import UpstreamFailure
from ._machine import Rules, rules_for
from ._settings import Settings
from ._state import LimiterState
from ._stats import LimiterStats, snapshot
from ._stores import LimiterStore, LocalState, StateKeeper
from ._units import ONE, Takes, Units
from ._waits import Waits
from ._window import Budget

Permit = NewType("Permit", int)
"""What :meth:`RateLimiter.acquire` hands out; give it back when reporting the call's outcome."""


_LIVE: weakref.WeakSet[RateLimiter] = weakref.WeakSet()
"""Every RateLimiter still alive, so a test harness can reset them (see RateLimiter.reset)."""
_LIVE_LOCK = threading.Lock()  # a limiter built in another thread must not break the walk


def _live(limiter: RateLimiter) -> None:
    with _LIVE_LOCK:
        _LIVE.add(limiter)


def live_limiters() -> list[RateLimiter]:
    """The RateLimiter instances alive now."""
    with _LIVE_LOCK:
        return list(_LIVE)


class RateLimiter:
    """A sliding-window rate limiter with adaptive throttling and a circuit, for one upstream.

    Attach it to tools with ``@tool(limiters=[...])`` (or ``run_tool(..., limiters=[...])``);
    the runner then asks it before every call and tells it how each call went. Used by hand:
    ``permit = limiter.acquire()`` (or ``await limiter.aacquire()``) before the call, then
    :meth:`record_success`, :meth:`record_failure` or :meth:`release` with that permit.

    Settings (all keyword-only, all checked; an impossible one raises ``ValueError`` saying
    what to change):

    - ``max_requests`` calls per ``window_seconds``: the nominal rate (the main budget,
      named ``"requests"``).
    - ``budgets`` (none): further :class:`Budget` s, such as tokens per minute; a call takes
      the units it names of each (``acquire(units={"tokens": 1200})``).
    - ``failure_step`` (1.0): throttle added per upstream failure, up to ``max_throttle``
      (9.0); the window in force is ``window_seconds x (1 + level)``.
    - ``recovery_step`` (0.2) off the level per ``successes_per_step`` (3) successes; once
      ``quiet_seconds`` (300) have passed without a failure, ``quiet_recovery_step`` (1.0)
      per success instead.
    - ``failures_to_open`` (3): failures that arrive while the level is already at its maximum
      open the circuit (with the defaults, the 12th failure in a row).
    - ``cooldown_seconds`` (30) before the one probe call, doubled after each failed probe up
      to ``max_cooldown_seconds`` (3600), back to ``cooldown_seconds`` once a probe succeeds.
    - ``probe_timeout_seconds`` (120): a probe that has not reported back by then no longer
      blocks the next caller from probing.
    - ``max_wait_seconds`` (60): the longest a caller is held for a slot or for a server's
      Retry-After; a longer wait is not slept but refused (:class:`LimiterRefusalException`).
    - ``clock``: a :class:`Clock` (default: the system clock, see ``set_testing``).
    - ``store``: where the state lives (default: this process); a :class:`RedisStore` shares
      it with every process whose limiter has the same name.
    """

    def __init__(
        self,
        name: str,
        *,
        max_requests: int,
        window_seconds: float,
        clock: Clock | None = None,
        failure_step: float = 1.0,
        max_throttle: float = 9.0,
        recovery_step: float = 0.2,
        successes_per_step: int = 3,
        quiet_seconds: float = 300.0,
        quiet_recovery_step: float = 1.0,
        failures_to_open: int = 3,
        cooldown_seconds: float = 30.0,
        max_cooldown_seconds: float = 3600.0,
        probe_timeout_seconds: float = 120.0,
        max_wait_seconds: float = 60.0,
        budgets: Iterable[Budget] = (),
        store: LimiterStore | None = None,
    ) -> None:
        # Every keyword as given, each checked by its name (nothing else is local yet).
        s = Settings.checked(**{key: value for key, value in locals().items() if key != "self"})
        clock = clock if clock is not None else SYSTEM_CLOCK
        self._rules = rules = rules_for(s)
        self._local, self._keeper, self._blocking, self._waits = _keepers(name, rules, clock, store)
        self._here = self._local if store is None else None  # see acquire
        takes = Takes(name, s.budgets)
        self._one, self._takes = takes.one, takes.of  # what acquire(units) takes
        self.name = name
        """The limiter's name; on a shared store, limiters of one name share their state."""
        self.max_requests = max_requests
        """Calls per ``window_seconds`` at the nominal rate."""
        self.window_seconds = s.budgets[0].window_seconds
        """The nominal window, in seconds."""
        self.clock: Clock = clock
        """The clock the limiter reads and waits on."""
        self.failure_step = s.failure_step
        """Throttle added per upstream failure."""
        self.max_throttle = s.max_throttle
        """The highest throttle level."""
        self.recovery_step = s.recovery_step
        """Throttle taken off per ``successes_per_step`` successes."""
        self.successes_per_step = successes_per_step
        """Successes per recovery step."""
        self.quiet_seconds = s.quiet_seconds
        """Seconds without a failure after which each success takes ``quiet_recovery_step`` off."""
        self.quiet_recovery_step = s.quiet_recovery_step
        """Throttle taken off per success once the upstream has been quiet."""
        self.failures_to_open = failures_to_open
        """Failures at the maximum level that open the circuit."""
        self.cooldown_seconds = s.cooldown_seconds
        """The first wait before a probe once the circuit opens."""
        self.max_cooldown_seconds = s.max_cooldown_seconds
        """The longest wait before a probe, however many probes failed."""
        self.probe_timeout_seconds = s.probe_timeout_seconds
        """How long a probe that has not reported back blocks the next one."""
        self.max_wait_seconds = s.max_wait_seconds
        """The longest a caller is held; a longer wait is refused."""
        self.budgets: tuple[Budget, ...] = s.budgets
        """Every budget, the main one (``"requests"``) first."""
        self.store = store
        """Where the state lives; None: this process."""
        _live(self)

    def reset(self) -> None:
        """Forget every call, failure, wait and count of this process: the limiter is as just
        built, settings kept. The pytest plugin does this before each test to the limiters that
        already exist, so one test's failures never switch a shared limiter off for the next.
        A shared store's state (:class:`RedisStore`) is the fleet's and is left as it is."""
        self._local.reset()
        if self._keeper is not self._local:
            self._keeper.forget_local()

    # --- reading ------------------------------------------------------------------------

    @property
    def state(self) -> State:
        """``"closed"`` (admitting), ``"open"`` (refusing) or ``"half-open"`` (one probe)."""
        here = self._here
        return self.stats().state if here is None else here.state.circuit.state

    @property
    def throttle_level(self) -> float:
        """The throttle level now: 0 is the nominal rate."""
        here = self._here
        return self.stats().throttle_level if here is None else here.state.level

    @property
    def effective_window_seconds(self) -> float:
        """The window in force: ``window_seconds x (1 + throttle_level)``."""
        here = self._here
        return here.rules.window(here.state) if here else self.stats().effective_window_seconds

    def stats(self) -> LimiterStats:
        """A consistent snapshot of the state and of the counts since creation (on a shared
        store: since the state was created by the first process)."""
        return self._blocking.read(self._snapshot)

    async def astats(self) -> LimiterStats:
        """:meth:`stats` for asyncio (needed with an asyncio Redis client)."""
        return await self._keeper.aread(self._snapshot)

    def _snapshot(self, state: LimiterState) -> LimiterStats:
        return snapshot(self._rules, state, self._keeper.fallbacks)

    def __repr__(self) -> str:
        return _described(self, self._local.state)

    # --- admission ----------------------------------------------------------------------

    def acquire(self, units: Units = 1) -> Permit:
        """Wait (on the clock) for a slot and return a permit; raise
        :class:`LimiterRefusalException` when the circuit is open, a probe is in flight, the
        wait would be longer than ``max_wait_seconds``, or the call takes more ``units`` of a
        budget than it can ever hold (refused at once, never waited on).

        ``units``: what the call takes of the main budget (1), or a mapping from budget names
        to units (the main budget, ``"requests"``, takes 1 unless the mapping names it)."""
        takes = self._one if units is ONE else self._takes(units)
        here = self._here  # the in-process keeper, when the state is in this process
        if here is None:
            reserved = self._blocking.reserve(takes)
        else:  # its reserve's steps, made here: a call of a method costs about as much as a lock
            lock = here.lock
            lock.acquire()
            try:
                reserved = here.rules.reserve(here.state, here.tick() + here.skew.offset, takes)
            finally:
                lock.release()
        if type(reserved) is int:
            return reserved  # type: ignore[return-value]  # Permit(reserved), without its cost
        if type(reserved) is not tuple:
            raise reserved  # type: ignore[misc]  # a refusal: a fresh exception each time
        return self._waits.sleep(reserved, takes)  # type: ignore[return-value]  # after its wait

    async def aacquire(self, units: Units = 1) -> Permit:
        """:meth:`acquire` for asyncio: the wait is awaited, never blocking the loop."""
        takes = self._one if units is ONE else self._takes(units)
        here = self._here
        # A keeper whose store is not asyncio's is called, not awaited (building and running a
        # coroutine costs about as much as the decision itself): this process's state never
        # waits on I/O; a blocking Redis client's blocks the loop either way.
        if here is not None:  # as acquire makes it
            lock = here.lock
            lock.acquire()
            try:
                reserved = here.rules.reserve(here.state, here.tick() + here.skew.offset, takes)
            finally:
                lock.release()
        else:
            keeper = self._keeper
            reserved = await keeper.areserve(takes) if keeper.is_async else keeper.reserve(takes)
        if type(reserved) is int:
            return reserved  # type: ignore[return-value]  # Permit(reserved), without its cost
        if type(reserved) is not tuple:
            raise reserved  # type: ignore[misc]  # a refusal: a fresh exception each time
        return await self._waits.asleep(reserved, takes)  # type: ignore[return-value]

    # --- outcomes -----------------------------------------------------------------------

    def record_success(self, permit: Permit | None = None) -> None:
        """The call admitted with ``permit`` succeeded: recover a little; close after a probe."""
        here = self._here
        if here is None:
            self._blocking.succeed(permit)
            return
        # Its succeed's steps (see acquire), and Rules.succeed's commonest case: nothing to lower.
        lock = here.lock
        lock.acquire()
        try:
            state = here.state
            circuit = state.circuit
            if permit == circuit.epoch and circuit.state == CLOSED and state.level <= 0.0:
                state.successes += 1
                state.failures_at_max = 0
            else:
                here.rules.succeed(state, here.now, permit)
        finally:
            lock.release()

    async def arecord_success(self, permit: Permit | None = None) -> None:
        """:meth:`record_success` for asyncio."""
        keeper = self._keeper
        if keeper.is_async:
            await keeper.asucceed(permit)
        else:  # this process's state, or a blocking store: called, not awaited (see aacquire)
            self.record_success(permit)

    def record_failure(self, failure: UpstreamFailure, permit: Permit | None = None) -> None:
        """The call admitted with ``permit`` failed upstream with ``failure``: slow down, open
        the circuit when failures go on at the maximum throttle, reopen it after a failed probe,
        and admit nothing before the server's Retry-After has elapsed."""
        self._blocking.fail(failure, permit)

    async def arecord_failure(self, failure: UpstreamFailure, permit: Permit | None = None) -> None:
        """:meth:`record_failure` for asyncio."""
        await self._keeper.afail(failure, permit)

    def release(self, permit: Permit | None = None, *, retry_after: float | None = None) -> None:
        """The call admitted with ``permit`` ended without news of the upstream (it failed for
        another reason, was cancelled, or raised a retry signal): nothing is learned, but a
        probe frees its place. A ``retry_after`` the server suggested (a retry signal's) is
        honoured all the same: no call is admitted before it elapses."""
        check_seconds(retry_after)
        self._blocking.release(permit, retry_after)

    async def arelease(
        self, permit: Permit | None = None, *, retry_after: float | None = None
    ) -> None:
        """:meth:`release` for asyncio."""
        check_seconds(retry_after)
        await self._keeper.arelease(permit, retry_after)


def _described(limiter: RateLimiter, local: LimiterState) -> str:
    """A limiter's repr: its settings and, from this process's state, its circuit and
    throttle."""
    where = "" if limiter.store is None else f", store={limiter.store!r}"
    return (
        f"RateLimiter({limiter.name!r}, max_requests={limiter.max_requests}, "
        f"window_seconds={limiter.window_seconds}, state={local.circuit.state!r}, "
        f"throttle_level={local.level}{where})"
    )


def _keepers(
    name: str, rules: Rules, clock: Clock, store: LimiterStore | None
) -> tuple[LocalState, StateKeeper, StateKeeper, Waits]:
    """A limiter's keepers: the process's own state (the whole state without a store, the
    fallback with one), the keeper of every decision, the keeper of the blocking methods
    (the same, or one that says to await instead); and the waits of calls admitted to start
    later, which give their slots back through them."""
    local = LocalState(rules, clock)
    keeper: StateKeeper = local if store is None else store.bind(rules, clock, local)
    blocking = _AwaitableOnly(name) if keeper.is_async else keeper
    return local, keeper, blocking, Waits(clock, keeper, blocking)


class _AwaitableOnly:
    """The blocking methods of a limiter whose store is on an asyncio client: each says to
    use the awaitable one instead."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, attribute: str) -> Any:
        raise TypeError(
            f"RateLimiter {self.name!r} keeps its state through an asyncio Redis client: "
            "use its awaitable methods (aacquire, arecord_success, arecord_failure, "
            "arelease, astats), as arun_tool does, or give the store a redis.Redis client"
        )


# A fork waits for the decisions in flight: the child's copy of each limiter is whole and its
# lock free (see _forks).
hold_over_forks(lambda: _LIVE_LOCK, lambda: (limiter._local.lock for limiter in _LIVE))
