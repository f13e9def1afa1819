"""What a shared limiter's decisions send the script (``_step.lua``) and what its replies say,
as the script writes and reads them: the settings, a permit, seconds, a failure, and the state
a ``read`` answers with.

Functions of their own, not methods of ``_redis.SharedState``: they hold no state of a keeper
and take no step of one, only the script's encoding, which the keeper
(``_redis.SharedState``) and its bookkeeping (``_redis_bookkeeping``, a tally's arguments)
both write. Kept apart, the keeper is its decisions and their replies, and neither module
imports the other for them.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import quote

from pytest_nucleo._http._retry_after import RETRY_AFTER_CAP

from ._failure import UpstreamFailure

if TYPE_CHECKING:
    from ._circuit import State
    from ._machine import Rules
    from ._state import LimiterState


def encode_settings(rules: Rules) -> list[bytes]:
    """The settings as every decision sends them (see ``_step.lua``), encoded once per
    limiter: they travel with each decision, since two processes may run different settings
    on one state."""
    s = rules.s
    numbers = [  # those an admission reads first (see _step.lua)
        rules.longest, s.max_throttle, s.max_wait_seconds, s.cooldown_seconds,
        s.failure_step, s.recovery_step, s.successes_per_step, s.quiet_seconds,
        s.quiet_recovery_step, s.failures_to_open, s.max_cooldown_seconds,
        s.probe_timeout_seconds, RETRY_AFTER_CAP,
    ]  # fmt: skip
    budgets = [x for b in s.budgets for x in (b.max_units, b.window_seconds)]
    fields = ",".join("b:" + quote(budget.name, safe="") for budget in s.budgets)
    return [
        struct.pack("<13d", *numbers),
        struct.pack(f"<{len(budgets)}d", *budgets),
        fields.encode(),
    ]


def encode_permit(permit: int | None) -> str:
    return "" if permit is None else str(permit)


def encode_seconds(value: float | None) -> str:
    return "" if value is None else repr(float(value))


def encode_failure(failure: UpstreamFailure, permit: int | None) -> tuple[str, ...]:
    """A ``fail``'s arguments (or a ``tally``'s, its count in the permit's place)."""
    status = "" if failure.status is None else str(failure.status)
    return (
        encode_permit(permit),
        failure.service,
        failure.detail,
        status,
        encode_seconds(failure.retry_after),
    )


def decode_text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def decode_failure(fields: list[Any]) -> UpstreamFailure | None:
    """The last failure the script quoted (service, detail, status, retry_after), if any."""
    if not fields:
        return None
    service, detail, status, retry_after = fields
    return UpstreamFailure(
        decode_text(service),
        decode_text(detail),
        None if status is None else int(status),
        None if retry_after is None else float(retry_after),
    )


def decode_state(rules: Rules, reply: list[Any]) -> LimiterState:
    """The state a ``read`` answered (its kept code, ``reply[0]``, left to the keeper)."""
    state = rules.fresh()
    state.circuit.state = cast("State", decode_text(reply[1]))
    state.level, state.circuit.cooldown = float(reply[2]), float(reply[3])
    state.successes, state.failures, state.refusals = reply[4], reply[5], reply[6]
    state.last_failure = decode_failure(reply[7:11])
    return state
