from __future__ import annotations

# pytester's in-process runs forget every module first imported during a run. Import these once
# here, so runs share one copy of each (and hypothesis and the installed pytest plugins are not
# imported again, at a second or more, in every run).
import importlib
from importlib.metadata import entry_points

import hypothesis  # noqa: F401

import pytest_nucleo.testing as _testing

for _name in _testing.__all__:
    getattr(_testing, _name)
for _plugin in entry_points(group="pytest11"):
    importlib.import_module(_plugin.value.partition(":")[0])

pytest_plugins = ["pytester"]

# Every test here fails if anything really sleeps: time is injected.
from _timing import no_real_sleep  # noqa: E402, F401
