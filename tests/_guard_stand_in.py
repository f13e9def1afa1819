"""A fixture that stands in for the socket functions beneath the network guard: what got past
the guard is recorded instead of leaving the machine."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_nucleo.testing._fake import _guard


@pytest.fixture
def below_guard(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What passed the guard, as (function, host) lines; each gets an OSError."""
    reached: list[str] = []

    def stand_in(name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            address = args[1] if name.startswith("connect") else args[0]
            host = address[0] if isinstance(address, tuple) else address
            reached.append(f"{name} {host}")
            raise OSError(f"stand-in: {name} {host} would have left the machine")

        return call

    for name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "connect", "connect_ex"):
        monkeypatch.setitem(_guard._originals, name, stand_in(name))
    return reached
