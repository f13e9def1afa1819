"""One TLS context for the httpx and httpx2 clients the tests build per call.

The fakes answer before any connection is made, so the context is never used; but a client
given none builds its own, loading certifi's bundle (about 40 ms), which added half a minute
to the suite.
"""

from __future__ import annotations

import ssl

TLS = ssl.create_default_context()
