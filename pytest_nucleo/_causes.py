"""The cause chain of an exception, walked: each exception once, cycle-safe and bounded.

The chain of an exception is its ``__cause__``, else its ``__context__`` unless
``__suppress_context__`` is set; the members of an ``ExceptionGroup`` belong to it too. Every
walk visits at most :data:`MAX_CHAIN` exceptions.

It imports nothing of the package, so the client seams, the limiters and the test toolkit walk
chains without loading the helpers of ``_chain`` that turn a chain into what the model reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeVar

R = TypeVar("R")

MAX_CHAIN = 256
"""Most exceptions any walk visits; real chains are a handful, hostile ones are cut here."""


def iter_chain(exc: BaseException) -> Iterator[BaseException]:
    """Yield ``exc`` and everything in its cause chain, depth first, each exception once.

    A group's members are visited before the group's own cause, since they are what it holds.
    """
    seen: set[int] = set()
    stack: list[BaseException] = [exc]
    while stack and len(seen) < MAX_CHAIN:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        following = current.__cause__
        if following is None and not current.__suppress_context__:
            following = current.__context__
        if following is not None:
            stack.append(following)
        if isinstance(current, BaseExceptionGroup):
            stack.extend(reversed(current.exceptions))


def find_in_chain(exc: BaseException, kind: type[R]) -> R | None:
    """The first exception of type ``kind`` in the chain of ``exc``, or None."""
    for member in iter_chain(exc):
        if isinstance(member, kind):
            return member
    return None
