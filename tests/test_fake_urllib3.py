"""urllib3 as a client, and botocore and boto3 above it: the route table answers each request a
connection pool sends, while urllib3's own ``urlopen`` keeps its retries, redirects and
exception wrapping; checked against real urllib3 on loopback servers, and through real boto3
(S3), whose errors arise from the urllib3 exceptions the fake raises."""

from __future__ import annotations

import gzip
import io
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import requests
import urllib3
from syrupy.assertion import SnapshotAssertion
from urllib3 import exceptions as u
from urllib3.connection import HTTPConnection
from urllib3.util import Retry

import pytest_nucleo as nucleo
from pytest_nucleo.strategies import _TRANSPORT_FAILURES
from pytest_nucleo.testing import FakeUpstream, Outcome, respond, timeout
from pytest_nucleo.testing._fake._backends._urllib3 import ClientBackend
from tests._loopback import loopback

URL = "https://api.upstream.example/items/42"
TRANSPORT = {outcome.description: outcome for outcome in _TRANSPORT_FAILURES}
POOL = urllib3.connectionpool.HTTPConnectionPool


def _get(url: str = URL, **kwargs: Any) -> urllib3.BaseHTTPResponse:
    return urllib3.PoolManager().request("GET", url, **kwargs)


# -- what urllib3 sees -----------------------------------------------------------------------


def test_an_answer_reaches_urllib3_as_its_own_response() -> None:
    with FakeUpstream() as upstream:
        upstream.get(URL).respond(200, json={"id": 42}, headers={"X-Trace": "t-1"})
        response = _get(URL + "?full=1")
    assert isinstance(response, urllib3.HTTPResponse)
    assert (response.status, response.reason, response.version) == (200, "OK", 11)
    assert response.json() == {"id": 42}
    assert response.headers["X-Trace"] == "t-1"
    assert response.headers["Content-Type"] == "application/json"
    assert response.url == "/items/42?full=1"  # the target the pool sent, as with a server


def test_a_pool_used_directly_and_a_stream_read_in_chunks() -> None:
    with FakeUpstream() as upstream:
        upstream.get("http://api.upstream.example:8080/big").respond(200, content=b"x" * 10_000)
        pool = urllib3.HTTPConnectionPool("api.upstream.example", 8080, maxsize=1)
        response = pool.urlopen("GET", "/big", preload_content=False)
        assert pool.pool is not None
        assert pool.pool.qsize() == 0  # the connection is lent out
        chunks = list(response.stream(4096))
        response.release_conn()
        assert pool.pool.qsize() == 1  # and back once the answer was read
    assert [len(chunk) for chunk in chunks] == [4096, 4096, 1808]


def test_decode_content_decodes_as_urllib3_does_or_leaves_the_bytes() -> None:
    packed = gzip.compress(b"hello, compressed")
    with FakeUpstream() as upstream:
        upstream.get(URL).respond(200, content=packed, headers={"Content-Encoding": "gzip"})
        assert _get().data == b"hello, compressed"
        raw = _get(preload_content=False, decode_content=False)
        assert raw.headers["Content-Encoding"] == "gzip"
        assert raw.read() == packed


def test_a_head_request_and_a_204_carry_no_body() -> None:
    with FakeUpstream() as upstream:
        upstream.route("HEAD", URL).respond(200, text="not sent")
        upstream.get(URL + "/gone").respond(204)
        head = urllib3.PoolManager().request("HEAD", URL)
        assert (head.status, head.data) == (200, b"")
        assert _get(URL + "/gone").data == b""


def test_urllib3_follows_redirects_across_hosts_through_the_fake() -> None:
    with FakeUpstream() as upstream:
        upstream.get(URL).respond(302, headers={"Location": "https://cdn.upstream.example/42"})
        upstream.get("https://cdn.upstream.example/42").respond(200, text="moved here")
        assert _get().data == b"moved here"


def test_urllib3s_retries_repeat_failures_and_statuses_as_with_a_server() -> None:
    retry = Retry(total=3, status_forcelist=[503], backoff_factor=0)
    with FakeUpstream() as upstream:
        route = upstream.get(URL).sequence(timeout(), respond(503), respond(200, text="ok"))
        assert _get(retries=retry).data == b"ok"
        assert len(route.calls) == 3
        upstream.get(URL + "/slow").timeout()
        with pytest.raises(u.MaxRetryError) as caught:
            _get(URL + "/slow", retries=Retry(total=1))
        assert isinstance(caught.value.reason, u.ReadTimeoutError)
        # A POST is not retried after it was sent: the read timeout comes out as it is.
        upstream.post(URL).timeout()
        with pytest.raises(u.ReadTimeoutError):
            urllib3.PoolManager().request("POST", URL, body=b"{}", retries=Retry(total=3))
    assert [len(r.calls) for r in upstream.routes] == [3, 2, 1]


# What real urllib3 raises with retries=False, and what its default retries end in.
EXPECTED: dict[str, tuple[type[BaseException], type[BaseException] | None]] = {
    "read timeout": (u.ReadTimeoutError, TimeoutError),
    "connection refused": (u.NewConnectionError, ConnectionRefusedError),
    "connect timeout": (u.ConnectTimeoutError, TimeoutError),
    "write timeout": (u.ProtocolError, None),
    "pool timeout": (u.EmptyPoolError, None),
    "server disconnected": (u.ProtocolError, None),
    "connection reset": (u.ProtocolError, None),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_transport_failure_raises_what_urllib3_raises_there(name: str) -> None:
    kind, cause = EXPECTED[name]
    with FakeUpstream() as upstream:
        upstream.get(URL).always(TRANSPORT[name])
        with pytest.raises(u.HTTPError) as bare:
            _get(retries=False)
        with pytest.raises(u.HTTPError) as retried:
            _get(retries=Retry(total=1, backoff_factor=0))
    assert type(bare.value) is kind
    assert type(bare.value.__cause__) is cause or cause is None
    if kind is u.ProtocolError:  # urlopen's own wrapping of what the socket raised
        assert bare.value.args[0] == "Connection aborted."
    if kind is u.EmptyPoolError:  # urllib3 never retries waiting for its pool
        assert type(retried.value) is u.EmptyPoolError
    else:
        assert type(retried.value) is u.MaxRetryError
        assert type(retried.value.reason) is kind


@pytest.mark.parametrize(
    ("mode", "name"), [("refused", "connection refused"), ("silent", "read timeout")]
)
@pytest.mark.parametrize("retries", [False, 1], ids=["no-retries", "retried"])
def test_the_fake_raises_the_types_real_urllib3_raises_on_loopback(
    mode: str, name: str, retries: Any
) -> None:
    with loopback(mode) as base, pytest.raises(u.HTTPError) as real:
        _get(base + "/items/42", retries=retries, timeout=0.2)
    with FakeUpstream() as upstream:
        upstream.get(URL).always(TRANSPORT[name])
        with pytest.raises(u.HTTPError) as faked:
            _get(retries=retries)
    assert type(faked.value) is type(real.value)
    assert type(faked.value.__cause__) is type(real.value.__cause__)
    assert type(getattr(faked.value, "reason", None)) is type(getattr(real.value, "reason", None))


@contextmanager
def _capturing() -> Iterator[tuple[str, list[bytes]]]:
    """A server on 127.0.0.1 that keeps the raw request it gets and answers 200."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    seen: list[bytes] = []

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            data = b""
            while not data.endswith((b"0\r\n\r\n", b"}")) and (chunk := conn.recv(65536)):
                data += chunk
            seen.append(data)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", seen
    finally:
        listener.close()
        thread.join(timeout=5)


def _head_names(raw: bytes) -> list[str]:
    head = raw.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")[1:]
    return sorted(line.split(":")[0].lower() for line in head)


BODIES: dict[str, Any] = {
    "bytes": b'{"name": "lamp"}',
    "str": '{"name": "lamp"}',
    "file": lambda: io.BytesIO(b'{"name": "lamp"}'),
    "chunks": lambda: iter([b'{"name": ', b'"lamp"}']),
}


@pytest.mark.parametrize("kind", sorted(BODIES))
def test_a_body_is_recorded_with_the_headers_urllib3_sends_a_server(kind: str) -> None:
    def body() -> Any:
        made = BODIES[kind]
        return made() if callable(made) else made

    headers = {"Content-Type": "application/json", "Authorization": "Bearer t-1"}
    with _capturing() as (base, seen):
        urllib3.PoolManager().request("POST", base + "/items", body=body(), headers=headers)
    with FakeUpstream() as upstream:
        route = upstream.post("http://127.0.0.1/items").respond(201)
        answer = urllib3.PoolManager().request(
            "POST", "http://127.0.0.1/items?draft=1", body=body(), headers=headers
        )
    assert answer.status == 201
    (sent,) = route.calls
    assert sent.content == b'{"name": "lamp"}'
    assert str(sent.url) == "http://127.0.0.1/items?draft=1"
    assert sorted(name.lower() for name in sent.headers) == _head_names(seen[0])
    assert sent.headers["user-agent"].startswith("python-urllib3/")


def test_requests_is_answered_once_by_its_own_fake_never_through_urllib3s() -> None:
    # requests' adapter would call urllib3's pool; responses answers at the adapter, before.
    with FakeUpstream() as upstream:
        upstream.get(URL).respond(200, text="once")
        reached: list[str] = []
        faked = POOL._make_request

        def counting(*args: Any, **kwargs: Any) -> Any:
            reached.append(args[3])  # (pool, connection, method, url)
            return faked(*args, **kwargs)

        with pytest.MonkeyPatch.context() as patch:  # undone before the fake stops
            patch.setattr(POOL, "_make_request", counting)
            assert requests.get(URL, timeout=5).text == "once"
            assert _get().data == b"once"  # urllib3 itself still reaches it
    assert reached == ["/items/42"]
    assert len(upstream.requests) == 2


def test_a_pool_whose_connections_connect_their_own_way_is_left_alone() -> None:
    class Own(HTTPConnection):  # as a unix socket's connection class does
        def connect(self) -> None:
            super().connect()

    with _capturing() as (base, seen), FakeUpstream(assert_all_called=False) as upstream:
        upstream.get(base + "/items").respond(500)
        pool = urllib3.connection_from_url(base)
        pool.ConnectionCls = Own
        assert pool.urlopen("GET", "/items").status == 200  # the server's answer, not the route's
    assert seen
    assert not upstream.requests


def test_through_a_proxy_the_host_is_routed_and_a_refusal_is_the_proxys() -> None:
    proxy = urllib3.ProxyManager("http://proxy.internal:3128")
    with FakeUpstream() as upstream:
        upstream.get(URL).respond(200, text="tunnelled")
        upstream.get("http://api.upstream.example/plain").respond(200, text="forwarded")
        upstream.get("https://api.upstream.example/down").connect_error()
        assert proxy.request("GET", URL).data == b"tunnelled"
        assert proxy.request("GET", "http://api.upstream.example/plain").data == b"forwarded"
        with pytest.raises(u.ProxyError, match="Unable to connect to proxy"):
            proxy.request("GET", "https://api.upstream.example/down", retries=False)


def test_the_fake_is_gone_after_stop_and_refuses_to_start_twice() -> None:
    original = vars(POOL)["_make_request"]
    with FakeUpstream() as upstream:
        upstream.get(URL).respond(200)
        assert vars(POOL)["_make_request"] is not original
        refusal = ClientBackend().refusal()
        assert refusal is not None
        assert "HTTPConnectionPool._make_request is already patched" in refusal
        _get()
    assert vars(POOL)["_make_request"] is original
    assert ClientBackend().refusal() is None


# -- what the runtime makes of them ----------------------------------------------------------

OUTCOMES: dict[str, Outcome] = {
    "status-404": respond(404, json={"error": "no item 42"}),
    **TRANSPORT,
}


@nucleo.llm_errors(service="Inventory")
def _fetch_item(retries: Any = False) -> Any:
    response = _get(retries=retries, headers={"Authorization": "Bearer canary-t-1"})
    nucleo.raise_for_response("Inventory", response, known=["canary-t-1"])
    return response.json()


@pytest.mark.parametrize("retries", [False, 2], ids=["no-retries", "retried"])
def test_llm_errors_maps_every_urllib3_failure_the_fake_raises(
    retries: Any, llm_snapshot: SnapshotAssertion
) -> None:
    texts = []
    for name, outcome in OUTCOMES.items():
        with FakeUpstream() as upstream:
            upstream.get(URL).always(outcome)
            with pytest.raises(nucleo.LLMReadableException) as caught:
                _fetch_item(retries)
        error = caught.value
        assert not isinstance(error, nucleo.SystemException), name
        assert "canary" not in error.explain_to_llm()
        texts.append(f"{name}: {type(error).__name__}\n{error.explain_to_llm()}")
    assert "\n---\n".join(texts) == llm_snapshot


# -- botocore and boto3 ----------------------------------------------------------------------

BUCKET = "acme-notes"
S3 = f"https://{BUCKET}.s3.amazonaws.com"


def _s3_error(code: str, message: str, resource: str) -> bytes:
    """An S3 error body as S3 sends it.
    https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html"""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{code}</Code><Message>{message}</Message>"
        f"<Resource>{resource}</Resource><RequestId>4442587FB7D0A2F9</RequestId></Error>"
    ).encode()


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> Any:
    boto3 = pytest.importorskip(
        "boto3", reason="boto3 is not installed: pip install 'pytest-nucleo[aws]'"
    )
    from botocore.config import Config

    # Nothing of the machine's AWS setup is read: no file, no instance metadata.
    for name in ("AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
        monkeypatch.setenv(name, "/dev/null")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    # One attempt: botocore would retry a 503 or a timeout itself, sleeping between tries.
    return boto3.client(
        "s3",
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        config=Config(retries={"total_max_attempts": 1}, read_timeout=10),
    )


def test_s3_reads_an_object_and_a_listing_through_the_fake(s3: Any) -> None:
    listing = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
        f"<Name>{BUCKET}</Name><Prefix>notes/</Prefix><KeyCount>1</KeyCount><MaxKeys>50</MaxKeys>"
        "<IsTruncated>false</IsTruncated><Contents><Key>notes/a.txt</Key>"
        "<LastModified>2026-12-07T10:00:00.000Z</LastModified><Size>14</Size></Contents>"
        "</ListBucketResult>"
    ).encode()
    with FakeUpstream() as upstream:
        upstream.get(f"{S3}/notes/a.txt").respond(
            200, content=b"Call the shop.", headers={"Content-Type": "text/plain", "ETag": '"9b"'}
        )
        upstream.get(f"{S3}/").respond(
            200, content=listing, headers={"Content-Type": "application/xml"}
        )
        got = s3.get_object(Bucket=BUCKET, Key="notes/a.txt")
        assert got["Body"].read() == b"Call the shop."
        assert got["ETag"] == '"9b"'
        keys = s3.list_objects_v2(Bucket=BUCKET, Prefix="notes/", MaxKeys=50)
    assert [item["Key"] for item in keys["Contents"]] == ["notes/a.txt"]
    (sent,) = upstream.routes[1].calls
    assert sent.url.params["list-type"] == "2"
    assert sent.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")


def test_s3_uploads_a_streamed_body_to_a_custom_endpoint(s3: Any) -> None:
    boto3 = pytest.importorskip("boto3")
    from botocore.config import Config

    minio = boto3.client(
        "s3", region_name="us-east-1", endpoint_url="https://storage.internal.example",
        aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="secret",
        config=Config(retries={"total_max_attempts": 1}, s3={"addressing_style": "path"}),
    )  # fmt: skip
    with FakeUpstream() as upstream:
        route = upstream.put(f"https://storage.internal.example/{BUCKET}/notes/b.txt").respond(
            200, headers={"ETag": '"e1"'}
        )
        answer = minio.put_object(Bucket=BUCKET, Key="notes/b.txt", Body=io.BytesIO(b"a note"))
    assert answer["ETag"] == '"e1"'
    (sent,) = route.calls
    assert b"a note" in sent.content  # in botocore's aws-chunked framing, with its checksum


@pytest.mark.parametrize(
    ("status", "code", "message"),
    [
        (404, "NoSuchKey", "The specified key does not exist."),
        (503, "SlowDown", "Please reduce your request rate."),
    ],
)
def test_s3_errors_come_from_the_xml_body_the_route_sends(
    s3: Any, status: int, code: str, message: str
) -> None:
    from botocore.exceptions import ClientError

    body = _s3_error(code, message, f"/{BUCKET}/notes/c.txt")
    with FakeUpstream() as upstream:
        upstream.get(f"{S3}/notes/c.txt").respond(
            status, content=body, headers={"Content-Type": "application/xml"}
        )
        with pytest.raises(ClientError) as caught:
            s3.get_object(Bucket=BUCKET, Key="notes/c.txt")
    error = caught.value.response
    assert (error["Error"]["Code"], error["Error"]["Message"]) == (code, message)
    assert error["ResponseMetadata"]["HTTPStatusCode"] == status


@pytest.mark.parametrize(
    ("name", "botocore_error", "urllib3_error"),
    [
        ("read timeout", "ReadTimeoutError", u.ReadTimeoutError),
        ("connection refused", "EndpointConnectionError", u.NewConnectionError),
        ("connect timeout", "ConnectTimeoutError", u.ConnectTimeoutError),
        ("server disconnected", "ConnectionClosedError", u.ProtocolError),
    ],
)
def test_botocore_turns_the_fakes_urllib3_errors_into_its_own(
    s3: Any, name: str, botocore_error: str, urllib3_error: type[BaseException]
) -> None:
    from botocore import exceptions

    with FakeUpstream() as upstream:
        upstream.get(f"{S3}/notes/d.txt").always(TRANSPORT[name])
        with pytest.raises(exceptions.BotoCoreError) as caught:
            s3.get_object(Bucket=BUCKET, Key="notes/d.txt")
    assert type(caught.value) is getattr(exceptions, botocore_error)
    assert type(caught.value.kwargs["error"]) is urllib3_error
    assert f"{S3}/notes/d.txt" in str(caught.value)
