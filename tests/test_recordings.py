"""Recordings read into scenarios: cassettes and HAR files recorded here from a loopback server,
the committed ones under tests/recordings/, bad ones, the command line and the strategy."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
import vcr
from hypothesis import given, settings
from recorded_tools import get_report

from pytest_nucleo import strategies as nst
from pytest_nucleo.__main__ import main
from pytest_nucleo.testing import LLMText
from pytest_nucleo.testing._recorded._recording import (
    RecordedExchange,
    RecordingError,
    read_recording,
    recorded_failures,
    recorded_scenario,
    replay_body,
    replay_headers,
)
from pytest_nucleo.testing._recorded._replay import would_call

RECORDINGS = Path(__file__).parent / "recordings"
TOKEN = "nucleoLoopbackToken0123456789"
QUERY_KEY = "nucleoLoopbackQueryKey0001"
COOKIE = "nucleoLoopbackCookie0001"

# What the loopback upstream answers per path: status, content type, body. The 401 echoes
# the Authorization header it got, as careless servers do.
ANSWERS: dict[str, tuple[int, str, str]] = {
    "/items/1": (200, "application/json", '{"id": 1, "name": "widget"}'),
    "/items/2": (
        403,
        "application/json; charset=utf-8",
        '{"message": "API rate limit exceeded for user ID 1234567.", '
        '"documentation_url": "https://docs.github.com/rest/overview/rate-limits"}',
    ),
    "/items/3": (
        502,
        "text/html",
        "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway"
        "</h1></center><hr><center>nginx</center></body></html>",
    ),
    "/items/4": (200, "application/json", '{"status": "error", "message": "quota exhausted"}'),
    "/items/5": (401, "application/json", '{"error": "bad token", "got": "%(auth)s"}'),
}


class _Upstream(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        status, content_type, body = ANSWERS[self.path.split("?")[0]]
        payload = (body % {"auth": self.headers.get("Authorization", "")}).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Set-Cookie", f"session={COOKIE}; Path=/; HttpOnly")
        if status == 403:
            self.send_header("X-RateLimit-Remaining", "0")
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep the test output clean


@pytest.fixture(scope="module")
def loopback() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join()


def _call_every_path(base: str) -> None:
    with httpx.Client(headers={"Authorization": f"Bearer {TOKEN}"}) as client:
        for path in ANSWERS:
            client.get(f"{base}{path}", params={"api_key": QUERY_KEY, "page": "1"})


@pytest.mark.parametrize("serializer", ["yaml", "json"])
def test_a_cassette_vcrpy_records_from_loopback_traffic_is_read(
    loopback: str, tmp_path: Path, serializer: str
) -> None:
    cassette = tmp_path / f"live.{serializer}"
    recorder = vcr.VCR(serializer=serializer, record_mode="all")
    with recorder.use_cassette(str(cassette)):
        _call_every_path(loopback)
    entries = read_recording(cassette)
    assert all(isinstance(entry, RecordedExchange) for entry in entries)
    assert [(e.entry, e.status, e.failure()) for e in entries] == [  # type: ignore[union-attr]
        (1, 200, None),
        (2, 403, "status"),
        (3, 502, "status"),
        (4, 200, "error-object"),
        (5, 401, "status"),
    ]
    _the_secrets_stay_out(entries)


def test_a_har_file_written_from_loopback_traffic_is_read(loopback: str, tmp_path: Path) -> None:
    har_entries: list[dict[str, Any]] = []

    def save(response: httpx.Response) -> None:
        response.read()
        request = response.request
        har_entries.append(
            {
                "request": {
                    "method": request.method,
                    "url": str(request.url),
                    "headers": [{"name": k, "value": v} for k, v in request.headers.items()],
                    "cookies": [],
                },
                "response": {
                    "status": response.status_code,
                    "statusText": response.reason_phrase,
                    "headers": [{"name": k, "value": v} for k, v in response.headers.items()],
                    "cookies": [{"name": "session", "value": COOKIE}],
                    # A browser keeps text bodies as text and binary ones as base64.
                    "content": {
                        "size": len(response.content),
                        "mimeType": response.headers["content-type"],
                        "text": base64.b64encode(response.content).decode(),
                        "encoding": "base64",
                    },
                },
            }
        )

    with httpx.Client(
        headers={"Authorization": f"Bearer {TOKEN}"}, event_hooks={"response": [save]}
    ) as client:
        for path in ANSWERS:
            client.get(f"{loopback}{path}", params={"api_key": QUERY_KEY})
    har = tmp_path / "browser.har"
    har.write_text(json.dumps({"log": {"version": "1.2", "entries": har_entries}}))
    entries = read_recording(har)
    assert [(e.status, e.failure()) for e in entries] == [  # type: ignore[union-attr]
        (200, None),
        (403, "status"),
        (502, "status"),
        (200, "error-object"),
        (401, "status"),
    ]
    _the_secrets_stay_out(entries)


def _the_secrets_stay_out(entries: list[Any]) -> None:
    echoed = entries[4]
    assert TOKEN.encode() in echoed.body  # the server did echo it
    for entry in entries:
        assert {TOKEN, QUERY_KEY, COOKIE} <= set(entry.secrets())
        replayed = replay_body(entry) + json.dumps(replay_headers(entry)).encode()
        for secret in (TOKEN, QUERY_KEY, COOKIE):
            assert secret.encode() not in replayed
        assert "set-cookie" not in replay_headers(entry)
        assert QUERY_KEY not in entry.shown
        assert "127.0.0.1" not in entry.shown
    assert b'"got": "[REDACTED]"' in replay_body(echoed)


def test_a_recorded_failure_replays_its_real_status_headers_and_body(loopback: str) -> None:
    [rate_limited] = [
        e
        for e in read_recording(RECORDINGS / "github_rate_limit.yaml")
        if isinstance(e, RecordedExchange) and e.status == 403
    ]
    scenario = recorded_scenario(rate_limited, "fetch", "recorded-github-2")
    response = scenario.outcome(httpx.Request("GET", "https://api.github.com/x"))
    assert response.status_code == 403
    assert response.headers["x-ratelimit-remaining"] == "0"
    # The Date stays, so the epoch reset reads as the 30 minutes the service meant, not as a
    # time long past by our clock.
    assert response.headers["date"] == "Tue, 01 Dec 2026 20:14:07 GMT"
    assert "set-cookie" not in response.headers
    assert b"API rate limit exceeded for user ID 1234567" in response.content
    assert scenario.expect.describe() == "UpstreamThrottleException (uncorrectable)"
    assert "nucleoCanaryRecorded" not in repr(scenario)


def test_the_committed_recordings_hold_these_failures() -> None:
    listed = [
        (Path(e.source).name, e.entry, e.status, e.failure())
        for e in recorded_failures(sorted(RECORDINGS.iterdir()))
        if isinstance(e, RecordedExchange)
    ]
    assert listed == [
        ("github_rate_limit.yaml", 2, 403, "status"),
        ("proxy_502.har", 2, 502, "status"),
        ("s3_slowdown.json", 1, 503, "status"),
        ("s3_slowdown.json", 2, 403, "status"),
        ("vendor_error_200.yaml", 1, 200, "error-object"),
    ]


# -- bad recordings ---------------------------------------------------------------------------

V1 = "version: 1\ninteractions:\n"
GOOD_YAML_ENTRY = (
    "- request: {method: GET, uri: 'https://api.example/a', headers: {}, body: null}\n"
    "  response: {status: {code: 500, message: x}, headers: {}, body: {string: 'down'}}\n"
)
HAR_HEAD = '{"log": {"version": "1.2", "entries": ['
HAR_OK = (
    '{"request": {"method": "GET", "url": "https://api.example/a", "headers": []}, '
    '"response": {"status": 500, "headers": [], "content": {"size": 4, "text": "down"}}}'
)


@pytest.mark.parametrize(
    ("name", "content", "entry", "says"),
    [
        (
            "malformed.yaml",
            V1 + "- request: {method: GET\n  response: [\n",
            None,
            "not valid YAML at line",
        ),
        ("old.yaml", "- request: {}\n  response: {}\n", None, "older than 1.0"),
        ("future.yaml", "version: 2\ninteractions: []\n", None, "format version 2"),
        ("plain.yaml", "just: a mapping\n", None, 'no top-level "interactions"'),
        ("python.yaml", V1 + "- !!python/object/apply:os.system [ls]\n", None, "not valid YAML"),
        ("truncated.har", HAR_HEAD + HAR_OK[:60], None, "looks truncated"),
        ("nolog.har", '{"entries": []}', None, 'no "log.entries"'),
        ("notes.txt", "hello", None, "not a recording this reader knows"),
        ("binary.json", "\udcff", None, "not UTF-8"),
        (
            "nostatus.yaml",
            V1
            + "- request: {method: GET, uri: 'https://api.example/a'}\n  response: {}\n"
            + GOOD_YAML_ENTRY,
            1,
            "no valid status code",
        ),
        (
            "body.yaml",
            V1 + GOOD_YAML_ENTRY.replace("{string: 'down'}", "{string: [1, 2]}"),
            1,
            "body is a list, not text or bytes",
        ),
        (
            "brotli.yaml",
            V1
            + GOOD_YAML_ENTRY.replace(
                "headers: {},", "headers: {Content-Encoding: [br]},", 2
            ).replace("headers: {}, body: null", "headers: {}, body: null", 1),
            1,
            "compressed with 'br'",
        ),
        (
            "badbase64.har",
            HAR_HEAD
            + HAR_OK.replace('"text": "down"', '"text": "%%%", "encoding": "base64"')
            + "]}}",
            1,
            "not valid base64",
        ),
        (
            "unsaved.har",
            HAR_HEAD + HAR_OK.replace(', "text": "down"', "") + "]}}",
            1,
            "was not saved",
        ),
    ],
)
def test_a_bad_recording_names_the_file_and_the_entry(
    tmp_path: Path, name: str, content: str, entry: int | None, says: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8", "surrogateescape"))
    if entry is None:
        with pytest.raises(RecordingError) as caught:
            read_recording(path)
        error = caught.value
    else:
        found = read_recording(path)
        error = found[entry - 1]  # type: ignore[assignment]
        assert isinstance(error, RecordingError)
        assert all(isinstance(other, RecordedExchange) for other in found[entry:])
    assert error.entry == entry
    message = str(error)
    assert message.startswith(str(path) + (f", entry {entry}: " if entry else ": "))
    assert says in message
    assert message.endswith(
        '. See pytest-nucleo\'s docs, "Replay recorded failures" (https://pytest-nucleo.github.io/pytest-nucleo/how-to/recorded-failures/).'
    )


def test_a_missing_recording_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RecordingError, match=r"missing\.yaml: cannot be read \(No such file"):
        read_recording(tmp_path / "missing.yaml")


# -- which recorded calls the contract's valid call would make ---------------------------------


def _exchange(method: str, url: str) -> RecordedExchange:
    return RecordedExchange("x.yaml", 1, method, url, (), b"", 500, (), b"")


@pytest.mark.parametrize(
    ("endpoint", "call", "recorded", "matches"),
    [
        ("GET https://api.x/orders/42", {"n": 42}, "https://api.x/orders/7", True),
        ("GET https://api.x/orders/42", {}, "https://api.x/orders/7", True),  # a number is an id
        ("GET https://api.x/orders/ab12cd34", {}, "https://api.x/orders/ff00ee99", True),
        (
            "GET https://api.x/reports/2026-11.json",
            {"m": "2026-11"},
            "https://api.x/reports/2026-12.json",
            True,
        ),
        (
            "GET https://api.x/reports/2026-11.json",
            {"m": "2026-11"},
            "https://api.x/reports/2026-12.xml",
            False,
        ),
        ("GET https://api.x/orders/42", {}, "https://api.x/orders/7/items", False),
        ("GET https://api.x/orders/42", {}, "https://api.x/users/7", False),
        ("GET https://api.x/orders/42", {}, "https://other.x/orders/7", False),
        ("POST https://api.x/orders/42", {}, "https://api.x/orders/7", False),
        ("GET https://API.X/orders/42", {}, "https://api.x:443/orders/7", True),
        ("GET https://api.x/search?q=a&limit=5", {}, "https://api.x/search?limit=9&q=b", True),
        ("GET https://api.x/search?q=a", {}, "https://api.x/search?q=b&api_key=k&_=17", True),
        ("GET https://api.x/search?q=a", {}, "https://api.x/search?q=b&page=2", False),
        ("GET https://api.x/search", {}, "https://api.x/search?q=b&page=2", True),
    ],
)
def test_a_recorded_call_matches_the_endpoint_as_documented(
    endpoint: str, call: dict[str, Any], recorded: str, matches: bool
) -> None:
    assert would_call(endpoint, call, _exchange("GET", recorded)) is matches


# -- the command line and the strategy ---------------------------------------------------------


def test_the_command_lists_each_failure_with_what_the_model_reads(
    capsys: pytest.CaptureFixture[str], llm_snapshot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(RECORDINGS.parent)
    assert main(["scenarios", "recordings/*"]) == 0
    out = capsys.readouterr().out
    assert "nucleocanary" not in out.lower()
    assert "AKIANUCLEO" not in out
    assert LLMText(out) == llm_snapshot


def test_the_command_exits_1_when_a_recording_is_bad_and_lists_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.har"
    bad.write_text(HAR_HEAD)
    assert main(["scenarios", str(bad), str(RECORDINGS / "proxy_502.har")]) == 1
    captured = capsys.readouterr()
    assert f"{bad}: is not valid JSON" in captured.err
    assert "proxy_502.har:2 GET /api/v1/incidents/4711 502 -> Http502Exception" in captured.out


@pytest.mark.parametrize(
    "argv", [[], ["scenarios"], ["replay", "x.yaml"], ["scenarios", "--kind=x", "a"]]
)
def test_the_command_exits_2_on_bad_usage(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert "usage: python -m pytest_nucleo" in capsys.readouterr().err


@settings(max_examples=20, database=None)
@given(nst.recorded_scenarios([str(RECORDINGS / "s3_*.json")], kinds=["fetch"]))
def test_recorded_scenarios_replay_for_property_tests(scenario: Any) -> None:
    assert scenario.name in ("recorded-s3_slowdown-1", "recorded-s3_slowdown-2")
    scenario.verify(
        get_report,
        {"month": "2026-11"},
        endpoint="GET https://widgets-bucket.s3.amazonaws.com/reports/2026-11.json",
    )


def test_recorded_scenarios_refuse_bad_input(tmp_path: Path) -> None:
    from hypothesis.errors import InvalidArgument

    (tmp_path / "bad.har").write_text(HAR_HEAD)
    (tmp_path / "ok.yaml").write_text(
        V1 + GOOD_YAML_ENTRY.replace("500", "200").replace("down", "{}")
    )
    for strategy, says in [
        (nst.recorded_scenarios(str(tmp_path / "bad.har")), "must be a list"),
        (nst.recorded_scenarios([str(tmp_path / "bad.har")]), "bad.har: is not valid JSON"),
        (nst.recorded_scenarios([str(tmp_path / "none*.yaml")]), "matches no file"),
        (nst.recorded_scenarios([str(tmp_path / "ok.yaml")]), "hold no failure"),
        (nst.recorded_scenarios([str(tmp_path / "ok.yaml")], kinds=["get"]), "kinds="),
    ]:

        @given(strategy)
        def draw(scenario: Any) -> None:
            pass

        with pytest.raises(InvalidArgument, match=says):
            draw()


def test_neither_the_runtime_nor_the_plugin_imports_yaml_or_vcrpy() -> None:
    import subprocess
    import sys

    code = (
        "import sys, pytest_nucleo\n"
        "[getattr(pytest_nucleo, name) for name in pytest_nucleo.__all__]\n"
        "import pytest_nucleo.plugin\n"
        "from pytest_nucleo.testing import ToolContract\n"
        # JSON cassettes and HAR files need no extra: a plain install reads them.
        "from pytest_nucleo.testing._recorded._recording import recorded_failures\n"
        f"recorded_failures([{str(RECORDINGS / 's3_slowdown.json')!r}, "
        f"{str(RECORDINGS / 'proxy_502.har')!r}])\n"
        "print(' '.join(sorted({'yaml', 'vcr'} & set(sys.modules))))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


def test_the_tags_and_shapes_vcrpy_writes_are_read(tmp_path: Path) -> None:
    import gzip

    packed = base64.b64encode(gzip.compress(b'{"error": "overloaded"}')).decode()
    cassette = tmp_path / "tags.yaml"
    cassette.write_text(
        V1 + "- request: {method: get, uri: !!python/str 'https://api.example/a', body: null,\n"
        "    headers: {Accept: !!python/tuple [application/json]}}\n"
        "  response:\n"
        "    status: {code: 503, message: Service Unavailable}\n"
        "    headers: {Content-Encoding: [gzip], Content-Type: [application/json]}\n"
        f"    body: {{string: !!binary '{packed}'}}\n"
        # The shape vcrpy's httpx support wrote before it used the common one.
        "- request: {method: GET, uri: 'https://api.example/b', body: null, headers: {}}\n"
        "  response: {status_code: 429, headers: {Retry-After: ['7']}, content: 'slow down'}\n"
    )
    first, second = read_recording(cassette)
    assert isinstance(first, RecordedExchange)
    assert (first.method, first.status, first.body) == ("GET", 503, b'{"error": "overloaded"}')
    assert first.request_headers == (("Accept", "application/json"),)
    assert first.header("content-encoding") is None  # the body is stored decompressed
    assert isinstance(second, RecordedExchange)
    assert (second.status, second.header("retry-after"), second.body) == (429, "7", b"slow down")


def test_a_binary_body_the_format_holds_is_replayed_as_bytes(
    tmp_path: Path, llm_snapshot: Any
) -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
    cassette = tmp_path / "binary.yaml"
    cassette.write_text(
        V1 + "- request: {method: GET, uri: 'https://widgets-bucket.s3.amazonaws.com/r/1.json'}\n"
        "  response:\n"
        "    status: {code: 500, message: Internal Server Error}\n"
        "    headers: {Content-Type: [image/png]}\n"
        f"    body: {{string: !!binary '{base64.b64encode(png).decode()}'}}\n"
    )
    [exchange] = read_recording(cassette)
    assert isinstance(exchange, RecordedExchange)
    assert exchange.body == png
    seen = recorded_scenario(exchange, "fetch", "recorded-binary-1").verify(
        get_report,
        {"month": "2026-11"},
        endpoint="GET https://widgets-bucket.s3.amazonaws.com/reports/2026-11.json",
    )
    assert seen.cls == "Http500Exception"
    assert LLMText(seen.text or "") == llm_snapshot
