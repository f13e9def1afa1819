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
decision goes through the store's keeper, one call each. The limiter's own pieces are its
siblings: its settings checked (``_settings``), the units a call takes (``_units``), the wait
of a call admitted to start later (``_waits``) and its statistics (``_stats``).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable
from typing import Any, NewType

from pytest_nucleo._clock import SYSTEM_CLOCK, Clock
from pytest_nucleo._exceptions import check_seconds
from pytest_nucleo._forks import hold_over_forks

from ._circuit import State
from ._failure import UpstreamFailure
from ._machine import rules_for
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
        s = Settings.checked(
            name,
            max_requests=max_requests,
            window_seconds=window_seconds,
            clock=clock,
            failure_step=failure_step,
            max_throttle=max_throttle,
            recovery_step=recovery_step,
            successes_per_step=successes_per_step,
            quiet_seconds=quiet_seconds,
            quiet_recovery_step=quiet_recovery_step,
            failures_to_open=failures_to_open,
            cooldown_seconds=cooldown_seconds,
            max_cooldown_seconds=max_cooldown_seconds,
            probe_timeout_seconds=probe_timeout_seconds,
            max_wait_seconds=max_wait_seconds,
            budgets=budgets,
            store=store,
        )
        self.name = name
        """The limiter's name; on a shared store, limiters of one name share their state."""
        self.max_requests = max_requests
        """Calls per ``window_seconds`` at the nominal rate."""
        self.window_seconds = s.budgets[0].window_seconds
        """The nominal window, in seconds."""
        self.clock: Clock = clock if clock is not None else SYSTEM_CLOCK
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

        self._rules = rules = rules_for(s)
        # The process's own state: the whole state without a store, the fallback with one.
        self._local = LocalState(rules, self.clock)
        self._keeper: StateKeeper = (
            self._local if store is None else store.bind(rules, self.clock, self._local)
        )
        # The keeper of the blocking methods: the same, or one that says to await instead.
        self._blocking: StateKeeper = (
            _AwaitableOnly(name) if self._keeper.is_async else self._keeper
        )
        self._waits = Waits(self.clock, self._keeper, self._blocking)  # when a start is later
        takes = Takes(name, self.budgets)
        self._one, self._takes = takes.one, takes.of  # what acquire(units) takes
        with _LIVE_LOCK:
            _LIVE.add(self)

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
        if self._keeper is self._local:
            return self._local.state.circuit.state
        return self.stats().state

    @property
    def throttle_level(self) -> float:
        """The throttle level now: 0 is the nominal rate."""
        if self._keeper is self._local:
            return self._local.state.level
        return self.stats().throttle_level

    @property
    def effective_window_seconds(self) -> float:
        """The window in force: ``window_seconds x (1 + throttle_level)``."""
        if self._keeper is self._local:
            return self._rules.window(self._local.state)
        return self.stats().effective_window_seconds

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
        where = "" if self.store is None else f", store={self.store!r}"
        local = self._local.state
        return (
            f"RateLimiter({self.name!r}, max_requests={self.max_requests}, "
            f"window_seconds={self.window_seconds}, state={local.circuit.state!r}, "
            f"throttle_level={local.level}{where})"
        )

    # --- admission ----------------------------------------------------------------------

    def acquire(self, units: Units = 1) -> Permit:
        """Wait (on the clock) for a slot and return a permit; raise
        :class:`LimiterRefusalException` when the circuit is open, a probe is in flight, the
        wait would be longer than ``max_wait_seconds``, or the call takes more ``units`` of a
        budget than it can ever hold (refused at once, never waited on).

        ``units``: what the call takes of the main budget (1), or a mapping from budget names
        to units (the main budget, ``"requests"``, takes 1 unless the mapping names it)."""
        takes = self._one if units is ONE else self._takes(units)
        reserved = self._blocking.reserve(takes)
        if type(reserved) is int:
            return reserved  # type: ignore[return-value]  # Permit(reserved), without its cost
        if type(reserved) is not tuple:
            raise reserved  # type: ignore[misc]  # a refusal: a fresh exception each time
        permit, wait, start = reserved
        if wait > 0:
            self._waits.sleep(wait, start, takes, permit)
        return permit  # type: ignore[return-value]  # Permit(permit), without the call's cost

    async def aacquire(self, units: Units = 1) -> Permit:
        """:meth:`acquire` for asyncio: the wait is awaited, never blocking the loop."""
        takes = self._one if units is ONE else self._takes(units)
        keeper = self._keeper
        # A keeper whose store is not asyncio's is called, not awaited (building and running a
        # coroutine costs about as much as the decision itself): this process's state never
        # waits on I/O; a blocking Redis client's blocks the loop either way.
        reserved = await keeper.areserve(takes) if keeper.is_async else keeper.reserve(takes)
        if type(reserved) is int:
            return reserved  # type: ignore[return-value]  # Permit(reserved), without its cost
        if type(reserved) is not tuple:
            raise reserved  # type: ignore[misc]  # a refusal: a fresh exception each time
        permit, wait, start = reserved
        if wait > 0:
            await self._waits.asleep(wait, start, takes, permit)
        return permit  # type: ignore[return-value]  # Permit(permit), without the call's cost

    # --- outcomes -----------------------------------------------------------------------

    def record_success(self, permit: Permit | None = None) -> None:
        """The call admitted with ``permit`` succeeded: recover a little; close after a probe."""
        self._blocking.succeed(permit)

    async def arecord_success(self, permit: Permit | None = None) -> None:
        """:meth:`record_success` for asyncio."""
        keeper = self._keeper
        if keeper.is_async:
            await keeper.asucceed(permit)
        else:
            keeper.succeed(permit)  # called, not awaited: see aacquire

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
