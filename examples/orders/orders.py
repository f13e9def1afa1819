"""The orders tool: fetch one order by its number from the shop's HTTP API.

A malformed number is the model's to fix (InvalidInputException); a well-formed number that
names no order is too (ResourceNotFoundException, from the client's 404 mapping); outages,
timeouts and throttles are uncorrectable and mapped by the client base.
"""

from __future__ import annotations

import os
import re
from typing import Any

import httpx

import pytest_nucleo as nucleo

ORDER_NUMBER = re.compile(r"[0-9]{8}")
API_KEY = os.environ.get("SHOP_API_KEY", "demo-shop-key-0001")


class ShopClient(nucleo.ServiceClient):
    service_name = "Shop"
    base_url = "https://shop.example/api"


shop = ShopClient(httpx.Client(headers={"X-Api-Key": API_KEY}, timeout=10.0))


@nucleo.tool
@nucleo.llm_errors
def get_order(order_number: str) -> dict[str, Any]:
    """Fetch one order by its 8-digit number."""
    if not ORDER_NUMBER.fullmatch(order_number):
        raise nucleo.InvalidInputException(
            "order_number", order_number, "must be exactly 8 digits, such as 00012345"
        )
    order = shop.get_json(f"/orders/{order_number}")
    return {"number": order["number"], "status": order["status"], "items": order["items"]}
