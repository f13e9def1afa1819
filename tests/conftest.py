from __future__ import annotations

import hypothesis  # noqa: F401 - imported once here, not again in every in-process pytester run

pytest_plugins = ["pytester"]
