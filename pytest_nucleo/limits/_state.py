"""Everything a limiter remembers, in one value a store keeps: in the process or in Redis.

The rules (``_machine``) read and change a :class:`LimiterState`; a store decides only where
it lives and how a change is made atomic. ``to_json`` / ``from_json`` are the shared stores'
form of it, one JSON document per limiter. The takes of a window, the bulk of it, are written
as whole microseconds: turning floats into text costs several times more than integers, and a
microsecond is finer than any window.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from typing import Any

from ._circuit import Circuit
from ._failure import UpstreamFailure
from ._window import Budget, SlidingWindow


@dataclasses.dataclass(slots=True)
class LimiterState:
    windows: list[SlidingWindow]  # one per budget, in the limiter's order
    circuit: Circuit
    level: float = 0.0
    quiet_from: float = -math.inf  # when the last failure was recorded
    successes_toward_step: int = 0
    failures_at_max: int = 0
    blocked_until: float = -math.inf  # a server's Retry-After
    successes: int = 0
    failures: int = 0
    refusals: int = 0
    last_failure: UpstreamFailure | None = None

    def to_json(self, budgets: Sequence[Budget]) -> str:
        c = self.circuit
        failure = self.last_failure
        document: dict[str, Any] = {
            "circuit": [
                c.state,
                c.epoch,
                c.cooldown,
                c.opened_at,
                c.probe,
                c.probe_started,
                c.next_id,
            ],
            "windows": {
                b.name: [v for start, units in w.takes for v in (round(start * 1e6), units)]
                for b, w in zip(budgets, self.windows, strict=True)
            },
            "level": [
                self.level,
                self.quiet_from,
                self.successes_toward_step,
                self.failures_at_max,
            ],
            "blocked_until": self.blocked_until,
            "counts": [self.successes, self.failures, self.refusals],
            "last_failure": None if failure is None else dataclasses.astuple(failure),
        }
        return json.dumps(document, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str, budgets: Sequence[Budget]) -> LimiterState:
        """The state a shared store holds. A budget it does not know (another process runs
        other settings) starts empty; one this limiter no longer has is dropped."""
        document = json.loads(text)
        state, epoch, cooldown, opened_at, probe, probe_started, next_id = document["circuit"]
        takes = document["windows"]
        level, quiet_from, toward, at_max = document["level"]
        successes, failures, refusals = document["counts"]
        failure = document["last_failure"]
        return cls(
            windows=[SlidingWindow(_takes(takes.get(b.name, []))) for b in budgets],
            circuit=Circuit(state, epoch, cooldown, opened_at, probe, probe_started, next_id),
            level=level,
            quiet_from=quiet_from,
            successes_toward_step=toward,
            failures_at_max=at_max,
            blocked_until=document["blocked_until"],
            successes=successes,
            failures=failures,
            refusals=refusals,
            last_failure=None if failure is None else UpstreamFailure(*failure),
        )


def _takes(flat: list[int]) -> list[tuple[float, int]]:
    """A window's takes from their written form: start (microseconds), units, start, ..."""
    return [(flat[i] / 1e6, flat[i + 1]) for i in range(0, len(flat), 2)]
