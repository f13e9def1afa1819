"""Where the package's messages send a reader: a page of the docs site, or a section of one.

Every message that points to the docs renders its reference with :func:`docs_ref`, so they all
read alike, ``pytest-nucleo's docs, "The network guard"
(https://pytest-nucleo.github.io/pytest-nucleo/how-to/fake-upstream/#the-network-guard)``:
the section's title and its address on the published site, a stable URL, since the installed
package ships no docs/ folder to point into. Callers name the page by its source path in the
repository (``docs/how-to/fake-upstream.md``), so a test can check that each page and heading
they name exists.
"""

from __future__ import annotations

import re
import unicodedata

DOCS_URL = "https://pytest-nucleo.github.io/pytest-nucleo/"
"""The published docs site (mkdocs.yml's ``site_url``)."""

REFERENCES: set[tuple[str, str]] = set()
"""Every (page, heading) a message of an imported module names; pages are paths from the
project's top folder."""


def _anchor(heading: str) -> str:
    # The slug mkdocs (Python-Markdown's toc) gives a heading, so the link lands on it.
    text = unicodedata.normalize("NFKD", heading)
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def page_url(page: str) -> str:
    """The site address of the page whose source is ``page``
    (``docs/how-to/fake-upstream.md`` -> ``<site>/how-to/fake-upstream/``), as mkdocs builds it
    with directory URLs."""
    path = page.removeprefix("docs/").removesuffix(".md")
    path = "" if path == "index" else path.removesuffix("/index") + "/"
    return DOCS_URL + path


def docs_ref(page: str, heading: str, *, section: bool = True) -> str:
    """``pytest-nucleo's docs, "<heading>" (<url>#<anchor>)``: a section of ``page`` (its source
    path in the repository); with ``section=False``, ``heading`` is the page's own title and the
    link is the page."""
    REFERENCES.add((page, heading))
    url = page_url(page)
    where = f"{url}#{_anchor(heading)}" if section else url
    return f'pytest-nucleo\'s docs, "{heading}" ({where})'
