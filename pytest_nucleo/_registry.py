"""Find the support module for an object by the package its class comes from, lazily.

The clients and the provider SDKs vary in how their exceptions and responses look; each has one
small module of ours that reads them. A registry maps the top-level package of a class
(``"httpx2"``, ``"openai"``) to that module and imports it only once an object of that package
is seen, so the package it reads is already imported and the runtime imports none itself.
"""

from __future__ import annotations

import importlib
from types import ModuleType

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
            found = self.for_package(cls.__module__.partition(".")[0])
            if found is not None:
                break
        if len(self._found) >= self._LIMIT:
            self._found.clear()
        self._found[kind] = found
        return found

    def for_package(self, package: str) -> ModuleType | None:
        """The support module of the top-level package ``package``, or None."""
        module = self.modules.get(package)
        return None if module is None else importlib.import_module(f"{self.package}.{module}")
