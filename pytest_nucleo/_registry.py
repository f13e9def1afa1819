"""Find the support module for an object by the package its class comes from, lazily.

The clients and the provider SDKs vary in how their exceptions and responses look; each has one
small module of ours that reads them. A registry maps the top-level package of a class
(``"httpx2"``, ``"openai"``) to that module and imports it only once an object of that package
is seen, so the package it reads is already imported and the runtime imports none itself.

A registry is total: a support module that fails to import (an SDK too old or too new for it,
a test double named like the SDK) counts as none, and :meth:`LazyRegistry.ask` turns a support
module that raises while reading an object into its caller's default, the generic reading.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

T = TypeVar("T")

_ROOTS = (BaseException, Exception, object)


class LazyRegistry:
    """Top-level package -> the module (inside ``package``) that supports it."""

    _LIMIT = 1024
    """Most classes remembered: classes made on the fly must not grow the memory."""

    def __init__(self, package: str, modules: dict[str, str]) -> None:
        self.package = package
        self.modules = modules
        self._found: dict[type, ModuleType | None] = {}

    def find(self, obj: object) -> ModuleType | None:
        """The support module of the package ``obj``'s class (or a base class) comes from."""
        kind = type(obj)
        if kind in self._found:
            return self._found[kind]
        found = None
        for cls in kind.__mro__:
            if cls in _ROOTS:
                continue  # every class has them: they say nothing of where it comes from
            module = getattr(cls, "__module__", None)  # a metaclass may leave it out
            if not isinstance(module, str):
                continue
            found = self.for_package(module.partition(".")[0])
            if found is not None:
                break
        if len(self._found) >= self._LIMIT:
            self._found.clear()
        self._found[kind] = found
        return found

    def for_package(self, package: str) -> ModuleType | None:
        """The support module of the top-level package ``package``, or None (also when it
        cannot be imported with the package installed)."""
        module = self.modules.get(package)
        if module is None:
            return None
        try:
            return importlib.import_module(f"{self.package}.{module}")
        except Exception:  # e.g. a name the installed version of the package lacks
            return None

    def ask(self, obj: object, read: Callable[[Any], T], default: T) -> T:
        """``read(support)`` for the support module of ``obj``; ``default`` when there is none,
        or when reading raises: a support module that cannot read what it meets (an SDK of
        another version, a stand-in module of the same name) leaves it to the generic
        reading, never fails the caller."""
        try:
            support = self.find(obj)
            return default if support is None else read(support)
        except Exception:
            return default
