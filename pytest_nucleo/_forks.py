"""Locks held over a fork, so a forked child finds them free and what they guard whole.

A forked child has only the thread that forked. A lock another thread held at that moment
would stay held in the child forever, and the state it guards could be half changed. So the
package's locks that calls take (a limiter's decision, the testing switch) are taken by the
forking thread before the fork, which waits for the work in flight, and given back after it,
in the parent and in the child alike (as ``logging`` does with its own).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Protocol


class _Lock(Protocol):
    def acquire(self) -> object: ...

    def release(self) -> object: ...


def hold_over_forks(
    guard: Callable[[], _Lock],
    members: Callable[[], Iterable[_Lock]] = tuple,
    in_child: Callable[[], object] | None = None,
) -> None:
    """Hold ``guard()`` and then each of ``members()`` (read under the guard, at each fork)
    over every fork of this process; then run ``in_child`` in the child. Each lock must be
    held only briefly and never while another is taken, so the fork waits, never deadlocks.
    Nothing where there is no fork (Windows)."""
    if not hasattr(os, "register_at_fork"):
        return
    held: list[_Lock] = []

    def before() -> None:
        first = guard()
        first.acquire()
        held.append(first)
        for lock in list(members()):
            lock.acquire()
            held.append(lock)

    def release() -> None:
        while held:
            held.pop().release()

    def child() -> None:
        release()
        if in_child is not None:
            in_child()

    os.register_at_fork(before=before, after_in_parent=release, after_in_child=child)
