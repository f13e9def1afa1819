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
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pytest_nucleo._exceptions import InvalidInputException
from pytest_nucleo._runner import (
    ToolResult,
    _log_failure,
    _missing,
    _name_of,
    arun_tool,
    run_tool,
)

T = TypeVar("T")

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)

OnFailure = Callable[[ToolResult], Any]


def through_runner(func: Callable[..., Any], on_failure: OnFailure) -> Callable[..., Any]:
    """A wrapper of ``func`` (sync or async, like ``func``) that runs it through the runner.

    Frameworks call it with the model's arguments by name; code (and the Agents SDK) may pass
    them by position too, as to ``func`` itself."""
    try:
        parameters = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):  # no signature to read: arguments go by name only
        parameters = []
    positional = [p.name for p in parameters if p.kind in _POSITIONAL]
    star = next((p.name for p in parameters if p.kind is inspect.Parameter.VAR_POSITIONAL), None)

    def by_name(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        # Only positions are resolved here: every named argument, known or not, goes to the
        # runner, which answers one that does not fit with a correctable failure. Extra
        # positions fill a *args parameter, as a list (how the model would send them).
        named = dict(zip(positional, args, strict=False))
        extra = list(args[len(positional) :])
        if extra:
            if star is None:
                raise TypeError(
                    f"{_name_of(func)}() takes {len(positional)} positional arguments but "
                    f"{len(args)} were given"
                )
            named[star] = extra
        twice = sorted(named.keys() & kwargs.keys())
        if twice:
            raise TypeError(f"{_name_of(func)}() got multiple values for {', '.join(twice)}")
        return {**named, **kwargs}

    wrapper: Callable[..., Any]
    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            result = await arun_tool(func, by_name(args, kwargs))
            return on_failure(result) if result.is_error else result.value

        wrapper = run_async
    else:

        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            result = run_tool(func, by_name(args, kwargs))
            return on_failure(result) if result.is_error else result.value

        wrapper = run
    # Frameworks register a tool under its __name__: make it the runner's name (set with
    # @tool(name=...)), the one the SystemException text uses, so the model sees one name.
    wrapper.__name__ = _name_of(func)
    return wrapper


# -- what several adapters need from the runner, in one place --------------------------------

tool_name = _name_of
"""The name the runner gives a tool (``@tool(name=...)``, else ``__name__``): the name the
SystemException text uses, so an adapter registers the tool under the same one."""

log_failure = _log_failure
"""Log a failure the runner never saw (rejected by the framework first) as the runner would."""


def schema_failure(
    signature: inspect.Signature, errors: Sequence[Mapping[str, Any]]
) -> InvalidInputException:
    """The correctable failure for arguments a framework's schema rejected before the runner
    saw them (pydantic's ``errors()``): the first error, naming its top-level parameter, in the
    runner's own words for a missing one, with any nested location in the rule."""
    if not errors:
        return InvalidInputException(
            "arguments", None, "must be a JSON object whose fields match the tool's parameters"
        )
    first = errors[0]
    location = tuple(first.get("loc", ()))
    parameter = str(location[0]) if location else "arguments"
    if first.get("type") == "missing" and len(location) == 1:
        return _missing(parameter, signature)
    rule = str(first.get("msg", "is not valid"))
    if len(location) > 1:
        rule = f"{rule} (at {'.'.join(str(part) for part in location[1:])})"
    return InvalidInputException(parameter, first.get("input"), rule)
