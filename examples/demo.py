"""Print what the model reads when a few typical tool calls fail.

Run it with ``python examples/demo.py`` after ``pip install .``.
"""

from __future__ import annotations

import pytest_nucleo as nucleo

ORDERS = {"00000042": {"order_number": "00000042", "status": "shipped"}}


def shop_api_get_order(order_number: str) -> dict[str, str]:
    """Stands in for an HTTP client: unknown orders are a 404, one order trips an outage."""
    if order_number == "00000500":
        raise ConnectionError("connection refused by shop.example:443")
    if order_number not in ORDERS:
        raise nucleo.ResourceNotFoundException("order", order_number)
    return ORDERS[order_number]


@nucleo.llm_errors  # anything outside the set leaves as a SystemException naming get_order
def get_order(order_number: str) -> dict[str, str]:
    """The tool: validate the argument, call the service once, shape the result."""
    if not (order_number.isascii() and order_number.isdigit() and len(order_number) == 8):
        raise nucleo.InvalidInputException("order_number", order_number, "must be 8 digits")
    with nucleo.service_call("Shop API", "order_number", order_number, "order lookup"):
        order = shop_api_get_order(order_number)
    return {"number": order["order_number"], "eta": order["eta"]}  # a bug: no "eta" key


def main() -> None:
    for order_number in ["12-AB", "00000099", "00000500", "00000042"]:
        print(f"--- get_order(order_number={order_number!r}) ---")
        try:
            print(get_order(order_number))
        except nucleo.LLMReadableException as failure:
            print(failure.explain_to_llm())
    print("--- a service that throttles us ---")
    print(nucleo.UpstreamThrottleException("GitHub", "secondary rate limit", 60).explain_to_llm())


if __name__ == "__main__":
    main()
