"""A griffe extension for the docs build: the package's docstrings name objects with reST roles
(``:class:`RateLimiter```), which the Markdown reference would show as raw text. Each role
becomes a link to the reference entry when it names a public name, else a code span."""

from __future__ import annotations

import importlib
import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|data|exc|mod|obj):`!?~?\.?([^`]+)`")
_PUBLIC = ("pytest_nucleo", "pytest_nucleo.testing", "pytest_nucleo.strategies")


def _targets() -> dict[str, str]:
    targets: dict[str, str] = {}
    for module in reversed(_PUBLIC):  # the core's own names win
        for name in importlib.import_module(module).__all__:
            targets[name] = f"{module}.{name}"
            targets[f"{module}.{name}"] = f"{module}.{name}"
    return targets


class RestRoles(griffe.Extension):
    def __init__(self) -> None:
        self._targets = _targets()

    def _replace(self, match: re.Match[str]) -> str:
        target = match[1]
        shown = target.rsplit(".", 1)[-1] if match[0].count("~") else target
        if target in self._targets:
            return f"[`{shown}`][{self._targets[target]}]"
        return f"`{shown}`"

    def on_instance(self, *, obj: griffe.Object, **_: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _ROLE.sub(self._replace, obj.docstring.value)
