"""Where a limiter's state lives: the seam between the rules and a store.

A store hands each limiter a :class:`StateKeeper`, which runs a change of the rules (a
function of the state and the time) atomically and returns what it returned. The in-process
keeper, :class:`LocalState`, runs it under a lock on the limiter's clock; the Redis store's
keeper runs the same function inside an optimistic transaction on the server's clock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

from pytest_nucleo._clock import Clock

from ._state import LimiterState

if TYPE_CHECKING:
    from ._machine import Rules

T = TypeVar("T")
Change = Callable[[LimiterState, float], T]
"""A change of the rules: reads and changes the state at a time, returns a result."""


class StateKeeper(Protocol):
    """One limiter's state, wherever it lives."""

    is_async: bool
    """Whether its decisions must be awaited (a store on an asyncio client)."""

    @property
    def fallbacks(self) -> int:
        """Decisions made in this process alone because the shared state was unreachable."""
        ...

    def run(self, change: Change[T], *, admission: bool = False, read: bool = False) -> T:
        """Run ``change`` atomically; ``read`` when it changes nothing."""
        ...

    async def arun(self, change: Change[T], *, admission: bool = False, read: bool = False) -> T:
        """:meth:`run`, awaiting the store."""
        ...

    def forget_local(self) -> None:
        """Forget what this process kept besides the state itself (caches, outages, counts)."""
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
    bookkeeping (never across the tool call or a wait)."""

    is_async = False
    fallbacks = 0

    def __init__(self, state: LimiterState, clock: Clock) -> None:
        self.state = state
        self._now = clock.monotonic
        self._lock = threading.Lock()

    def run(self, change: Change[T], *, admission: bool = False, read: bool = False) -> T:
        now = self._now()
        with self._lock:
            return change(self.state, now)

    async def arun(self, change: Change[T], *, admission: bool = False, read: bool = False) -> T:
        return self.run(change)

    def forget_local(self) -> None:
        """Nothing: this store keeps nothing besides the state (see :meth:`reset`)."""

    def reset(self, fresh: LimiterState) -> None:
        """Replace the state by ``fresh``. Permits handed out before stay stale: the circuit's
        epoch moves on and probe numbers keep counting."""
        with self._lock:
            fresh.circuit.epoch = self.state.circuit.epoch + 1
            fresh.circuit.next_id = self.state.circuit.next_id
            self.state = fresh
