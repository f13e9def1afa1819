"""The stand-in for a client's fake whose mocking library is not installed (or does not
import: installed without what it needs).

A client can be installed without the library that fakes it: langchain brings requests, not
``responses``. That must not break the tests that never call through the client, so the
client's backend is replaced by this one: it patches the place where the client's requests
enter (the backend's ``entry``) with a refusal, and every request the client then makes fails
with a message naming the extra that brings the library (and why it did not import, when it
is installed), recorded as a problem of the running fake so the test fails even when the tool
swallowed the error. Refused rather than sent on: the request would otherwise go to the
network (aiohttp) or to urllib3's fake beneath (requests), which fakes it in a way the client's
own backend does not, and a test would pass here and fail where the library is installed.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from pytest_nucleo.testing._extras import fake_missing
from pytest_nucleo.testing._fake import _names

if TYPE_CHECKING:
    import respx


class MissingFakeError(AssertionError):
    """A request of a client whose mocking library is not installed, refused unsent."""


class Faked(Protocol):
    """What the stand-in reads of the backend it stands in for."""

    client: str
    mock: str
    """The module of the library that fakes the client (``responses``)."""

    @staticmethod
    def entry() -> tuple[type, str]:
        """The class and method where every request of the client enters."""


class MissingMock:
    """The backend of a client whose mocking library is missing: its requests are refused."""

    def __init__(self, faked: type[Faked], broken: ImportError | None = None) -> None:
        self.client = faked.client
        self._message = fake_missing(faked.client, faked.mock, broken)
        self._owner, self._name = faked.entry()
        self._original: object = None

    def refusal(self) -> str | None:
        # The library that would patch the entry is missing, but another fake upstream's
        # refusal may stand there. Started over it, this one would put that refusal back when
        # it stopped, and a fake stopped before it would leave the client refused for the
        # rest of the process.
        current = vars(self._owner)[self._name]
        if getattr(current, "__module__", None) == __name__:
            return (
                f"{self._owner.__module__}.{self._owner.__qualname__}.{self._name} is already "
                f"patched by another FakeUpstream, which refuses what {self.client} sends (the "
                "library that fakes it is missing): use one per test."
            )
        return None

    def start(self, router: respx.Router) -> None:
        self._original = vars(self._owner)[self._name]
        setattr(self._owner, self._name, _refuser(self._original, self._message, router))

    def stop(self) -> None:
        if self._original is not None:
            setattr(self._owner, self._name, self._original)
            self._original = None


def _refuser(original: object, message: str, router: respx.Router) -> Callable[..., Any]:
    def refuse() -> MissingFakeError:
        error = MissingFakeError(message)
        for fake in _names.running:  # the fake whose router this is fails its test with it
            if getattr(fake, "router", None) is router:
                fake.problems.append(error)  # type: ignore[attr-defined]
        return error

    # Not functools.wraps: a check of whether the entry is still the client's own (another
    # mock's refusal) must see that it is not, and ``refusal`` knows a refuser by its module.
    if inspect.iscoroutinefunction(original):

        async def refused_async(*args: Any, **kwargs: Any) -> Any:
            raise refuse()

        return refused_async

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise refuse()

    return refused
