"""The test-time API of pytest-nucleo: fakes, assertions and snapshots for tool tests.

Importing this module imports pytest, respx and syrupy; production code imports
``pytest_nucleo`` only.
"""

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
from ._snapshot import LLMTextSerializer, LLMTextSnapshotExtension

__all__ = [
    "Failure",
    "FakeRoute",
    "FakeUpstream",
    "LLMText",
    "LLMTextSerializer",
    "LLMTextSnapshotExtension",
    "Outcome",
    "UnexpectedCallError",
    "UnmatchedRequestError",
    "assert_clean_llm_text",
    "assert_error_result",
    "connect_error",
    "fails_with",
    "failure_set",
    "html_error",
    "http_date",
    "not_json",
    "respond",
    "text_problems",
    "throttle",
    "timeout",
]
