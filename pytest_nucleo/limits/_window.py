"""Budgets and their sliding windows: how many units a limiter admits per window, and when.

A :class:`Budget` is a capacity per window (requests per minute, tokens per minute, the calls
one endpoint of a service allows). Its :class:`SlidingWindow` remembers the takes admitted
inside the window, each a start time and a number of units, and answers the one question of
admission: the earliest a take of ``n`` units may start. (A limiter of one budget, the common
case, asks it only when the window is full: it does the simple case itself, for speed.)
"""

from __future__ import annotations

import dataclasses
import math
from collections import deque

MAIN_BUDGET = "requests"
"""The name of the budget every limiter has: ``max_requests`` per ``window_seconds``."""


@dataclasses.dataclass(frozen=True, slots=True)
class Budget:
    """A second (third, ...) budget of one :class:`RateLimiter`: at most ``max_units`` units
    per ``window_seconds``, for example ``Budget("tokens", 90_000, 60)`` beside the limiter's
    own ``max_requests`` per window. A take names what it costs in each budget:
    ``limiter.acquire(units={"tokens": 1200})``.

    The limiter's throttle level widens every budget's window alike.
    """

    name: str
    """The budget's name, as ``acquire(units={name: ...})`` names it."""
    max_units: int
    """The most units taken per window."""
    window_seconds: float
    """The window's length in seconds, before throttling widens it."""

    def __post_init__(self) -> None:
        if not (isinstance(self.name, str) and self.name.strip()):
            raise ValueError(f"Budget name must be a non-empty string; got {self.name!r}")
        if not (
            isinstance(self.max_units, int)
            and not isinstance(self.max_units, bool)
            and self.max_units >= 1
        ):
            raise ValueError(
                f"Budget {self.name!r}: max_units={self.max_units!r} is impossible: use a whole "
                "number >= 1"
            )
        window = self.window_seconds
        if not (
            isinstance(window, int | float)
            and not isinstance(window, bool)
            and math.isfinite(window)
            and window > 0
        ):
            raise ValueError(
                f"Budget {self.name!r}: window_seconds={window!r} is impossible: use a finite "
                "number of seconds > 0"
            )
        object.__setattr__(self, "window_seconds", float(window))


class SlidingWindow:
    """The takes of one budget, oldest first; some start in the future (callers waiting for
    their slot). Takes older than the window are kept while a waiter giving its slot back
    could make them count again, and never past the widest window the limiter can reach."""

    __slots__ = ("takes", "total")

    def __init__(self, takes: list[tuple[float, int]] | None = None) -> None:
        self.takes: deque[tuple[float, int]] = deque(takes or ())
        self.total = sum(units for _, units in self.takes)

    def earliest(
        self, now: float, units: int, window: float, widest: float, capacity: int
    ) -> float:
        """The earliest start for a take of ``units``: in turn after the last take, and once
        the units admitted in the ``window`` before it leave room for ``units`` more.

        Takes that can never count again are dropped first: those past the ``widest`` window
        the throttle can reach, and those outside the window whose units a waiter giving its
        slot back could not bring back under the ``capacity``."""
        # This pruning rule has copies, inlined for speed: in OneBudgetRules.reserve (_machine.py)
        # and twice in _step.lua (the one-budget short path and its `earliest`).
        # tests/test_limits_redis_windows.py's
        # test_every_copy_of_the_pruning_rule_keeps_the_same_takes drives this method directly
        # beside the others and fails when any one differs: change them together.
        takes = self.takes
        while takes:
            begun, taken = takes[0]
            outside = begun + window <= now
            if not ((outside and self.total - taken >= capacity) or begun + widest <= now):
                break
            takes.popleft()
            self.total -= taken
        if not takes:
            return now
        last = takes[-1][0]
        start = now if now >= last else last
        newer = self.total
        if newer + units <= capacity:
            return start  # room in the window, the common case: nothing to walk
        # Walk from the oldest take while the takes after it, with this one, overfill the
        # budget: the last take so passed must have left the window before this one starts.
        for begun, taken in takes:
            if newer + units <= capacity:
                break
            start = max(start, begun + window)
            newer -= taken
        return start

    def add(self, start: float, units: int) -> None:
        takes = self.takes
        if takes and takes[-1][0] == start:
            # Takes that start together count together: one entry keeps the state small.
            takes[-1] = (start, takes[-1][1] + units)
        else:
            takes.append((start, units))
        self.total += units

    def remove(self, start: float, units: int) -> None:
        """Give back a take that was never made; nothing when it already left the window.
        (A shared store keeps starts to the microsecond: within one, it is the same take.)"""
        takes = self.takes
        for index in range(len(takes) - 1, -1, -1):
            begun, taken = takes[index]
            if abs(begun - start) <= 1e-6 and taken >= units:
                if taken == units:
                    del takes[index]
                else:
                    takes[index] = (begun, taken - units)
                self.total -= units
                return
