"""fails_with, assert_error_result, the hygiene check and the model-text diff."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

import pytest_nucleo as nucleo
from pytest_nucleo.testing import (
    LLMText,
    assert_clean_llm_text,
    assert_error_result,
    fails_with,
    failure_set,
    text_problems,
)

FAIL = pytest.fail.Exception


def not_found() -> None:
    raise nucleo.ResourceNotFoundException("order", "99")


def test_fails_with_exposes_what_the_model_reads() -> None:
    with fails_with(nucleo.ResourceNotFoundException, correctable=True) as failure:
        not_found()
    assert type(failure.exception) is nucleo.ResourceNotFoundException
    assert failure.explanation == failure.exception.explain_to_llm()
    assert isinstance(failure.explanation, LLMText)
    assert failure.llm_message == failure.exception.llm_message


def test_fails_with_accepts_a_parent_class() -> None:
    with fails_with(nucleo.CorrectableLLMException, correctable=True):
        not_found()


def test_fails_with_when_nothing_fails() -> None:
    with (
        pytest.raises(FAIL, match="Expected the call to fail with InvalidInputException, but it"),
        fails_with(nucleo.InvalidInputException),
    ):
        pass


def test_fails_with_a_foreign_exception_says_so_and_shows_the_cause() -> None:
    with pytest.raises(FAIL) as info, fails_with(nucleo.InvalidInputException):
        {}["eta"]
    message = str(info.value)
    assert "the call raised KeyError, which is outside the failure set" in message
    assert "A system error occurred in the tool." in message
    assert "Technical cause: KeyError: 'eta'" in message
    # @llm_errors would make a KeyError a SystemException: no help here, so not suggested.
    assert message.endswith(
        "Technical cause: KeyError: 'eta'\nRaise InvalidInputException where this fails."
    )


def test_fails_with_a_system_exception_says_so() -> None:
    with pytest.raises(FAIL) as info, fails_with(nucleo.ExternalServiceException):
        raise nucleo.SystemException("orders", "KeyError: 'eta'", KeyError("eta"))
    message = str(info.value)
    assert "reached the model as a SystemException" in message
    assert (
        "Technical cause: SystemException: orders: KeyError: 'eta' (caused by KeyError" in message
    )


def test_fails_with_wrong_class_shows_the_model_text() -> None:
    with (
        pytest.raises(
            FAIL,
            match=r"(?s)Expected InvalidInputException, but the call failed with Reso.*No order",
        ),
        fails_with(nucleo.InvalidInputException),
    ):
        not_found()


def test_fails_with_wrong_correctability() -> None:
    with (
        pytest.raises(
            FAIL,
            match="Expected an uncorrectable LLMReadableRuntimeException, but CorrectableRuntimeLLMExc",
        ),
        fails_with(nucleo.LLMReadableRuntimeException, correctable=False),
    ):
        raise nucleo.CorrectableRuntimeLLMException("try again")


def test_fails_with_a_retry_signal() -> None:
    with (
        pytest.raises(FAIL, match="a retry signal escaped: OverloadRetryException"),
        fails_with(nucleo.ExternalServiceException),
    ):
        raise nucleo.OverloadRetryException("busy")


def test_fails_with_lets_interrupts_through() -> None:
    with pytest.raises(KeyboardInterrupt), fails_with(nucleo.ExternalServiceException):
        raise KeyboardInterrupt


def test_fails_with_a_class_outside_the_set_lists_the_set() -> None:
    with pytest.raises(TypeError) as info:
        fails_with(KeyError)  # type: ignore[arg-type]
    message = str(info.value)
    assert message.startswith(
        "fails_with() expects a class of the failure set, got <class 'KeyError'>"
    )
    for name in ("InvalidInputException", "SystemException", "UpstreamThrottleException"):
        assert name in message
    assert set(failure_set()) >= {"InvalidInputException", "LLMReadableException"}


def test_fails_with_an_impossible_correctability() -> None:
    with pytest.raises(ValueError, match="InvalidInputException is always correctable"):
        fails_with(nucleo.InvalidInputException, correctable=False)
    with pytest.raises(TypeError, match="correctable must be True, False or None, got 'yes'"):
        fails_with(nucleo.InvalidInputException, correctable="yes")  # type: ignore[arg-type]


@dataclass
class Result:
    is_error: bool
    text: str
    exception: BaseException | None = None


def test_assert_error_result() -> None:
    exc = nucleo.ResourceNotFoundException("order", "99")
    failure = assert_error_result(
        Result(True, exc.explain_to_llm(), exc), nucleo.ResourceNotFoundException, correctable=True
    )
    assert failure.exception is exc
    with pytest.raises(FAIL, match=r"but the tool succeeded\. The model read:"):
        assert_error_result(Result(False, '{"id": 1}'), nucleo.ResourceNotFoundException)
    with pytest.raises(FAIL, match="The result's text is not its exception's explain_to_llm"):
        assert_error_result(Result(True, "other", exc), nucleo.ResourceNotFoundException)
    with pytest.raises(FAIL, match="Expected ExternalServiceException, but the call failed with"):
        assert_error_result(
            Result(True, exc.explain_to_llm(), exc), nucleo.ExternalServiceException
        )


@pytest.mark.nucleo(expect_leaks=True)
def test_assert_error_result_on_the_runners_result() -> None:
    def get_order(number: str) -> None:
        raise nucleo.ResourceNotFoundException("order", number)

    result = nucleo.run_tool(get_order, {"number": "99"})
    failure = assert_error_result(result, nucleo.ResourceNotFoundException, correctable=True)
    assert failure.explanation == result.text
    leaked = nucleo.run_tool(lambda number: {}[number], {"number": "99"})
    with pytest.raises(FAIL, match="reached the model as a SystemException"):
        assert_error_result(leaked, nucleo.ResourceNotFoundException)


# --- hygiene -------------------------------------------------------------------------------


def test_clean_texts_pass() -> None:
    for make in (
        lambda: nucleo.InvalidInputException("q", "x\r\ny", "must be one line"),
        lambda: nucleo.SystemException("c", "Traceback (most recent call last): ..."),
        lambda: nucleo.ExternalServiceException("S", "GET https://u:p@x.example/a?api_key=k"),
    ):
        assert_clean_llm_text(make().explain_to_llm())


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "it is empty"),
        (
            'Traceback (most recent call last):\n  File "t.py", line 3, in f',
            "it holds a stack trace",
        ),
        (
            "failed: <app.Client object at 0x7f3a2b1c9d00>",
            "it holds an object repr or memory address",
        ),
        ("two\r\nlines", "it holds the control character U+000D at offset 3"),
        ("bell\x07", "it holds the control character U+0007"),
        ("order \u202e99", "it holds the control character U+202E at offset 6"),
        ("x" * 9000, "it is 9000 characters long, over the bound of 8000"),
        ("key sk-abcdefghijklmnopqrstuvwx rejected", "it holds a secret-looking token"),
        ("see https://api.example/x?token=abc", "or a URL with userinfo or a query string"),
        (
            "Shop failed: <!DOCTYPE html><html><head><style>p{}</style>",
            "it holds markup ('<!DOCTYPE')",
        ),
        ("the page said <p>Bad gateway</p>", "it holds markup ('<p>')"),
        ('upstream sent <script type="text/javascript">', "it holds markup ('<script type="),
        ("a page: <!-- generated by nginx -->", "it holds markup ('<!--')"),
        ("body <?xml version='1.0'?><error/>", "it holds markup ('<?xml')"),
        ("closing </BODY> only", "it holds markup ('</BODY>')"),
    ],
)
def test_each_hygiene_problem_is_named(text: str, problem: str) -> None:
    with pytest.raises(FAIL) as info:
        assert_clean_llm_text(text)
    assert problem in str(info.value)
    assert "The model text is not clean:" in str(info.value)


@pytest.mark.parametrize(
    "text",
    [
        "Invalid input for parameter 'limit': must be < 100 and > 0",
        "Use the form <owner>/<repo>, such as octocat/hello-world",
        "a <= b, x<y, arrows <- and <=>, generics List<int>",
        "the field <email> is required",
    ],
)
def test_a_quoted_angle_bracket_is_not_markup(text: str) -> None:
    assert_clean_llm_text(text)


def test_a_secret_planted_twice_is_listed_once() -> None:
    problems = text_problems("echoed canary-4711", secrets=["canary-4711", "canary-4711"])
    assert problems == ["it holds 1 planted secret(s) (cana...)"]


def test_planted_secrets_are_found() -> None:
    with pytest.raises(FAIL, match=re.escape("it holds 1 planted secret(s) (cana...)")):
        assert_clean_llm_text("the server echoed canary-4711", secrets=["canary-4711"])


# --- the model-text diff -------------------------------------------------------------------


def test_a_changed_snapshot_keeps_syrupys_own_diff(pytester: pytest.Pytester) -> None:
    source = """
        import pytest_nucleo as nucleo
        from pytest_nucleo.testing import fails_with

        def test_text(llm_snapshot):
            with fails_with(nucleo.ResourceNotFoundException) as failure:
                raise nucleo.ResourceNotFoundException("order", "{number}")
            assert failure.explanation == llm_snapshot
        """
    pytester.makepyfile(source.format(number="99"))
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=1)
    pytester.makepyfile(source.format(number="98"))
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*[[]+ received[]] == [[]- snapshot[]]*"])
    assert "model texts differ" not in result.stdout.str()


def test_model_text_comparison_shows_a_line_diff(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest_nucleo as nucleo
        from pytest_nucleo.testing import fails_with

        def test_text():
            with fails_with(nucleo.ResourceNotFoundException) as failure:
                raise nucleo.ResourceNotFoundException("order", "99")
            assert failure.explanation == "No order 99.\\n[This error may be correctable - you can retry with different parameters or try a different approach]"

        def test_plain_strings_keep_pytest_diff():
            assert "abc" == "abd"
        """
    )
    # -rN: no short summary, which repeats messages as far as the terminal is wide.
    result = pytester.runpytest("-rN")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*model texts differ (- expected, + actual):",
            "*- No order 99.",
            '*+ No order was found with the identifier "99"*',
        ]
    )
    assert result.stdout.str().count("model texts differ") == 1


def test_failure_messages_mask_what_the_cause_carried() -> None:
    secret = "sk-proj-0123456789abcdefghijkl"

    def client_call() -> None:
        try:
            raise ValueError(f"GET https://api.example/x?api_key={secret} failed")
        except ValueError as exc:
            raise RuntimeError(f"client said {secret}") from exc

    with pytest.raises(FAIL) as info, fails_with(nucleo.ExternalServiceException):
        client_call()
    assert secret not in str(info.value)
    assert "Technical cause: RuntimeError" in str(info.value)


def test_fails_with_match_is_searched_in_the_model_text() -> None:
    with fails_with(nucleo.ResourceNotFoundException, match=r"identifier \"99\"") as failure:
        not_found()
    assert failure.explanation.startswith("No order was found")
    with (
        pytest.raises(FAIL) as info,
        fails_with(nucleo.ResourceNotFoundException, match="^identifier"),
    ):
        not_found()  # re.search, but anchored: the text starts otherwise
    assert str(info.value).splitlines()[:3] == [
        "ResourceNotFoundException was raised, but the model text does not match the pattern.",
        "Pattern: '^identifier'",
        "Model text:",
    ]


@pytest.mark.parametrize(
    ("match", "error", "message"),
    [
        (
            "order (",
            ValueError,
            "match='order (' is not a valid regular expression (missing ), unterminated "
            "subpattern at position 6); to find the text as it is written, pass "
            "match=re.escape(...)",
        ),
        (
            b"order",
            TypeError,
            "match must be a regular expression (a str or re.compile(...) of a str) searched in "
            "the model text, got b'order'",
        ),
        (
            re.compile(b"order"),
            TypeError,
            "match must be a regular expression (a str or re.compile(...) of a str) searched in "
            "the model text, got re.compile(b'order')",
        ),
    ],
)
def test_fails_with_a_bad_pattern_says_what_to_pass(
    match: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as caught:
        fails_with(nucleo.ResourceNotFoundException, match=match)  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_a_text_that_omits_the_wait_its_response_states_is_flagged() -> None:
    # The response said Retry-After: 30; a text that drops it leaves the model guessing.
    answer = nucleo.http_exception("Shop", "/orders", 503, b"Down", {"Retry-After": "30"})
    assert text_problems(answer.explain_to_llm(), retry_after=answer.retry_after) == []  # type: ignore[attr-defined]
    dropped = (
        "The external service Shop is unavailable for /orders (HTTP 503 Service Unavailable). "
        "Use another way, or come back later."
    )
    problems = text_problems(dropped, retry_after=answer.retry_after)  # type: ignore[attr-defined]
    assert [p.rule for p in problems] == ["wait"]
    assert "states no wait where 30 seconds are enforced" in problems[0]


def test_a_quota_text_that_says_come_back_later_is_flagged() -> None:
    quota = (
        "The service OpenAI refused /v1/chat because the account's quota or credit for it is "
        "used up (HTTP 429 Too Many Requests). Use another way, or come back later."
    )
    problems = text_problems(quota, retry_after=None)
    assert [p.rule for p in problems] == ["who acts"]
    assert "only the user can act" in problems[0]
    answer = nucleo.http_exception(
        "OpenAI", "/v1/chat", 429, b'{"error": {"code": "insufficient_quota"}}'
    )
    assert text_problems(answer.explain_to_llm(), retry_after=None) == []
    # A throttle quoting a service's "Quota exceeded" is no quota text: the quote is its words.
    throttle = nucleo.http_exception(
        "Google", "/v1/x", 429, b'{"error": {"message": "Quota exceeded for quota metric"}}'
    )
    assert text_problems(throttle.explain_to_llm()) == []
