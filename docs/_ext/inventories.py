"""The object inventories the reference links library types through, kept here by hand.

mkdocstrings links a type in a signature (``httpx.Response``, ``pytest.Config``,
``collections.abc.Mapping``) when an inventory (a Sphinx ``objects.inv``) names it. The sites
publish theirs, but the docs build runs offline in CI and on machines without internet, where
downloading them fails the strict build; so the entries for the library types our signatures
and docstrings use are written here, with the address each has on its library's site, and this
hook hands them to mkdocstrings as local inventory files before it loads inventories.

- Python, pytest, hypothesis: their Sphinx sites' addresses (``<page>#<dotted.name>``).
- httpx: its API page (mkdocs, no inventory of its own): a heading per class.
- syrupy publishes no API reference (its README is its docs): ``SnapshotAssertion`` is not
  linked.

A type added to a signature shows unlinked until it gets an entry here. With internet,
``python docs/_ext/inventories.py`` checks that every page named here still answers.
"""

from __future__ import annotations

import sys
import tempfile
import zlib
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

PYTHON = "https://docs.python.org/3/"
PYTEST = "https://docs.pytest.org/en/stable/"
HYPOTHESIS = "https://hypothesis.readthedocs.io/en/latest/"
HTTPX = "https://www.python-httpx.org/"


def _stdlib(module: str, *names: str) -> dict[str, str]:
    return {f"{module}.{name}": f"library/{module}.html#{module}.{name}" for name in names}


def _pytest(*names: str) -> dict[str, str]:
    return {f"pytest.{name}": f"reference/reference.html#pytest.{name}" for name in names}


INVENTORIES: dict[str, dict[str, str]] = {
    PYTHON: {
        **_stdlib(
            "collections.abc",
            "Callable", "Mapping", "Iterable", "Iterator", "Sequence", "Generator", "Awaitable",
        ),
        **_stdlib("typing", "Any", "Literal", "TextIO", "ClassVar", "TypedDict", "Protocol"),
        **_stdlib("re", "Pattern", "Match"),
        **_stdlib("types", "TracebackType"),
        **_stdlib("datetime", "datetime", "timedelta"),
        **_stdlib("logging", "LogRecord", "Logger", "Handler"),
        **_stdlib("asyncio", "AbstractEventLoop", "CancelledError"),
        **{name: f"library/functions.html#{name}" for name in ("int", "float", "bool", "type",
                                                                  "object")},
        **{name: f"library/stdtypes.html#{name}" for name in ("str", "bytes", "dict", "list",
                                                                 "tuple")},
        **{name: f"library/exceptions.html#{name}" for name in ("BaseException", "Exception",
                                                                   "ValueError", "TypeError")},
        "None": "library/constants.html#None",
    },
    PYTEST: _pytest(
        "Config", "Item", "Metafunc", "FixtureRequest", "Parser", "Session", "StashKey",
        "TestReport", "CallInfo", "ExitCode", "UsageError", "Pytester", "MonkeyPatch",
        "LogCaptureFixture",
    ),
    HYPOTHESIS: {
        "hypothesis.strategies.SearchStrategy":
            "reference/strategies.html#hypothesis.strategies.SearchStrategy",
        "hypothesis.strategies.DrawFn": "reference/strategies.html#hypothesis.strategies.DrawFn",
    },
    HTTPX: {
        f"httpx.{name}": f"api/#{name.lower()}"
        for name in ("Client", "AsyncClient", "Response", "Request", "URL", "Headers")
    },
}  # fmt: skip


def inventory_file(base_url: str, entries: dict[str, str]) -> bytes:
    """A Sphinx inventory (version 2) naming ``entries``, each a Python class or object."""
    lines = "".join(f"{name} py:class 1 {uri} -\n" for name, uri in sorted(entries.items()))
    head = (
        f"# Sphinx inventory version 2\n# Project: {base_url}\n# Version: \n"
        "# The remainder of this file is compressed using zlib.\n"
    )
    return head.encode() + zlib.compress(lines.encode())


@event_priority(100)  # before mkdocstrings' own on_config, which loads the inventories
def on_config(config: Any) -> Any:
    folder = Path(tempfile.mkdtemp(prefix="nucleo-inventories-"))
    handler = config.plugins["mkdocstrings"].config.handlers.setdefault("python", {})
    inventories = handler.setdefault("inventories", [])
    for number, (base_url, entries) in enumerate(INVENTORIES.items()):
        path = folder / f"{number}.inv"
        path.write_bytes(inventory_file(base_url, entries))
        inventories.append({"url": path.as_uri(), "base_url": base_url})
    return config


def _check() -> int:
    import urllib.request

    status = 0
    for base_url, entries in INVENTORIES.items():
        for page in sorted({uri.split("#")[0] for uri in entries.values()}):
            try:
                with urllib.request.urlopen(base_url + page, timeout=10):
                    pass
            except OSError as error:
                print(f"{base_url}{page}: {error}")
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(_check())
