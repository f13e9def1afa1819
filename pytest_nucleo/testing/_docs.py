"""Where the package's messages send a reader: a page of the docs site, or a section of one.

Every message that points to the docs renders its reference with :func:`docs_ref`, so they all
read alike, ``pytest-nucleo's docs, "The network guard"
(docs/how-to/fake-upstream.md#the-network-guard)`` (the page's path in the project's
repository, which the site is built from), and a test can check that each page they name
exists.
"""

from __future__ import annotations

import re
import unicodedata

REFERENCES: set[tuple[str, str]] = set()
"""Every (page, heading) a message of an imported module names; pages are paths from the
project's top folder."""


def _anchor(heading: str) -> str:
    # The slug mkdocs (Python-Markdown's toc) gives a heading, so the link lands on it.
    text = unicodedata.normalize("NFKD", heading)
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def docs_ref(page: str, heading: str, *, section: bool = True) -> str:
    """``pytest-nucleo's docs, "<heading>" (<page>#<anchor>)``: a section of ``page``; with
    ``section=False``, ``heading`` is the page's own title and the link is the page."""
    REFERENCES.add((page, heading))
    where = f"{page}#{_anchor(heading)}" if section else page
    return f'pytest-nucleo\'s docs, "{heading}" ({where})'
