"""A limiter's statistics: the snapshot :meth:`RateLimiter.stats` gives, built from its state.

The state itself is in ``_state``; the limiter (``_limiter``) reads it through its keeper.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ._circuit import State
from ._failure import UpstreamFailure

if TYPE_CHECKING:
    from ._machine import Rules
    from ._state import LimiterState


@dataclasses.dataclass(frozen=True, slots=True)
class LimiterStats:
    """A consistent snapshot of a limiter, from :meth:`RateLimiter.stats`. On a shared store
    the counts are the fleet's; ``fallbacks`` counts this process's decisions made alone while
    the store was unreachable."""

    state: State
    """The circuit: ``"closed"``, ``"open"`` or ``"half-open"``."""
    throttle_level: float
    """How far the limiter has slowed down: 0 is the nominal rate."""
    effective_window_seconds: float
    """The window in force: ``window_seconds x (1 + throttle_level)``."""
    cooldown_seconds: float
    """The wait before the next probe once the circuit is open."""
    successes: int
    """Calls reported as successes."""
    failures: int
    """Calls reported as upstream failures."""
    refusals: int
    """Calls the limiter refused."""
    last_failure: UpstreamFailure | None
    """The last upstream failure reported; None when none was."""
    fallbacks: int = 0
    """Decisions this process made alone while the shared store was unreachable."""


def snapshot(rules: Rules, state: LimiterState, fallbacks: int) -> LimiterStats:
    """The statistics of ``state``, read under its keeper's lock (or in its store's decision);
    ``fallbacks`` is the keeper's own count."""
    return LimiterStats(
        state=state.circuit.state,
        throttle_level=state.level,
        effective_window_seconds=rules.window(state),
        cooldown_seconds=state.circuit.cooldown,
        successes=state.successes,
        failures=state.failures,
        refusals=state.refusals,
        last_failure=state.last_failure,
        fallbacks=fallbacks,
    )
