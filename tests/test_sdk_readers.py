"""SDKs that raise an exception of their own for an answer, read with no hand mapping.

Each exception here is made by its SDK, the way the SDK makes it: botocore's through its own
``Stubber`` on a real client (and its transport errors against loopback servers that refuse or
never answer), google-api-python-client's through its own ``HttpMockSequence``,
google-api-core's by ``from_http_response`` on a real ``requests`` answer (as the REST
transports of the ``google-cloud-*`` libraries do) or as its gRPC path builds them, and
slack_sdk's, PyGithub's, stripe's and twilio's by their real clients talking to
``fake_upstream``. Every body follows the vendor's documentation; each case cites its page.

The module needs every SDK it reads (the frameworks extra brings them); without one it is not
collected, and says so at the end of the run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from _documented import NOW_EPOCH
from _service_corpus_a import CORPUS_A
from _service_corpus_b import CORPUS_B
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo.testing import text_problems
from pytest_nucleo.testing._contract._wording import enforced_wait
from tests._frameworks import needs_frameworks
from tests._loopback import loopback

# Without every SDK the module is kept out of collection (tests/_frameworks.py says why: a test
# that skips leaves its snapshots unused, which fails the run); the frameworks extra brings
# them all.
needs_frameworks(
    "boto3", "googleapiclient", "google.api_core", "slack_sdk", "github", "stripe", "twilio"
)

# The extra that brings each SDK, by its top-level package.
EXTRAS = {
    "boto3": "aws",
    "botocore": "aws",
    "googleapiclient": "google-api",
    "google": "google-api",
    "slack_sdk": "slack",
    "github": "github",
    "stripe": "stripe",
    "twilio": "twilio",
}

# Credentials as each vendor's documentation shows them, or shaped as theirs are: none may
# reach a text.
AWS_KEY_ID = (
    "AKIAIOSFODNN7EXAMPLE"  # https://docs.aws.amazon.com/IAM/latest/UserGuide/security-creds.html
)
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GOOGLE_KEY = "AIzaSyD-canary-books-key-0000000000000"
SLACK_TOKEN = "xoxb-17653672481-19874698323-canarySlackBotToken"
GITHUB_TOKEN = "ghp_canaryGitHubToken0123456789abcdefABCD"
STRIPE_KEY = "sk_test_canaryStripeKey0123456789"
TWILIO_SID = "AC" + "c0ffee0123456789" * 2  # an Account SID: 32 hex digits
TWILIO_TOKEN = "canaryTwilioAuthTokenQz7Rw2Kp9Vx4Lm"  # random-looking, as a real one is
SECRETS = (AWS_KEY_ID, AWS_SECRET, GOOGLE_KEY, SLACK_TOKEN, GITHUB_TOKEN, STRIPE_KEY)
SECRETS += (TWILIO_SID, TWILIO_TOKEN)

TIMEOUT = 0.2  # seconds a client waits for the loopback server that never answers


def sdk(module: str) -> Any:
    """``module``, or a skip naming the extra that brings it."""
    extra = EXTRAS[module.partition(".")[0]]
    return pytest.importorskip(
        module, reason=f"needs {module}: pip install 'pytest-nucleo[{extra}]'"
    )


def documented(case_id: str) -> Any:
    """The corpus's entry ``case_id``: a response as its vendor's page shows it."""
    return next(entry for entry in (*CORPUS_A, *CORPUS_B) if entry.id == case_id)


@dataclass(frozen=True)
class Reads:
    """What a case must read as."""

    cls: type[Exception]
    correctable: bool = False
    wait: float | None = None
    says: str = ""
    """Words the text must hold: the status the server sent ("HTTP 503"), or Slack's code."""


def raised_by(call: Callable[[], object]) -> BaseException:
    """The exception ``call`` raises (the SDK's own)."""
    try:
        call()
    except Exception as exc:
        return exc
    raise AssertionError("the SDK raised nothing")


def under_llm_errors(
    call: Callable[[], object], service: str | None
) -> nucleo.LLMReadableException:
    @nucleo.llm_errors(service=service)
    def tool() -> object:
        return call()

    with pytest.raises(nucleo.LLMReadableException) as raised:
        tool()
    return raised.value


def check(failure: BaseException, reads: Reads, snapshot: SnapshotAssertion | None = None) -> str:
    assert isinstance(failure, reads.cls), repr(failure)
    assert isinstance(failure, nucleo.LLMReadableException)
    assert failure.is_correctable is reads.correctable
    assert getattr(failure, "retry_after", None) == reads.wait
    text = failure.explain_to_llm()
    assert reads.says in text
    assert "HTTP 429" not in text or "HTTP 429" in reads.says  # the status sent, no other
    for secret in SECRETS:
        assert secret not in text
        assert secret not in str(failure)
        assert secret not in repr(failure)
    assert text_problems(text, secrets=SECRETS, retry_after=enforced_wait(failure)) == []
    if snapshot is not None:
        assert text == snapshot
    return text


# ---------------------------------------------------------------------------------------- AWS
# https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html#ErrorCodeList
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html
# https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html#API_Invoke_Errors


def aws_client(service: str, endpoint_url: str | None = None, **config: Any) -> Any:
    boto3 = sdk("boto3")
    from botocore.config import Config

    return boto3.client(
        service,
        region_name="us-east-1",
        endpoint_url=endpoint_url,
        aws_access_key_id=AWS_KEY_ID,
        aws_secret_access_key=AWS_SECRET,
        # One attempt: botocore would otherwise retry a throttle or a 5xx, sleeping between.
        config=Config(retries={"total_max_attempts": 1}, **config),
    )


AWS_CALLS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "s3": ("s3", "get_object", {"Bucket": "acme-notes", "Key": "notes/2026-12-07.txt"}),
    "dynamodb": ("dynamodb", "get_item", {"TableName": "notes", "Key": {"id": {"S": "n-7"}}}),
    "lambda": ("lambda", "invoke", {"FunctionName": "summarise"}),
    "cloudformation": (
        "cloudformation",
        "create_stack",
        {"StackName": "acme-notes", "TemplateBody": "{}"},
    ),
}


def aws_error(
    call: str, code: str, message: str, status: int, headers: dict[str, str] | None = None
) -> Callable[[], object]:
    """A call of botocore's that its own Stubber answers with this error, as botocore raises
    it: ``ClientError`` (its subclass named by the code)."""
    service, method, params = AWS_CALLS[call]
    client = aws_client(service)
    from botocore.stub import Stubber

    def make_call() -> object:
        with Stubber(client) as stub:
            stub.add_client_error(
                method, code, message, status, response_meta={"HTTPHeaders": headers or {}}
            )
            return getattr(client, method)(**params)

    return make_call


AWS_CASES = {
    "s3-no-such-key": (
        ("s3", "NoSuchKey", "The specified key does not exist.", 404),
        Reads(nucleo.Http404Exception, correctable=True, says="HTTP 404"),
    ),
    "s3-slow-down": (
        ("s3", "SlowDown", "Please reduce your request rate.", 503),
        Reads(nucleo.HttpThrottledStatusException, says="HTTP 503"),
    ),
    "s3-access-denied": (
        ("s3", "AccessDenied", "Access Denied", 403),
        Reads(nucleo.Http403Exception, says="HTTP 403"),
    ),
    "s3-internal-error": (
        ("s3", "InternalError", "We encountered an internal error. Please try again.", 500),
        Reads(nucleo.Http500Exception, says="HTTP 500"),
    ),
    "dynamodb-throttling": (
        ("dynamodb", "ThrottlingException", "Rate of requests exceeds the allowed throughput.", 400),
        Reads(nucleo.HttpThrottledStatusException, says="HTTP 400"),
    ),
    "dynamodb-provisioned-throughput": (
        (
            "dynamodb",
            "ProvisionedThroughputExceededException",
            "The level of configured provisioned throughput for the table was exceeded.",
            400,
        ),
        Reads(nucleo.HttpThrottledStatusException, says="HTTP 400"),
    ),
    "dynamodb-resource-not-found": (
        ("dynamodb", "ResourceNotFoundException", "Requested resource not found", 400),
        Reads(nucleo.ResourceNotFoundException, correctable=True, says="ResourceNotFoundException"),
    ),
    # A throttle code in botocore's retry list, but CloudFormation's (a query API) for a quota
    # reached: https://docs.aws.amazon.com/AWSCloudFormation/latest/APIReference/CommonErrors.html
    # Waiting will not help: it reads as the 400 it came with.
    "cloudformation-limit-exceeded": (
        ("cloudformation", "LimitExceededException", "The quota for the resource has already been reached.", 400),
        Reads(nucleo.Http400Exception, correctable=True, says="HTTP 400"),
    ),
    "dynamodb-validation": (
        ("dynamodb", "ValidationException", "Value null at 'tableName' failed to satisfy constraint", 400),
        Reads(nucleo.Http400Exception, correctable=True, says="HTTP 400"),
    ),
    # Lambda's TooManyRequestsException states its wait in Retry-After (its retryAfterSeconds).
    "lambda-too-many-requests": (
        ("lambda", "TooManyRequestsException", "Rate Exceeded.", 429, {"retry-after": "7"}),
        Reads(nucleo.Http429Exception, wait=7.0, says="HTTP 429"),
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(AWS_CASES))
def test_a_botocore_client_error_reads_as_its_answer(
    case: str, llm_snapshot: SnapshotAssertion
) -> None:
    arguments, reads = AWS_CASES[case]
    failure = under_llm_errors(aws_error(*arguments), None)
    text = check(failure, reads, llm_snapshot)
    assert "AWS " in text  # the service as botocore names it, with no name given


def test_a_botocore_error_names_the_key_and_the_service_given() -> None:
    failure = under_llm_errors(aws_error("s3", "NoSuchKey", "No such key.", 404), "Notes")
    assert isinstance(failure, nucleo.Http404Exception)
    assert failure.endpoint == "/notes/2026-12-07.txt"  # the REST path: S3's key
    assert failure.service == "Notes"
    assert failure.status_code == 404


def test_a_botocore_json_api_names_the_operation() -> None:
    failure = under_llm_errors(aws_error("dynamodb", "InternalServerError", "Oops", 500), None)
    assert isinstance(failure, nucleo.Http500Exception)
    assert failure.endpoint == "GetItem"  # the JSON APIs send every operation to "/"
    assert failure.service == "AWS DynamoDB"


def test_the_aws_throttle_codes_cover_botocore_s_own() -> None:
    sdk("boto3")
    from botocore.retries import standard

    from pytest_nucleo._http._profiles._aws import THROTTLING_CODES

    botocore_s = set(standard.ThrottledRetryableChecker._THROTTLED_ERROR_CODES)
    # All but LimitExceededException: CloudFormation sends it for a quota reached, where
    # waiting does not help (see the list's comment); a 429 with it is a throttle anyway.
    assert botocore_s - {"LimitExceededException"} <= THROTTLING_CODES
    assert "LimitExceededException" not in THROTTLING_CODES


def test_a_botocore_query_api_names_the_operation_unmasked() -> None:
    # The query protocol sends the operation's name as its Action value: it is not a value of
    # the caller's to mask, and it is the endpoint shown.
    message = "Stack [acme-notes] already exists"
    failure = under_llm_errors(
        aws_error("cloudformation", "AlreadyExistsException", message, 400), None
    )
    assert failure.endpoint == "CreateStack"  # type: ignore[attr-defined]
    text = failure.explain_to_llm()
    assert "rejected the request to CreateStack" in text
    assert "acme-notes" not in text  # the caller's own value, masked as any client's


def test_an_aws_throttle_code_on_a_success_reads_as_no_failure() -> None:
    # A 2xx is not a failure whatever its body says (S3's CopyObject may answer 200 with an
    # error document): the mapping reads it as any exception rather than raising.
    exceptions = sdk("botocore.exceptions")
    error = exceptions.ClientError(
        {"Error": {"Code": "Throttling"}, "ResponseMetadata": {"HTTPStatusCode": 200}}, "PutItem"
    )
    assert type(nucleo.unwrap(error)) is nucleo.SystemException


@pytest.mark.parametrize(
    ("mode", "kind"),
    [
        ("silent", "it did not answer in time (the read timed out)"),
        ("refused", "the connection was refused or could not be made"),
    ],
)
def test_a_botocore_transport_error_reads_as_its_kind(mode: str, kind: str) -> None:
    with loopback(mode) as url:
        s3 = aws_client("s3", url, read_timeout=TIMEOUT, connect_timeout=10)
        failure = under_llm_errors(lambda: s3.get_object(Bucket="notes", Key="a.txt"), None)
    assert type(failure) is nucleo.ExternalServiceException
    text = failure.explain_to_llm()
    assert f"The external service AWS S3 gave no answer to GET /notes/a.txt: {kind}." in text
    assert url.rpartition(":")[2] not in text  # no host or port, only the path
    assert AWS_KEY_ID not in text


def test_a_botocore_json_api_transport_error_names_the_operation() -> None:
    # DynamoDB's JSON protocol sends every operation as POST to "/": the answer's text names
    # the operation (test_a_botocore_query_api_names_the_operation_unmasked), so does this one.
    with loopback("refused") as url:
        dynamodb = aws_client("dynamodb", url, connect_timeout=10)
        failure = under_llm_errors(
            lambda: dynamodb.get_item(TableName="notes", Key={"id": {"S": "n-7"}}), None
        )
    assert type(failure) is nucleo.ExternalServiceException
    text = failure.explain_to_llm()
    assert "The external service AWS DynamoDB gave no answer to GetItem: the connection " in text
    assert "POST /" not in text


def test_a_botocore_success_passes_through() -> None:
    client = aws_client("dynamodb")
    from botocore.stub import Stubber

    @nucleo.llm_errors
    def fetch(note: str) -> object:
        with Stubber(client) as stub:
            stub.add_response("get_item", {"Item": {"id": {"S": note}}})
            return client.get_item(TableName="notes", Key={"id": {"S": note}})["Item"]

    assert fetch("n-7") == {"id": {"S": "n-7"}}


# ------------------------------------------------------------------ google-api-python-client
# https://cloud.google.com/apis/design/errors#http_mapping
# https://developers.google.com/workspace/drive/api/guides/handle-errors


def books(*answers: tuple[int, bytes | str, dict[str, str]]) -> Any:
    """The Books API built on the library's own ``HttpMockSequence``, answering ``answers``."""
    discovery = sdk("googleapiclient.discovery")
    from googleapiclient.http import HttpMockSequence

    sequence = HttpMockSequence([({"status": str(s), **h}, body) for s, body, h in answers])
    return discovery.build(
        "books", "v1", developerKey=GOOGLE_KEY, http=sequence, static_discovery=True
    )


def google_error(status: int, error: dict[str, Any]) -> str:
    """Google's JSON error: https://cloud.google.com/apis/design/errors#http_mapping"""
    return json.dumps({"error": {"code": status, **error}})


_JSON = {"content-type": "application/json; charset=UTF-8"}
RETRY_INFO = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "30s"}

GOOGLE_CASES = {
    "not-found": (
        (404, documented("google-drive-file-not-found").body),
        Reads(nucleo.Http404Exception, correctable=True, says="HTTP 404"),
    ),
    # The design guide's RESOURCE_EXHAUSTED, with the RetryInfo detail that states the wait.
    "rate-limit-retry-info": (
        (429, google_error(429, {"message": "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute'.", "status": "RESOURCE_EXHAUSTED", "details": [RETRY_INFO]})),
        Reads(nucleo.Http429Exception, wait=30.0, says="HTTP 429"),
    ),
    "user-rate-limit-403": (
        (403, documented("google-drive-user-rate-limit-exceeded").body),
        Reads(nucleo.HttpThrottledStatusException, says="HTTP 403"),
    ),
    "permission-denied": (
        (403, google_error(403, {"message": "The caller does not have permission", "status": "PERMISSION_DENIED"})),
        Reads(nucleo.Http403Exception, says="HTTP 403"),
    ),
    "daily-limit": (
        (403, documented("google-drive-daily-limit-exceeded").body),
        Reads(nucleo.HttpQuotaExhaustedException, says="HTTP 403"),
    ),
    "api-key-invalid": (
        (400, documented("google-api-key-invalid").body),
        Reads(nucleo.UnauthorizedException),
    ),
    "backend-error": (
        (500, documented("google-drive-backend-error").body),
        Reads(nucleo.Http500Exception, says="HTTP 500"),
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(GOOGLE_CASES))
def test_a_googleapiclient_http_error_reads_as_its_answer(
    case: str, llm_snapshot: SnapshotAssertion
) -> None:
    (status, body), reads = GOOGLE_CASES[case]
    volumes = books((status, body, _JSON)).volumes()
    failure = under_llm_errors(lambda: volumes.get(volumeId="zyTCAlFPjgYC").execute(), "Books")
    text = check(failure, reads, llm_snapshot)
    assert "/books/v1/volumes/zyTCAlFPjgYC" in text or reads.cls is nucleo.UnauthorizedException


def test_a_googleapiclient_error_built_by_hand_reads_the_same() -> None:
    errors = sdk("googleapiclient.errors")
    import httplib2

    uri = f"https://books.googleapis.com/books/v1/volumes/x?key={GOOGLE_KEY}&alt=json"
    response = httplib2.Response({"status": 404, **_JSON})
    exc = errors.HttpError(
        response, documented("google-drive-file-not-found").body.encode(), uri=uri
    )
    failure = nucleo.unwrap(exc)
    assert isinstance(failure, nucleo.Http404Exception)
    assert failure.service == "books.googleapis.com"  # no name given: the host
    assert failure.endpoint == "/books/v1/volumes/x"
    assert GOOGLE_KEY not in failure.explain_to_llm()


def test_a_googleapiclient_timeout_reads_as_a_read_timeout() -> None:
    discovery = sdk("googleapiclient.discovery")
    import httplib2

    with loopback("silent") as url:
        service = discovery.build(
            "books",
            "v1",
            developerKey=GOOGLE_KEY,
            http=httplib2.Http(timeout=TIMEOUT),
            static_discovery=True,
            client_options={"api_endpoint": url},
        )
        failure = under_llm_errors(
            lambda: service.volumes().get(volumeId="zyTCAlFPjgYC").execute(), "Books"
        )
    assert type(failure) is nucleo.ExternalServiceException
    text = failure.explain_to_llm()
    assert "The external service Books gave no answer" in text
    assert "the read timed out" in text
    assert GOOGLE_KEY not in text


def test_a_googleapiclient_success_passes_through() -> None:
    volume = {"kind": "books#volume", "id": "zyTCAlFPjgYC", "volumeInfo": {"title": "Dune"}}
    volumes = books((200, json.dumps(volume), _JSON)).volumes()

    @nucleo.llm_errors(service="Books")
    def fetch(volume_id: str) -> object:
        return volumes.get(volumeId=volume_id).execute()

    assert fetch("zyTCAlFPjgYC") == volume


# ------------------------------------------------------------------------ google-api-core
# https://cloud.google.com/apis/design/errors#http_mapping
# https://googleapis.dev/python/google-api-core/latest/exceptions.html

SECRETS_URL = (
    "https://secretmanager.googleapis.com/v1/projects/acme/secrets/db/versions/latest:access"
)


def rest_call(
    fake_upstream: Any, status: int, body: str, headers: dict[str, str]
) -> Callable[[], object]:
    """A call as the REST transports of the google-cloud libraries make it: requests, then
    ``from_http_response`` for a status of 400 or more."""
    exceptions = sdk("google.api_core.exceptions")
    import requests

    fake_upstream.get(SECRETS_URL).respond(status, content=body.encode(), headers=headers)

    def make_call() -> object:
        response = requests.get(SECRETS_URL, params={"key": GOOGLE_KEY}, timeout=5)
        if response.status_code >= 400:
            raise exceptions.from_http_response(response)
        return response.json()

    return make_call


API_CORE_REST = {
    "not-found": (
        (404, google_error(404, {"message": "Secret [projects/acme/secrets/db] not found or has no versions.", "status": "NOT_FOUND"})),
        Reads(nucleo.Http404Exception, correctable=True, says="HTTP 404"),
    ),
    "resource-exhausted-retry-info": (
        (429, google_error(429, {"message": "Quota exceeded for quota metric 'Access requests' and limit 'Access requests per minute'.", "status": "RESOURCE_EXHAUSTED", "details": [RETRY_INFO]})),
        Reads(nucleo.Http429Exception, wait=30.0, says="HTTP 429"),
    ),
    "permission-denied": (
        (403, google_error(403, {"message": "Permission 'secretmanager.versions.access' denied for resource 'projects/acme/secrets/db/versions/latest' (or it may not exist).", "status": "PERMISSION_DENIED"})),
        Reads(nucleo.Http403Exception, says="HTTP 403"),
    ),
    "unavailable": (
        (503, documented("google-gemini-unavailable").body),
        Reads(nucleo.Http503Exception, says="HTTP 503"),
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(API_CORE_REST))
def test_a_google_api_core_rest_error_reads_as_its_answer(
    case: str, fake_upstream: Any, llm_snapshot: SnapshotAssertion
) -> None:
    (status, body), reads = API_CORE_REST[case]
    failure = under_llm_errors(rest_call(fake_upstream, status, body, _JSON), "Secret Manager")
    text = check(failure, reads, llm_snapshot)
    assert "/v1/projects/acme/secrets/db/versions/latest:access" in text


def grpc_errors() -> dict[str, tuple[BaseException, Reads]]:
    """The errors google-api-core's gRPC path makes (``from_grpc_error``: the class of the
    code, the message, the typed details as protobuf messages), built as it builds them."""
    exceptions = sdk("google.api_core.exceptions")
    error_details = pytest.importorskip("google.rpc.error_details_pb2")
    from google.protobuf import duration_pb2

    retry_info = error_details.RetryInfo(retry_delay=duration_pb2.Duration(seconds=43))
    quota = error_details.QuotaFailure(
        violations=[error_details.QuotaFailure.Violation(subject="project:acme")]
    )
    return {
        "not-found": (
            exceptions.NotFound("Secret [projects/acme/secrets/db] not found or has no versions."),
            Reads(nucleo.Http404Exception, correctable=True, says="HTTP 404"),
        ),
        "resource-exhausted-retry-info": (
            exceptions.ResourceExhausted(
                "Quota exceeded for quota metric 'Read requests' and limit 'Read requests per "
                "minute'.",
                details=[quota, retry_info],
            ),
            Reads(nucleo.Http429Exception, wait=43.0, says="HTTP 429"),
        ),
        # A quota that says so and states no wait: waiting will not help (the quota rule).
        "resource-exhausted-quota": (
            exceptions.ResourceExhausted(
                "You exceeded your current quota, please check your plan and billing details."
            ),
            Reads(nucleo.HttpQuotaExhaustedException, says="HTTP 429"),
        ),
        "permission-denied": (
            exceptions.PermissionDenied("Permission 'secretmanager.versions.access' denied."),
            Reads(nucleo.Http403Exception, says="HTTP 403"),
        ),
        "unauthenticated": (
            exceptions.Unauthenticated("Request had invalid authentication credentials."),
            Reads(nucleo.Http401Exception, says="HTTP 401"),
        ),
        "invalid-argument": (
            exceptions.InvalidArgument("Invalid resource field value in the request."),
            Reads(nucleo.Http400Exception, correctable=True, says="HTTP 400"),
        ),
        # gRPC's own UNAVAILABLE: no answer came. The channel never connected: nothing sent.
        "unavailable-never-connected": (
            exceptions.ServiceUnavailable(
                "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:443: "
                "Failed to connect to remote host: Connection refused"
            ),
            Reads(nucleo.ExternalServiceException, says="Nothing was sent"),
        ),
        # Any other: the request may have reached the service.
        "unavailable": (
            exceptions.ServiceUnavailable("Socket closed"),
            Reads(nucleo.ExternalServiceException, says="may have acted on it"),
        ),
        # An UNAVAILABLE with typed details came from the server: its answer, and its wait.
        "unavailable-answered": (
            exceptions.ServiceUnavailable(
                "The service is currently unavailable.", details=[retry_info]
            ),
            Reads(nucleo.Http503Exception, wait=43.0, says="HTTP 503"),
        ),
        # The call's own deadline ran out: no answer came.
        "deadline-exceeded": (
            exceptions.DeadlineExceeded("Deadline Exceeded"),
            Reads(nucleo.ExternalServiceException, says="time limit ran out"),
        ),
        # The library's retries gave up: the last error says what failed.
        "retry-error": (
            exceptions.RetryError(
                "Timeout of 600.0s exceeded",
                exceptions.InternalServerError("Internal error encountered."),
            ),
            Reads(nucleo.Http500Exception, says="HTTP 500"),
        ),
    }


GRPC_CASES = (
    "not-found", "resource-exhausted-retry-info", "resource-exhausted-quota", "permission-denied",
    "unauthenticated", "invalid-argument", "unavailable-never-connected", "unavailable",
    "unavailable-answered", "deadline-exceeded", "retry-error",
)  # fmt: skip


@pytest.mark.parametrize("case", GRPC_CASES)
def test_a_google_api_core_grpc_error_reads_as_its_code(
    case: str, llm_snapshot: SnapshotAssertion
) -> None:
    exc, reads = grpc_errors()[case]

    def make_call() -> object:
        raise exc

    failure = under_llm_errors(make_call, "Secret Manager")
    check(failure, reads, llm_snapshot)
    answered = reads.cls is not nucleo.ExternalServiceException
    assert isinstance(failure, nucleo.HttpErrorResponse) is answered
    if answered:  # no client method in the traceback: the call, not the service's root "/"
        assert failure.endpoint == "the call"  # type: ignore[attr-defined]
        assert " / " not in failure.explain_to_llm()


def test_a_google_api_core_grpc_cancel_is_the_caller_s_own() -> None:
    exceptions = sdk("google.api_core.exceptions")
    from pytest_nucleo._http._sdks import sdk_reading

    # The caller cancelled the call: nothing the service said, read as any exception (it
    # was an answer of status 499 before).
    cancelled = exceptions.Cancelled("Locally cancelled by application!")
    assert sdk_reading(cancelled) is None
    assert type(nucleo.unwrap(cancelled)) is nucleo.SystemException


def test_a_google_api_core_grpc_error_names_the_client_method_called() -> None:
    exceptions = sdk("google.api_core.exceptions")
    # A method of a generated client, as its module names it (google.cloud.<api>...client).
    client = {"__name__": "google.cloud.secretmanager_v1.services.client"}
    exec("def access_secret_version(error):\n    raise error\n", client)
    failure = under_llm_errors(
        lambda: client["access_secret_version"](exceptions.NotFound("Secret not found.")), None
    )
    assert isinstance(failure, nucleo.Http404Exception)
    assert failure.endpoint == "access_secret_version"
    assert failure.service == "Google APIs"  # no name given, no host known


def test_a_google_api_core_error_is_not_a_provider_s_and_genai_s_are_not_ours() -> None:
    exceptions = sdk("google.api_core.exceptions")
    assert nucleo.from_provider_error(exceptions.ResourceExhausted("slow down")) is None
    genai = pytest.importorskip("google.genai.errors")
    from pytest_nucleo._http._sdks import sdk_reading

    assert sdk_reading(genai.ClientError(429, {"error": {"message": "slow"}})) is None
    auth = pytest.importorskip("google.auth.exceptions")
    assert type(nucleo.unwrap(auth.RefreshError("expired"))) is nucleo.SystemException


# ---------------------------------------------------------------------------------- Slack
# https://docs.slack.dev/apis/web-api/#responses
# https://docs.slack.dev/apis/web-api/rate-limits
# https://docs.slack.dev/reference/methods/chat.postMessage#errors

SLACK_METHOD = "https://slack.com/api/chat.postMessage"


def slack_call() -> Callable[[], object]:
    web = sdk("slack_sdk")
    client = web.WebClient(token=SLACK_TOKEN, retry_handlers=[])  # no retries: they sleep
    return lambda: client.chat_postMessage(channel="C0123456789", text="The build is green.")


SLACK_CASES = {
    "channel-not-found": (
        (200, {"ok": False, "error": "channel_not_found"}, {}),
        Reads(nucleo.ResourceNotFoundException, correctable=True, says="channel_not_found"),
    ),
    "ratelimited-429": (
        (429, json.loads(documented("slack-web-api-ratelimited-429").body), {"Retry-After": "30"}),
        Reads(nucleo.Http429Exception, wait=30.0, says="HTTP 429"),
    ),
    "invalid-auth": (
        (200, {"ok": False, "error": "invalid_auth"}, {}),
        Reads(nucleo.UnauthorizedException, says="invalid_auth"),
    ),
    "missing-scope": (
        (200, json.loads(documented("slack-admin-apps-requests-list-missing-scope").body), {}),
        Reads(nucleo.UnauthorizedException, says="missing_scope"),
    ),
    # What the Web API answers when Slack itself fails: a 5xx, named by its status.
    "service-unavailable": (
        (503, {"ok": False, "error": "service_unavailable"}, {}),
        Reads(nucleo.Http503Exception, says="HTTP 503"),
    ),
}


@pytest.mark.parametrize("case", list(SLACK_CASES))
def test_a_slack_api_error_reads_as_its_answer(
    case: str, fake_upstream: Any, llm_snapshot: SnapshotAssertion
) -> None:
    (status, body, headers), reads = SLACK_CASES[case]
    call = slack_call()  # skips, naming the extra, before any route is set
    fake_upstream.post(SLACK_METHOD).respond(status, json=body, headers=headers)
    failure = under_llm_errors(call, None)
    text = check(failure, reads, llm_snapshot)
    assert "Slack" in text
    assert "chat.postMessage" in text
    assert "C0123456789" not in text  # the arguments the request carried


def test_a_slack_timeout_and_a_success(fake_upstream: Any) -> None:
    call = slack_call()
    fake_upstream.post(SLACK_METHOD).timeout()
    failure = under_llm_errors(call, "Slack")
    assert type(failure) is nucleo.ExternalServiceException
    assert "the read timed out" in failure.explain_to_llm()
    fake_upstream.post(SLACK_METHOD).respond(200, json={"ok": True, "ts": "1733572800.000100"})
    assert nucleo.llm_errors(call)()["ts"] == "1733572800.000100"  # type: ignore[index]


# --------------------------------------------------------------------------------- GitHub
# https://docs.github.com/en/rest/using-the-rest-api/troubleshooting-the-rest-api
# https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api

REPO = "https://api.github.com/repos/acme/widgets"


def github_call() -> Callable[[], object]:
    github = sdk("github")
    # No retries and no pause between requests: both sleep.
    client = github.Github(
        auth=github.Auth.Token(GITHUB_TOKEN),
        retry=None,
        seconds_between_requests=None,
        seconds_between_writes=None,
    )
    return lambda: client.get_repo("acme/widgets").full_name


GITHUB_CASES = {
    case: (documented(f"github-{case}"), reads)
    for case, reads in {
        "not-found": Reads(nucleo.Http404Exception, correctable=True, says="HTTP 404"),
        "secondary-rate-limit-retry-after": Reads(
            nucleo.HttpThrottledStatusException, wait=30.0, says="HTTP 403"
        ),
        "primary-rate-limit-429": Reads(nucleo.Http429Exception, wait=42.0, says="HTTP 429"),
        "bad-credentials": Reads(nucleo.Http401Exception, says="HTTP 401"),
        "resource-not-accessible": Reads(nucleo.Http403Exception, says="HTTP 403"),
    }.items()
}


@pytest.mark.parametrize("case", list(GITHUB_CASES))
def test_a_github_exception_reads_as_its_answer(
    case: str,
    fake_upstream: Any,
    monkeypatch: pytest.MonkeyPatch,
    llm_snapshot: SnapshotAssertion,
) -> None:
    monkeypatch.setattr("pytest_nucleo._http._waits.time.time", lambda: float(NOW_EPOCH))
    entry, reads = GITHUB_CASES[case]
    call = github_call()  # skips, naming the extra, before any route is set
    fake_upstream.get(REPO).respond(
        entry.status, content=entry.body.encode(), headers=entry.headers
    )
    failure = under_llm_errors(call, None)
    text = check(failure, reads, llm_snapshot)
    assert "GitHub" in text
    assert "/repos/acme/widgets" in text


def test_a_github_5xx_a_timeout_and_a_success(fake_upstream: Any) -> None:
    call = github_call()
    fake_upstream.get(REPO).respond(502, json={"message": "Server Error"})
    check(under_llm_errors(call, None), Reads(nucleo.Http502Exception, says="HTTP 502"))
    fake_upstream.get(REPO).timeout()
    failure = under_llm_errors(call, "GitHub")
    assert type(failure) is nucleo.ExternalServiceException
    assert "the read timed out" in failure.explain_to_llm()
    fake_upstream.get(REPO).respond(200, json={"full_name": "acme/widgets", "id": 7})
    assert nucleo.llm_errors(call)() == "acme/widgets"


# --------------------------------------------------------------------------------- Stripe
# https://docs.stripe.com/api/errors and https://docs.stripe.com/error-codes

CUSTOMER = "https://api.stripe.com/v1/customers/cus_NffrFeUfNV2Hib"


def stripe_call() -> Callable[[], object]:
    stripe = sdk("stripe")
    client = stripe.StripeClient(STRIPE_KEY, max_network_retries=0)  # retries sleep
    return lambda: client.v1.customers.retrieve("cus_NffrFeUfNV2Hib")


STRIPE_CASES = {
    case: (documented(f"stripe-{case}"), reads)
    for case, reads in {
        "resource-missing": Reads(nucleo.Http404Exception, correctable=True, says="HTTP 404"),
        # Stripe states no wait: it asks for backoff (https://docs.stripe.com/rate-limits).
        "rate-limit": Reads(nucleo.Http429Exception, says="HTTP 429"),
        "invalid-api-key": Reads(nucleo.Http401Exception, says="HTTP 401"),
        "card-declined": Reads(nucleo.HttpQuotaExhaustedException, says="insufficient_funds"),
        "api-error": Reads(nucleo.Http500Exception, says="HTTP 500"),
    }.items()
}


@pytest.mark.parametrize("case", list(STRIPE_CASES))
def test_a_stripe_error_reads_as_its_answer(
    case: str, fake_upstream: Any, llm_snapshot: SnapshotAssertion
) -> None:
    entry, reads = STRIPE_CASES[case]
    call = stripe_call()  # skips, naming the extra, before any route is set
    fake_upstream.get(CUSTOMER).respond(
        entry.status, content=entry.body.encode(), headers=entry.headers
    )
    failure = under_llm_errors(call, None)
    text = check(failure, reads, llm_snapshot)
    assert "Stripe" in text


def test_a_stripe_403_reads_as_a_refusal(fake_upstream: Any) -> None:
    # "403 Forbidden: The API key doesn't have permissions to perform the request"
    # (https://docs.stripe.com/api/errors): a restricted key without the permission.
    body = {"error": {"message": "The provided key 'rk_test_***' does not have the required permissions for this endpoint.", "type": "invalid_request_error"}}  # fmt: skip
    call = stripe_call()
    fake_upstream.get(CUSTOMER).respond(403, json=body)
    check(under_llm_errors(call, None), Reads(nucleo.Http403Exception, says="HTTP 403"))


def test_a_stripe_connection_error_reads_by_its_cause(fake_upstream: Any) -> None:
    call = stripe_call()
    fake_upstream.get(CUSTOMER).timeout()
    failure = under_llm_errors(call, None)
    assert type(failure) is nucleo.ExternalServiceException
    assert type(failure.__cause__).__name__ == "APIConnectionError"
    text = failure.explain_to_llm()
    assert "The external service Stripe gave no answer to GET /v1/customers/" in text
    assert "the read timed out" in text
    fake_upstream.get(CUSTOMER).respond(
        200, json={"id": "cus_NffrFeUfNV2Hib", "object": "customer"}
    )
    assert nucleo.llm_errors(call)()["id"] == "cus_NffrFeUfNV2Hib"  # type: ignore[index]


# --------------------------------------------------------------------------------- Twilio
# https://www.twilio.com/docs/usage/twilios-response#response-formats-exceptions
# https://www.twilio.com/docs/api/errors

CALL = f"https://api.twilio.com/2010-04-01/Accounts/{TWILIO_SID}/Calls/CA0123456789abcdef0123456789abcdef.json"


def twilio_call() -> Callable[[], object]:
    rest = sdk("twilio.rest")
    client = rest.Client(TWILIO_SID, TWILIO_TOKEN)
    return lambda: client.calls("CA0123456789abcdef0123456789abcdef").fetch().status


def twilio_error(code: int, message: str, status: int) -> dict[str, object]:
    return {
        "code": code,
        "message": message,
        "more_info": f"https://www.twilio.com/docs/errors/{code}",
        "status": status,
    }


TWILIO_CASES = {
    # https://www.twilio.com/docs/api/errors/20404: the message names the path, and the path
    # the account.
    "not-found": (
        (404, twilio_error(20404, f"The requested resource /2010-04-01/Accounts/{TWILIO_SID}/Calls/CA0123456789abcdef0123456789abcdef.json was not found", 404), {}),
        Reads(nucleo.Http404Exception, correctable=True, says="HTTP 404"),
    ),
    # https://www.twilio.com/docs/api/errors/20429, with the Retry-After Twilio's newer APIs
    # send (https://www.twilio.com/docs/bulk-messaging/api/seek-message-resource).
    "too-many-requests": (
        (429, twilio_error(20429, "Too Many Requests", 429), {"Retry-After": "10"}),
        Reads(nucleo.Http429Exception, wait=10.0, says="HTTP 429"),
    ),
    # https://www.twilio.com/docs/api/errors/20003
    "authenticate": (
        (401, twilio_error(20003, "Authenticate", 401), {}),
        Reads(nucleo.Http401Exception, says="HTTP 401"),
    ),
    # https://www.twilio.com/docs/api/errors/20403
    "forbidden": (
        (403, twilio_error(20403, "Forbidden", 403), {}),
        Reads(nucleo.Http403Exception, says="HTTP 403"),
    ),
    # https://www.twilio.com/docs/api/errors/20500
    "internal-server-error": (
        (500, twilio_error(20500, "Internal Server Error", 500), {}),
        Reads(nucleo.Http500Exception, says="HTTP 500"),
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(TWILIO_CASES))
def test_a_twilio_rest_exception_reads_as_its_answer(
    case: str, fake_upstream: Any, llm_snapshot: SnapshotAssertion
) -> None:
    (status, body, headers), reads = TWILIO_CASES[case]
    call = twilio_call()  # skips, naming the extra, before any route is set
    fake_upstream.get(CALL).respond(status, json=body, headers=headers)
    failure = under_llm_errors(call, None)
    text = check(failure, reads, llm_snapshot)
    assert "Twilio" in text


def test_a_twilio_error_without_its_frames_is_written_back() -> None:
    exceptions = sdk("twilio.base.exceptions")
    exc = exceptions.TwilioRestException(
        404, f"/Accounts/{TWILIO_SID}/Calls/CA1.json", "Unable to fetch record: Not found", 20404
    )
    failure = nucleo.unwrap(exc)
    assert isinstance(failure, nucleo.Http404Exception)
    assert failure.service == "Twilio"
    assert TWILIO_SID not in failure.explain_to_llm()


def test_a_twilio_timeout_and_a_success(fake_upstream: Any) -> None:
    call = twilio_call()
    fake_upstream.get(CALL).timeout()
    failure = under_llm_errors(call, "Twilio")
    assert type(failure) is nucleo.ExternalServiceException
    assert "the read timed out" in failure.explain_to_llm()
    fake_upstream.get(CALL).respond(200, json={"sid": "CA0123456789abcdef0123456789abcdef", "status": "completed"})  # fmt: skip
    assert nucleo.llm_errors(call)() == "completed"


# ------------------------------------------------------- the other ways a tool meets them


def sdk_404(name: str, fake_upstream: Any) -> tuple[Callable[[], object], str]:
    """A call of SDK ``name`` that fails with its 404 (or its "not found"), and the service."""
    if name == "botocore":
        return aws_error("s3", "NoSuchKey", "The specified key does not exist.", 404), "Notes"
    if name == "googleapiclient":
        volumes = books((404, documented("google-drive-file-not-found").body, _JSON)).volumes()
        return (lambda: volumes.get(volumeId="x").execute()), "Books"
    if name == "google.api_core":
        (status, body), _ = API_CORE_REST["not-found"]
        return rest_call(fake_upstream, status, body, _JSON), "Secret Manager"
    # Each call is built first: a missing SDK skips before any route is set.
    if name == "slack_sdk":
        call = slack_call()
        fake_upstream.post(SLACK_METHOD).respond(
            200, json={"ok": False, "error": "channel_not_found"}
        )
        return call, "Slack"
    if name == "github":
        call = github_call()
        entry = documented("github-not-found")
        fake_upstream.get(REPO).respond(404, content=entry.body.encode(), headers=entry.headers)
        return call, "GitHub"
    if name == "stripe":
        call = stripe_call()
        entry = documented("stripe-resource-missing")
        fake_upstream.get(CUSTOMER).respond(404, content=entry.body.encode(), headers=entry.headers)
        return call, "Stripe"
    call = twilio_call()
    (status, body, headers), _ = TWILIO_CASES["not-found"]
    fake_upstream.get(CALL).respond(status, json=body, headers=headers)
    return call, "Twilio"


SDKS = ("botocore", "googleapiclient", "google.api_core", "slack_sdk", "github", "stripe", "twilio")


@pytest.mark.parametrize("name", SDKS)
def test_service_call_makes_an_sdk_s_404_a_fixable_parameter(name: str, fake_upstream: Any) -> None:
    call, service = sdk_404(name, fake_upstream)
    with (
        pytest.raises(nucleo.InvalidInputException) as raised,
        nucleo.service_call(service, "record_id", "r-42", "record fetch"),
    ):
        call()
    text = raised.value.explain_to_llm()
    assert "record_id" in text
    assert "r-42" in text
    assert raised.value.is_correctable
    assert not any(secret in text for secret in SECRETS)


@pytest.mark.parametrize("name", SDKS)
def test_wrap_with_context_reads_an_sdk_s_404(name: str, fake_upstream: Any) -> None:
    call, service = sdk_404(name, fake_upstream)
    wrapped = nucleo.wrap_with_context(raised_by(call), service, "record_id", "r-42", "fetch")
    assert isinstance(wrapped, nucleo.InvalidInputException)
    assert wrapped.parameter_name == "record_id"


@pytest.mark.parametrize("name", SDKS)
def test_the_runner_tells_the_model_what_an_sdk_s_404_means(name: str, fake_upstream: Any) -> None:
    call, _ = sdk_404(name, fake_upstream)

    def fetch_record(record_id: str) -> object:
        """One record by its id."""
        return call()

    result = nucleo.run_tool(fetch_record, {"record_id": "r-42"}, retries=0)
    assert result.is_error
    assert isinstance(result.exception, nucleo.ResourceNotFoundException)
    assert result.exception.is_correctable
    assert not any(secret in result.text for secret in SECRETS)


class RecordingLimiter(nucleo.RateLimiter):
    def __init__(self) -> None:
        super().__init__("aws", max_requests=100, window_seconds=1.0)
        self.failures: list[nucleo.UpstreamFailure] = []

    def record_failure(
        self, failure: nucleo.UpstreamFailure, permit: nucleo.Permit | None = None
    ) -> None:
        self.failures.append(failure)
        super().record_failure(failure, permit)


def test_the_runner_tells_a_limiter_the_status_and_wait_an_sdk_s_throttle_sent() -> None:
    limiter = RecordingLimiter()
    call = aws_error(
        "lambda", "TooManyRequestsException", "Rate Exceeded.", 429, {"retry-after": "7"}
    )

    def summarise(text: str) -> object:
        """A summary of the text."""
        return call()

    result = nucleo.run_tool(summarise, {"text": "notes"}, retries=0, limiters=[limiter])
    assert isinstance(result.exception, nucleo.Http429Exception)
    assert [(f.status, f.retry_after) for f in limiter.failures] == [(429, 7.0)]


# ----------------------------------------------------------------- the seam's own promises


def test_a_reader_never_raises_and_an_odd_exception_reads_as_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    exceptions = sdk("botocore.exceptions")
    odd = exceptions.ClientError({"Error": {"Code": "X"}}, "GetObject")  # no ResponseMetadata
    assert type(nucleo.unwrap(odd)) is nucleo.SystemException
    not_a_dict = exceptions.ClientError({}, "GetObject")
    not_a_dict.response = "a string"
    assert type(nucleo.unwrap(not_a_dict)) is nucleo.SystemException

    class Raising(exceptions.ClientError):
        @property
        def response(self) -> Any:
            raise RuntimeError("a property that raises")

        @response.setter
        def response(self, value: Any) -> None:
            pass

    assert type(nucleo.unwrap(Raising({}, "GetObject"))) is nucleo.SystemException
    # An older or stubbed SDK without the class reads as any exception does.
    error = aws_client("s3").exceptions.NoSuchKey(
        {"Error": {"Code": "NoSuchKey"}, "ResponseMetadata": {"HTTPStatusCode": 404}}, "GetObject"
    )
    monkeypatch.delattr(exceptions, "ClientError")
    assert type(nucleo.unwrap(error)) is nucleo.SystemException


def test_a_profile_or_a_rule_that_raises_never_escapes_the_mapping(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pytest_nucleo._http import _profiles
    from pytest_nucleo._http._sdks import _failure

    def raising(*_: object, **__: object) -> None:
        raise RuntimeError("a bug in a profile or a rule")

    # The aws profile reads this code as a credentials failure; the generic rules, a 400.
    message = "The security token included in the request is invalid."
    error = raised_by(aws_error("dynamodb", "UnrecognizedClientException", message, 400))
    assert isinstance(nucleo.unwrap(error), nucleo.UnauthorizedException)
    # A profile that raises leaves the answer to the generic rules: the 400 it came with.
    monkeypatch.setattr(_profiles, "profile_failure", raising)
    assert type(nucleo.unwrap(error)) is nucleo.Http400Exception
    # Rules that raise leave the exception to read as any other.
    monkeypatch.setattr(_failure, "seen_failure", raising)
    assert type(nucleo.unwrap(error)) is nucleo.SystemException
    assert not nucleo.is_not_found(error)


def test_a_googleapiclient_answer_naming_its_own_location_masks_the_uri_asked() -> None:
    errors = sdk("googleapiclient.errors")
    import httplib2

    key = "plainKeyValue0123"  # no shape a pattern knows: masked only as a value sent
    uri = f"https://books.googleapis.com/books/v1/volumes/x?key={key}"
    response = httplib2.Response(
        {"status": 400, "content-location": "https://books.googleapis.com/v1/elsewhere", **_JSON}
    )
    body = google_error(400, {"message": f"Bad key {key}", "status": "INVALID_ARGUMENT"})
    failure = nucleo.unwrap(errors.HttpError(response, body.encode(), uri=uri))
    assert isinstance(failure, nucleo.Http400Exception)
    assert failure.endpoint == "/v1/elsewhere"
    assert key not in failure.explain_to_llm()


def test_no_sdk_is_imported_to_map_another_exception() -> None:
    code = (
        "import sys, pytest_nucleo as nucleo\n"
        "nucleo.unwrap(ValueError('odd'))\n"
        "import requests\n"
        "try:\n"
        "    requests.get('http://127.0.0.1:9/x', timeout=0.5)\n"
        "except Exception as exc:\n"
        "    nucleo.unwrap(exc)\n"
        "sdks = ('botocore', 'googleapiclient', 'google.api_core', 'slack_sdk', 'github', "
        "'stripe', 'twilio')\n"
        "readers = [f'pytest_nucleo._http._sdks.{name}' for name in ('_botocore', "
        "'_googleapiclient', '_api_core', '_slack', '_github', '_stripe', '_twilio')]\n"
        "print(sorted(m for m in sys.modules if m in sdks or m in readers))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_each_sdk_module_loads_only_for_its_own_exception() -> None:
    sdk("botocore.exceptions")
    code = (
        "import sys, pytest_nucleo as nucleo\n"
        "from botocore.exceptions import ClientError\n"
        "nucleo.unwrap(ClientError({'ResponseMetadata': {'HTTPStatusCode': 404}}, 'GetObject'))\n"
        "print(sorted(m for m in sys.modules if m.startswith('pytest_nucleo._http._sdks.')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    found = result.stdout.strip()
    assert "_botocore" in found
    assert not any(other in found for other in ("_slack", "_github", "_stripe", "_twilio"))


@pytest.fixture(autouse=True)
def _no_aws_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No AWS setting of the machine's (a profile, an endpoint) changes what botocore does."""
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
