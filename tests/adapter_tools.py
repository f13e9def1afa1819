"""Tools the adapter tests share: one per runner option and per kind of success value.

Each factory makes a fresh tool (and its state) for one test, so nothing leaks between tests.
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import Callable
from typing import Any

import httpx
from _tls import TLS

import pytest_nucleo as nucleo

SECRET = "sk-live-0123456789abcdefABCDEF"


class Flaky:
    """An order look-up that is overloaded on its first call and answers on the next."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, order_number: str) -> dict[str, Any]:
        """Look an order up."""
        self.calls += 1
        if self.calls == 1:
            raise nucleo.OverloadRetryException()
        return {"number": order_number, "status": "shipped"}


def flaky_order() -> Any:
    """A plain function (frameworks read its signature) over a fresh :class:`Flaky`."""
    state = Flaky()

    def lookup_order(order_number: str) -> dict[str, Any]:
        """Look an order up."""
        return state(order_number)

    lookup_order.state = state  # type: ignore[attr-defined]
    return lookup_order


async def always_overloaded(order_number: str) -> str:
    """Look an order up on a shop that is always overloaded (asks for 20 s each time)."""
    await asyncio.sleep(0)
    raise nucleo.OverloadRetryException(retry_after=20)


def never_called(order_number: str) -> str:
    """A look-up the runner must not start (its cancel token is already cancelled)."""
    raise AssertionError("called although cancelled")


class Chart:
    """A value with no JSON form and a ``__str__``: what the frameworks render with str()."""

    def __str__(self) -> str:
        return "chart of 3 orders: 1042, 1043, 1044"


def chart(month: str) -> Any:
    """Draw the month's orders."""
    return Chart()


def leaky(order_number: str) -> str:
    """Fetch an order; a bug puts a secret in the message of a foreign exception."""
    raise KeyError(f"token {SECRET}")


def get_order(order_number: str) -> str:
    """Fetch one order by its number (renamed by the tests)."""
    if order_number == "bug":
        return {}["eta"]  # type: ignore[no-any-return]  # a bug: a foreign KeyError
    return f"order {order_number}"


def fresh(func: Callable[..., Any]) -> Callable[..., Any]:
    """A new function object with ``func``'s code, name, signature and docstring.

    For a decorator that marks the very function it gets (``nucleo.tool``, Semantic Kernel's
    ``kernel_function``): marking a shared function would rename it for every later test in
    the same process, whatever order they run in.
    """
    assert isinstance(func, types.FunctionType)
    copy = types.FunctionType(
        func.__code__, func.__globals__, func.__name__, func.__defaults__, func.__closure__
    )
    copy.__kwdefaults__ = func.__kwdefaults__
    copy.__annotations__ = dict(func.__annotations__)
    copy.__doc__, copy.__qualname__, copy.__module__ = (
        func.__doc__,
        func.__qualname__,
        func.__module__,
    )
    return copy


ORDER = {"number": "1042", "items": ["kettle", "tea"], "total": 12.5}


def order_dict(order_number: str) -> dict[str, Any]:
    """Fetch one order as a dict."""
    return dict(ORDER, number=order_number)


ORDER_TEXT = '{"items": ["kettle", "tea"], "number": "1042", "total": 12.5}'
"""The runner's text for :data:`ORDER`: what the model reads under every framework."""

TIMEOUT_TEXT = nucleo.JobTimeoutException(30).explain_to_llm()
CANCELLED_TEXT = nucleo.JobCancelledException().explain_to_llm()


# -- one fetch tool over a faked upstream, for the four failures every adapter must deliver -----

ORDERS_URL = "https://shop.example/api/orders"


class Shop(nucleo.ServiceClient):
    service_name = "Shop"
    base_url = "https://shop.example/api"


def fetch_order(order_number: str) -> Any:
    """Fetch one order of the shop by its number."""
    if order_number == "bug":
        raise KeyError(f"token {SECRET}")  # a bug whose message carries a secret
    with Shop(httpx.Client(timeout=5.0, verify=TLS)) as shop:
        return shop.get_json(f"/orders/{order_number}")


async def afetch_order(order_number: str) -> Any:
    """Fetch one order of the shop by its number."""
    await asyncio.sleep(0)
    return fetch_order(order_number)


FAILURES = ("not found", "throttled", "read timeout", "foreign")
"""The four failures each adapter test runs through its framework (see :func:`arrange`)."""


def arrange(fake_upstream: Any, failure: str) -> dict[str, str]:
    """Make ``fake_upstream`` fail ``fetch_order`` as ``failure`` says; the call's arguments."""
    if failure == "not found":
        fake_upstream.get(f"{ORDERS_URL}/404").respond(404, json={"error": "no such order"})
        return {"order_number": "404"}
    if failure == "throttled":
        fake_upstream.get(f"{ORDERS_URL}/429").throttle(retry_after=30)
        return {"order_number": "429"}
    if failure == "read timeout":
        fake_upstream.get(f"{ORDERS_URL}/slow").timeout()
        return {"order_number": "slow"}
    if failure == "foreign":
        return {"order_number": "bug"}
    raise ValueError(f"unknown failure {failure!r}; one of {FAILURES}")


def expected_text(arguments: dict[str, str], name: str = "fetch_order") -> str:
    """What the model must read: the runner's text for the same call, outside any framework."""
    result = nucleo.run_tool(fetch_order, arguments, name=name)
    assert result.is_error
    return result.text
