"""The wait of a call admitted to start later: on the limiter's clock, given back if cut short.

The admission itself (the reservation of a start, and its permit) is the rules' (``_machine``),
made through the limiter's keeper (``_stores``); the limiter (``_limiter``) hands a call here
when its reservation came with a wait and a start (one that starts at once comes as its permit
alone, in the common case) and returns the permit it gives back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_nucleo._clock import Clock

if TYPE_CHECKING:
    from ._stores import StateKeeper


class Waits:
    """Waits on one limiter's ``clock``. A wait that ends by an exception (a cancellation, an
    interrupt) made no call: its slots go to the next callers and a probe frees its place,
    through ``blocking`` (the keeper of the blocking methods) or ``keeper`` (of the awaitable
    ones), then the exception goes on."""

    __slots__ = ("blocking", "clock", "keeper")

    def __init__(self, clock: Clock, keeper: StateKeeper, blocking: StateKeeper) -> None:
        self.clock, self.keeper, self.blocking = clock, keeper, blocking

    def sleep(self, reserved: tuple[int, float, float], takes: tuple[int, ...]) -> int:
        """The permit of ``reserved`` (a permit, its wait and its start), once its wait is
        over."""
        permit, wait, start = reserved
        if wait > 0:
            try:
                self.clock.sleep(wait)
            except BaseException:
                self.blocking.unreserve(start, takes)
                self.blocking.release(permit, None)
                raise
        return permit

    async def asleep(self, reserved: tuple[int, float, float], takes: tuple[int, ...]) -> int:
        """:meth:`sleep`, awaited."""
        permit, wait, start = reserved
        if wait > 0:
            try:
                await self.clock.asleep(wait)
            except BaseException:
                await self.keeper.aunreserve(start, takes)
                await self.keeper.arelease(permit, None)
                raise
        return permit
