"""A griffe extension for the docs build: the package's docstrings name objects with reST roles
(``:class:`RateLimiter```) and end a line with ``::`` before a code example, which the Markdown
reference would show as raw text. Each role becomes a link to the reference entry when it names
a public name, else a code span; ``::`` becomes ``:`` (the indented example is code either way)."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|data|exc|mod|obj):`!?(~?)\.?([^`]+)`")
_LITERAL_BLOCK = re.compile(r"(?<=\S)::$", flags=re.MULTILINE)
# Imported for their __all__ (cheap, lazy); the adapters are read from source instead, as
# importing them would import every framework.
_IMPORTED = ("pytest_nucleo", "pytest_nucleo.testing", "pytest_nucleo.strategies")
_ADAPTERS = Path(__file__).resolve().parents[2] / "pytest_nucleo" / "adapters"


def _static_all(path: Path) -> list[str]:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
        ):
            return list(ast.literal_eval(node.value))
    return []


def _public() -> tuple[set[str], dict[str, str]]:
    """Every public path, and the core's, testing's and strategies' names by their short name."""
    paths: set[str] = set()
    short: dict[str, str] = {}
    for module in reversed(_IMPORTED):  # the core's own names win
        for name in importlib.import_module(module).__all__:
            paths.add(f"{module}.{name}")
            short[name] = f"{module}.{name}"
    for source in [*sorted(_ADAPTERS.glob("[!_]*.py")), _ADAPTERS / "__init__.py"]:
        module = "pytest_nucleo.adapters" + ("" if source.stem == "__init__" else f".{source.stem}")
        paths.update(f"{module}.{name}" for name in _static_all(source))
    return paths, short


class RestRoles(griffe.Extension):
    def __init__(self) -> None:
        self._paths, self._short = _public()

    def _resolve(self, target: str, module: str) -> str | None:
        for path in (target, f"{module}.{target}"):
            if path in self._paths:
                return path
        return self._short.get(target)

    def on_instance(self, *, obj: griffe.Object, **_: Any) -> None:
        if obj.docstring is None:
            return
        module = obj.module.path

        def replace(match: re.Match[str]) -> str:
            tilde, target = match[1], match[2]
            shown = target.rsplit(".", 1)[-1] if tilde else target
            path = self._resolve(target, module)
            return f"[`{shown}`][{path}]" if path else f"`{shown}`"

        value = _ROLE.sub(replace, obj.docstring.value)
        obj.docstring.value = _LITERAL_BLOCK.sub(":", value)
