"""Which libraries of the test stack are missing, and the line that says how to install them.

``pip install pytest-nucleo`` is the runtime core alone; the test stack (pytest, hypothesis,
respx, syrupy) comes with the ``pytest`` extra. pytest loads the plugin whenever pytest is
installed, so the plugin must not assume the rest: a fixture that needs a library asks here
first and fails with one line naming the extra, not with an ImportError from deep inside.

The same holds for the libraries that fake one client (``responses`` for requests,
``aioresponses`` for aiohttp): a client can be installed without them (another package brought
it), and its fake then says which extra brings what it lacks (:func:`fake_missing`).
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import re

DISTRIBUTION = "pytest-nucleo"
EXTRA = "pytest"
INSTALL = f"pip install '{DISTRIBUTION}[{EXTRA}]'"
TEST_STACK = ("hypothesis", "respx", "syrupy")


def missing(modules: tuple[str, ...] = TEST_STACK) -> list[str]:
    """The ones of ``modules`` that cannot be imported, without importing any of them."""
    return [name for name in modules if importlib.util.find_spec(name) is None]


def needs(what: str, modules: tuple[str, ...]) -> str | None:
    """The message for ``what`` (a fixture, say) when one of ``modules`` is missing, else None."""
    absent = missing(modules)
    if not absent:
        return None
    return (
        f"{what} needs {' and '.join(absent)}, which {'is' if len(absent) == 1 else 'are'} not "
        f"installed: {INSTALL} brings the test stack (the plain install is the runtime core)."
    )


def missing_stack_module(what: str, error: ModuleNotFoundError) -> ModuleNotFoundError | None:
    """The error to raise when ``what`` (``pytest_nucleo.testing.FakeUpstream``, say) could not
    be imported because a library of the test stack is missing: a ModuleNotFoundError of the
    same name that says which extra brings it; None when ``error`` is about another module."""
    module = (error.name or "").partition(".")[0]
    if module not in (*TEST_STACK, "pytest", "_pytest"):
        return None
    shown = "pytest" if module == "_pytest" else module
    return ModuleNotFoundError(
        f"{what} needs {shown}, which is not installed: {INSTALL} brings the test stack "
        "(pytest, hypothesis, respx, syrupy; the plain install is the runtime core).",
        name=error.name,
    )


def install_line(extra: str) -> str:
    """The command that installs this package with ``extra``."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


_REQUIREMENT = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EXTRA_MARKER = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@functools.cache
def _extras() -> dict[str, frozenset[str]]:
    """Each extra of this package and the distributions it requires (metadata lists an extra
    that names another of ours with that one's requirements), from the installed package's
    metadata; empty when it is missing (a checkout run without installing)."""
    try:
        requirements = importlib.metadata.requires(DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        return {}
    extras: dict[str, set[str]] = {}
    for requirement in requirements:
        name = _REQUIREMENT.match(requirement)
        marker = _EXTRA_MARKER.search(requirement)
        if name and marker:
            extras.setdefault(marker[1], set()).add(_normalized(name[1]))
    return {extra: frozenset(names) for extra, names in extras.items()}


def extra_bringing(distribution: str, *, prefer: str | None = None) -> str | None:
    """The extra of this package that brings ``distribution``: ``prefer`` when it does, else
    the smallest that does; None when none does (or the metadata is missing)."""
    wanted = _normalized(distribution)
    bringing = {extra: names for extra, names in _extras().items() if wanted in names}
    if prefer in bringing:
        return prefer
    return min(bringing, key=lambda extra: (len(bringing[extra]), extra), default=None)


def fake_missing(client: str, module: str, broken: ImportError | None = None) -> str:
    """Why ``client`` cannot be faked: ``module``, the library that fakes it, is not installed,
    or is but does not import (``broken``: what it needs is missing); and the extra that
    brings it (the client's own name when the metadata says nothing)."""
    extra = extra_bringing(module, prefer=client) or client
    if broken is None:
        return (
            f"fake_upstream cannot fake {client}: {module}, the library that fakes it, is not "
            f"installed, so this request was not sent. {install_line(extra)} brings it; tests "
            f"that do not call through {client} run as they are."
        )
    return (
        f"fake_upstream cannot fake {client}: {module}, the library that fakes it, is "
        f"installed but does not import ({type(broken).__name__}: {broken}), so this request "
        f"was not sent. {install_line(extra)} brings it with what it needs; tests that do not "
        f"call through {client} run as they are."
    )
