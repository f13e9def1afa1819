"""A limiter's settings, checked once: an impossible one raises saying what to change.

:class:`RateLimiter` (``_limiter``) takes them as keywords and documents what each means;
:class:`Settings` is the checked form the rules (``_machine``) read.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from typing import TypeGuard

from pytest_nucleo._clock import Clock

from ._window import MAIN_BUDGET, Budget


@dataclasses.dataclass(frozen=True, slots=True)
class Settings:
    """A limiter's checked settings (see :class:`RateLimiter` for their meaning)."""

    name: str
    budgets: tuple[Budget, ...]  # the main budget (max_requests per window_seconds) first
    failure_step: float
    max_throttle: float
    recovery_step: float
    successes_per_step: int
    quiet_seconds: float
    quiet_recovery_step: float
    failures_to_open: int
    cooldown_seconds: float
    max_cooldown_seconds: float
    probe_timeout_seconds: float
    max_wait_seconds: float

    @classmethod
    def checked(
        cls,
        name: str,
        *,
        max_requests: int,
        window_seconds: float,
        clock: object,
        failure_step: float,
        max_throttle: float,
        recovery_step: float,
        successes_per_step: int,
        quiet_seconds: float,
        quiet_recovery_step: float,
        failures_to_open: int,
        cooldown_seconds: float,
        max_cooldown_seconds: float,
        probe_timeout_seconds: float,
        max_wait_seconds: float,
        budgets: Iterable[Budget],
        store: object,
    ) -> Settings:
        """The settings of ``RateLimiter(name, ...)``, each checked in the order given (the
        ``clock`` and the ``store`` too, though only their kinds), numbers made floats."""
        if not (isinstance(name, str) and name.strip()):
            raise ValueError(f"RateLimiter name must be a non-empty string; got {name!r}")
        c = name
        _check(c, "max_requests", max_requests, "use a whole number >= 1", _whole(max_requests) and max_requests >= 1)  # fmt: skip
        _check(c, "window_seconds", window_seconds, "use a finite number of seconds > 0", _finite(window_seconds) and window_seconds > 0)  # fmt: skip
        _check(c, "failure_step", failure_step, "use a finite number > 0", _finite(failure_step) and failure_step > 0)  # fmt: skip
        _check(c, "max_throttle", max_throttle, "use a finite number >= 0 (0 turns slowing down off)", _finite(max_throttle) and max_throttle >= 0)  # fmt: skip
        _check(c, "recovery_step", recovery_step, "use a finite number > 0", _finite(recovery_step) and recovery_step > 0)  # fmt: skip
        _check(c, "successes_per_step", successes_per_step, "use a whole number >= 1", _whole(successes_per_step) and successes_per_step >= 1)  # fmt: skip
        _check(c, "quiet_seconds", quiet_seconds, "use a number of seconds >= 0 (math.inf turns quick recovery off)", isinstance(quiet_seconds, int | float) and not math.isnan(quiet_seconds) and quiet_seconds >= 0)  # fmt: skip
        _check(c, "quiet_recovery_step", quiet_recovery_step, "use a finite number > 0", _finite(quiet_recovery_step) and quiet_recovery_step > 0)  # fmt: skip
        _check(c, "failures_to_open", failures_to_open, "use a whole number >= 1", _whole(failures_to_open) and failures_to_open >= 1)  # fmt: skip
        _check(c, "cooldown_seconds", cooldown_seconds, "use a finite number of seconds > 0", _finite(cooldown_seconds) and cooldown_seconds > 0)  # fmt: skip
        _check(c, "max_cooldown_seconds", max_cooldown_seconds, f"use a finite number of seconds >= cooldown_seconds ({cooldown_seconds!r}), or lower cooldown_seconds", _finite(max_cooldown_seconds) and max_cooldown_seconds >= cooldown_seconds)  # fmt: skip
        _check(c, "probe_timeout_seconds", probe_timeout_seconds, "use a finite number of seconds > 0", _finite(probe_timeout_seconds) and probe_timeout_seconds > 0)  # fmt: skip
        _check(c, "max_wait_seconds", max_wait_seconds, "use a finite number of seconds >= 0 (0 never waits)", _finite(max_wait_seconds) and max_wait_seconds >= 0)  # fmt: skip
        if clock is not None and not isinstance(clock, Clock):
            raise TypeError(
                f"RateLimiter {name!r}: clock must implement Clock (monotonic, sleep, asleep, "
                f"call_later); got a {type(clock).__name__}"
            )
        extra = _check_budgets(name, budgets)
        if store is not None and not callable(getattr(store, "bind", None)):
            raise TypeError(
                f"RateLimiter {name!r}: store must be a limiter store such as RedisStore; got a "
                f"{type(store).__name__}"
            )
        return cls(
            name=name,
            budgets=(Budget(MAIN_BUDGET, max_requests, float(window_seconds)), *extra),
            failure_step=float(failure_step),
            max_throttle=float(max_throttle),
            recovery_step=float(recovery_step),
            successes_per_step=successes_per_step,
            quiet_seconds=float(quiet_seconds),
            quiet_recovery_step=float(quiet_recovery_step),
            failures_to_open=failures_to_open,
            cooldown_seconds=float(cooldown_seconds),
            max_cooldown_seconds=float(max_cooldown_seconds),
            probe_timeout_seconds=float(probe_timeout_seconds),
            max_wait_seconds=float(max_wait_seconds),
        )


def _check(name: str, setting: str, value: float, rule: str, ok: bool) -> None:
    if not ok:
        raise ValueError(f"RateLimiter {name!r}: {setting}={value!r} is impossible: {rule}")


def _finite(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_budgets(name: str, budgets: Iterable[Budget]) -> tuple[Budget, ...]:
    if isinstance(budgets, Budget):
        raise TypeError(f"RateLimiter {name!r}: budgets must be a list of Budget: use [budget]")
    checked = tuple(budgets)
    seen = {MAIN_BUDGET}
    for budget in checked:
        if not isinstance(budget, Budget):
            raise TypeError(
                f"RateLimiter {name!r}: budgets must be Budget instances; got a "
                f"{type(budget).__name__}"
            )
        if budget.name in seen:
            raise ValueError(
                f"RateLimiter {name!r}: two budgets are named {budget.name!r} ('requests' is "
                "the main budget, max_requests per window_seconds): give each its own name"
            )
        seen.add(budget.name)
    return checked
