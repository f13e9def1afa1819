"""Where a limiter's state lives: the seam between the rules and a store.

A store hands each limiter a :class:`StateKeeper`, which makes the limiter's decisions
(admit, give a slot back, record an outcome, read) atomically. The in-process keeper,
:class:`LocalState`, runs the rules (``_machine``) on the state in place, under one lock, on
the limiter's clock: nothing is copied, versioned or serialised, so the seam costs a method
call. The Redis store's keeper makes each decision in one round trip, the same rules run as a
server-side script on the server's clock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

from pytest_nucleo._clock import Clock, split_reading

from ._circuit import OPEN
from ._state import LimiterState

if TYPE_CHECKING:
    from ._failure import UpstreamFailure
    from ._machine import Reservation, Rules
    from ._refusal import LimiterRefusalException

T = TypeVar("T")
View = Callable[[LimiterState], T]
"""What a reading takes of the state (a consistent snapshot, never kept)."""


class StateKeeper(Protocol):
    """One limiter's state, wherever it lives, and the decisions made on it."""

    is_async: bool
    """Whether its decisions must be awaited (a store on an asyncio client). A keeper that says
    no is called by its blocking methods even from asyncio code."""

    @property
    def fallbacks(self) -> int:
        """Decisions made in this process alone because the shared state was unreachable."""
        ...

    def reserve(self, takes: tuple[int, ...]) -> Reservation | LimiterRefusalException: ...
    def unreserve(self, start: float, takes: tuple[int, ...]) -> None: ...
    def succeed(self, permit: int | None) -> None: ...
    def fail(self, failure: UpstreamFailure, permit: int | None) -> None: ...
    def release(self, permit: int | None, retry_after: float | None) -> None: ...
    def read(self, view: View[T]) -> T: ...

    async def areserve(self, takes: tuple[int, ...]) -> Reservation | LimiterRefusalException: ...
    async def aunreserve(self, start: float, takes: tuple[int, ...]) -> None: ...
    async def asucceed(self, permit: int | None) -> None: ...
    async def afail(self, failure: UpstreamFailure, permit: int | None) -> None: ...
    async def arelease(self, permit: int | None, retry_after: float | None) -> None: ...
    async def aread(self, view: View[T]) -> T: ...

    def forget_local(self) -> None:
        """Forget what this process kept besides the state itself (outages, counts)."""
        ...


class LimiterStore(Protocol):
    """A place to keep limiters' state (``RateLimiter(..., store=...)``), such as
    :class:`RedisStore`. Without one a limiter keeps its state in its process."""

    def bind(self, rules: Rules, clock: Clock, fallback: LocalState) -> StateKeeper:
        """The keeper of one limiter's state; ``fallback`` is where it decides when the store
        cannot be reached."""
        ...


class LocalState:
    """A limiter's state in its process, under one ``threading.Lock`` held only for the
    bookkeeping (never across the tool call or a wait). Each decision takes the lock, reads the
    clock and runs one rule on the state in place: nothing is copied or versioned.

    The clock is read under the lock, so the rules see the times of their decisions in the
    order they are made. On the hot paths (admission and success) the lock is taken by
    ``acquire()`` and ``release()`` in a ``try``/``finally`` rather than a ``with`` block: the
    same guarantee, without the with-block's calls of ``__enter__`` and ``__exit__``, which
    cost as much again as the lock itself. These two are the whole of an admission's and a
    success's bookkeeping outside the rules, and a :class:`RateLimiter` whose state is here
    makes their steps itself, on these attributes, instead of calling them: a call of a
    method costs about as much as the lock (see ``RateLimiter.acquire``). Its other
    decisions, and a shared store's fallback, call them."""

    __slots__ = ("lock", "now", "rules", "skew", "state", "tick")
    is_async = False
    fallbacks = 0

    def __init__(self, rules: Rules, clock: Clock) -> None:
        self.rules = rules
        self.state = rules.fresh()
        self.now = clock.monotonic
        """The clock's ``monotonic`` function, read under :attr:`lock`."""
        self.tick, self.skew = split_reading(clock)
        """The same reading as ``tick() + skew.offset``, without a call of a Python method
        between (see ``split_reading``): what an admission reads."""
        self.lock = threading.Lock()
        """Held for each decision on :attr:`state`, and only for it."""

    def reserve(self, takes: tuple[int, ...]) -> Reservation | LimiterRefusalException:
        lock = self.lock
        lock.acquire()
        try:
            return self.rules.reserve(self.state, self.tick() + self.skew.offset, takes)
        finally:
            lock.release()

    def unreserve(self, start: float, takes: tuple[int, ...]) -> None:
        with self.lock:
            self.rules.unreserve(self.state, start, takes)

    def succeed(self, permit: int | None) -> None:
        lock = self.lock
        lock.acquire()
        try:
            # The clock, not a reading: a success needs the time only when the throttle is up.
            self.rules.succeed(self.state, self.now, permit)
        finally:
            lock.release()

    def fail(self, failure: UpstreamFailure, permit: int | None) -> None:
        with self.lock:
            self.rules.fail(self.state, self.now(), failure, permit)

    def release(self, permit: int | None, retry_after: float | None) -> None:
        with self.lock:
            self.rules.release(self.state, self.now(), permit, retry_after)

    def read(self, view: View[T]) -> T:
        with self.lock:
            return view(self.state)

    def refuse_unreachable(self, off_for: float) -> LimiterRefusalException:
        """The refusal of a store set to refuse while it cannot be reached (counted here)."""
        with self.lock:
            return self.rules.refuse(self.state, "unreachable", off_for)

    def hold_open(self, until: float, failure: UpstreamFailure | None) -> None:
        """Open the circuit until ``until`` (this clock), then one probe, as the rules do: a
        shared store's fallback, kept open as the fleet's was last seen through an outage.
        A circuit open longer already stays so."""
        with self.lock:
            circuit = self.state.circuit
            if circuit.state == OPEN and circuit.opened_at + circuit.cooldown >= until:
                return
            circuit.open(until - circuit.cooldown)
            if failure is not None:
                self.state.last_failure = failure

    # An in-process decision never waits on I/O: the awaitable forms are the same calls.
    async def areserve(self, takes: tuple[int, ...]) -> Reservation | LimiterRefusalException:
        return self.reserve(takes)

    async def aunreserve(self, start: float, takes: tuple[int, ...]) -> None:
        self.unreserve(start, takes)

    async def asucceed(self, permit: int | None) -> None:
        self.succeed(permit)

    async def afail(self, failure: UpstreamFailure, permit: int | None) -> None:
        self.fail(failure, permit)

    async def arelease(self, permit: int | None, retry_after: float | None) -> None:
        self.release(permit, retry_after)

    async def aread(self, view: View[T]) -> T:
        return self.read(view)

    def forget_local(self) -> None:
        """Nothing: this store keeps nothing besides the state (see :meth:`reset`)."""

    def reset(self) -> None:
        """Start again from a fresh state. Permits handed out before stay stale: the
        circuit's epoch moves on and probe numbers keep counting."""
        fresh = self.rules.fresh()
        with self.lock:
            fresh.circuit.epoch = self.state.circuit.epoch + 1
            fresh.circuit.next_id = self.state.circuit.next_id
            self.state = fresh
