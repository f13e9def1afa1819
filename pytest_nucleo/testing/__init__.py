"""The test-time API of pytest-nucleo: fakes, assertions, snapshots and the contract suite.

Names are imported lazily, so ``from pytest_nucleo.testing import fails_with`` loads pytest but
not respx or syrupy; production code imports ``pytest_nucleo`` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_nucleo._lazy import lazy_exports

if TYPE_CHECKING:
    from ._contract._hygiene import assert_clean_llm_text, text_problems
    from ._contract._scenarios import (
        ContractViolation,
        Expectation,
        Observation,
        Scenario,
        contract_matrix,
    )
    from ._contract._wording import BODY_LENGTH_LIMIT, TextProblem
    from ._failure import Failure, LLMText, assert_error_result, fails_with, failure_set
    from ._fake._upstream import (
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
    from ._snapshot import LLMTextSerializer, LLMTextSnapshotExtension
    from ._tool_contract import ToolContract, overrides_contract

_WHERE = {
    "BODY_LENGTH_LIMIT": "_contract._wording",
    "ContractViolation": "_contract._scenarios",
    "Expectation": "_contract._scenarios",
    "Failure": "_failure",
    "FakeRoute": "_fake._upstream",
    "FakeUpstream": "_fake._upstream",
    "LLMText": "_failure",
    "LLMTextSerializer": "_snapshot",
    "LLMTextSnapshotExtension": "_snapshot",
    "Observation": "_contract._scenarios",
    "Outcome": "_fake._upstream",
    "Scenario": "_contract._scenarios",
    "TextProblem": "_contract._wording",
    "ToolContract": "_tool_contract",
    "UnexpectedCallError": "_fake._upstream",
    "UnmatchedRequestError": "_fake._upstream",
    "assert_clean_llm_text": "_contract._hygiene",
    "assert_error_result": "_failure",
    "connect_error": "_fake._upstream",
    "contract_matrix": "_contract._scenarios",
    "fails_with": "_failure",
    "failure_set": "_failure",
    "html_error": "_fake._upstream",
    "http_date": "_fake._upstream",
    "not_json": "_fake._upstream",
    "overrides_contract": "_tool_contract",
    "respond": "_fake._upstream",
    "text_problems": "_contract._hygiene",
    "throttle": "_fake._upstream",
    "timeout": "_fake._upstream",
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


_resolve, __dir__ = lazy_exports(__name__, _WHERE, globals())


def __getattr__(name: str) -> Any:
    """The public ``name``, imported on first use; when a library of the test stack is
    missing, the error names the extra that brings it."""
    try:
        return _resolve(name)
    except ModuleNotFoundError as error:
        from ._extras import missing_stack_module

        better = missing_stack_module(f"{__name__}.{name}", error)
        if better is None:
            raise
        raise better from error
