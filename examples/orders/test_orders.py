"""Every way get_order can fail, as the model reads it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hypothesis import given
from orders import API_KEY, get_order

import pytest_nucleo as nucleo
from pytest_nucleo import strategies as nst
from pytest_nucleo.testing import FakeUpstream, Scenario, ToolContract, fails_with, respond

if TYPE_CHECKING:
    from syrupy.assertion import SnapshotAssertion

URL = "https://shop.example/api/orders/00000042"
ORDER = {"number": "00000042", "status": "shipped", "items": 3}


def test_an_order_is_fetched(fake_upstream: FakeUpstream) -> None:
    fake_upstream.get(URL).respond(200, json=ORDER)
    assert get_order("00000042") == ORDER


def test_a_malformed_number_is_the_models_to_fix(llm_snapshot: SnapshotAssertion) -> None:
    with fails_with(nucleo.InvalidInputException, correctable=True) as failure:
        get_order("12-AB")
    assert failure.explanation == llm_snapshot


def test_an_unknown_number_is_the_models_to_fix(
    fake_upstream: FakeUpstream, llm_snapshot: SnapshotAssertion
) -> None:
    fake_upstream.get("https://shop.example/api/orders/00000099").respond(404, text="no order")
    with fails_with(nucleo.ResourceNotFoundException, correctable=True) as failure:
        get_order("00000099")
    assert failure.explanation == llm_snapshot


def test_a_throttle_says_how_long_to_wait(
    fake_upstream: FakeUpstream, llm_snapshot: SnapshotAssertion
) -> None:
    fake_upstream.get(URL).throttle(retry_after=30)
    with fails_with(nucleo.UpstreamThrottleException) as failure:
        get_order("00000042")
    assert failure.exception.retry_after == 30
    assert failure.explanation == llm_snapshot


def test_through_the_runner_a_timeout_is_an_error_result(
    fake_upstream: FakeUpstream, llm_snapshot: SnapshotAssertion
) -> None:
    fake_upstream.get(URL).timeout()
    result = nucleo.run_tool(get_order, {"order_number": "00000042"})
    assert result.is_error
    assert result.text == llm_snapshot


@given(nst.fetch_scenarios())
def test_every_upstream_failure_keeps_the_contract(scenario: Scenario) -> None:
    scenario.verify(
        get_order, {"order_number": "00000042"}, endpoint=f"GET {URL}", secrets=(API_KEY,)
    )


def test_the_fake_upstream_works_per_example_too() -> None:
    with FakeUpstream() as upstream:
        upstream.get(URL).respond(503)
        with fails_with(nucleo.ExternalServiceException):
            get_order("00000042")


class TestGetOrderContract(ToolContract):
    tool = get_order
    kind = "fetch"
    service_name = "Shop"
    endpoint = f"GET {URL}"
    valid_call = {"order_number": "00000042"}
    valid_response = respond(200, json=ORDER)
    secrets = (API_KEY,)
