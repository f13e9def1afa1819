from __future__ import annotations

# pytester's in-process runs forget every module first imported during a run. Import these once
# here, so runs share one copy of each (and hypothesis is not imported again, at ~1 s, per run).
import hypothesis  # noqa: F401

import pytest_nucleo.testing as _testing

for _name in _testing.__all__:
    getattr(_testing, _name)

pytest_plugins = ["pytester"]
