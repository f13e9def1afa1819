"""Vendor profiles: one vendor's documented rules, opted into by a client, and no other's.

Each body follows the vendor page its profile cites (see pytest_nucleo/_http/_profiles/).
"""

from __future__ import annotations

import httpx
import pytest
import respx
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo.testing import text_problems
from pytest_nucleo.testing._contract._wording import enforced_wait

BASE = "https://api.vendor.test"


def failure(
    profile: str | None,
    status: int,
    body: bytes | dict[str, object],
    headers: dict[str, str] | None = None,
    path: str = "/v1/thing",
) -> nucleo.LLMReadableException:
    class Client(nucleo.ServiceClient):
        service_name = "Vendor"
        base_url = BASE

    Client.profile = profile
    content = body if isinstance(body, bytes) else None
    with respx.mock:
        respx.get(f"{BASE}{path}").mock(
            return_value=httpx.Response(
                status,
                headers=headers,
                content=content,
                json=None if isinstance(body, bytes) else body,
            )
        )
        with pytest.raises(nucleo.LLMReadableException) as raised:
            Client().get_json(path)
    return raised.value


# https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api
SECONDARY = {
    "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you "
    "try again. If you reach out to GitHub Support for help, please include the request ID.",
    "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
}


def test_github_a_secondary_limit_without_a_wait_waits_a_minute() -> None:
    exc = failure("github", 403, SECONDARY)
    assert isinstance(exc, nucleo.HttpThrottledStatusException)
    assert exc.retry_after == 60.0
    assert "about 60 seconds" in exc.explain_to_llm()


def test_github_a_secondary_limit_with_its_wait_keeps_that_wait() -> None:
    exc = failure("github", 429, SECONDARY, {"retry-after": "17"})
    assert exc.retry_after == 17.0  # type: ignore[attr-defined]


def test_a_profile_never_changes_another_services_texts() -> None:
    without = failure(None, 403, SECONDARY)
    assert without.retry_after is None  # type: ignore[attr-defined]
    assert "No wait was given" in without.explain_to_llm()


# https://docs.slack.dev/apis/web-api/#responses and the methods' error tables
@pytest.mark.parametrize(
    ("body", "expected", "correctable"),
    [
        ({"ok": False, "error": "channel_not_found"}, nucleo.ResourceNotFoundException, True),
        ({"ok": False, "error": "invalid_auth"}, nucleo.UnauthorizedException, False),
        ({"ok": False, "error": "missing_scope", "needed": "chat:write", "provided": "read"},
         nucleo.UnauthorizedException, False),
        ({"ok": False, "error": "invalid_arguments",
          "response_metadata": {"messages": ["[ERROR] missing required field: channel"]}},
         nucleo.InvalidInputException, True),
        ({"ok": False, "error": "ratelimited"}, nucleo.UpstreamThrottleException, False),
        ({"ok": False, "error": "fatal_error"}, nucleo.ExternalServiceException, False),
    ],
    ids=lambda v: v["error"] if isinstance(v, dict) else None,
)  # fmt: skip
def test_slack_a_200_with_ok_false_is_the_failure_its_error_names(
    body: dict[str, object],
    expected: type[Exception],
    correctable: bool,
    llm_snapshot: SnapshotAssertion,
) -> None:
    exc = failure("slack", 200, body, {"Retry-After": "30"}, path="/api/chat.postMessage")
    assert isinstance(exc, expected)
    assert exc.is_correctable is correctable
    text = exc.explain_to_llm()
    assert text_problems(text, retry_after=enforced_wait(exc)) == []
    assert text == llm_snapshot


def test_slack_a_success_stays_a_success() -> None:
    class Slack(nucleo.ServiceClient):
        service_name = "Slack"
        base_url = BASE
        profile = "slack"

    with respx.mock:
        respx.get(f"{BASE}/api/auth.test").respond(200, json={"ok": True, "user": "bot"})
        assert Slack().get_json("/api/auth.test") == {"ok": True, "user": "bot"}


# https://docs.stripe.com/api/errors and https://docs.stripe.com/declines/codes
def test_stripe_a_declined_card_quotes_its_decline_code(llm_snapshot: SnapshotAssertion) -> None:
    body = {
        "error": {
            "code": "card_declined",
            "decline_code": "insufficient_funds",
            "doc_url": "https://docs.stripe.com/error-codes/card-declined",
            "message": "Your card has insufficient funds.",
            "type": "card_error",
        }
    }
    exc = failure("stripe", 402, body)
    assert isinstance(exc, nucleo.HttpQuotaExhaustedException)
    text = exc.explain_to_llm()
    assert "insufficient_funds" in text
    assert "tell the user" in text
    assert text == llm_snapshot
    assert "insufficient_funds" not in failure(None, 402, body).explain_to_llm()


# https://docs.aws.amazon.com/STS/latest/APIReference/CommonErrors.html
# https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/CommonErrors.html
@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"__type":"com.amazon.coral.service#UnrecognizedClientException","message":"The '
         b'security token included in the request is invalid."}', nucleo.UnauthorizedException),
        (b"<ErrorResponse><Error><Type>Sender</Type><Code>InvalidClientTokenId</Code><Message>"
         b"The security token included in the request is invalid.</Message></Error>"
         b"</ErrorResponse>", nucleo.UnauthorizedException),
        (b'{"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException","message":'
         b'"Requested resource not found: Table: tablename not found"}',
         nucleo.ResourceNotFoundException),
        (b'{"__type":"com.amazon.coral.validate#ValidationException","message":"1 validation '
         b"error detected: Value null at 'tableName' failed to satisfy constraint\"}",
         nucleo.InvalidInputException),
        # In botocore's throttle list, but CloudFormation's for a quota reached: the 400 it is.
        # https://docs.aws.amazon.com/AWSCloudFormation/latest/APIReference/CommonErrors.html
        (b"<ErrorResponse><Error><Type>Sender</Type><Code>LimitExceededException</Code><Message>"
         b"The quota for the resource has already been reached.</Message></Error></ErrorResponse>",
         nucleo.Http400Exception),
    ],
)  # fmt: skip
def test_aws_a_400_reads_by_its_error_code(body: bytes, expected: type[Exception]) -> None:
    assert isinstance(failure("aws", 400, body), expected)


# https://docs.aws.amazon.com/AmazonS3/latest/API/API_CopyObject.html: "a 200 OK response can
# contain either a success or an error"; https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html
S3_SLOW_DOWN = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code><Message>Please '
    b"reduce your request rate.</Message><RequestId>4442587FB7D0A2F9</RequestId></Error>"
)


def test_aws_a_success_with_an_error_document_stays_a_success() -> None:
    class S3(nucleo.ServiceClient):
        service_name = "S3"
        base_url = BASE
        profile = "aws"

    with respx.mock:
        respx.put(f"{BASE}/notes/copy.txt").respond(200, content=S3_SLOW_DOWN)
        assert S3().request("PUT", "/notes/copy.txt").status_code == 200


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (503, nucleo.HttpThrottledStatusException),
        (429, nucleo.Http429Exception),
        (500, nucleo.HttpThrottledStatusException),
    ],
)
def test_aws_a_throttle_code_is_a_throttle_under_any_failing_status(
    status: int, expected: type[Exception]
) -> None:
    # The generic rules read no throttle in these words under a 500; the code says it is one.
    body = b'{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"Rate exceeded"}'
    exc = failure("aws", status, body, {"Retry-After": "5"})
    assert type(exc) is expected
    assert exc.status_code == status  # type: ignore[attr-defined]
    assert exc.retry_after == 5.0  # type: ignore[attr-defined]


# https://cloud.google.com/apis/design/errors#http_mapping
def test_google_a_key_that_is_not_valid_is_a_credentials_failure() -> None:
    body = {
        "error": {
            "code": 400,
            "message": "API key not valid. Please pass a valid API key.",
            "status": "INVALID_ARGUMENT",
            "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                         "reason": "API_KEY_INVALID", "domain": "googleapis.com"}],
        }
    }  # fmt: skip
    assert isinstance(failure("google", 400, body), nucleo.UnauthorizedException)
    assert isinstance(failure(None, 400, body), nucleo.InvalidInputException)


def test_an_unknown_profile_is_refused_with_the_list() -> None:
    class Typo(nucleo.ServiceClient):
        service_name = "Vendor"
        base_url = BASE
        profile = "githb"

    with pytest.raises(ValueError, match=r"Typo.profile must be one of 'aws', 'github'"):
        Typo()


def test_slack_what_the_request_sent_is_masked_and_the_text_bounded() -> None:
    class Slack(nucleo.ServiceClient):
        service_name = "Slack"
        base_url = BASE
        profile = "slack"

    token = "custom-Tok3n-abcdef123456"
    with respx.mock:
        respx.get(f"{BASE}/api/chat.postMessage").respond(
            200, json={"ok": False, "error": token,
                       "response_metadata": {"messages": ["m" * 3000]}}
        )  # fmt: skip
        with pytest.raises(nucleo.LLMReadableException) as raised:
            Slack().get_json("/api/chat.postMessage", params={"token": token})
    text = raised.value.explain_to_llm()
    assert token not in text
    assert len(text) < 600
