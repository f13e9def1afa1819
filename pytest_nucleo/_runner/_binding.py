"""Argument binding: fitting the arguments a model sent to a tool's signature, or the
correctable :class:`InvalidInputException` that names what does not fit; and the facts of a
tool (its signature, whether it is async) that the binding and the call need, worked out once.

The call's lifecycle (``_call``) runs a tool with the bound arguments; the public face
(``_tools``) binds them first.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from pytest_nucleo._exceptions import InvalidInputException
from pytest_nucleo._text._render import VALUE_LIMIT, clean_block, one_line

from ._results import _unwrapped

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _listing(signature: inspect.Signature) -> str:
    shown = []
    for parameter in signature.parameters.values():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            shown.append("any other named parameter")
        elif parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            shown.append(f"{parameter.name} (optional, a list)")
        elif parameter.default is inspect.Parameter.empty:
            shown.append(f"{parameter.name} (required)")
        else:
            shown.append(f"{parameter.name} (optional)")
    return ", ".join(shown) if shown else "none"


def _missing(parameter: str, signature: inspect.Signature) -> InvalidInputException:
    failure = InvalidInputException(
        parameter, None, f"is required; the tool's parameters are: {_listing(signature)}"
    )
    # "got null" would be wrong: the model sent nothing at all for this parameter.
    failure.llm_message = clean_block(
        f"The required parameter '{one_line(parameter, VALUE_LIMIT)}' is missing. Call the tool "
        f"again with a value for it; the tool's parameters are: {_listing(signature)}."
    )
    return failure


def _bind(facts: _Facts, arguments: object) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Fit the model's arguments to the tool's signature, or raise InvalidInputException."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise InvalidInputException(
            "arguments",
            arguments,
            "must be a JSON object mapping each parameter name to its value",
        )
    for key in arguments:
        if not isinstance(key, str):
            raise InvalidInputException(
                "arguments", key, "parameter names must be strings, as in a JSON object"
            )
    signature = facts.signature
    if signature is None:
        return (), dict(arguments)
    if facts.simple:
        # Only named parameters: every name known and every required one present is a fit.
        for key, value in arguments.items():
            if key not in facts.names:
                raise InvalidInputException(
                    key,
                    value,
                    f"this tool has no parameter named '{key}'; its parameters are: "
                    f"{_listing(signature)}",
                )
        for name in facts.required:
            if name not in arguments:
                raise _missing(name, signature)
        return (), dict(arguments)
    parameters = signature.parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    for key, value in arguments.items():
        known = parameters.get(key)
        if (known is None or known.kind is inspect.Parameter.VAR_KEYWORD) and not takes_any:
            raise InvalidInputException(
                key,
                value,
                f"this tool has no parameter named '{key}'; its parameters are: "
                f"{_listing(signature)}",
            )
    star = next(
        (p for p in parameters.values() if p.kind is inspect.Parameter.VAR_POSITIONAL), None
    )
    spread = star is not None and star.name in arguments
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for parameter in parameters.values():
        name = parameter.name
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            if spread:
                items = arguments[name]
                if not isinstance(items, list | tuple):
                    raise InvalidInputException(name, items, "must be a list")
                args.extend(items)
        elif parameter.kind is inspect.Parameter.VAR_KEYWORD:
            continue
        elif name in arguments:
            if parameter.kind is inspect.Parameter.POSITIONAL_ONLY or (
                spread and parameter.kind in _POSITIONAL
            ):
                args.append(arguments[name])
            else:
                kwargs[name] = arguments[name]
        elif parameter.default is inspect.Parameter.empty:
            raise _missing(name, signature)
        elif parameter.kind is inspect.Parameter.POSITIONAL_ONLY or (
            spread and parameter.kind in _POSITIONAL
        ):
            args.append(parameter.default)  # keeps later positional values in their places
    if takes_any:
        kwargs.update(
            (key, value)
            for key, value in arguments.items()
            if key not in parameters or parameters[key].kind is inspect.Parameter.VAR_KEYWORD
        )
    try:
        signature.bind(*args, **kwargs)
    except TypeError as mismatch:
        raise InvalidInputException(
            "arguments", dict(arguments), f"they do not fit the tool's parameters ({mismatch})"
        ) from None
    return tuple(args), kwargs


@dataclasses.dataclass(frozen=True, slots=True)
class _Facts:
    """What the runner needs to know of a tool, worked out once per tool."""

    signature: inspect.Signature | None
    is_async: bool
    simple: bool  # only named parameters (no positional-only, no *args, no **kwargs)
    names: frozenset[str]
    required: tuple[str, ...]


_FACTS: weakref.WeakKeyDictionary[Any, _Facts] = weakref.WeakKeyDictionary()


def _facts(target: Callable[..., Any]) -> _Facts:
    """The tool's facts; cached, since a signature costs more than a whole refusal."""
    try:
        return _FACTS[target]
    except (KeyError, TypeError):
        pass
    try:
        signature: inspect.Signature | None = inspect.signature(target)
    except (TypeError, ValueError):  # some builtins have none: pass arguments as given
        signature = None
    parameters = signature.parameters.values() if signature is not None else ()
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    facts = _Facts(
        signature=signature,
        is_async=_is_async(target),
        simple=signature is not None and all(p.kind in named for p in parameters),
        names=frozenset(p.name for p in parameters),
        required=tuple(p.name for p in parameters if p.default is inspect.Parameter.empty),
    )
    with contextlib.suppress(TypeError):  # not weakly referenceable or not hashable
        _FACTS[target] = facts
    return facts


def _is_async(target: object) -> bool:
    target = _unwrapped(target)
    if inspect.iscoroutinefunction(target):
        return True
    if inspect.isfunction(target) or inspect.ismethod(target) or isinstance(target, type):
        return False
    return inspect.iscoroutinefunction(type(target).__call__)
