"""What the pytest runs a test starts in new processes leave out."""

UNUSED_PLUGINS = ("-p", "no:langsmith_plugin", "-p", "no:hypothesispytest", "-p", "no:anyio")
UNUSED_PLUGINS += ("-p", "no:pytest_httpx2")
"""``-p no:`` for the installed plugins such a run has no use for: loading them costs each new
process a second or more (pytest-httpx2 imports httpx2, langsmith's plugin requests)."""
