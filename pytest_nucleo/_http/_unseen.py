"""What a client reader passes for the parts of an answer it could not see.

Their own module, importing nothing: the readers that use them are found for every exception
a tool raises (urllib's for the builtin ones), and the mapping that reads them imports httpx.
"""

from __future__ import annotations


class _UnseenBody(bytes):
    """The type of :data:`UNSEEN_BODY`: empty, since nothing of the body is known."""


UNSEEN_BODY: bytes = _UnseenBody()
"""The body of an answer the mapping could not see, passed as ``body`` by the client readers:
read already by the code that raised (urllib's ``HTTPError.read()``), not read by the client
before it raised (aiohttp's ``raise_for_status()``), or never kept (urllib3's retries give up
with the last status only). The status maps as usual; the text says nothing of the body, where
an empty one reads "Its answer had no body"."""


class _UnseenHeaders(tuple[tuple[str, str], ...]):
    """The type of :data:`UNSEEN_HEADERS`."""


UNSEEN_HEADERS: tuple[tuple[str, str], ...] = _UnseenHeaders()
"""The headers of an answer the mapping could not see (urllib3's retries keep only the
status): a throttle's text then says no wait is known, not that none was given."""
