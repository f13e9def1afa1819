"""Plain tool functions, written once against pytest_nucleo and no framework.

``test_frameworks.py`` serves these same functions through every framework with an adapter
(MCP, pydantic-ai, LangChain, the OpenAI Agents SDK, Anthropic's tool runner, LlamaIndex, Google
ADK, CrewAI, Strands Agents, DSPy, Agno, the Microsoft Agent Framework and Semantic Kernel),
unchanged, and shows the model reads the same text through each.
"""

from __future__ import annotations

import pytest_nucleo as nucleo

ORDERS = {"00000042": {"number": "00000042", "status": "shipped"}}


def get_order(order_number: str) -> dict[str, str]:
    """Fetch one order by its 8-digit number."""
    if not (order_number.isascii() and order_number.isdigit() and len(order_number) == 8):
        raise nucleo.InvalidInputException(
            "order_number", order_number, "must be exactly 8 digits, such as 00012345"
        )
    if order_number == "00000500":
        raise nucleo.ExternalServiceException("Shop", "HTTP 503 from /orders: maintenance")
    if order_number == "00000429":
        raise nucleo.UpstreamThrottleException("Shop", "HTTP 429 from /orders", retry_after=30)
    if order_number == "00000013":
        return {"number": order_number, "eta": ORDERS[order_number]["eta"]}  # a bug: KeyError
    return ORDERS[order_number]
