"""Lazy package namespaces: a public name is imported from its module on first use."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, where: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``, whose public names live in
    the submodules ``where`` maps them to. A resolved name is stored in ``namespace`` (the
    package's globals), so later lookups are plain attribute reads."""

    def resolve(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def listing() -> list[str]:
        return sorted(where)

    return resolve, listing
