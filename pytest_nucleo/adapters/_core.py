"""What every adapter shares: run a tool through the runner, hand failures to a framework.

An adapter wraps a tool function once. The wrapper keeps the function's name, docstring and
signature (frameworks build their argument schema from it), runs every call through
:func:`run_tool` / :func:`arun_tool` (argument checks, limiters, retry signals, logging, and the
SystemException text for anything outside the set), returns the value on success, and on
failure calls the adapter's ``on_failure(result)``, which raises or returns whatever the
framework's error channel is.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from pytest_nucleo._runner import ToolResult, arun_tool, run_tool

OnFailure = Callable[[ToolResult], Any]


def through_runner(func: Callable[..., Any], on_failure: OnFailure) -> Callable[..., Any]:
    """A wrapper of ``func`` (sync or async, like ``func``) that runs it through the runner."""
    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def run_async(**arguments: Any) -> Any:
            result = await arun_tool(func, arguments)
            return on_failure(result) if result.is_error else result.value

        return run_async

    @functools.wraps(func)
    def run(**arguments: Any) -> Any:
        result = run_tool(func, arguments)
        return on_failure(result) if result.is_error else result.value

    return run
