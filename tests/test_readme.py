"""What the README promises beyond its code blocks (which tests/test_docs.py runs): it stays
short, the commands a newcomer runs are the ones CI runs, the first one shows what the README
says, and the model text it shows is the one its example test stores."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from pytest_nucleo.testing import FakeUpstream
from pytest_nucleo.testing._docs import DOCS_URL
from tests._doc_blocks import ALL, ROOT

README = [block for block in ALL if block.page == "README.md"]


def test_the_readme_is_short() -> None:
    # The README is the front door; the docs site under docs/ holds the rest.
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) < 200, f"README.md has {len(lines)} lines: move content into docs/"


def test_the_commands_are_the_ones_ci_and_newcomers_run() -> None:
    install_and_run, run_tests, serve_docs = (
        block.code.strip() for block in README if block.lang == "sh"
    )
    assert install_and_run.endswith(
        "pip install '.[pytest,httpx2,requests,aiohttp]' && pytest examples -v"
    )
    assert run_tests.endswith("pip install -e '.[test]' && python -m pytest -n auto")
    assert serve_docs == "pip install -e '.[docs]' && mkdocs serve"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    # The test extra has the docs; CI adds the frameworks, whose tests skip without them.
    assert "python -m pip install --quiet -e '.[test,frameworks]'" in ci
    for check in ("ruff check .", "ruff format --check .", "mypy --strict examples"):
        assert re.search(rf"^{re.escape(check)}", ci, re.M), check
    assert re.search(r"^bash \.ci/versions oldest$", ci, re.M)
    assert re.search(r"^NO_MKDOCS_2_WARNING=1 python -m mkdocs build --strict ", ci, re.M)
    assert ci.rstrip().endswith("python -m pytest -n auto")


def test_the_text_the_readme_shows_is_what_its_example_test_stores() -> None:
    class Stored:
        """Stands in for llm_snapshot: keeps what the test compares with it."""

        text = ""

        def __eq__(self, other: object) -> bool:
            self.text = str(other)
            return True

    example = next(block for block in README if block.lang == "python" and block.is_test_module)
    shown = next(block for block in README if block.lang == "text" and block.line > example.line)
    namespace: dict[str, object] = {}
    exec(compile(example.code, example.id, "exec"), namespace)
    (test,) = (value for name, value in namespace.items() if name.startswith("test_"))
    stored = Stored()
    with FakeUpstream() as upstream:
        test(upstream, stored)  # type: ignore[operator]
    assert stored.text == shown.code.rstrip("\n")


@pytest.mark.slow
def test_the_first_command_prints_the_failure_matrix_of_both_examples() -> None:
    # What the README promises of `pytest examples`. The frameworks example is left out, as
    # the first command skips it (it needs the test extra). A reader's terminal is wide.
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "examples", "-v", "-p", "no:cacheprovider",
         "--ignore=examples/frameworks"],
        cwd=ROOT, capture_output=True, text=True, env={**os.environ, "COLUMNS": "250"},
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:]
    matrix = result.stdout.split("nucleo failure matrix", 1)[1]
    tools = ("get_order", "search_compounds", "fetch_compound", "get_issue")
    for client in ("Requests", "Httpx2", "Aiohttp"):
        tools += (f"Test{client}FetchBook.fetch_book", f"Test{client}SearchBooks.search_books")
    for tool in tools:
        assert re.search(rf"^\S*{re.escape(tool)}\s", matrix, re.M), tool
    assert re.search(r"^\S*get_issue\s+recorded-github_issues-2\s.*\sok\s*$", matrix, re.M)
    assert re.search(r"^\d+ tool\(s\), \d+ scenario\(s\): \d+ ok, 0 broken", matrix, re.M)


def test_the_examples_are_collected_by_the_test_command() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'testpaths = ["tests", "examples"]' in pyproject
    for example in ("orders", "chemistry"):
        assert (ROOT / "examples" / example / "__snapshots__" / f"test_{example}.txt").is_file()


def test_the_readme_links_into_pages_that_exist() -> None:
    # The package index shows the README without the repository around it: every link is an
    # address on the docs site (or the repository's), and each lands on a page (and heading)
    # the site is built from. mkdocs does not build the README, so its links are checked here.
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)]+)\)", text)
    relative = [t for t in targets if not t.startswith(("https://", "#"))]
    assert relative == [], f"relative links break on the package index: {relative}"
    links = re.findall(rf"\]\({re.escape(DOCS_URL)}([^)#]*)(?:#([^)]+))?\)", text)
    assert len(links) >= 10, links
    for path, anchor in links:
        page = ROOT / "docs" / (f"{path.rstrip('/')}.md" if path else "index.md")
        assert page.is_file(), path
        if anchor:
            headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.M)
            slugs = {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in headings}
            assert anchor in slugs, f"{path}#{anchor}"


def test_the_install_from_source_line_names_the_repository_the_docs_build_from() -> None:
    # Until the first release, the home page and the tutorial install from the repository:
    # the line must name the repository mkdocs.yml links to (shown only, the tests run the
    # pages' projects against the checkout under test).
    repository = re.search(r"^repo_url: (\S+)$", (ROOT / "mkdocs.yml").read_text(), re.M)
    assert repository is not None
    # The tutorial installs the test stack too: the `pytest` extra.
    line = re.compile(
        rf'pip install "pytest-nucleo(\[pytest\])? @ git\+{re.escape(repository[1])}"'
    )
    for page in ("docs/index.md", "docs/tutorial.md"):
        shown = [b.code for b in ALL if b.page == page and b.lang in ("sh", "yaml")]
        assert any(line.search(code) for code in shown), page
