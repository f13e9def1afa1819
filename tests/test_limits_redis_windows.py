"""The Redis store's windows: long ones are kept in chunks, and they decide as the Python ones.

A window on Redis keeps its oldest and newest takes in one field and the takes between them
in sealed chunks of a few takes each (see ``_step.lua``), so a decision reads and writes only
short fields whatever the window holds; an admission of one budget, the common case, is made
on the head field's bytes alone. These tests drive windows of many takes (waiters queued far
ahead, takes given back from the middle, a throttle widening the window) against the
in-process store, call by call, and read the fields themselves: after each call, the takes
they hold are the in-process window's, in order. Against a real redis-server on a loopback
port, on fake clocks.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from _redis_server import RedisServer, unique_prefix
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import pytest_nucleo as nucleo
from pytest_nucleo import Budget, FakeClock, LimiterRefusalException, RateLimiter
from pytest_nucleo.limits._window import SlidingWindow

CHUNK = 16  # takes per sealed chunk, as the script keeps them
TAKE = 16  # bytes per take
HEAD = 32  # bytes before the takes in a window's head field
LONGEST_FIELD = HEAD + 2 * CHUNK * TAKE  # the oldest takes and the newest, a chunk each at most


@pytest.fixture(scope="module")
def client(redis_server: RedisServer) -> Any:
    return redis_server.client()


class Pair:
    """The same limiter in process and on Redis, each on its own fake clock, driven alike
    through their keepers (an admission's reservation as the rules give it, not waited on)."""

    def __init__(self, client: Any, **options: Any) -> None:
        self.client = client
        self.here_clock, self.there_clock = FakeClock(1000.0), FakeClock(1000.0)
        self.prefix = unique_prefix()
        store = nucleo.RedisStore(client, prefix=self.prefix, clock=self.there_clock)
        self.here = RateLimiter("wide", clock=self.here_clock, **options)
        self.there = RateLimiter("wide", clock=self.there_clock, store=store, **options)
        self.key = store.key("wide")
        self.reservations: list[tuple[float, tuple[int, ...]]] = []  # start and takes

    def check_windows(self) -> None:
        """Each window's takes on Redis, read from its fields, are the in-process window's, in
        order, and its fields keep their form: the head's total is its takes' sum, the oldest
        takes are empty only in an empty window, the newest only with no chunk sealed."""
        here = self.here._keeper.read(lambda state: [list(w.takes) for w in state.windows])
        budgets = self.here.budgets
        there = [window_takes(self.client, self.key, budget.name) for budget in budgets]
        assert there == here

    def advance(self, seconds: float) -> None:
        self.here_clock.advance(seconds)
        self.there_clock.advance(seconds)

    def reserve(self, takes: tuple[int, ...]) -> tuple[Any, ...]:
        """Both stores' answer to one admission, the same or the test fails."""
        answers = [
            self._answer(lim._keeper.reserve(takes), clock.monotonic())
            for lim, clock in ((self.here, self.here_clock), (self.there, self.there_clock))
        ]
        assert answers[1] == answers[0]
        assert self.there.stats() == self.here.stats()
        if answers[0][0] == "admitted":
            self.reservations.append((answers[0][3], takes))
        return answers[0]

    @staticmethod
    def _answer(reserved: object, now: float) -> tuple[Any, ...]:
        if isinstance(reserved, LimiterRefusalException):
            return ("refused", reserved.reason, round(reserved.off_for, 6), reserved.llm_message)
        if isinstance(reserved, int):  # the call starts now
            permit, wait, start = reserved, 0.0, now
        else:
            assert isinstance(reserved, tuple)
            permit, wait, start = reserved
        return ("admitted", permit, round(wait, 6), start)

    def unreserve(self, index: int) -> None:
        """Both give back an earlier admission's takes (again, if it was given back before)."""
        if self.reservations:
            start, takes = self.reservations[index % len(self.reservations)]
            self.here._keeper.unreserve(start, takes)
            self.there._keeper.unreserve(start, takes)

    def fail(self, retry_after: float | None) -> None:
        """A failure: the throttle widens the windows; a Retry-After puts the next takes
        ahead, far from the takes before them."""
        failure = nucleo.UpstreamFailure("Shop API", "slow down", 429, retry_after)
        self.here.record_failure(failure)
        self.there.record_failure(failure)

    def succeed(self) -> None:
        self.here.record_success()
        self.there.record_success()

    def play(self, calls: list[tuple[Any, ...]], tokens: bool) -> None:
        """Generated calls (below) made on both, their windows compared after each; a
        reservation takes its second number from a "tokens" budget when ``tokens``."""
        for call in calls:
            kind = call[0]
            if kind == "reserve":
                self.reserve((call[1], call[2]) if tokens else (call[1],))
            elif kind == "unreserve":
                self.unreserve(call[1])
            elif kind == "fail":
                self.fail(call[1])
            elif kind == "succeed":
                self.succeed()
            else:
                self.advance(call[1])
            self.check_windows()


# Each generated run drives one limiter through a few hundred calls on the module's server.
EXAMPLES = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
SETTINGS = st.fixed_dictionaries(
    {
        "max_requests": st.sampled_from([2, 20, 50]),
        "window_seconds": st.sampled_from([1.0, 10.0]),
        "max_throttle": st.sampled_from([0.0, 1.0]),
        "failure_step": st.just(0.5),
        "failures_to_open": st.just(1_000),  # the windows are tested here, not the circuit
        "max_wait_seconds": st.sampled_from([0.0, 5.0, 600.0]),
        "budgets": st.sampled_from([(), (Budget("tokens", 40, 5.0),)]),
    }
)
RESERVE = st.tuples(st.just("reserve"), st.sampled_from([1, 1, 1, 0, 3]), st.integers(0, 12))
CALL = st.one_of(
    RESERVE,
    RESERVE,
    RESERVE,
    RESERVE,
    # Given back: mostly one of the newest (a waiter gives up), else any, even given back before.
    st.tuples(st.just("unreserve"), st.integers(-3, -1)),
    st.tuples(st.just("unreserve"), st.integers(-3, -1)),
    st.tuples(st.just("unreserve"), st.integers(0, 10_000)),
    st.tuples(st.just("fail"), st.sampled_from([None, None, 2.0, 50.0])),
    st.tuples(st.just("succeed")),
    st.tuples(st.just("advance"), st.sampled_from([0.0, 0.05, 0.3, 1.0, 4.0, 30.0])),
)


@pytest.mark.slow
@EXAMPLES
@given(settings_=SETTINGS, calls=st.lists(CALL, min_size=100, max_size=250))
def test_windows_of_many_takes_decide_as_the_python_store_does(
    client: Any, settings_: dict[str, Any], calls: list[tuple[Any, ...]]
) -> None:
    pair = Pair(client, **settings_)
    pair.play(calls, tokens=len(settings_["budgets"]) > 0)
    assert pair.there.stats() == pair.here.stats()


# One budget, the common case, which the script decides on its window's bytes alone (no
# full window to walk, no wait too long): many takes at one time (which count together), a
# queue of waiters, windows long enough to seal chunks and to read them back as they go.
ONE_BUDGET = st.fixed_dictionaries(
    {
        "max_requests": st.sampled_from([3, 40, 100]),
        "window_seconds": st.just(1.0),
        "max_throttle": st.sampled_from([0.0, 1.0]),
        "failure_step": st.just(0.5),
        "failures_to_open": st.just(1_000),
        "max_wait_seconds": st.sampled_from([0.0, 600.0]),
    }
)
ONE_BUDGET_CALL = st.one_of(
    st.tuples(st.just("reserve"), st.sampled_from([1, 1, 1, 2])),
    st.tuples(st.just("reserve"), st.sampled_from([1, 1, 1, 2])),
    st.tuples(st.just("reserve"), st.sampled_from([1, 1, 1, 2])),
    st.tuples(st.just("advance"), st.sampled_from([0.0, 0.004, 0.02, 0.3, 1.0, 3.0])),
    st.tuples(st.just("advance"), st.sampled_from([0.0, 0.004, 0.02])),
    st.tuples(st.just("unreserve"), st.integers(-3, -1)),
    st.tuples(st.just("fail"), st.sampled_from([None, 0.5])),
    st.tuples(st.just("succeed")),
)


@pytest.mark.slow
@EXAMPLES
@given(settings_=ONE_BUDGET, calls=st.lists(ONE_BUDGET_CALL, min_size=100, max_size=300))
def test_a_window_of_one_budget_keeps_the_python_store_s_takes(
    client: Any, settings_: dict[str, Any], calls: list[tuple[Any, ...]]
) -> None:
    Pair(client, **settings_).play(calls, tokens=False)


class EveryCopy(Pair):
    """A limiter of one budget in process and on Redis, beside a window driven by
    :meth:`SlidingWindow.earliest` directly: every copy of the window's pruning rule at once.

    The rule (forget the takes that can never count again) is written four times: in
    ``SlidingWindow.earliest``, inlined in ``OneBudgetRules.reserve`` (the in-process store's path
    for one budget, which calls ``earliest`` only once the window is full), and twice in
    ``_step.lua`` (its one-budget short path, and its ``earliest``, which the script takes when
    the window is full or the wait too long). After every call the three windows must hold the
    same takes, and every admission must get the same answer: a change to any one copy shows."""

    def __init__(self, client: Any, **options: Any) -> None:
        super().__init__(client, **options)
        self.direct = SlidingWindow()
        main = self.here.budgets[0]
        self.capacity, self.span = main.max_units, main.window_seconds
        self.widest = self.span * (1.0 + self.here.max_throttle)

    def reserve(self, takes: tuple[int, ...]) -> tuple[Any, ...]:
        # The throttle and a server's pause as the in-process rules hold them before the call
        # (the outcomes' rules are not what is tested here), then the admission's steps on the
        # window directly: its earliest start, the pause, the patience, the take.
        level, blocked = self.here._keeper.read(lambda state: (state.level, state.blocked_until))
        now, units = self.here_clock.monotonic(), takes[0]
        if units > self.capacity:  # refused before any window is read
            answer = super().reserve(takes)
            assert answer[:2] == ("refused", "too-large")
            return answer
        paced = self.direct.earliest(
            now, units, self.span * (1.0 + level), self.widest, self.capacity
        )
        start = max(paced, blocked)
        answer = super().reserve(takes)
        if start - now > self.here.max_wait_seconds:
            assert answer[:2] == ("refused", "held" if blocked > paced else "wait")
        else:
            self.direct.add(start, units)
            assert answer == ("admitted", answer[1], round(start - now, 6), start)
        return answer

    def unreserve(self, index: int) -> None:
        if self.reservations:
            start, takes = self.reservations[index % len(self.reservations)]
            self.direct.remove(start, takes[0])
        super().unreserve(index)

    def check_windows(self) -> None:
        super().check_windows()
        here = self.here._keeper.read(lambda state: list(state.windows[0].takes))
        assert list(self.direct.takes) == here


# Small windows, so that they are often full and waiters queue past them (a take outside the
# window is then kept while the takes after it, given back, could bring it under the capacity),
# and a throttle, so that the widest window differs from the one in force.
EVERY_COPY = st.fixed_dictionaries(
    {
        "max_requests": st.sampled_from([1, 2, 3, 5]),
        "window_seconds": st.sampled_from([1.0, 2.0]),
        "max_throttle": st.sampled_from([0.0, 1.0, 2.0]),
        "failure_step": st.sampled_from([0.5, 1.0]),
        "failures_to_open": st.just(1_000),  # the circuit stays closed: windows only
        "max_wait_seconds": st.sampled_from([0.0, 1.5, 600.0]),
    }
)
EVERY_COPY_CALL = st.one_of(
    st.tuples(st.just("reserve"), st.sampled_from([1, 1, 2])),
    st.tuples(st.just("reserve"), st.sampled_from([1, 1, 2])),
    st.tuples(st.just("reserve"), st.sampled_from([1, 1, 2])),
    st.tuples(st.just("advance"), st.sampled_from([0.0, 0.5, 1.0, 2.0])),
    st.tuples(st.just("advance"), st.sampled_from([0.25, 1.0, 3.0])),
    st.tuples(st.just("unreserve"), st.integers(-3, -1)),
    st.tuples(st.just("fail"), st.sampled_from([None, None, 1.0])),
    st.tuples(st.just("succeed")),
)


@pytest.mark.slow
@EXAMPLES
@example(  # a take outside the window, the takes after it exactly the capacity: forgotten
    settings_={"max_requests": 2, "window_seconds": 1.0, "max_throttle": 1.0, "failure_step": 1.0,
               "failures_to_open": 1_000, "max_wait_seconds": 600.0},
    calls=[("reserve", 1), ("reserve", 1), ("reserve", 1), ("reserve", 1), ("advance", 1.0),
           ("reserve", 1), ("advance", 1.0), ("reserve", 1), ("advance", 2.0), ("reserve", 1)],
)  # fmt: skip
@example(  # a take outside the window kept until the widest window has passed it, to the dot
    settings_={"max_requests": 3, "window_seconds": 1.0, "max_throttle": 1.0, "failure_step": 1.0,
               "failures_to_open": 1_000, "max_wait_seconds": 0.0},
    calls=[("reserve", 1), ("advance", 1.0), ("reserve", 1), ("advance", 1.0), ("reserve", 1),
           ("advance", 0.5), ("reserve", 1), ("advance", 0.5), ("reserve", 1)],
)  # fmt: skip
@example(  # the same, when a server's pause refuses the take: the script's whole rules prune
    settings_={"max_requests": 3, "window_seconds": 1.0, "max_throttle": 1.0, "failure_step": 1.0,
               "failures_to_open": 1_000, "max_wait_seconds": 0.0},
    calls=[("reserve", 1), ("advance", 1.0), ("reserve", 1), ("advance", 0.5), ("fail", 1.0),
           ("advance", 0.5), ("reserve", 1)],
)  # fmt: skip
@given(settings_=EVERY_COPY, calls=st.lists(EVERY_COPY_CALL, min_size=20, max_size=120))
def test_every_copy_of_the_pruning_rule_keeps_the_same_takes(
    client: Any, settings_: dict[str, Any], calls: list[tuple[Any, ...]]
) -> None:
    EveryCopy(client, **settings_).play(calls, tokens=False)


def window_takes(client: Any, key: str, budget: str) -> list[tuple[float, int]]:
    """A window's takes as the script keeps them (see ``_step.lua``): the oldest and the
    newest in its head field, the sealed chunks between them; checked for their form."""
    head = client.hget(key, f"b:{budget}")
    if head is None:
        return []
    total, first, past, length = struct.unpack("<4d", head[:HEAD])
    parts = [head[HEAD : HEAD + int(length)]]
    parts += [client.hget(key, f"b:{budget}:{n}") for n in range(int(first), int(past))]
    parts.append(head[HEAD + int(length) :])
    assert all(len(part) % TAKE == 0 and len(part) <= CHUNK * TAKE for part in parts)
    if not parts[0]:
        assert not any(parts), "the oldest takes are empty only in an empty window"
    if not parts[-1]:
        assert first == past, "the newest takes are empty only with no chunk sealed"
    takes = [
        (start, int(units)) for part in parts for start, units in struct.iter_unpack("<2d", part)
    ]
    assert sum(units for _, units in takes) == total
    return takes


def fields(client: Any, key: str) -> dict[str, int]:
    """A limiter's hash: each field's name and length."""
    return {name.decode(): client.hstrlen(key, name) for name in client.hkeys(key)}


def test_a_long_window_is_kept_in_short_fields_and_its_chunks_go_once_forgotten(
    client: Any,
) -> None:
    pair = Pair(client, max_requests=1_000, window_seconds=10.0, max_wait_seconds=60.0)
    for _ in range(1_000):  # a full window: 1,000 takes, a hundredth of a second apart
        pair.reserve((1,))
        pair.advance(0.01)
    held = fields(client, pair.key)
    chunks = [name for name in held if name.startswith("b:requests:")]
    assert len(chunks) >= 1_000 // CHUNK - 2  # all but the oldest and the newest takes
    assert max(held.values()) <= LONGEST_FIELD
    # Full: the next take waits for the oldest to leave the window, a walk from the oldest.
    assert pair.reserve((1,)) == ("admitted", 0, 0.0, 1010.0)
    assert pair.reserve((3,))[2] == pytest.approx(0.03)  # three more to leave: a longer walk
    pair.advance(100.0)  # every take is forgotten by the next admission
    assert pair.reserve((1,))[:3] == ("admitted", 0, 0.0)  # at once
    assert sorted(fields(client, pair.key)) == ["b:requests", "s"]


def test_a_steady_stream_through_a_long_window_reads_its_chunks_back_as_they_come(
    client: Any,
) -> None:
    # Fifty takes in the window at a time (and no throttle to keep more), never full: the
    # oldest takes run out with chunks sealed behind them, which come back into the head
    # field one by one, on the common path.
    pair = Pair(
        client, max_requests=100, window_seconds=1.0, max_throttle=0.0, max_wait_seconds=0.0
    )
    for _ in range(300):
        assert pair.reserve((1,))[:3] == ("admitted", 0, 0.0)
        pair.check_windows()
        pair.advance(0.02)
    chunks = [name for name in fields(client, pair.key) if ":" in name[2:]]
    assert 1 <= len(chunks) <= 50 // CHUNK  # the rest in the head field


def test_takes_given_back_from_the_middle_of_a_long_window(client: Any) -> None:
    # One call per second: forty waiters queued, each a second after the one before, so
    # their takes fill the oldest takes, two sealed chunks and the newest takes.
    pair = Pair(client, max_requests=1, window_seconds=1.0, max_wait_seconds=1_000.0)
    for number in range(40):
        assert pair.reserve((1,))[3] == 1000.0 + number
    assert len([name for name in fields(client, pair.key) if ":" in name[2:]]) == 2
    # Given back: from a chunk, the oldest (then refilled from the first chunk), the newest
    # (until none are left, and the last chunk takes their place).
    for index in (20, 5, 39, 38, 0, 21, 22, 37, 36, 35, 34, 33):
        pair.unreserve(index)
    # In turn after the last take (1032), once the walk has passed every take before it.
    assert pair.reserve((1,))[3] == 1033.0
    for _ in range(40):  # taken again, in turn, as the Python store takes them
        pair.reserve((1,))
    pair.advance(30.0)
    for _ in range(40):
        pair.reserve((1,))
    assert max(fields(client, pair.key).values()) <= LONGEST_FIELD


def test_a_window_in_the_former_form_is_ignored(client: Any) -> None:
    """Before chunks, a window was one field, 'w:' and the budget's name: never read now (the
    window starts empty once; the field goes when the key expires)."""
    pair = Pair(client, max_requests=2, window_seconds=10.0, max_wait_seconds=0.0)
    client.hset(pair.key, "w:requests", b"\x00" * 7 + b"\xff" * 40)  # any bytes at all
    assert pair.reserve((1,)) == ("admitted", 0, 0.0, 1000.0)
    assert pair.reserve((1,)) == ("admitted", 0, 0.0, 1000.0)
    assert pair.reserve((1,))[1] == "wait"
