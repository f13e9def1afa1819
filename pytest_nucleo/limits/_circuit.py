"""The circuit of a limiter: closed (admitting), open (refusing), half-open (one probe).

Permits of calls admitted while closed carry the circuit's *epoch*, bumped on every change of
the circuit, so the outcome of a call admitted before the change does not move it. Probe
permits are negative and numbered from one counter, so two probes (two processes sharing one
circuit) never hold the same permit and a probe permit never equals an epoch.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Final, Literal

State = Literal["closed", "open", "half-open"]

CLOSED: Final = "closed"
OPEN: Final = "open"
HALF_OPEN: Final = "half-open"


@dataclasses.dataclass(slots=True)
class Circuit:
    state: State = CLOSED
    epoch: int = 0
    cooldown: float = 0.0  # the cooldown in force, doubled by each failed probe
    opened_at: float = -math.inf
    probe: int | None = None
    probe_started: float = 0.0
    next_id: int = 1

    def admit_probe(
        self, now: float, probe_timeout: float
    ) -> int | tuple[Literal["open", "probing"], float]:
        """With the circuit not closed: a probe permit, or why not and until when."""
        if self.state == OPEN:
            reopens = self.opened_at + self.cooldown
            if now < reopens:
                return "open", reopens
            self.state = HALF_OPEN
            self.probe = None
        elif self.probe is not None:
            expires = self.probe_started + probe_timeout
            if now < expires:
                return "probing", expires
        probe = -self.next_id
        self.next_id += 1
        self.probe = probe
        return probe

    def is_current(self, permit: int | None) -> bool:
        """Whether a closed-circuit call's outcome may move the circuit (None: unknown call)."""
        return (permit is None or permit == self.epoch) and self.state == CLOSED

    def open(self, now: float) -> None:
        self.state = OPEN
        self.opened_at = now
        self.probe = None
        self.epoch += 1

    def close(self, cooldown: float) -> None:
        self.state = CLOSED
        self.probe = None
        self.cooldown = cooldown
        self.epoch += 1
