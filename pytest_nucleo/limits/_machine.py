"""The rules of a limiter, once: admission, outcomes, throttle, circuit, holds, statistics, on
settings checked in ``_settings``.

:class:`Rules` changes a :class:`LimiterState` at a time ``now`` that it is given (a success,
which needs the time only now and then, is given the clock to read when it does); it never
takes a lock or talks to a store. :func:`rules_for` gives a limiter its rules: those of one
budget (:class:`OneBudgetRules`, the common case) admit by a path of their own. The
in-process store (``_stores``) runs these changes under a lock, in place (a limiter on it
calls ``reserve`` itself under that lock, and makes the commonest success itself, a copy of
the first case of :meth:`Rules.succeed`: see ``RateLimiter.record_success``). The Redis
store runs the same steps as a server-side script (``_step.lua``, the same names step for
step), and the test suite holds the two together: every rule is tested against both stores
(tests/test_limits.py), a property test drives both with the same random calls
(tests/test_limits_stores_agree.py), and another drives every copy of the window's pruning
rule alike (tests/test_limits_redis_windows.py; see ``OneBudgetRules.reserve``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from pytest_nucleo._http._retry_after import RETRY_AFTER_CAP

from ._circuit import CLOSED, Circuit
from ._failure import UpstreamFailure
from ._refusal import LimiterRefusalException, RefusalReason
from ._settings import Settings
from ._state import LimiterState
from ._window import Budget, SlidingWindow

Reservation = int | tuple[int, float, float]
"""A permit alone, for a call that starts now; or a permit, the seconds to wait before the
call and the start the window reserved."""


def rules_for(settings: Settings) -> Rules:
    """The rules of a limiter of these settings."""
    return OneBudgetRules(settings) if len(settings.budgets) == 1 else Rules(settings)


class Rules:
    """The rules of a limiter of any number of budgets (see :func:`rules_for`)."""

    __slots__ = ("longest", "main", "s", "smallest", "widest")

    def __init__(self, settings: Settings) -> None:
        self.s = settings
        self.main = settings.budgets[0]
        self.smallest = min(b.max_units for b in settings.budgets)  # a larger take may not fit
        self.widest = 1.0 + settings.max_throttle  # how far the throttle can widen a window
        s = settings
        quiet = s.quiet_seconds if math.isfinite(s.quiet_seconds) else 0.0
        self.longest = max(
            max(b.window_seconds for b in s.budgets) * self.widest,
            s.max_cooldown_seconds,
            s.probe_timeout_seconds,
            s.max_wait_seconds,
            quiet,
        )  # the longest span any rule looks back or ahead, but a server's pause

    def fresh(self) -> LimiterState:
        """A closed circuit, no throttle, empty windows: a new limiter, or lost state rebuilt."""
        return LimiterState(
            windows=[SlidingWindow() for _ in self.s.budgets],
            circuit=Circuit(cooldown=self.s.cooldown_seconds),
        )

    def window(self, state: LimiterState) -> float:
        """The main budget's window in force."""
        return self.main.window_seconds * (1.0 + state.level)

    # --- admission ----------------------------------------------------------------------

    def reserve(
        self, state: LimiterState, now: float, takes: tuple[int, ...]
    ) -> Reservation | LimiterRefusalException:
        """Admission: a permit alone when the call starts now, else the permit, its wait and its
        start, after taking ``takes`` (units per budget, in the limiter's order) from the
        windows; or the refusal, counted."""
        budgets = self.s.budgets
        if max(takes) > self.smallest:
            for budget, units in zip(budgets, takes, strict=True):
                if units > budget.max_units:
                    return self.refuse(state, "too-large", 0.0, budget=budget, units=units)
        permit = self._permit(state, now)
        if isinstance(permit, LimiterRefusalException):
            return permit
        factor = 1.0 + state.level
        windows = state.windows
        # The earliest start the windows allow: in turn, within every budget.
        paced = max(
            window.earliest(
                now, units, b.window_seconds * factor, b.window_seconds * self.widest, b.max_units
            )
            if units
            else now
            for window, b, units in zip(windows, budgets, takes, strict=True)
        )
        start = max(paced, state.blocked_until)
        wait = start - now
        if wait > self.s.max_wait_seconds:
            return self._too_long(state, permit, paced, wait)
        # Every budget takes its units in this one change, or none does.
        for window, units in zip(windows, takes, strict=True):
            if units:
                window.add(start, units)
        if permit < 0:
            state.circuit.probe_started = start  # the probe's time runs from its admission
        return permit, wait, start

    def _permit(self, state: LimiterState, now: float) -> int | LimiterRefusalException:
        """The permit of a call: the circuit's epoch while closed, else a probe's, if any."""
        circuit = state.circuit
        if circuit.state == CLOSED:
            return circuit.epoch
        probe = circuit.admit_probe(now, self.s.probe_timeout_seconds)
        if isinstance(probe, tuple):
            reason, until = probe
            if reason == "open":
                until = max(until, state.blocked_until)
            return self.refuse(state, reason, until - now)
        return probe

    def _too_long(
        self, state: LimiterState, permit: int, paced: float, wait: float
    ) -> LimiterRefusalException:
        if permit < 0:
            state.circuit.probe = None
        # "held" only when the server's pause, not the window, is what is too long.
        return self.refuse(state, "held" if state.blocked_until > paced else "wait", wait)

    def unreserve(self, state: LimiterState, start: float, takes: tuple[int, ...]) -> None:
        """A waiter gave up before its call: its slots go to the next callers."""
        for window, units in zip(state.windows, takes, strict=True):
            if units:
                window.remove(start, units)

    def refuse(
        self,
        state: LimiterState,
        reason: RefusalReason,
        off_for: float,
        *,
        budget: Budget | None = None,
        units: int | None = None,
    ) -> LimiterRefusalException:
        state.refusals += 1
        return self.refusal(reason, off_for, state.last_failure, budget, units)

    def refusal(
        self,
        reason: RefusalReason,
        off_for: float,
        last_failure: UpstreamFailure | None,
        budget: Budget | None = None,
        units: int | None = None,
    ) -> LimiterRefusalException:
        """The refusal of a call (counted already), quoting the last failure."""
        # A fresh exception per refusal: raising a stored one grows its traceback every time.
        main = self.main
        return LimiterRefusalException(
            self.s.name,
            main.max_units,
            main.window_seconds,
            max(off_for, 0.0),
            reason,
            last_failure,
            self.s.max_wait_seconds if reason in ("wait", "held") else None,
            None if budget is None or budget is main else budget,
            units,
        )

    # --- outcomes -----------------------------------------------------------------------

    def succeed(self, state: LimiterState, now: Callable[[], float], permit: int | None) -> None:
        """A success; ``now`` is the clock, read only when the throttle is up (the time tells
        whether the upstream has been quiet): a success at the nominal rate reads no time."""
        circuit = state.circuit
        state.successes += 1
        # The common case first: a call admitted by the closed circuit in force (never a probe:
        # an epoch is never negative). RateLimiter.record_success makes it itself when the
        # throttle is down: a change here is a change there.
        if permit == circuit.epoch and circuit.state == CLOSED:
            pass
        elif permit is not None and permit < 0:
            if permit != circuit.probe:
                return  # a probe that expired and was replaced: the new one decides
            circuit.close(self.s.cooldown_seconds)
        elif not (permit is None and circuit.state == CLOSED):
            return  # admitted before the circuit last changed: that call says nothing now
        state.failures_at_max = 0
        if state.level <= 0.0:
            return
        s = self.s
        if now() - state.quiet_from >= s.quiet_seconds:
            self._set_level(state, state.level - s.quiet_recovery_step)
            return
        state.successes_toward_step += 1
        if state.successes_toward_step >= s.successes_per_step:
            state.successes_toward_step = 0
            self._set_level(state, state.level - s.recovery_step)

    def fail(
        self, state: LimiterState, now: float, failure: UpstreamFailure, permit: int | None
    ) -> None:
        s, circuit = self.s, state.circuit
        state.failures += 1
        state.last_failure = failure
        state.quiet_from = now
        state.successes_toward_step = 0
        self.hold(state, now, failure.retry_after)
        if permit is not None and permit < 0:
            if permit == circuit.probe:
                circuit.cooldown = min(circuit.cooldown * 2, s.max_cooldown_seconds)
                self._open(state, now)
            return
        if not circuit.is_current(permit):
            return  # admitted before the circuit last changed: that call says nothing now
        if state.level >= s.max_throttle:
            state.failures_at_max += 1
            if state.failures_at_max >= s.failures_to_open:
                self._open(state, now)
                return
        self._set_level(state, state.level + s.failure_step)

    def release(
        self, state: LimiterState, now: float, permit: int | None, retry_after: float | None
    ) -> None:
        self.hold(state, now, retry_after)
        if permit is not None and permit < 0 and permit == state.circuit.probe:
            state.circuit.probe = None

    @staticmethod
    def hold(state: LimiterState, now: float, retry_after: float | None) -> None:
        """Admit nothing before ``retry_after`` seconds from ``now`` elapse (at most
        :data:`RETRY_AFTER_CAP`, as a parsed header is: a wild value given by hand or by a
        carrier must not switch a tool off for years)."""
        if retry_after is not None:
            retry_after = min(retry_after, RETRY_AFTER_CAP)
        if retry_after is not None and now + retry_after > state.blocked_until:
            state.blocked_until = now + retry_after

    def _set_level(self, state: LimiterState, level: float) -> None:
        state.level = min(max(round(level, 9), 0.0), self.s.max_throttle)

    @staticmethod
    def _open(state: LimiterState, now: float) -> None:
        state.circuit.open(now)
        state.failures_at_max = 0


class OneBudgetRules(Rules):
    """The rules of a limiter of one budget, the common case: admission by a path of its own,
    which does the window's part in place (as ``_step.lua`` does it on a short path)."""

    __slots__ = ("capacity", "max_wait", "span", "widest_main")

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.widest_main = self.main.window_seconds * self.widest
        self.max_wait = settings.max_wait_seconds
        self.capacity = self.main.max_units  # the main budget's, read on every admission
        self.span = self.main.window_seconds

    def reserve(
        self, state: LimiterState, now: float, takes: tuple[int, ...]
    ) -> Reservation | LimiterRefusalException:
        """:meth:`Rules.reserve` for one budget: on the path of every admission, so each step
        here is paid for by every call."""
        units = takes[0]
        if units != 1:  # one unit always fits: every budget holds at least one
            if units > self.capacity:
                return self.refuse(state, "too-large", 0.0, budget=self.main, units=units)
            if not units:
                return super().reserve(state, now, takes)  # a take of nothing: no window
        circuit = state.circuit
        if circuit.state == CLOSED:
            permit = circuit.epoch
        else:
            probe = self._permit(state, now)
            if isinstance(probe, LimiterRefusalException):
                return probe
            permit = probe
        capacity = self.capacity
        # The window's part, done here for speed (calls into the window cost a tenth of an
        # admission): forget the takes that can never count again (as SlidingWindow.earliest
        # does), then start now, or in turn after the last take, or, with the window full,
        # when enough units have left it (earliest's walk); then add the take (as .add does).
        # The pruning rule below is written four times, kept alike by hand: here,
        # SlidingWindow.earliest (_window.py), and twice in _step.lua (its one-budget short
        # path and its `earliest`). tests/test_limits_redis_windows.py's
        # test_every_copy_of_the_pruning_rule_keeps_the_same_takes drives all four with the
        # same calls and fails when any one of them differs: change them together. (Here its
        # second clause tests the units first, which are whole numbers, and reads the window in
        # force only when they fill the budget: the window takes arithmetic on floats.)
        window = state.main
        queue = window.takes
        total = window.total
        last = None  # the newest take's start; None in an empty window
        if queue:
            widest = self.widest_main
            begun, taken = queue[0]
            while begun + widest <= now or (
                total - taken >= capacity and begun + self.span * (1.0 + state.level) <= now
            ):
                queue.popleft()
                total -= taken
                if not queue:
                    break
                begun, taken = queue[0]
            else:
                last = queue[-1][0]
        if (
            total + units <= capacity
            and (last is None or last < now)
            and state.blocked_until <= now
        ):
            # The common case: room in the window, and no take or pause after now, so the call
            # starts now, as a take of its own.
            window.total = total + units
            queue.append((now, units))
            if permit < 0:
                circuit.probe_started = now  # the probe's time runs from its admission
            return permit  # no wait to tell, and no tuple to build for it
        window.total = total
        span = self.span * (1.0 + state.level)  # the window in force
        if total + units <= capacity:
            start = now if last is None or now >= last else last
        else:
            start = window.earliest(now, units, span, self.widest_main, capacity)
        blocked = state.blocked_until
        if start < blocked:
            start = blocked
        if start > now and start - now > self.max_wait:  # too far: refused, nothing taken
            paced = window.earliest(now, units, span, self.widest_main, capacity)
            return self._too_long(state, permit, paced, max(paced, blocked) - now)
        window.total = total + units
        if start == last:
            queue[-1] = (start, queue[-1][1] + units)  # takes that start together count together
        else:
            queue.append((start, units))
        if permit < 0:
            circuit.probe_started = start
        if start == now:
            return permit
        return permit, start - now, start
