"""The test-time API of pytest-nucleo: fakes, assertions, snapshots and the contract suite.

Names are imported lazily, so ``from pytest_nucleo.testing import fails_with`` loads pytest but
not respx or syrupy; production code imports ``pytest_nucleo`` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_nucleo._lazy import lazy_exports

if TYPE_CHECKING:
    from ._contract import ToolContract, overrides_contract
    from ._failure import Failure, LLMText, assert_error_result, fails_with, failure_set
    from ._fake import (
        FakeRoute,
        FakeUpstream,
        Outcome,
        UnexpectedCallError,
        UnmatchedRequestError,
        connect_error,
        html_error,
        http_date,
        not_json,
        respond,
        throttle,
        timeout,
    )
    from ._hygiene import assert_clean_llm_text, text_problems
    from ._scenarios import ContractViolation, Expectation, Observation, Scenario, contract_matrix
    from ._snapshot import LLMTextSerializer, LLMTextSnapshotExtension
    from ._wording import BODY_LENGTH_LIMIT, TextProblem

_WHERE = {
    "BODY_LENGTH_LIMIT": "_wording",
    "ContractViolation": "_scenarios",
    "Expectation": "_scenarios",
    "Failure": "_failure",
    "FakeRoute": "_fake",
    "FakeUpstream": "_fake",
    "LLMText": "_failure",
    "LLMTextSerializer": "_snapshot",
    "LLMTextSnapshotExtension": "_snapshot",
    "Observation": "_scenarios",
    "Outcome": "_fake",
    "Scenario": "_scenarios",
    "TextProblem": "_wording",
    "ToolContract": "_contract",
    "UnexpectedCallError": "_fake",
    "UnmatchedRequestError": "_fake",
    "assert_clean_llm_text": "_hygiene",
    "assert_error_result": "_failure",
    "connect_error": "_fake",
    "contract_matrix": "_scenarios",
    "fails_with": "_failure",
    "failure_set": "_failure",
    "html_error": "_fake",
    "http_date": "_fake",
    "not_json": "_fake",
    "overrides_contract": "_contract",
    "respond": "_fake",
    "text_problems": "_hygiene",
    "throttle": "_fake",
    "timeout": "_fake",
}

__all__ = [
    "BODY_LENGTH_LIMIT",
    "ContractViolation",
    "Expectation",
    "Failure",
    "FakeRoute",
    "FakeUpstream",
    "LLMText",
    "LLMTextSerializer",
    "LLMTextSnapshotExtension",
    "Observation",
    "Outcome",
    "Scenario",
    "TextProblem",
    "ToolContract",
    "UnexpectedCallError",
    "UnmatchedRequestError",
    "assert_clean_llm_text",
    "assert_error_result",
    "connect_error",
    "contract_matrix",
    "fails_with",
    "failure_set",
    "html_error",
    "http_date",
    "not_json",
    "overrides_contract",
    "respond",
    "text_problems",
    "throttle",
    "timeout",
]


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())
