"""boto3 and google-api-python-client through ``fake_upstream``: the SDK's own exception, made
from an answer the fake sent, read with no hand mapping.

botocore sends its requests with urllib3, and google-api-python-client with httplib2: the
fake answers both. Each answer follows the vendor's documentation (the corpus's entries cite
their pages). Unlike ``test_sdk_readers.py`` (botocore's Stubber, the library's own
``HttpMockSequence``), here the raw body the service sent is what the reader quotes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from _service_corpus_a import CORPUS_A

import pytest_nucleo as nucleo
from pytest_nucleo.testing import text_problems
from pytest_nucleo.testing._contract._wording import enforced_wait

AWS_KEY_ID = (
    "AKIAIOSFODNN7EXAMPLE"  # https://docs.aws.amazon.com/IAM/latest/UserGuide/security-creds.html
)
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GOOGLE_KEY = "AIzaSyD-canary-books-key-0000000000000"
SECRETS = (AWS_KEY_ID, AWS_SECRET, GOOGLE_KEY)

NOTE = "https://acme-notes.s3.amazonaws.com/notes/2026-12-07.txt"
DYNAMODB = "https://dynamodb.us-east-1.amazonaws.com/"
VOLUME = "https://books.googleapis.com/books/v1/volumes/zyTCAlFPjgYC"


def documented(case_id: str) -> Any:
    return next(entry for entry in CORPUS_A if entry.id == case_id)


def failure_of(call: Callable[[], object], service: str | None = None) -> Any:
    @nucleo.llm_errors(service=service)
    def tool() -> object:
        return call()

    with pytest.raises(nucleo.LLMReadableException) as raised:
        tool()
    text = raised.value.explain_to_llm()
    assert not any(secret in text for secret in SECRETS)
    assert text_problems(text, secrets=SECRETS, retry_after=enforced_wait(raised.value)) == []
    return raised.value


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], Any]:
    boto3 = pytest.importorskip("boto3", reason="needs boto3: pip install 'pytest-nucleo[aws]'")
    from botocore.config import Config

    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")

    def client(service: str) -> Any:
        return boto3.client(
            service,
            region_name="us-east-1",
            aws_access_key_id=AWS_KEY_ID,
            aws_secret_access_key=AWS_SECRET,
            # One attempt: botocore would retry a throttle or a 5xx, sleeping between tries.
            config=Config(retries={"total_max_attempts": 1}, read_timeout=5),
        )

    return client


# https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html
@pytest.mark.parametrize(
    ("case", "cls", "status"),
    [
        ("aws-s3-no-such-key", nucleo.Http404Exception, 404),
        ("aws-s3-slow-down", nucleo.HttpThrottledStatusException, 503),
        ("aws-s3-access-denied", nucleo.Http403Exception, 403),
        ("aws-s3-internal-error", nucleo.Http500Exception, 500),
    ],
)
def test_s3_through_the_fake(
    case: str, cls: type[Exception], status: int, fake_upstream: Any, aws: Any
) -> None:
    entry = documented(case)
    fake_upstream.get(NOTE).respond(status, content=entry.body.encode(), headers=entry.headers)
    s3 = aws("s3")
    failure = failure_of(lambda: s3.get_object(Bucket="acme-notes", Key="notes/2026-12-07.txt"))
    assert isinstance(failure, cls)
    assert failure.status_code == status
    assert failure.endpoint == "/notes/2026-12-07.txt"
    text = failure.explain_to_llm()
    assert f"HTTP {status}" in text
    assert "AWS S3" in text


# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html
@pytest.mark.parametrize(
    ("case", "cls"),
    [
        ("aws-dynamodb-throttling", nucleo.HttpThrottledStatusException),
        ("aws-dynamodb-provisioned-throughput-exceeded", nucleo.HttpThrottledStatusException),
        ("aws-dynamodb-resource-not-found", nucleo.ResourceNotFoundException),
        ("aws-dynamodb-validation", nucleo.Http400Exception),
    ],
)
def test_dynamodb_through_the_fake(
    case: str, cls: type[Exception], fake_upstream: Any, aws: Any
) -> None:
    entry = documented(case)
    fake_upstream.post(DYNAMODB).respond(400, content=entry.body.encode(), headers=entry.headers)
    dynamodb = aws("dynamodb")
    failure = failure_of(
        lambda: dynamodb.get_item(TableName="notes", Key={"id": {"S": "n-7"}}), "Notes"
    )
    assert isinstance(failure, cls)
    assert "GetItem" in failure.explain_to_llm()  # the operation: every call goes to "/"


def test_s3_timeout_and_success_through_the_fake(fake_upstream: Any, aws: Any) -> None:
    s3 = aws("s3")

    def read() -> object:
        return s3.get_object(Bucket="acme-notes", Key="notes/2026-12-07.txt")["Body"].read()

    fake_upstream.get(NOTE).timeout()
    failure = failure_of(read, "Notes")
    assert type(failure) is nucleo.ExternalServiceException
    assert "the read timed out" in failure.explain_to_llm()
    fake_upstream.get(NOTE).respond(
        200, content=b"Call the shop.", headers={"content-type": "text/plain"}
    )
    assert nucleo.llm_errors(read)() == b"Call the shop."


@pytest.fixture
def volumes() -> Any:
    discovery = pytest.importorskip(
        "googleapiclient.discovery",
        reason="needs google-api-python-client: pip install 'pytest-nucleo[google-api]'",
    )
    import httplib2

    service = discovery.build(
        "books",
        "v1",
        developerKey=GOOGLE_KEY,
        http=httplib2.Http(timeout=5),
        static_discovery=True,
        cache_discovery=False,
    )
    return service.volumes()


RETRY_INFO = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "30s"}


# https://cloud.google.com/apis/design/errors#http_mapping
@pytest.mark.parametrize(
    ("status", "body", "cls", "wait"),
    [
        (404, documented("google-drive-file-not-found").body, nucleo.Http404Exception, None),
        (
            429,
            json.dumps(
                {
                    "error": {
                        "code": 429,
                        "message": "Quota exceeded for quota metric 'Queries' and limit "
                        "'Queries per minute'.",
                        "status": "RESOURCE_EXHAUSTED",
                        "details": [RETRY_INFO],
                    }
                }
            ),
            nucleo.Http429Exception,
            30.0,
        ),
        (
            403,
            documented("google-drive-user-rate-limit-exceeded").body,
            nucleo.HttpThrottledStatusException,
            None,
        ),
        (500, documented("google-drive-backend-error").body, nucleo.Http500Exception, None),
    ],
)
def test_googleapiclient_through_the_fake(
    status: int,
    body: str,
    cls: type[Exception],
    wait: float | None,
    fake_upstream: Any,
    volumes: Any,
) -> None:
    fake_upstream.get(VOLUME).respond(
        status, content=body.encode(), headers={"content-type": "application/json; charset=UTF-8"}
    )
    failure = failure_of(lambda: volumes.get(volumeId="zyTCAlFPjgYC").execute(), "Books")
    assert isinstance(failure, cls)
    assert failure.retry_after == wait
    assert failure.endpoint == "/books/v1/volumes/zyTCAlFPjgYC"
    assert f"HTTP {status}" in failure.explain_to_llm()


def test_googleapiclient_timeout_and_success_through_the_fake(
    fake_upstream: Any, volumes: Any
) -> None:
    def fetch() -> object:
        return volumes.get(volumeId="zyTCAlFPjgYC").execute()

    fake_upstream.get(VOLUME).timeout()
    failure = failure_of(fetch, "Books")
    assert type(failure) is nucleo.ExternalServiceException
    assert "the read timed out" in failure.explain_to_llm()
    fake_upstream.get(VOLUME).respond(200, json={"kind": "books#volume", "id": "zyTCAlFPjgYC"})
    assert nucleo.llm_errors(fetch)() == {"kind": "books#volume", "id": "zyTCAlFPjgYC"}
