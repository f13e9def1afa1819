"""The cause chain of an exception, walked: each exception once, cycle-safe and bounded.

The chain of an exception is its ``__cause__``, else its ``__context__`` unless
``__suppress_context__`` is set; the members of an ``ExceptionGroup`` belong to it too. Every
walk visits at most :data:`MAX_CHAIN` exceptions.

The walk is total over hostile objects: a link whose attribute raises (a property on
``__cause__``, ``__context__``, ``__suppress_context__``, a group's ``exceptions``, a raising
``__getattribute__``), or that is not an exception at all, ends the chain there. Classes are
read with ``type()``, never through ``__class__``, which an object may fake or make raise.

It imports nothing of the package, so the client seams, the limiters and the test toolkit walk
chains without loading the helpers of ``_chain`` that turn a chain into what the model reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeGuard, TypeVar, overload

R = TypeVar("R")

MAX_CHAIN = 256
"""Most exceptions any walk visits; real chains are a handful, hostile ones are cut here."""

STOPS = (KeyboardInterrupt, SystemExit)
"""What asks the process to stop: never swallowed, however it is wrapped."""


@overload
def is_a(obj: object, kind: type[R]) -> TypeGuard[R]: ...
@overload
def is_a(obj: object, kind: tuple[type, ...]) -> bool: ...
def is_a(obj: object, kind: type[R] | tuple[type, ...]) -> bool:
    """``isinstance`` by the object's real class: never runs a (faked or raising) ``__class__``."""
    return issubclass(type(obj), kind)


def attribute(exc: BaseException, name: str) -> Any:
    """``exc.<name>`` as the interpreter keeps it, or None when reading it raises."""
    try:
        return getattr(exc, name)
    except BaseException as error:
        if is_a(error, STOPS):
            raise
        return None


def following(exc: BaseException) -> BaseException | None:
    """The next link of the chain after ``exc`` (its cause, else its unsuppressed context), or
    None, also when reading it raises or gives something that is not an exception."""
    link = attribute(exc, "__cause__")
    if link is None and attribute(exc, "__suppress_context__") is not True:
        link = attribute(exc, "__context__")
    return link if is_a(link, BaseException) else None


def members(exc: BaseException) -> tuple[BaseException, ...]:
    """The exceptions a group holds (none for another exception, or when they cannot be
    read)."""
    if not is_a(exc, BaseExceptionGroup):
        return ()
    held = attribute(exc, "exceptions")
    if not is_a(held, tuple):
        return ()
    return tuple(member for member in held[:MAX_CHAIN] if is_a(member, BaseException))


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
        link = following(current)
        if link is not None:
            stack.append(link)
        stack.extend(reversed(members(current)))


def find_in_chain(exc: BaseException, kind: type[R]) -> R | None:
    """The first exception of type ``kind`` in the chain of ``exc``, or None."""
    for member in iter_chain(exc):
        if is_a(member, kind):
            return member
    return None


def stop_in(exc: BaseException) -> BaseException | None:
    """The stop (a ``KeyboardInterrupt`` or a ``SystemExit``) that ``exc`` is or that a group
    holds, however deeply nested (as anyio's and trio's task groups raise them), or None.

    Only a group's members are searched, not causes: a stop in a cause was handled by the code
    that raised something else from it."""
    seen: set[int] = set()
    stack: list[BaseException] = [exc]
    while stack and len(seen) < MAX_CHAIN:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if is_a(current, STOPS):
            return current
        stack.extend(reversed(members(current)))
    return None
