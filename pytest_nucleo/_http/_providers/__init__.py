"""The seam between the runtime and the LLM providers' SDKs (openai, anthropic, google-genai).

Each provider has one module here that reads its SDK's errors into a :class:`ProviderAnswer`;
``_rules`` sorts every answer the same way. A provider's module is found from the top-level
package of the classes of the exception seen, and imported only then (its SDK is already
imported, since one of its exceptions exists). Adding a provider is one module and one line in
:data:`_SUPPORT`.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol, cast

from pytest_nucleo._registry import LazyRegistry

# Top-level package of an SDK's classes -> our module that reads its errors.
_SUPPORT = {
    "openai": "_openai",
    "anthropic": "_anthropic",
    "google": "_google",  # google-genai; its module reads no other google package's errors
}


class ProviderAnswer(NamedTuple):
    """What a provider's error says, each text still raw (the rules mask and bound them)."""

    provider: str
    """The provider's name as the model should read it ("OpenAI")."""
    status: int | None
    """The HTTP status received; None when no answer came (connection failed, timeout)."""
    timed_out: bool = False
    code: str = ""
    """The error body's ``error.code`` (OpenAI's "insufficient_quota"), or ""."""
    type: str = ""
    """The error body's ``error.type`` (Anthropic's "overloaded_error"), or ""."""
    message: str = ""
    """The error body's ``error.message``: the provider's own words, never the request's."""
    retry_after: float | None = None
    model: str | None = None
    """The model the request asked for, when its body names one."""
    account: str | None = None
    """The organization the provider says the key belongs to, when it says."""
    known: tuple[str, ...] = ()
    """What the request carried (the API key, the conversation): masked wherever it shows."""


class ProviderSupport(Protocol):
    """What one provider's module offers."""

    def provider_answer(self, exc: BaseException) -> ProviderAnswer | None:
        """What ``exc`` says, or None when it is not one of the SDK's API errors."""

    def sdk_retries(self, exc: BaseException) -> int:
        """How many times the SDK retried the request on its own before raising ``exc``."""


_REGISTRY = LazyRegistry(__name__, _SUPPORT)


def _support(module: object) -> ProviderSupport:
    return cast(ProviderSupport, module)


def provider_answer(exc: BaseException) -> ProviderAnswer | None:
    """What a provider SDK's error says; None for an exception of no known SDK, or one its
    module cannot read (an SDK of another version: the generic reading takes over)."""
    answer = _REGISTRY.ask(exc, lambda module: _support(module).provider_answer(exc), None)
    return answer if isinstance(answer, ProviderAnswer) else None


def sdk_retries(exc: BaseException) -> int:
    """How many times a provider SDK retried the request on its own before raising ``exc``;
    0 when it did not, or for an exception of no known SDK or one its module cannot read."""
    count = _REGISTRY.ask(exc, lambda module: _support(module).sdk_retries(exc), 0)
    return count if type(count) is int and count >= 0 else 0


def providers() -> tuple[str, ...]:
    """The top-level packages of the provider SDKs the runtime understands."""
    return tuple(_SUPPORT)
