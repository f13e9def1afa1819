"""The guard every test runs under (see conftest.py): time is injected, nothing really sleeps."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

_real_asleep = asyncio.sleep


def _no_sleep(seconds: float) -> None:
    raise AssertionError(f"a test really slept ({seconds!r} s): drive time with a FakeClock")


async def _no_asleep(delay: float, result: Any = None) -> Any:
    if delay != 0:
        raise AssertionError(f"a test awaited asyncio.sleep({delay!r}): use a FakeClock")
    return await _real_asleep(0, result)


@pytest.fixture(autouse=True)
def no_real_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any test whose code (ours or the tool's) really sleeps."""
    monkeypatch.setattr(time, "sleep", _no_sleep)
    monkeypatch.setattr(asyncio, "sleep", _no_asleep)
