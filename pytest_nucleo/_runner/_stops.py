"""The runner's own stops around an async call: its ``timeout`` and its :class:`CancelToken`,
each ending the call as a failure (:class:`JobTimeoutException`, :class:`JobCancelledException`)
while a cancellation of the caller's own task is passed on.

The call it stops is a ``_Call`` (``_call``); the token is in ``_results``.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from pytest_nucleo._exceptions import (
    JobCancelledException,
    JobTimeoutException,
    LLMReadableException,
)

from ._call import _Call
from ._results import CancelToken, ToolResult


async def _arun_guarded(
    call: _Call,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    timeout: float | None,
    cancel: CancelToken | None,
) -> ToolResult:
    """Run ``call`` under asyncio, ended by ``timeout`` (seconds, on its clock) or by ``cancel``
    as a failure, while a cancellation of the caller's own task is passed on."""
    loop = asyncio.get_running_loop()
    inner = loop.create_task(call.arun(args, kwargs))
    stopped: list[str] = []

    def stop_for(reason: str) -> None:
        # Cancel at once, so a stop that came first wins even if the call would finish
        # in the same loop iteration.
        if not inner.done() and not stopped:
            stopped.append(reason)
            inner.cancel()

    timer = (
        call.clock.call_later(timeout, functools.partial(stop_for, "timeout"))
        if timeout is not None
        else None
    )
    unsubscribe = (
        cancel._subscribe(loop, functools.partial(stop_for, "cancel"))
        if cancel is not None
        else None
    )
    try:
        # Awaiting the task passes a cancellation of the caller's own task on to the call.
        result = await inner
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if not stopped or (task is not None and task.cancelling()):
            raise  # the caller's task was cancelled: never swallow that
    finally:
        if timer is not None:
            timer.cancel()
        if unsubscribe is not None:
            unsubscribe()
    if not stopped:
        return result
    failure: LLMReadableException
    if stopped[0] == "timeout":
        assert timeout is not None
        failure = JobTimeoutException(timeout)
    else:
        failure = JobCancelledException()
    if call.raised_while_stopped is not None:
        # Logged as the stop's cause, so the record blames the stop, not the tool.
        failure.__cause__ = call.raised_while_stopped
    return call.failed(failure)
