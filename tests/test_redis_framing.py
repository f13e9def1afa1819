"""The store's hand-framed commands (``limits/_redis_framing.py``) are the bytes redis-py's own
encoder gives for the same command: ints, floats, text (non-ASCII too), bytes, empty.

No server: the frames are compared with ``Connection.pack_command``, which packs every command
redis-py sends; what the store does with a server is ``test_limits_redis.py``'s.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

redis = pytest.importorskip("redis")

import pytest_nucleo as nucleo  # noqa: E402
from pytest_nucleo.limits._redis_framing import (  # noqa: E402
    OPERATIONS,
    Arg,
    CommandFrames,
    encode,
)

ARGS = st.one_of(
    st.integers(),
    st.floats(),  # nan and the infinities too: both sides send their repr
    st.text(),  # non-ASCII and empty among them
    st.binary(),  # CR LF and empty among them
)
SHA = "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"


def packed(*args: Any) -> bytes:
    """The command as redis-py sends it (its chunks joined: a long argument is a chunk of its
    own)."""
    return b"".join(bytes(chunk) for chunk in redis.Connection().pack_command(*args))


@settings(deadline=None)  # a loaded machine's pause is no failure of the frames
@given(
    key=st.text(min_size=1),
    fixed=st.lists(st.binary(), max_size=4),  # what the store sends as its settings
    op=st.sampled_from(OPERATIONS),
    args=st.lists(ARGS, max_size=6),
)
def test_a_frame_is_what_redis_py_packs_for_the_same_command(
    key: str, fixed: list[bytes], op: str, args: list[Arg]
) -> None:
    frames = CommandFrames(SHA, key, fixed)
    expected = packed("EVALSHA", SHA, 1, key, op, *fixed, *args)
    assert frames.frame(op, *args) == expected
    # The asyncio client's path: the same command, packed by redis-py itself.
    assert packed(*frames.command(op, *args)) == expected


@pytest.mark.parametrize(
    "arg",
    [0, -1, 2**70, 0.1, -0.0, 1e300, math.inf, math.nan, "", "é中\U0001f600", b"", b"\r\n\0",
     "x" * 10_000, b"y" * 70_000],
    ids=lambda arg: type(arg).__name__ + str(len(repr(arg))),
)  # fmt: skip
def test_each_kind_of_argument_is_encoded_as_redis_py_encodes_it(arg: Arg) -> None:
    assert encode(arg) == redis.connection.Encoder("utf-8", "strict", False).encode(arg)
    frames = CommandFrames(SHA, "app:shop", [b"\x00\x01"])
    assert frames.frame("read", arg) == packed("EVALSHA", SHA, 1, "app:shop", "read", b"\0\1", arg)


def test_a_bool_is_refused_as_redis_py_refuses_it() -> None:
    with pytest.raises(redis.DataError):
        redis.connection.Encoder("utf-8", "strict", False).encode(True)
    with pytest.raises(TypeError, match="a bool is no Redis argument"):
        encode(True)


def test_the_stores_frames_for_every_decision_are_what_redis_py_packs() -> None:
    # A real limiter's keeper, its settings packed, its key quoted: a prefix and a budget
    # name that are not ASCII. No decision is made, so no server is needed.
    client = redis.Redis(host="127.0.0.1", port=9, socket_timeout=1.0)
    lim = nucleo.RateLimiter(
        "café/ü", max_requests=5, window_seconds=60,
        budgets=[nucleo.Budget("crédits", max_units=10, window_seconds=3600)],
        store=nucleo.RedisStore(client, prefix="app-ç", clock=nucleo.FakeClock()),
    )  # fmt: skip
    keeper: Any = lim._keeper
    sent = {
        "reserve": ("1,3",),
        "unreserve": ("12.5", "1,3"),
        "succeed": ("",),
        "fail": ("2", "Shop API", "Service Unavailable — réessayez", "503", "30.0"),
        "release": ("2", ""),
        "read": (),
    }
    now = repr(keeper.store.clock.monotonic())  # the store's clock: its time in every frame
    assert keeper.key == "app-ç:caf%C3%A9%2F%C3%BC"
    head = ("EVALSHA", keeper.store._sha.encode(), b"1", keeper.key.encode())
    for op, args in sent.items():
        frame = keeper._frame(op, *args)
        command = keeper._frames.command(op, now, *args)
        assert command[:5] == (*head, op.encode())
        assert command[-1 - len(args) :] == (now, *args)
        assert frame == packed(*command)
