"""Which libraries of the test stack are missing, and the line that says how to install them.

``pip install pytest-nucleo`` is the runtime core alone; the test stack (pytest, hypothesis,
respx, syrupy) comes with the ``pytest`` extra. pytest loads the plugin whenever pytest is
installed, so the plugin must not assume the rest: a fixture that needs a library asks here
first and fails with one line naming the extra, not with an ImportError from deep inside.
"""

from __future__ import annotations

import importlib.util

EXTRA = "pytest"
INSTALL = f"pip install 'pytest-nucleo[{EXTRA}]'"
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
