"""wrap_with_context and service_call keep a throttle a throttle, with the server's wait."""

from __future__ import annotations

import pytest
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo


def test_wrap_keeps_a_throttle_with_the_service_the_step_and_the_wait(
    llm_snapshot: SnapshotAssertion,
) -> None:
    buried = nucleo.UpstreamThrottleException("PubChem API", "HTTP 429", retry_after=30)
    wrapped = nucleo.wrap_with_context(buried, "PubChem", "cid", 2244, "compound fetch")
    assert type(wrapped) is nucleo.UpstreamThrottleException
    assert isinstance(wrapped, nucleo.ExternalServiceException)
    assert wrapped.retry_after == 30
    assert wrapped.service_name == "PubChem"
    assert wrapped.__cause__ is buried
    text = wrapped.explain_to_llm()
    assert "PubChem" in text
    assert "compound fetch" in text
    assert "30 seconds" in text
    assert text == llm_snapshot


def test_service_call_keeps_a_throttle_without_a_wait() -> None:
    with (
        pytest.raises(nucleo.UpstreamThrottleException) as info,
        nucleo.service_call("Shop", "number", "42", "order fetch"),
    ):
        raise nucleo.UpstreamThrottleException("Shop API", "slow down")
    assert info.value.retry_after is None
    text = info.value.explain_to_llm()
    assert text.startswith("During order fetch: The external service Shop API is throttling")
    assert "No wait was given" in text


def test_other_uncorrectable_failures_stay_plain_outages() -> None:
    buried = nucleo.UnauthorizedException("Shop", "HTTP 401")
    wrapped = nucleo.wrap_with_context(buried, "Shop", "number", "42", "order fetch")
    assert type(wrapped) is nucleo.ExternalServiceException
