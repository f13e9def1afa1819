"""The wait of a call admitted to start later: on the limiter's clock, given back if cut short.

The admission itself (the reservation of a start, and its permit) is the rules' (``_machine``),
made through the limiter's keeper (``_stores``); the limiter (``_limiter``) hands a call here
only when its start is in the future.
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

    def sleep(self, wait: float, start: float, takes: tuple[int, ...], permit: int) -> None:
        try:
            self.clock.sleep(wait)
        except BaseException:
            self.blocking.unreserve(start, takes)
            self.blocking.release(permit, None)
            raise

    async def asleep(self, wait: float, start: float, takes: tuple[int, ...], permit: int) -> None:
        try:
            await self.clock.asleep(wait)
        except BaseException:
            await self.keeper.aunreserve(start, takes)
            await self.keeper.arelease(permit, None)
            raise
