"""A real redis-server for the shared-limiter tests, started on a free loopback port.

One server per test session (per xdist worker), in a temporary folder, with no persistence.
Where redis-server (or the redis client) is missing the tests that need it skip, saying how
to install it; under CI (the ``CI`` variable, read once at import, before the suite's own
fixture clears it for each test) they fail instead, so CI cannot pass them by skipping.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

IN_CI = bool(os.environ.get("CI"))
HOW_TO_INSTALL = (
    "redis-server is not installed, so the shared-limiter tests cannot run: install it "
    "(Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) and the redis "
    "client (pip install 'pytest-nucleo[redis]'), then rerun"
)


class RedisServer:
    """A running redis-server: its port, clients for it, and a way to stop and restart it."""

    def __init__(self, binary: str, folder: str) -> None:
        self.binary = binary
        self.folder = folder
        self.port = _free_port()
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self.folder,
                "--protected-mode",
                "no",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert self.process.stdout is not None
        # Its log says when it listens: read it, instead of polling with sleeps.
        for line in self.process.stdout:
            if "Ready to accept connections" in line:
                # Keep reading what it logs after, so a full pipe never blocks the server.
                threading.Thread(target=self.process.stdout.read, daemon=True).start()
                return
        raise RuntimeError(f"redis-server exited with {self.process.wait()} before it was ready")

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            if self.process.stdout is not None:
                self.process.stdout.close()
            self.process = None

    def client(self, **options: Any) -> Any:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        settings: dict[str, Any] = {"socket_timeout": 2.0, "retry": Retry(NoBackoff(), 0)}
        return redis.Redis(host="127.0.0.1", port=self.port, **(settings | options))

    def async_client(self, **options: Any) -> Any:
        import redis.asyncio
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff

        settings: dict[str, Any] = {"socket_timeout": 2.0, "retry": Retry(NoBackoff(), 0)}
        return redis.asyncio.Redis(host="127.0.0.1", port=self.port, **(settings | options))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def unique_prefix() -> str:
    """A prefix no other test uses: tests share one server and never see each other's keys."""
    return f"test-{uuid.uuid4().hex[:12]}"


def _unavailable(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"{reason} (CI is set, so this is a failure, not a skip)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    binary = shutil.which("redis-server")
    try:
        import redis  # noqa: F401
    except ImportError:
        binary = None
    if binary is None:
        _unavailable(HOW_TO_INSTALL)
    assert binary is not None
    with tempfile.TemporaryDirectory(prefix="nucleo-redis-") as folder:
        server = RedisServer(binary, folder)
        server.start()
        try:
            yield server
        finally:
            server.stop()
