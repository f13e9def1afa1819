"""The docs pages the package's messages point to exist, and the messages name them alike."""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
from pathlib import Path

import pytest

import pytest_nucleo
import pytest_nucleo.testing
from pytest_nucleo.testing import _docs
from pytest_nucleo.testing._docs import docs_ref

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(pytest_nucleo.__file__).resolve().parent


def _import_every_testing_module() -> None:
    for module in pkgutil.walk_packages(
        pytest_nucleo.testing.__path__, f"{pytest_nucleo.testing.__name__}."
    ):
        try:
            importlib.import_module(module.name)
        except ModuleNotFoundError as error:
            # A client's fake imports its client (httplib2's comes with the frameworks extra):
            # where the client is not installed, that module's references are checked where
            # it is. Under CI everything is installed, and a missing module is a failure.
            if os.environ.get("CI") or (error.name or "").startswith("pytest_nucleo"):
                raise


def test_a_reference_names_the_section_and_its_anchor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_docs, "REFERENCES", set())  # these pages are made up
    assert (
        docs_ref("docs/how-to/fake-upstream.md", "The network guard")
        == 'pytest-nucleo\'s docs, "The network guard" '
        "(https://pytest-nucleo.github.io/pytest-nucleo/how-to/fake-upstream/#the-network-guard)"
    )
    assert (
        docs_ref("docs/how-to/fake-upstream.md", "Fake upstream failures", section=False)
        == 'pytest-nucleo\'s docs, "Fake upstream failures" '
        "(https://pytest-nucleo.github.io/pytest-nucleo/how-to/fake-upstream/)"
    )
    # The anchor mkdocs gives a heading: punctuation dropped, spaces and dashes joined.
    assert docs_ref("docs/x.md", "Fake a throttle: 429 & Retry-After").endswith(
        "(https://pytest-nucleo.github.io/pytest-nucleo/x/#fake-a-throttle-429-retry-after)"
    )
    assert docs_ref("docs/index.md", "pytest-nucleo", section=False).endswith(
        "(https://pytest-nucleo.github.io/pytest-nucleo/)"
    )


def test_the_messages_point_to_the_site_mkdocs_publishes() -> None:
    # Messages cite the published site, not repository paths: the wheel ships no docs/.
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert f"site_url: {_docs.DOCS_URL}\n" in config
    assert "use_directory_urls: false" not in config  # page_url builds directory URLs


def test_every_page_a_message_names_exists() -> None:
    _import_every_testing_module()
    pages = {page for page, _ in _docs.REFERENCES}
    assert pages >= {
        "docs/how-to/fake-upstream.md",
        "docs/how-to/recorded-failures.md",
        "docs/explanation/failure-contract.md",
    }
    missing = sorted(page for page in pages if not (ROOT / page).is_file())
    assert missing == []


def test_no_message_points_anywhere_but_the_docs_pages() -> None:
    # A reference written by hand, outside docs_ref, is checked here too.
    written = set()
    for path in PACKAGE.rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        written.update(re.findall(r"docs/[\w./-]+?\.md", source))
        assert "the README, section" not in source, path
        assert "README.md#" not in source, path
    assert sorted(page for page in written if not (ROOT / page).is_file()) == []


def test_every_heading_a_message_names_is_a_heading_of_its_page() -> None:
    _import_every_testing_module()
    missing = []
    for page, heading in sorted(_docs.REFERENCES):
        text = (ROOT / page).read_text(encoding="utf-8")
        if not re.search(rf"^#+ {re.escape(heading)}$", text, re.MULTILINE):
            missing.append(f"{page}: {heading}")
    assert missing == []
