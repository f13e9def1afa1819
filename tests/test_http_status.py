"""The status table and its carriers."""

from __future__ import annotations

import inspect
import pickle
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo import (
    CORRECTABLE_HINT,
    HTTP_STATUS_TABLE,
    UNCORRECTABLE_HINT,
    HttpErrorResponse,
    HttpThrottledStatusException,
    HttpUnmappedStatusException,
    LLMReadableCheckedException,
    http_exception,
    raise_for_status,
)
from pytest_nucleo._http._status import status_line

URL = "https://app:pw-9f8e7d@api.example/v1/orders/00000099?api_key=qk-1234567890&page=2#x"

# One realistic answer per carrier class: status, body, headers.
ANSWERS: dict[str, tuple[int, bytes, dict[str, str]]] = {
    "Http400Exception": (400, b'{"error": "order_number must be 8 digits"}', {}),
    "Http401Exception": (401, b'{"message": "Bad credentials"}', {}),
    "Http403Exception": (403, b'{"message": "Must have admin rights to Repository."}', {}),
    "Http404Exception": (404, b'{"error": "no order 00000099"}', {}),
    "Http413Exception": (413, b"Request body larger than 1 MB", {}),
    "Http422Exception": (422, b'{"detail": [{"loc": ["qty"], "msg": "must be > 0"}]}', {}),
    "Http429Exception": (429, b'{"error": "Too many requests"}', {"Retry-After": "30"}),
    "Http500Exception": (500, b"Internal Server Error", {}),
    "Http502Exception": (
        502,
        b"<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad "
        b"Gateway</h1></center><hr><center>nginx</center></body></html>",
        {"Content-Type": "text/html"},
    ),
    "Http503Exception": (503, b"Down for maintenance", {"Retry-After": "120"}),
    "HttpUnmappedStatusException": (418, b"I'm a teapot", {}),
    "HttpThrottledStatusException": (
        403,
        b'{"message": "You have exceeded a secondary rate limit. Please wait a few minutes '
        b'before you try again.", "documentation_url": "https://docs.github.com/rest"}',
        {"Retry-After": "60"},
    ),
    # OpenAI's insufficient_quota, as https://platform.openai.com/docs/guides/error-codes shows it.
    "HttpQuotaExhaustedException": (
        429,
        b'{"error": {"message": "You exceeded your current quota, please check your plan and '
        b'billing details.", "type": "insufficient_quota", "param": null, "code": '
        b'"insufficient_quota"}}',
        {},
    ),
}

CARRIERS: dict[str, Callable[[], LLMReadableCheckedException]] = {
    name: (lambda answer=answer: http_exception("Shop API", URL, *answer))
    for name, answer in ANSWERS.items()
}
"""A sample of every carrier class; tests/test_exceptions.py leaves these to this module."""

MEANING = {
    400: nucleo.InvalidInputException,
    413: nucleo.InvalidInputException,
    422: nucleo.InvalidInputException,
    401: nucleo.UnauthorizedException,
    403: nucleo.UnauthorizedException,
    404: nucleo.ResourceNotFoundException,
    429: nucleo.UpstreamThrottleException,
    500: nucleo.ExternalServiceException,
    502: nucleo.ExternalServiceException,
    503: nucleo.ExternalServiceException,
}


def test_every_exported_carrier_has_a_sample() -> None:
    exported = {
        name
        for name in nucleo.__all__
        if isinstance(getattr(nucleo, name), type)
        and issubclass(getattr(nucleo, name), LLMReadableCheckedException)
        and issubclass(getattr(nucleo, name), HttpErrorResponse)
    }
    assert exported == set(CARRIERS)
    assert len(exported) == 13  # the eleven of the table, the throttled-status and quota ones


@pytest.fixture(params=sorted(CARRIERS))
def carrier(request: pytest.FixtureRequest) -> LLMReadableCheckedException:
    exc = CARRIERS[request.param]()
    assert type(exc).__name__ == request.param
    return exc


def test_carrier_snapshot(
    carrier: LLMReadableCheckedException, llm_snapshot: SnapshotAssertion
) -> None:
    assert carrier.explain_to_llm() == llm_snapshot


def test_carrier_text_carries_status_service_endpoint_and_excerpt(
    carrier: LLMReadableCheckedException,
) -> None:
    assert isinstance(carrier, HttpErrorResponse)
    text = carrier.explain_to_llm()
    assert f"HTTP {carrier.status_code}" in text
    assert "Shop API" in text
    assert "/v1/orders/00000099" in text
    assert carrier.response_body
    # The text quotes the words of the excerpt: all of a short body, the message of a long one.
    quoted = re.search(r'It said: "(.*)"\.', text)
    assert quoted is not None
    assert quoted.group(1) in carrier.response_body
    hint = CORRECTABLE_HINT if carrier.is_correctable else UNCORRECTABLE_HINT
    assert text == f"{carrier.llm_message}\n{hint}"


def test_carrier_fields(carrier: LLMReadableCheckedException) -> None:
    assert isinstance(carrier, HttpErrorResponse)
    assert carrier.service == "Shop API"
    assert carrier.endpoint == "/v1/orders/00000099"
    status, _, headers = ANSWERS[type(carrier).__name__]
    assert carrier.status_code == status
    expected_wait = float(headers["Retry-After"]) if "Retry-After" in headers else None
    assert carrier.retry_after == expected_wait


def test_carrier_pickles_with_its_fields(carrier: LLMReadableCheckedException) -> None:
    copy = pickle.loads(pickle.dumps(carrier))
    assert type(copy) is type(carrier)
    assert copy.__dict__ == carrier.__dict__
    assert (str(copy), repr(copy), copy.explain_to_llm()) == (
        str(carrier),
        repr(carrier),
        carrier.explain_to_llm(),
    )


def test_carrier_keeps_the_fields_of_its_meaning(carrier: LLMReadableCheckedException) -> None:
    """Carriers set what their meaning's __init__ would set without calling it (it would mask
    texts only to have them replaced); its fields must still be there, with these values."""
    assert isinstance(carrier, HttpErrorResponse)
    details = f"{status_line(carrier.status_code)} at {carrier.endpoint}"
    given = {
        "service_name": carrier.service,
        "error_details": details,
        "reason": details,
        "retry_after": carrier.retry_after,
        "parameter_name": "request",
        "invalid_value": carrier.endpoint,
        "validation_rule": details,
        "resource_type": "resource",
        "identifier": carrier.endpoint,
    }
    meaning = next(c for c in type(carrier).__mro__ if c.__module__ == "pytest_nucleo._exceptions")
    names = [n for n in inspect.signature(meaning).parameters if n not in ("cause", "llm_message")]
    reference = meaning(*(given[name] for name in names))
    for name in reference._fields:
        assert name in vars(carrier)
        assert getattr(carrier, name) == getattr(reference, name)
    assert carrier.__cause__ is reference.__cause__ is None
    assert carrier.__suppress_context__ == reference.__suppress_context__


def test_carrier_leaks_nothing_from_the_url(carrier: LLMReadableCheckedException) -> None:
    for text in (str(carrier), repr(carrier), carrier.explain_to_llm()):
        for secret in ("pw-9f8e7d", "qk-1234567890", "page=2", "api.example", "#x"):
            assert secret not in text


def test_repr_shows_the_http_fields(carrier: LLMReadableCheckedException) -> None:
    text = repr(carrier)
    for field in ("service=", "endpoint=", "response_body=", "retry_after=", "status_code="):
        assert field in text


def test_explain_to_llm_is_still_defined_once() -> None:
    for name in CARRIERS:
        assert "explain_to_llm" not in vars(getattr(nucleo, name))


def test_the_table_covers_every_status_once() -> None:
    carriers = {getattr(nucleo, name) for name in CARRIERS}
    for status in range(100, 600):
        if 200 <= status <= 299:
            with pytest.raises(ValueError, match=f"HTTP {status} is a success, not a failure"):
                http_exception("S", "/x", status, b"")
            assert raise_for_status("S", "/x", status, b"") is None
            continue
        exc = http_exception("S", "/x", status, b"")
        matching = [cls for cls in carriers if type(exc) is cls]
        assert len(matching) == 1, status
        expected = HTTP_STATUS_TABLE.get(status, HttpUnmappedStatusException)
        if status == 402:  # Payment Required: only the user can act
            expected = nucleo.HttpQuotaExhaustedException
        assert type(exc) is expected
        assert exc.status_code == status  # type: ignore[attr-defined]
        with pytest.raises(expected):
            raise_for_status("S", "/x", status, b"")


@pytest.mark.parametrize("status", sorted(MEANING))
def test_each_class_has_the_meaning_of_its_status(status: int) -> None:
    cls = HTTP_STATUS_TABLE[status]
    assert issubclass(cls, MEANING[status])
    assert issubclass(cls, HttpErrorResponse)
    assert cls.is_correctable is (status in (400, 404, 413, 422))  # type: ignore[attr-defined]


def test_throttled_and_unmapped_classes_have_their_meaning() -> None:
    assert issubclass(HttpThrottledStatusException, nucleo.UpstreamThrottleException)
    assert issubclass(HttpUnmappedStatusException, nucleo.ExternalServiceException)
    assert not issubclass(HttpUnmappedStatusException, nucleo.UpstreamThrottleException)


def test_404_keeps_its_parents_guidance() -> None:
    text = http_exception("PubChem", "/compound/cid/999", 404, b"").explain_to_llm()
    assert "try another one, or use another tool" in text
    assert "Its answer had no body." in text


def test_redirects_and_informational_statuses_that_reach_us_are_unexpected() -> None:
    for status in (101, 301, 302, 304):
        with pytest.raises(HttpUnmappedStatusException, match=f"HTTP {status}"):
            raise_for_status("S", "/x", status, b"")


# Real throttle answers, every one detected.
NOW = datetime.now(UTC)
IN_A_MINUTE = (NOW + timedelta(seconds=90)).strftime("%a, %d %b %Y %H:%M:%S GMT")
THROTTLE_ANSWERS = [
    pytest.param(429, b"", {}, id="429-bare"),
    pytest.param(429, b'{"error":"rate_limited"}', {"Retry-After": "17"}, id="429-seconds"),
    pytest.param(429, b"slow down", {"Retry-After": IN_A_MINUTE}, id="429-date"),
    pytest.param(
        403,
        b'{"message":"API rate limit exceeded for 203.0.113.7. (But here\'s the good news: '
        b'Authenticated requests get a higher rate limit.)","documentation_url":'
        b'"https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting"}',
        {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1700000000"},
        id="github-primary",
    ),
    pytest.param(
        403,
        b'{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before '
        b'you try again.","documentation_url":"https://docs.github.com/rest"}',
        {"retry-after": "60"},
        id="github-secondary",
    ),
    pytest.param(
        403,
        b'{"message":"You have triggered an abuse detection mechanism. Please wait a few minutes '
        b'before you try again."}',
        {},
        id="github-abuse",
    ),
    pytest.param(403, b"", {"X-RateLimit-Remaining": "0"}, id="github-header-only"),
    pytest.param(
        403,
        b'{"error":{"code":403,"message":"Rate Limit Exceeded","errors":[{"message":"Rate Limit '
        b'Exceeded","domain":"usageLimits","reason":"rateLimitExceeded"}]}}',
        {},
        id="google-rateLimitExceeded",
    ),
    pytest.param(
        403,
        b'{"error":{"errors":[{"domain":"usageLimits","reason":"userRateLimitExceeded"}]}}',
        {},
        id="google-userRateLimitExceeded",
    ),
    pytest.param(
        400,
        b"<ErrorResponse><Error><Type>Sender</Type><Code>Throttling</Code><Message>Rate exceeded"
        b"</Message></Error></ErrorResponse>",
        {},
        id="aws-throttling-400",
    ),
    pytest.param(
        400,
        b'{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"Rate of '
        b'requests exceeds the allowed throughput."}',
        {},
        id="aws-throttlingexception",
    ),
    pytest.param(
        503,
        b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>",
        {},
        id="aws-s3-slowdown",
    ),
    pytest.param(
        403,
        b'<?xml version="1.0"?><fault xmlns="http://ops.epo.org"><code>CLIENT.RobotDetected'
        b"</code><message>Recognized as a robot</message></fault>",
        {},
        id="epo-robot",
    ),
    pytest.param(
        403,
        b"<html><head><title>Just a moment...</title></head><body>Please complete the CAPTCHA "
        b"to continue.</body></html>",
        {"Content-Type": "text/html"},
        id="captcha-page",
    ),
    pytest.param(401, b'{"error":"Too Many Requests"}', {}, id="401-too-many"),
]


@pytest.mark.parametrize(("status", "body", "headers"), THROTTLE_ANSWERS)
def test_throttle_answers_are_detected(status: int, body: bytes, headers: dict[str, str]) -> None:
    exc = http_exception("Svc", "/x", status, body, headers)
    assert isinstance(exc, nucleo.UpstreamThrottleException)
    assert isinstance(exc, HttpErrorResponse)
    assert exc.status_code == status  # the true status, even when the body changed the meaning
    assert "throttling" in exc.explain_to_llm()


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        # Words no rule reads as a throttle, under a status the throttle rule does not read.
        (400, b"<Error><Code>EC2ThrottledException</Code></Error>", HttpThrottledStatusException),
        (500, b"Rate exceeded", HttpThrottledStatusException),
        # Words of a quota used up: the caller knows the answer is a throttle all the same.
        (403, b"You exceeded your current quota, please check your plan and billing details.",
         HttpThrottledStatusException),
        (429, b"You exceeded your current quota, please check your plan and billing details.",
         nucleo.Http429Exception),
        (402, b"", HttpThrottledStatusException),
    ],
)  # fmt: skip
def test_an_answer_the_caller_knows_is_a_throttle_reads_as_one(
    status: int, body: bytes, expected: type[Exception]
) -> None:
    exc = http_exception("Svc", "/x", status, body, {"retry-after": "7"}, throttled=True)
    assert type(exc) is expected
    assert exc.status_code == status  # type: ignore[attr-defined]
    assert exc.retry_after == 7.0  # type: ignore[attr-defined]
    assert "throttling" in exc.explain_to_llm()
    # With no wait stated too, where a quota's words would read as a quota used up.
    assert type(http_exception("Svc", "/x", status, body, throttled=True)) is expected
    assert type(http_exception("Svc", "/x", status, body)) is not expected  # without it
    with pytest.raises(ValueError, match="is a success"):
        http_exception("Svc", "/x", 200, body, throttled=True)


def test_a_throttle_answer_keeps_the_wait_it_asked_for() -> None:
    by_seconds = http_exception("Svc", "/x", 403, b"rate limit", {"Retry-After": "60"})
    assert by_seconds.retry_after == 60.0  # type: ignore[attr-defined]
    # The date is made here, not at import: a long run would otherwise eat into the 90 seconds.
    in_90_seconds = (datetime.now(UTC) + timedelta(seconds=90)).strftime(
        "%a, %d %b %Y %H:%M:%S GMT"
    )
    by_date = http_exception("Svc", "/x", 429, b"", {"Retry-After": in_90_seconds})
    assert 60 <= by_date.retry_after <= 90  # type: ignore[attr-defined]
    unavailable = http_exception("Svc", "/x", 503, b"maintenance", {"retry-after": "120"})
    assert type(unavailable) is nucleo.Http503Exception
    assert unavailable.retry_after == 120.0  # type: ignore[attr-defined]
    assert "This tool will not work for about 2 minutes" in unavailable.explain_to_llm()


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (403, b'{"message": "permission denied"}'),
        (403, b'{"message":"Resource not accessible by integration"}'),
        (403, b"<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>"),
        (
            403,
            b'{"error":{"code":403,"status":"PERMISSION_DENIED","message":"The caller does not '
            b'have permission"}}',
        ),
        (401, b'{"message":"Bad credentials"}'),
        (403, b""),
    ],
    ids=[
        "permission-denied",
        "github-integration",
        "aws-access-denied",
        "google-permission",
        "bad-credentials",
        "empty",
    ],
)
def test_a_plain_refusal_stays_unauthorized(status: int, body: bytes) -> None:
    exc = http_exception("Svc", "/x", status, body, {"x-ratelimit-remaining": "4999"})
    assert type(exc) is HTTP_STATUS_TABLE[status]
    assert isinstance(exc, nucleo.UnauthorizedException)
    assert not isinstance(exc, nucleo.UpstreamThrottleException)


@pytest.mark.parametrize(
    "body",
    [
        b'{"error": "field rate_limit must be an integer"}',
        b'{"error": "captcha_token is required"}',
        b'{"message": "quota_exceeded_action must be one of: stop, warn"}',
        b'{"errors": [{"field": "throttling_rate", "message": "must be positive"}]}',
        b"slow_down_factor is out of range",
        b'{"error": "rate_limited must be true or false"}',
        b"too_many_requests_action is required",
        b"Throttling: must be one of on, off",
        b"'Throttling' must be one of on, off",
    ],
)
def test_a_400_naming_a_field_stays_the_models_mistake(body: bytes) -> None:
    # THROTTLE_PATTERNS would call each of these a throttle; on a 400 that would tell the
    # model not to fix the field at fault.
    exc = http_exception("Svc", "/x", 400, body)
    assert type(exc) is nucleo.Http400Exception
    assert exc.is_correctable
    assert nucleo.body_says_throttled(body)  # the rule for 401/403/503 would have fired
    assert type(http_exception("Svc", "/x", 403, body)) is nucleo.HttpThrottledStatusException


@pytest.mark.parametrize(
    "body",
    [
        b"<Error><Code>Throttling</Code><Message>Rate exceeded</Message></Error>",
        b'{"__type": "com.amazonaws.kinesis#LimitExceededException#ThrottlingException"}',
        b'{"code": "RequestLimitExceeded", "message": "Request limit exceeded."}',
        b'{"__type": "TooManyRequestsException"}',
        b"Rate limit exceeded, retry later",
        b'{"ok": false, "error": "ratelimited"}',  # Slack
        b'{"error": "rate_limited"}',
        b'{"error": {"code": "RATE_LIMIT_EXCEEDED"}}',
        b'{"error": {"errors": [{"reason": "rateLimitExceeded"}]}}',  # Google
        b'{"error": "too_many_requests"}',
        b"Too Many Requests",
    ],
)
def test_a_400_that_says_a_limit_was_hit_is_a_throttle(body: bytes) -> None:
    exc = http_exception("Svc", "/x", 400, body)
    assert type(exc) is nucleo.HttpThrottledStatusException
    assert exc.status_code == 400


def test_the_fast_throttle_check_agrees_with_the_400_patterns() -> None:
    import random

    from pytest_nucleo._http._body_rules import _THROTTLE_400

    rng = random.Random(9)
    pieces = ["rate", "limit", "ed", "exceeded", "reached", "too", "many", "requests",
              "Throttling", "throttling", "Exception", "SlowDown", "slow", "down", "Request",
              "LimitExceeded", "TooManyRequests", " ", "_", "-", "#", "x", "RATE", '"',
              "<Code>", "</Code>", "Throttled", "RequestThrottled", "\t", "\x1c", "'"]  # fmt: skip
    for _ in range(30_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
        expected = bool(_THROTTLE_400.search(text))
        assert nucleo.body_says_throttled(text.encode(), status=400) == expected, text


def test_the_throttle_rule_reads_only_a_bounded_prefix() -> None:
    late = b"x " * 10_000 + b"rate limit exceeded"
    assert type(http_exception("Svc", "/x", 403, late)) is nucleo.Http403Exception
    assert nucleo.body_says_throttled(b"Rate-Limit reached")
    assert not nucleo.body_says_throttled(b"")
    assert not nucleo.body_says_throttled(None)


def test_headers_as_pairs_take_the_first_retry_after() -> None:
    pairs = [("Retry-After", "5"), ("retry-after", "500")]
    assert http_exception("S", "/x", 429, b"", pairs).retry_after == 5.0  # type: ignore[attr-defined]
    malformed_first = [("Retry-After", "soon"), ("Retry-After", "5")]
    exc = http_exception("S", "/x", 429, b"", malformed_first)
    assert exc.retry_after is None  # type: ignore[attr-defined]


def test_known_values_are_masked_in_the_body_and_the_endpoint() -> None:
    exc = http_exception(
        "S", "/v1/echo/my-plain-key-42", 400, b"you sent my-plain-key-42", known=["my-plain-key-42"]
    )
    for text in (str(exc), repr(exc), exc.explain_to_llm()):
        assert "my-plain-key-42" not in text


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: nucleo.Http404Exception("S", "/x", "", None, 500), "carries status 404, not 500"),
        (lambda: nucleo.HttpUnmappedStatusException("S", "/x"), "needs the status_code"),
        (lambda: nucleo.HttpThrottledStatusException("S", "/x", "", None, 200), "is a success"),
        (lambda: nucleo.Http500Exception("S", "/x", "", -1.0), "retry_after must be a finite"),
        (lambda: nucleo.Http429Exception("S", "/x", "", float("nan")), "got nan"),
    ],
    ids=["wrong-status", "missing-status", "success-status", "negative-wait", "nan-wait"],
)
def test_impossible_carriers_are_refused_clearly(make: Callable[[], object], message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=re.escape(message)):
        make()


def test_a_carrier_built_by_hand_bounds_and_cleans_what_it_is_given() -> None:
    exc = nucleo.Http404Exception("PubChem", "https://h.example/cid/9?key=k", "x\r\n" * 100_000)
    assert exc.endpoint == "/cid/9"
    assert len(exc.response_body) <= 1000
    assert "\r" not in exc.explain_to_llm()
    assert exc.status_code == 404
    assert exc.retry_after is None


def test_the_fast_throttle_check_agrees_with_the_patterns() -> None:
    """body_says_throttled skips the regexes when no literal core is present; over random
    ASCII made of pattern pieces, it must agree with the regexes run alone."""
    import random

    from pytest_nucleo._http._body_rules import _THROTTLE

    rng = random.Random(8)
    pieces = ["rate", "limit", "too", "many", "requests", "throttl", "slow", "down", "quota",
              "exceeded", "robot", "detect", "captcha", "abuse", "detection", "are you a",
              "not a", "daily", "user", "request", " ", "_", "-", "\t", "  ", "R", "x", ".",
              "reduce your request rate", "RATE", "Limit"]  # fmt: skip
    for _ in range(30_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
        assert nucleo.body_says_throttled(text.encode()) == bool(_THROTTLE.search(text)), text
