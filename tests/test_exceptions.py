"""The failure set: texts, correctability, fields, pickling, hygiene."""

from __future__ import annotations

import pickle
import re
import threading
from collections.abc import Callable
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo import (
    CORRECTABLE_HINT,
    UNCORRECTABLE_HINT,
    LLMReadableException,
)

# One realistic instance of every class a model may read, by class name.
SAMPLES: dict[str, Callable[[], LLMReadableException]] = {
    "CorrectableLLMException": lambda: nucleo.CorrectableLLMException(
        "date range inverted", llm_message="The start date must come before the end date."
    ),
    "InvalidInputException": lambda: nucleo.InvalidInputException(
        "order_number", "12-AB", "must be 8 digits, such as 00012345"
    ),
    "ResourceNotFoundException": lambda: nucleo.ResourceNotFoundException("order", "00000099"),
    "GuardrailException": lambda: nucleo.GuardrailException(
        "the query asks for personal data about a private person"
    ),
    "UncorrectableLLMException": lambda: nucleo.UncorrectableLLMException(
        "index rebuild in progress", llm_message="The search index is being rebuilt."
    ),
    "ExternalServiceException": lambda: nucleo.ExternalServiceException(
        "PubChem", "connection refused", ConnectionRefusedError(111, "Connection refused")
    ),
    "UpstreamThrottleException": lambda: nucleo.UpstreamThrottleException(
        "GitHub", "API rate limit exceeded", retry_after=60
    ),
    "UnauthorizedException": lambda: nucleo.UnauthorizedException("ChemSpider", "API key expired"),
    "PermissionDeniedException": lambda: nucleo.PermissionDeniedException(
        "only the account owner may cancel an order"
    ),
    "SystemException": lambda: nucleo.SystemException(
        "order_tool", "KeyError: 'eta'", KeyError("eta")
    ),
    "JobCancelledException": nucleo.JobCancelledException,
    "JobTimeoutException": lambda: nucleo.JobTimeoutException(30),
    "ContextOverflowException": nucleo.ContextOverflowException,
    "PromptNotFoundException": lambda: nucleo.PromptNotFoundException("orders.summary"),
    "CorrectableRuntimeLLMException": lambda: nucleo.CorrectableRuntimeLLMException(
        "Invalid result: R-17 has no price; ask for another result."
    ),
    "UncorrectableRuntimeLLMException": lambda: nucleo.UncorrectableRuntimeLLMException(
        "PubChem search failed."
    ),
    "QuotaExhaustedException": lambda: nucleo.QuotaExhaustedException(
        "openai", "acme-prod", model="gpt-5", detail="insufficient_quota"
    ),
    "SpendCapExceededException": lambda: nucleo.SpendCapExceededException(
        "workflow 'nightly-report' reached its cap of 20 USD"
    ),
    "ModelNotFoundException": lambda: nucleo.ModelNotFoundException("gpt-17-turbo"),
    "ProviderRefusalException": lambda: nucleo.ProviderRefusalException(
        "claude-9", category="cyber", explanation="the request resembles malware development"
    ),
    "RetriesExhaustedException": lambda: nucleo.RetriesExhaustedException(
        "search_compounds", "overload", 4
    ),
    "LimiterRefusalException": lambda: nucleo.LimiterRefusalException(
        "github-search",
        30,
        60.0,
        45.0,
        "open",
        nucleo.UpstreamFailure("GitHub", "API rate limit exceeded", 429, 60.0),
    ),
}

CORRECTABLE = {
    "CorrectableLLMException",
    "InvalidInputException",
    "ResourceNotFoundException",
    "GuardrailException",
    "CorrectableRuntimeLLMException",
}
FAMILIES = ["LLMReadableException", "LLMReadableCheckedException", "LLMReadableRuntimeException"]


def test_every_readable_class_has_a_sample() -> None:
    readable = {
        name
        for name in nucleo.__all__
        if isinstance(getattr(nucleo, name), type)
        and issubclass(getattr(nucleo, name), LLMReadableException)
        # The HTTP carriers have their own sample of every class, with the same checks
        # (snapshot, pickle, hint, correctability): tests/test_http_status.py::CARRIERS.
        and not issubclass(getattr(nucleo, name), nucleo.HttpErrorResponse)
    }
    assert readable - set(FAMILIES) == set(SAMPLES)


@pytest.fixture(params=sorted(SAMPLES))
def sample(request: pytest.FixtureRequest) -> LLMReadableException:
    exc = SAMPLES[request.param]()
    assert type(exc).__name__ == request.param
    return exc


def test_explanation_snapshot(
    sample: LLMReadableException, llm_snapshot: SnapshotAssertion
) -> None:
    assert sample.explain_to_llm() == llm_snapshot


def test_explanation_is_message_then_hint_by_correctability(sample: LLMReadableException) -> None:
    expected = type(sample).__name__ in CORRECTABLE
    assert sample.is_correctable is expected
    hint = CORRECTABLE_HINT if expected else UNCORRECTABLE_HINT
    assert sample.explain_to_llm() == f"{sample.llm_message}\n{hint}"


def test_explanation_is_defined_once_for_the_whole_set() -> None:
    for name in [*SAMPLES, *FAMILIES]:
        cls = getattr(nucleo, name)
        assert "explain_to_llm" not in vars(cls) or cls is LLMReadableException, name


def test_hint_lines_are_exact() -> None:
    assert CORRECTABLE_HINT == (
        "[This error may be correctable - you can retry with different parameters"
        " or try a different approach]"
    )
    assert (
        UNCORRECTABLE_HINT == "[This error is not correctable - consider an alternative approach]"
    )


def test_pickle_round_trip_keeps_fields_texts_and_cause(sample: LLMReadableException) -> None:
    copy = pickle.loads(pickle.dumps(sample))
    assert type(copy) is type(sample)
    assert copy.args == sample.args
    for field in sample._fields:
        assert getattr(copy, field) == getattr(sample, field), field
    assert str(copy) == str(sample)
    assert copy.explain_to_llm() == sample.explain_to_llm()
    assert repr(copy) == repr(sample)
    assert type(copy.__cause__) is type(sample.__cause__)
    assert str(copy.__cause__) == str(sample.__cause__)


def test_pickle_replaces_an_unpicklable_cause_with_a_stand_in() -> None:
    class HoldsALock(Exception):
        def __init__(self) -> None:
            super().__init__("socket closed")
            self.lock = threading.Lock()

    exc = nucleo.ExternalServiceException("PubChem", "connection lost", HoldsALock())
    copy = pickle.loads(pickle.dumps(exc))
    assert str(copy.__cause__) == "HoldsALock: socket closed"


class TwoArgs(Exception):
    """Pickles (its args are only the message) but cannot be rebuilt: ``__init__`` needs two."""

    def __init__(self, code: int, msg: str) -> None:
        super().__init__(msg)
        self.code = code


def test_pickle_replaces_a_cause_that_cannot_be_rebuilt(sample: LLMReadableException) -> None:
    sample.__cause__ = TwoArgs(500, "down")
    copy = pickle.loads(pickle.dumps(sample))
    assert type(copy) is type(sample)
    assert copy.explain_to_llm() == sample.explain_to_llm()
    assert type(copy.__cause__) is Exception
    assert str(copy.__cause__) == "TwoArgs: down"


def test_pickle_replaces_a_signals_cause_that_cannot_be_rebuilt() -> None:
    signal = nucleo.OverloadRetryException("busy", retry_after=2.0)
    signal.__cause__ = TwoArgs(503, "overloaded")
    copy = pickle.loads(pickle.dumps(signal))
    assert (type(copy), copy.message, copy.retry_after) == (type(signal), "busy", 2.0)
    assert str(copy.__cause__) == "TwoArgs: overloaded"


@pytest.mark.parametrize("levels", [13, 18])
def test_pickle_keeps_a_deep_chain_at_a_cost_linear_in_its_length(
    levels: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    reductions = 0
    reduce = LLMReadableException.__reduce__

    def counted(self: LLMReadableException) -> tuple[Any, ...]:
        nonlocal reductions
        reductions += 1
        return reduce(self)

    monkeypatch.setattr(LLMReadableException, "__reduce__", counted)
    head: BaseException = TwoArgs(500, "pool exhausted")
    for level in range(levels):
        outer = nucleo.ExternalServiceException("Shop", f"level {level}")
        outer.__cause__ = head
        head = outer
    copy = pickle.loads(pickle.dumps(head))
    assert reductions == levels  # once a level; it was 2**levels - 1, each level pickled twice
    depth = 0
    while isinstance(copy, nucleo.ExternalServiceException):
        assert str(copy) == f"Shop: level {levels - 1 - depth}"
        copy, depth = copy.__cause__, depth + 1
    assert depth == levels
    assert str(copy) == "TwoArgs: pool exhausted"


def test_repr_names_the_class_and_its_fields(sample: LLMReadableException) -> None:
    text = repr(sample)
    assert text.startswith(f"{type(sample).__name__}(")
    for field in sample._fields:
        assert f"{field}=" in text


def test_every_field_is_declared_for_type_checkers(sample: LLMReadableException) -> None:
    # The constructor sets the fields at run time; a type checker knows only those the class
    # (or a base) declares, and `exc.reason` would be an error in a user's typed code.
    declared = set().union(*(vars(c).get("__annotations__", {}) for c in type(sample).__mro__))
    assert set(sample._fields) <= declared


def test_fields_are_attributes_named_after_the_constructor() -> None:
    exc = nucleo.InvalidInputException("query", "", "must not be blank")
    assert (exc.parameter_name, exc.invalid_value, exc.validation_rule) == (
        "query",
        "",
        "must not be blank",
    )
    refusal = nucleo.ProviderRefusalException("m-1", category="violence", explanation="no")
    assert (refusal.model, refusal.category, refusal.explanation) == ("m-1", "violence", "no")
    quota = nucleo.QuotaExhaustedException("anthropic", "team-a")
    assert (quota.provider, quota.account, quota.model, quota.detail) == (
        "anthropic",
        "team-a",
        None,
        None,
    )
    assert nucleo.JobTimeoutException(2.5).budget == 2.5
    assert nucleo.PromptNotFoundException("k").key == "k"
    assert nucleo.ModelNotFoundException("x-1").model_id == "x-1"
    assert nucleo.UpstreamThrottleException("S", "slow down", 3).retry_after == 3
    refused = ConnectionRefusedError("refused")
    assert nucleo.ExternalServiceException("S", "down", refused).cause is refused
    assert nucleo.SystemException("tool", "KeyError", refused).cause is refused
    assert nucleo.SystemException("tool", "KeyError").cause is None

    class StoresItsCause(nucleo.UncorrectableLLMException):  # a tool author's own class
        def __init__(self, message: str, cause: BaseException) -> None:
            super().__init__(message)
            self.cause = cause

    own = StoresItsCause("failed", refused)
    assert own.cause is refused
    assert own.__cause__ is refused

    # A cause of None keeps the exception being handled in the chain, as a constructor's does.
    def handle_then_fail() -> None:
        try:
            raise refused
        except ConnectionRefusedError:
            raise StoresItsCause("failed", None)  # type: ignore[arg-type]  # noqa: B904

    with pytest.raises(StoresItsCause) as raised:
        handle_then_fail()
    assert raised.value.__context__ is refused
    assert not raised.value.__suppress_context__


def test_cause_is_kept() -> None:
    cause = TimeoutError("read timed out")
    assert nucleo.ExternalServiceException("S", "timeout", cause).__cause__ is cause
    assert nucleo.SystemException("c", "boom", cause).__cause__ is cause


def test_system_exception_model_text_is_exact() -> None:
    exc = nucleo.SystemException("order_tool", "KeyError: 'eta' at 0x7f00deadbeef")
    assert exc.llm_message == (
        "A system error occurred in order_tool. The operation could not be completed."
    )
    assert "KeyError" in str(exc)
    assert "KeyError" not in exc.explain_to_llm()


@pytest.mark.parametrize(
    "cls", [nucleo.CorrectableRuntimeLLMException, nucleo.UncorrectableRuntimeLLMException]
)
def test_runtime_family_has_one_message(cls: type[nucleo.LLMReadableRuntimeException]) -> None:
    exc = cls("Invalid result: R-17")
    assert str(exc) == exc.llm_message == "Invalid result: R-17"
    assert exc.message == "Invalid result: R-17"


def test_the_spend_cap_message_is_the_callers_text_exactly() -> None:
    exc = nucleo.SpendCapExceededException("Workflow cap of 5 USD would be crossed")
    assert str(exc) == exc.llm_message == "Workflow cap of 5 USD would be crossed"
    assert exc.message == "Workflow cap of 5 USD would be crossed"


@pytest.mark.parametrize("name", FAMILIES)
def test_families_cannot_be_raised_directly(name: str) -> None:
    with pytest.raises(TypeError, match=r"is a family, not a failure: raise one of its subclasses"):
        getattr(nucleo, name)("something failed")


def test_technical_message_of_invalid_input_leaves_the_value_out() -> None:
    exc = nucleo.InvalidInputException("email", "alice@example.com", "must be a work address")
    assert "alice@example.com" not in str(exc)
    assert "alice@example.com" in exc.llm_message


@pytest.mark.parametrize("name", ["api_key", "token", "password", "client_secret"])
def test_a_credential_parameter_keeps_its_rule_in_the_technical_message(name: str) -> None:
    # The log's masking reads "'api_key': ..." as a credential pair; the rule must survive it.
    exc = nucleo.InvalidInputException(name, "sk-live-0123456789abcdef", "must be a valid key")
    assert str(exc) == f"Invalid input for parameter '{name}' (must be a valid key)"


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("12-AB", '"12-AB"'),
        ("two\r\nlines", '"two\\r\\nlines"'),
        (42, "42"),
        (None, "null"),
        (True, "true"),
        (["a", 1], '["a", 1]'),
        (b"\x00\xff\x10", "<3 bytes of binary data>"),
        (object(), "<a value of type object>"),
        (10**150, "1" + "0" * 150),
        # pytest cannot make an id of it: str() refuses ints of over 4,300 digits.
        pytest.param(10**5000, "<an integer of 5001 digits>", id="int-of-5001-digits"),
        ({(1, 2): "a"}, "<a dict that cannot be shown>"),  # JSON has no tuple keys
    ],
)
def test_invalid_value_is_one_clean_line(value: object, shown: str) -> None:
    exc = nucleo.InvalidInputException("p", value, "must be valid")
    assert exc.llm_message == f"The parameter 'p' got {shown}, which is not valid: must be valid."


def test_huge_value_is_bounded_and_says_how_much_was_cut() -> None:
    exc = nucleo.InvalidInputException("text", "x" * 5_000_000, "must be under 1000 characters")
    assert len(exc.explain_to_llm()) < 600
    assert "... (4999800 more characters cut)" in exc.llm_message


def test_circular_structure_value_does_not_explode() -> None:
    loop: list[object] = []
    loop.append(loop)
    exc = nucleo.InvalidInputException("items", loop, "must be a flat list")
    assert "<a list that cannot be shown>" in exc.llm_message


def test_free_text_fields_are_cleaned_and_bounded() -> None:
    exc = nucleo.ExternalServiceException("Svc\r\n", "line one\r\nline two\x00" + "y" * 10_000)
    text = exc.explain_to_llm()
    assert "\r" not in text
    assert "\x00" not in text
    assert "line one line two" in text
    assert len(text) < 2400


def test_runtime_message_normalises_line_endings() -> None:
    exc = nucleo.UncorrectableRuntimeLLMException("first\r\nsecond\rthird")
    assert str(exc) == exc.llm_message == "first\nsecond\nthird"
    assert exc.message == "first\r\nsecond\rthird"  # the field keeps what was given


SECRET = "sk-live-0123456789abcdefABCDEF"


@pytest.mark.parametrize(
    "make",
    [
        lambda: nucleo.InvalidInputException("api_key", SECRET, "must be a project key"),
        lambda: nucleo.ExternalServiceException("S", f"server said: invalid key {SECRET}"),
        lambda: nucleo.UnauthorizedException("S", f"Authorization: Bearer {SECRET[3:]}"),
        lambda: nucleo.SystemException(
            "c", f"GET https://u:{SECRET}@api.example/x?api_key={SECRET}"
        ),
        lambda: nucleo.UncorrectableRuntimeLLMException(f"token={SECRET[3:]} rejected"),
    ],
)
def test_secrets_never_reach_str_repr_or_explanation(
    make: Callable[[], LLMReadableException],
) -> None:
    exc = make()
    for text in (str(exc), repr(exc), exc.explain_to_llm()):
        assert SECRET[3:] not in text


def test_model_texts_carry_no_object_reprs(sample: LLMReadableException) -> None:
    assert not re.search(r"0x[0-9a-f]{6,}|<\w+ object at", sample.explain_to_llm())


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: nucleo.UpstreamThrottleException("S", "d", -1), "retry_after must be a finite"),
        (lambda: nucleo.UpstreamThrottleException("S", "d", float("nan")), "got nan"),
        (lambda: nucleo.JobTimeoutException(float("inf")), "budget must be a finite"),
        (lambda: nucleo.RateLimitRetryException("slow", retry_after=-0.5), "got -0.5"),
        (lambda: nucleo.RateLimitRetryException("slow", retry_after="30"), "got '30'"),  # type: ignore[arg-type]
        (lambda: nucleo.UpstreamThrottleException("S", "d", True), "got True"),
    ],
)
def test_impossible_numbers_are_refused_clearly(make: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        make()


@pytest.mark.parametrize(
    "cls",
    [
        nucleo.RateLimitRetryException,
        nucleo.OverloadRetryException,
        nucleo.TransientErrorRetryException,
    ],
)
def test_retry_signals_are_not_model_facing(cls: type[nucleo.UpstreamRetryException]) -> None:
    signal = cls("upstream busy", retry_after=2.5)
    assert isinstance(signal, nucleo.UpstreamRetryException)
    assert not isinstance(signal, LLMReadableException)
    assert not hasattr(signal, "explain_to_llm")
    assert (signal.message, signal.retry_after) == ("upstream busy", 2.5)
    copy = pickle.loads(pickle.dumps(signal))
    assert (type(copy), copy.message, copy.retry_after) == (cls, "upstream busy", 2.5)
    assert repr(copy) == f"{cls.__name__}('upstream busy', retry_after=2.5)"


def test_raising_without_a_cause_keeps_the_implicit_context() -> None:
    def call_shop() -> None:
        try:
            raise ConnectionResetError("reset by peer")
        except ConnectionResetError:
            raise nucleo.ExternalServiceException("Shop", "the connection broke")  # noqa: B904

    with pytest.raises(nucleo.ExternalServiceException) as info:
        call_shop()
    assert isinstance(info.value.__context__, ConnectionResetError)
    assert not info.value.__suppress_context__


@pytest.mark.parametrize(
    ("rule", "ends"),
    [
        ("must be 8 digits", "must be 8 digits."),
        ("must be one of: a, b (case matters)", "must be one of: a, b (case matters)."),
        ("must be 8 digits.", "must be 8 digits."),
        ("is required (see the schema.)", "is required (see the schema.)"),
        ("see https://docs.shop.example/orders", "see https://docs.shop.example/orders"),
    ],
)
def test_an_invalid_inputs_text_ends_as_a_sentence_but_never_inside_an_address(
    rule: str, ends: str
) -> None:
    text = nucleo.InvalidInputException("order_number", "12-AB", rule).llm_message
    assert text.endswith(f"which is not valid: {ends}")
