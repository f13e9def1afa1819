"""The fenced code blocks of the README and the docs pages, and what each one claims.

A block is checked according to its title or the HTML comment on the line right above its fence:

- ``<!-- excerpt of PATH -->``: the block is a verbatim excerpt of PATH (a file tested elsewhere);
- a title, ```` ```python title="PATH" ```` (Material shows it above the block, so the reader
  sees which file it is): the block is the file PATH of the page's example project, which is
  written into an empty folder with the page's other file blocks and whose tests must pass
  (a later block for the same PATH replaces the earlier one, as a reader editing the file);
  a ``text`` block of the page that shows a snapshot file, or entries of one (it starts with
  ``# serializer version:`` or ``# name:``), must be in what those tests stored;
- ``<!-- output -->``: the block is exactly what the page's previous Python block prints;
- no comment: a ``python`` block runs, as a test module through pytest when it defines
  ``test_`` functions and as a script otherwise; a ``console`` block that runs pytest or the
  package's own command (``$ pytest ...``, ``$ python -m pytest_nucleo ...``) runs in the
  page's example project as written up to it, the page's earlier commands run before it (or
  in a folder of this repository, ``$ cd DIR && ...``), and must print what it shows; other
  blocks in the shown-only languages (commands, terminal output, configuration) are shown
  only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
SHOWN_ONLY = frozenset({"sh", "console", "text", "toml", "yaml", "ini", "json"})

_FENCE = re.compile(
    r"^(?:<!-- (?P<marker>excerpt of \S+|output) -->\n)?"
    r"```(?P<lang>[\w-]*)(?: title=\"(?P<title>[^\"\s]+)\")?\n(?P<code>.*?)^```$",
    flags=re.DOTALL | re.MULTILINE,
)


@dataclass(frozen=True)
class Block:
    page: str  # the page's path from the repository's top, e.g. "docs/tutorial.md"
    line: int  # the line of the opening fence, counted from 1
    lang: str
    code: str
    marker: (
        str | None
    )  # "excerpt of PATH" or "output" (the comment's text), "file: PATH" (the title)

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def target(self) -> str:
        """The PATH of an excerpt or a file block."""
        assert self.marker is not None, self
        assert self.marker != "output", self
        return self.marker.split(" ")[-1]

    @property
    def is_test_module(self) -> bool:
        return re.search(r"^(?:async )?def test_", self.code, re.MULTILINE) is not None


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in _FENCE.finditer(text):
        fence_line = text.count("\n", 0, match.start("lang")) + 1
        found.append(
            Block(
                page=page.relative_to(ROOT).as_posix(),
                line=fence_line,
                lang=match["lang"],
                code=match["code"],
                marker=f"file: {match['title']}" if match["title"] else match["marker"],
            )
        )
    return found


def fence_lines(page: Path) -> list[int]:
    """The lines of every opening fence, wherever it stands (to find blocks the parser misses)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    opening, inside = [], False
    for number, line in enumerate(lines, start=1):
        if line.lstrip().startswith("```"):
            if not inside:
                opening.append(number)
            inside = not inside
    return opening


ALL = [block for page in PAGES for block in blocks(page)]


def python_blocks_using(module: str) -> list[Block]:
    """The docs' runnable Python blocks that import ``module``: the examples of a framework in
    an environment of its own, which the main environment's docs tests skip and its own
    adapter tests run."""
    return [
        block
        for block in ALL
        if block.lang == "python" and block.marker is None and module in block.code
    ]
