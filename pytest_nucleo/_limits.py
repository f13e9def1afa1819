"""Rate limiters with a circuit: slow down as an upstream fails, stop when it keeps failing.

A :class:`RateLimiter` admits at most ``max_requests`` calls per sliding window. Each upstream
failure the runner reports raises a *throttle level* (``window x (1 + level)`` is the window in
force); successes lower it again. When failures go on at the maximum level the circuit opens:
no call is admitted until a cooldown has passed, then exactly one *probe* call goes through;
its success closes the circuit, its failure reopens it with a doubled cooldown.

State lives behind one ``threading.Lock`` held only for the bookkeeping (admission, recording
an outcome), never across the tool call or a wait, so threads and asyncio tasks share a limiter
freely and slow calls run in parallel.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import threading
import weakref
from collections import deque
from typing import Final, Literal, NewType, TypeGuard

from ._chain import iter_chain
from ._clock import SYSTEM_CLOCK, Clock
from ._exceptions import ExternalServiceException, UncorrectableLLMException, check_seconds
from ._text import VALUE_LIMIT, clean_block, one_line, render_value, seconds

Permit = NewType("Permit", int)
"""What :meth:`RateLimiter.acquire` hands out; give it back when reporting the call's outcome."""

State = Literal["closed", "open", "half-open"]
RefusalReason = Literal["open", "probing", "wait", "held"]

_CLOSED: Final = "closed"
_OPEN: Final = "open"
_HALF_OPEN: Final = "half-open"

DETAIL_LIMIT = 300
"""Characters of a server's detail quoted in a refusal."""


@dataclasses.dataclass(frozen=True, slots=True)
class UpstreamFailure:
    """What the server said when a call failed: the status (None when no response came back),
    the service, the detail, and the seconds it asked us to wait (None when it did not say).

    The runner builds one with :meth:`from_exception` and reports it to every limiter of the
    tool; report one yourself with :meth:`RateLimiter.record_failure` when you use a limiter
    outside the runner.
    """

    service: str
    detail: str
    status: int | None = None
    retry_after: float | None = None

    def __post_init__(self) -> None:
        check_seconds(self.retry_after)

    @classmethod
    def from_exception(cls, exc: BaseException) -> UpstreamFailure | None:
        """What the server said, read from the :class:`ExternalServiceException` in the chain of
        ``exc``; None when the chain holds none (the failure was not the upstream's).

        The carrier is the first one that knows an HTTP status (so the true status survives
        ``wrap_with_context``, whose result is an outer ExternalServiceException without one),
        else the first with a Retry-After, else the deepest. ``status_code`` and
        ``retry_after`` are read duck-typed, so any carrier that has them is understood. A
        chain holding a :class:`LimiterRefusalException` is never an upstream failure.
        """
        chain = list(iter_chain(exc))
        if any(isinstance(m, LimiterRefusalException) for m in chain):
            # A refusal readdressed by wrap_with_context is still ours, not the upstream's (R9).
            return None
        carriers = [m for m in chain if isinstance(m, ExternalServiceException)]
        if not carriers:
            return None
        with_status = [c for c in carriers if isinstance(_status_of(c), int)]
        with_wait = [c for c in carriers if _retry_after_of(c) is not None]
        carrier = (with_status or with_wait or carriers[-1:])[0]
        retry_after = _retry_after_of(carrier)
        if retry_after is None and with_wait:
            retry_after = _retry_after_of(with_wait[0])
        # What the server said: an HTTP carrier's body excerpt; its error_details only say
        # "HTTP 503 Service Unavailable at /path", which the status already tells.
        body = getattr(carrier, "response_body", None)
        detail = body if isinstance(body, str) and body else None
        return cls(
            service=str(getattr(carrier, "service_name", "the service")),
            detail=detail or str(getattr(carrier, "error_details", carrier.llm_message)),
            status=_status_of(carrier),
            retry_after=retry_after,
        )

    def describe(self) -> str:
        """One clean sentence fragment quoting the response, for model-facing text."""
        service = one_line(self.service, VALUE_LIMIT)
        detail = render_value(self.detail, DETAIL_LIMIT)
        if self.status is not None:
            text = f"HTTP {self.status} from {service}, saying {detail}"
        else:
            text = f"a failure of {service} with no HTTP status, saying {detail}"
        if self.retry_after is not None:
            text += f"; the server asked us to wait {seconds(self.retry_after)}"
        return text


def _status_of(carrier: BaseException) -> int | None:
    status = getattr(carrier, "status_code", None)
    return status if isinstance(status, int) and not isinstance(status, bool) else None


def _retry_after_of(carrier: BaseException) -> float | None:
    value = getattr(carrier, "retry_after", None)
    if _finite(value) and value >= 0:
        return float(value)
    return None


def _rate(max_requests: int, window_seconds: float) -> str:
    noun = "request" if max_requests == 1 else "requests"
    return f"{max_requests} {noun} per {seconds(window_seconds)}"


class LimiterRefusalException(UncorrectableLLMException):
    """A rate limiter refused the call: its circuit is open (``reason`` ``"open"``), a single
    probe call is in flight (``"probing"``), or the wait for a slot (``"wait"``) or for the
    pause a server asked for (``"held"``) is longer than it may wait.

    Raised by :meth:`RateLimiter.acquire`; the runner turns it into the tool's result. The model
    reads the limiter's name, its nominal rate, how long the tool stays off and the last
    response that switched it off. A refusal is never counted as an upstream failure. For a
    throttle answer from the service itself, see :class:`UpstreamThrottleException`.
    """

    def __init__(
        self,
        limiter_name: str,
        max_requests: int,
        window_seconds: float,
        off_for: float,
        reason: RefusalReason,
        last_failure: UpstreamFailure | None = None,
        max_wait_seconds: float | None = None,
    ) -> None:
        technical, text = _refusal_texts(
            limiter_name,
            max_requests,
            window_seconds,
            math.ceil(round(off_for, 3)),  # whole seconds: finer is noise to the model
            reason,
            last_failure,
            max_wait_seconds,
        )
        # The cached texts are already clean. LLMReadableException.__init__ would clean them
        # again, and its secret-masking regexes are most of what a refusal costs (TARGETS R3),
        # so the two messages are set here directly, exactly as that __init__ sets them.
        Exception.__init__(self, technical)
        self._message = technical
        self.llm_message = text
        self._keep(
            limiter_name=limiter_name,
            max_requests=max_requests,
            window_seconds=window_seconds,
            off_for=off_for,
            reason=reason,
            last_failure=last_failure,
            max_wait_seconds=max_wait_seconds,
        )


@functools.lru_cache(maxsize=512)
def _refusal_texts(
    limiter_name: str,
    max_requests: int,
    window_seconds: float,
    off_for: int,
    reason: RefusalReason,
    last_failure: UpstreamFailure | None,
    max_wait_seconds: float | None,
) -> tuple[str, str]:
    """The technical and the model message of a refusal, cleaned once per distinct refusal."""
    name = one_line(limiter_name, VALUE_LIMIT)
    rate = _rate(max_requests, window_seconds)
    off = seconds(off_for)
    if reason == "open":
        what = (
            f"The rate limiter '{name}' of this tool (nominal rate: {rate}) has switched the "
            f"tool off after repeated upstream failures. It stays off for the next {off}, "
            "then lets a single trial call through."
        )
    elif reason == "probing":
        what = (
            f"The rate limiter '{name}' of this tool (nominal rate: {rate}) has switched the "
            "tool off after repeated upstream failures and is letting a single trial call "
            f"through; other calls stay off until it completes, for up to the next {off}."
        )
    else:
        limit = "" if max_wait_seconds is None else f" (at most {seconds(max_wait_seconds)})"
        why = " The service asked us to pause its calls." if reason == "held" else ""
        what = (
            f"The rate limiter '{name}' of this tool (nominal rate: {rate}) would have to "
            f"hold this call for {off}, longer than it may wait{limit}, so the call was not "
            f"made.{why} The tool stays off for the next {off}."
        )
    if last_failure is not None:
        said = f" The last response that switched it off: {last_failure.describe()}."
    elif reason == "held":
        said = ""  # a retry signal asked for the pause: there was no failed response to quote
    else:
        said = (
            " No upstream failure was recorded: the tool is called more often than its rate allows."
        )
    return (
        clean_block(f"Limiter {name} refused the call ({reason}); off for {off}"),
        clean_block(what + said),
    )


@dataclasses.dataclass(frozen=True, slots=True)
class LimiterStats:
    """A consistent snapshot of a limiter, from :meth:`RateLimiter.stats`."""

    state: State
    throttle_level: float
    effective_window_seconds: float
    cooldown_seconds: float
    successes: int
    failures: int
    refusals: int
    last_failure: UpstreamFailure | None


def _check(name: str, setting: str, value: float, rule: str, ok: bool) -> None:
    if not ok:
        raise ValueError(f"RateLimiter {name!r}: {setting}={value!r} is impossible: {rule}")


def _finite(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_LIVE: weakref.WeakSet[RateLimiter] = weakref.WeakSet()
"""Every RateLimiter still alive, so a test harness can reset them (see RateLimiter.reset)."""


def live_limiters() -> list[RateLimiter]:
    """The RateLimiter instances alive now."""
    return list(_LIVE)


class RateLimiter:
    """A sliding-window rate limiter with adaptive throttling and a circuit, for one upstream.

    Attach it to tools with ``@tool(limiters=[...])`` (or ``run_tool(..., limiters=[...])``);
    the runner then asks it before every call and tells it how each call went. Used by hand:
    ``permit = limiter.acquire()`` (or ``await limiter.aacquire()``) before the call, then
    :meth:`record_success`, :meth:`record_failure` or :meth:`release` with that permit.

    Settings (all keyword-only, all checked; an impossible one raises ``ValueError`` saying
    what to change):

    - ``max_requests`` calls per ``window_seconds``: the nominal rate.
    - ``failure_step`` (1.0): throttle added per upstream failure, up to ``max_throttle``
      (9.0); the window in force is ``window_seconds x (1 + level)``.
    - ``recovery_step`` (0.2) off the level per ``successes_per_step`` (3) successes; once
      ``quiet_seconds`` (300) have passed without a failure, ``quiet_recovery_step`` (1.0)
      per success instead.
    - ``failures_to_open`` (3): failures that arrive while the level is already at its maximum
      open the circuit (with the defaults, the 12th failure in a row).
    - ``cooldown_seconds`` (30) before the one probe call, doubled after each failed probe up
      to ``max_cooldown_seconds`` (3600), back to ``cooldown_seconds`` once a probe succeeds.
    - ``probe_timeout_seconds`` (120): a probe that has not reported back by then no longer
      blocks the next caller from probing.
    - ``max_wait_seconds`` (60): the longest a caller is held for a slot or for a server's
      Retry-After; a longer wait is not slept but refused (:class:`LimiterRefusalException`).
    - ``clock``: a :class:`Clock` (default: the system clock, see ``set_testing``).
    """

    def __init__(
        self,
        name: str,
        *,
        max_requests: int,
        window_seconds: float,
        clock: Clock | None = None,
        failure_step: float = 1.0,
        max_throttle: float = 9.0,
        recovery_step: float = 0.2,
        successes_per_step: int = 3,
        quiet_seconds: float = 300.0,
        quiet_recovery_step: float = 1.0,
        failures_to_open: int = 3,
        cooldown_seconds: float = 30.0,
        max_cooldown_seconds: float = 3600.0,
        probe_timeout_seconds: float = 120.0,
        max_wait_seconds: float = 60.0,
    ) -> None:
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

        self.name = name
        self.max_requests = max_requests
        self.window_seconds = float(window_seconds)
        self.clock: Clock = clock if clock is not None else SYSTEM_CLOCK
        self.failure_step = float(failure_step)
        self.max_throttle = float(max_throttle)
        self.recovery_step = float(recovery_step)
        self.successes_per_step = successes_per_step
        self.quiet_seconds = float(quiet_seconds)
        self.quiet_recovery_step = float(quiet_recovery_step)
        self.failures_to_open = failures_to_open
        self.cooldown_seconds = float(cooldown_seconds)
        self.max_cooldown_seconds = float(max_cooldown_seconds)
        self.probe_timeout_seconds = float(probe_timeout_seconds)
        self.max_wait_seconds = float(max_wait_seconds)

        self._now = self.clock.monotonic
        self._lock = threading.Lock()
        self._start_fresh()
        _LIVE.add(self)

    def _start_fresh(self) -> None:
        # Admission times (some in the future: callers waiting for their slot), oldest first.
        # The window looks at the last max_requests; older ones are kept while inside the
        # window, because a waiter that gives its slot back makes them the last again.
        self._admitted: deque[float] = deque()
        self._window = self.window_seconds
        self._level = 0.0
        self._quiet_from = -math.inf  # when the last failure was recorded
        self._successes_toward_step = 0
        self._failures_at_max = 0
        self._blocked_until = -math.inf  # a server's Retry-After
        self._state: State = _CLOSED
        self._epoch = 0  # permits of closed-circuit calls; bumped on every circuit change
        self._cooldown = self.cooldown_seconds
        self._opened_at = 0.0
        self._probe: int | None = None
        self._probe_started = 0.0
        self._next_id = 1  # probe permits are negative, so they never equal an epoch
        self._successes = 0
        self._failures = 0
        self._refusals = 0
        self._last_failure: UpstreamFailure | None = None

    def reset(self) -> None:
        """Forget every call, failure, wait and count: the limiter is as just built, settings
        kept. The pytest plugin does this before each test to the limiters that already exist,
        so one test's failures never switch a shared limiter off for the next."""
        with self._lock:
            # Permits handed out before the reset must stay stale: keep counting them on.
            epoch, next_id = self._epoch + 1, self._next_id
            self._start_fresh()
            self._epoch, self._next_id = epoch, next_id

    # --- reading ------------------------------------------------------------------------

    @property
    def state(self) -> State:
        """``"closed"`` (admitting), ``"open"`` (refusing) or ``"half-open"`` (one probe)."""
        return self._state

    @property
    def throttle_level(self) -> float:
        return self._level

    @property
    def effective_window_seconds(self) -> float:
        """The window in force: ``window_seconds x (1 + throttle_level)``."""
        return self._window

    def stats(self) -> LimiterStats:
        """A consistent snapshot of the state and of the counts since creation."""
        with self._lock:
            return LimiterStats(
                state=self._state,
                throttle_level=self._level,
                effective_window_seconds=self._window,
                cooldown_seconds=self._cooldown,
                successes=self._successes,
                failures=self._failures,
                refusals=self._refusals,
                last_failure=self._last_failure,
            )

    def __repr__(self) -> str:
        return (
            f"RateLimiter({self.name!r}, max_requests={self.max_requests}, "
            f"window_seconds={self.window_seconds}, state={self._state!r}, "
            f"throttle_level={self._level})"
        )

    # --- admission ----------------------------------------------------------------------

    def acquire(self) -> Permit:
        """Wait (on the clock) for a slot and return a permit; raise
        :class:`LimiterRefusalException` when the circuit is open, a probe is in flight, or the
        wait would be longer than ``max_wait_seconds``."""
        permit, wait, start = self._reserve()
        if wait > 0:
            try:
                self.clock.sleep(wait)
            except BaseException:
                self._unreserve(start)  # no call was made: its slot goes to the next caller
                self.release(permit)
                raise
        return permit

    async def aacquire(self) -> Permit:
        """:meth:`acquire` for asyncio: the wait is awaited, never blocking the loop."""
        permit, wait, start = self._reserve()
        if wait > 0:
            try:
                await self.clock.asleep(wait)
            except BaseException:
                self._unreserve(start)  # no call was made: its slot goes to the next caller
                self.release(permit)
                raise
        return permit

    def _reserve(self) -> tuple[Permit, float, float]:
        now = self._now()
        with self._lock:
            permit = self._epoch if self._state == _CLOSED else self._admit_probe(now)
            admitted = self._admitted
            while len(admitted) > self.max_requests and admitted[0] + self._window <= now:
                admitted.popleft()  # can never count again
            paced = now  # the earliest start the window allows: in turn, max_requests a window
            if admitted:
                paced = max(paced, admitted[-1])
                if len(admitted) >= self.max_requests:
                    paced = max(paced, admitted[-self.max_requests] + self._window)
            start = max(paced, self._blocked_until)
            wait = start - now
            if wait > self.max_wait_seconds:
                if permit < 0:
                    self._probe = None
                # "held" only when the server's pause, not the window, is what is too long.
                raise self._refuse("held" if self._blocked_until > paced else "wait", wait)
            admitted.append(start)
            if permit < 0:
                self._probe_started = start  # the probe's time runs from its admission
            return Permit(permit), wait, start

    def _unreserve(self, start: float) -> None:
        with self._lock, contextlib.suppress(ValueError):  # already slid out of the window
            self._admitted.remove(start)

    def _admit_probe(self, now: float) -> int:
        """Called under the lock with the circuit not closed: a probe permit, or a refusal."""
        if self._state == _OPEN:
            reopens = self._opened_at + self._cooldown
            if now < reopens:
                raise self._refuse("open", max(reopens, self._blocked_until) - now)
            self._state = _HALF_OPEN
            self._probe = None
        elif self._probe is not None:
            expires = self._probe_started + self.probe_timeout_seconds
            if now < expires:
                raise self._refuse("probing", expires - now)
        probe = -self._next_id
        self._next_id += 1
        self._probe = probe
        return probe

    def _refuse(self, reason: RefusalReason, off_for: float) -> LimiterRefusalException:
        # A fresh exception per refusal: raising a stored one grows its traceback every time.
        self._refusals += 1
        return LimiterRefusalException(
            self.name,
            self.max_requests,
            self.window_seconds,
            max(off_for, 0.0),
            reason,
            self._last_failure,
            self.max_wait_seconds if reason in ("wait", "held") else None,
        )

    # --- outcomes -----------------------------------------------------------------------

    def record_success(self, permit: Permit | None = None) -> None:
        """The call admitted with ``permit`` succeeded: recover a little; close after a probe."""
        now = self._now()
        with self._lock:
            self._successes += 1
            if permit is not None and permit < 0:
                if permit != self._probe:
                    return  # a probe that expired and was replaced: the new one decides
                self._close()
            elif (permit is not None and permit != self._epoch) or self._state != _CLOSED:
                return  # admitted before the circuit last changed: that call says nothing now
            self._failures_at_max = 0
            if self._level <= 0.0:
                return
            if now - self._quiet_from >= self.quiet_seconds:
                self._set_level(self._level - self.quiet_recovery_step)
                return
            self._successes_toward_step += 1
            if self._successes_toward_step >= self.successes_per_step:
                self._successes_toward_step = 0
                self._set_level(self._level - self.recovery_step)

    def record_failure(self, failure: UpstreamFailure, permit: Permit | None = None) -> None:
        """The call admitted with ``permit`` failed upstream with ``failure``: slow down, open
        the circuit when failures go on at the maximum throttle, reopen it after a failed probe,
        and admit nothing before the server's Retry-After has elapsed."""
        now = self._now()
        with self._lock:
            self._failures += 1
            self._last_failure = failure
            self._quiet_from = now
            self._successes_toward_step = 0
            self._hold(now, failure.retry_after)
            if permit is not None and permit < 0:
                if permit == self._probe:
                    self._cooldown = min(self._cooldown * 2, self.max_cooldown_seconds)
                    self._open(now)
                return
            if (permit is not None and permit != self._epoch) or self._state != _CLOSED:
                return  # admitted before the circuit last changed: that call says nothing now
            if self._level >= self.max_throttle:
                self._failures_at_max += 1
                if self._failures_at_max >= self.failures_to_open:
                    self._open(now)
                    return
            self._set_level(self._level + self.failure_step)

    def release(self, permit: Permit | None = None, *, retry_after: float | None = None) -> None:
        """The call admitted with ``permit`` ended without news of the upstream (it failed for
        another reason, was cancelled, or raised a retry signal): nothing is learned, but a
        probe frees its place. A ``retry_after`` the server suggested (a retry signal's) is
        honoured all the same: no call is admitted before it elapses."""
        check_seconds(retry_after)
        now = self._now()
        with self._lock:
            self._hold(now, retry_after)
            if permit is not None and permit < 0 and permit == self._probe:
                self._probe = None

    def _hold(self, now: float, retry_after: float | None) -> None:
        """Under the lock: admit nothing before ``retry_after`` seconds from ``now`` elapse."""
        if retry_after is not None and now + retry_after > self._blocked_until:
            self._blocked_until = now + retry_after

    def _set_level(self, level: float) -> None:
        level = min(max(round(level, 9), 0.0), self.max_throttle)
        self._level = level
        self._window = self.window_seconds * (1.0 + level)

    def _open(self, now: float) -> None:
        self._state = _OPEN
        self._opened_at = now
        self._probe = None
        self._failures_at_max = 0
        self._epoch += 1

    def _close(self) -> None:
        self._state = _CLOSED
        self._probe = None
        self._cooldown = self.cooldown_seconds
        self._epoch += 1
