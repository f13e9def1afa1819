"""Everything a limiter remembers, in one value: the in-process store keeps it as it is.

The rules (``_machine``) read and change a :class:`LimiterState` in place; a store decides
only where it lives and how a change is made atomic. The Redis store keeps the same fields
under the same names in its own form (see ``_step.lua``).
"""

from __future__ import annotations

import dataclasses
import math

from ._circuit import Circuit
from ._failure import UpstreamFailure
from ._window import SlidingWindow


@dataclasses.dataclass(slots=True)
class LimiterState:
    windows: list[SlidingWindow]  # one per budget, in the limiter's order
    circuit: Circuit
    # The main budget's window, windows[0], read by every admission without the list.
    main: SlidingWindow = dataclasses.field(init=False, repr=False, compare=False)
    level: float = 0.0
    quiet_from: float = -math.inf  # when the last failure was recorded
    successes_toward_step: int = 0
    failures_at_max: int = 0
    blocked_until: float = -math.inf  # a server's Retry-After
    successes: int = 0
    failures: int = 0
    refusals: int = 0
    last_failure: UpstreamFailure | None = None

    def __post_init__(self) -> None:
        self.main = self.windows[0]
