"""Every class of planted secret stays masked on every path a text takes: ``str``, ``repr``,
the model text, log records, excerpts and fields cut short, report files and snapshot files."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import httpx
import pytest
import respx
from secret_canaries import CANARIES

import pytest_nucleo as nucleo
from pytest_nucleo import body_excerpt, http_exception, run_tool
from pytest_nucleo._text._excerpt import EXCERPT_HEAD
from pytest_nucleo._text._render import one_line
from pytest_nucleo._text._secrets import MASK, redact

IDS = [name for name, _, _ in CANARIES]


@pytest.mark.parametrize(("name", "text", "secret"), CANARIES, ids=IDS)
def test_each_class_is_masked_by_its_shape(name: str, text: str, secret: str) -> None:
    masked = redact(text)
    assert secret not in masked
    assert MASK in masked or "@" not in masked  # URL userinfo is dropped, not replaced


@pytest.mark.parametrize(("name", "text", "secret"), CANARIES, ids=IDS)
def test_each_class_is_masked_in_every_exception_text(name: str, text: str, secret: str) -> None:
    failures = [
        nucleo.ExternalServiceException("Shop", f"the call failed: {text}"),
        nucleo.InvalidInputException("isbn", text, f"the catalogue refused {text}"),
        http_exception("Shop", "https://shop.example/v1/books", 500, f"upstream said: {text}"),
        http_exception("Shop", "https://shop.example/v1/books", 400, json.dumps({"error": text})),
    ]
    for failure in failures:
        for shown in (str(failure), repr(failure), failure.explain_to_llm()):
            assert secret not in shown, (type(failure).__name__, shown)


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize(("name", "text", "secret"), CANARIES, ids=IDS)
def test_each_class_is_masked_in_what_the_runner_shows_and_logs(
    name: str, text: str, secret: str, caplog: pytest.LogCaptureFixture
) -> None:
    def lookup(isbn: str) -> str:
        raise RuntimeError(f"upstream refused: {text}")

    def refuse(isbn: str) -> str:
        raise nucleo.InvalidInputException("isbn", isbn, f"no book for {text}")

    caplog.set_level(logging.DEBUG)
    for tool in (lookup, refuse):
        result = run_tool(tool, {"isbn": text})
        assert result.is_error
        for shown in (result.text, repr(result), repr(result.exception)):
            assert secret not in shown
    assert caplog.records
    assert secret not in caplog.text  # formatted records, tracebacks included
    for record in caplog.records:
        assert secret not in record.getMessage()


@pytest.mark.parametrize(("name", "text", "secret"), CANARIES, ids=IDS)
def test_each_class_is_masked_wherever_an_excerpt_cuts(name: str, text: str, secret: str) -> None:
    # The head cut falls at every place of the secret's text, and then the tail cut does.
    for shift in range(0, len(text) + 1, 3):
        head_cut = "word " * ((EXCERPT_HEAD - shift) // 5) + text + " end" * 2000
        assert secret not in body_excerpt(head_cut.encode()), shift
        tail_cut = "word " * 2000 + text + " z" * (shift // 2)
        assert secret not in body_excerpt(tail_cut.encode()), shift
        assert secret not in body_excerpt(tail_cut), shift


@pytest.mark.parametrize(("name", "text", "secret"), CANARIES, ids=IDS)
def test_each_class_is_masked_wherever_a_field_cuts(name: str, text: str, secret: str) -> None:
    for limit in range(1, len(text) + 40, 3):
        assert secret not in one_line(f"failed: {text} and more", limit=limit), limit


@pytest.mark.nucleo(expect_leaks=True)
def test_the_issue_repr_shows_no_part_of_the_key() -> None:
    def call_model() -> str:
        raise RuntimeError("Incorrect API key provided: sk-proj-ZZZZ0000YYYY1111XXXX2222WWWW3333")

    failure = run_tool(call_model).exception
    assert isinstance(failure, nucleo.SystemException)
    assert repr(failure) == (
        "SystemException(component='call_model', "
        "technical_message='Incorrect API key provided: [REDACTED]')"
    )


def test_a_long_value_is_masked_before_repr_cuts_it() -> None:
    failure = nucleo.ExternalServiceException(
        "Shop", "refused " + "x" * 60 + " Bearer " + "T0KEN" * 40 + " tail"
    )
    assert "T0KEN" not in repr(failure)
    assert "..." in repr(failure)  # it was still cut


REPORT_TEST = """
import httpx
import pytest
import respx
from secret_canaries import CANARIES
import pytest_nucleo as nucleo
from pytest_nucleo import run_tool

NAMES = [name for name, _, _ in CANARIES]
TEXTS = [text for _, text, _ in CANARIES]


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("text", TEXTS, ids=NAMES)
def test_leak(text):
    def lookup(isbn):
        raise RuntimeError(f"upstream refused: {text}")

    assert run_tool(lookup, {"isbn": "1"}).is_error


@pytest.mark.parametrize("text", TEXTS, ids=NAMES)
def test_unclean(text):
    def sloppy(isbn):
        failure = nucleo.ExternalServiceException("Shop", "down")
        failure.llm_message = f"Shop failed: <Client object at 0x7f3a2b1c4d50> {text}"
        raise failure

    assert run_tool(sloppy, {"isbn": "1"}).is_error


@pytest.mark.parametrize("text", TEXTS, ids=NAMES)
def test_snapshot(text, llm_snapshot):
    failure = nucleo.ExternalServiceException("Shop", f"the call failed: {text}")
    assert failure.explain_to_llm() == llm_snapshot
"""


def test_each_class_is_masked_in_the_report_and_snapshot_files(pytester: pytest.Pytester) -> None:
    pytester.syspathinsert(Path(__file__).parent)
    pytester.makepyfile(test_planted=REPORT_TEST)
    result = pytester.runpytest(
        "--snapshot-update", "--nucleo-strict", "--nucleo-report=out/report", "-p", "no:randomly"
    )
    result.assert_outcomes(passed=3 * len(CANARIES))
    report = pytester.path / "out"
    written = {path.name: path.read_text() for path in report.iterdir()}
    assert set(written) == {"report.json", "report.md"}
    observations = json.loads(written["report.json"])["observations"]
    assert len(observations) == len(CANARIES)  # the unclean texts, each once
    snapshots = list((pytester.path / "__snapshots__").glob("*.txt"))
    assert snapshots
    files = {**written, **{path.name: path.read_text() for path in snapshots}}
    output = result.stdout.str() + result.stderr.str()
    for name, _, secret in CANARIES:
        assert secret not in output, name
        for file_name, content in files.items():
            assert secret not in content, (name, file_name)


class Shop(nucleo.ServiceClient):
    service_name = "Shop"
    base_url = "https://shop.example"


def test_what_the_client_sent_is_masked_however_the_server_echoes_it() -> None:
    # A Basic credential's password echoed alone, and a key echoed with lowercase escapes.
    echo = (
        "user shop-user with password canary-basic-pw denied; "
        "key a%2fb%2bc%3dcanary-key rejected; cookie canary-cookie-9"
    )
    with respx.mock(assert_all_called=True) as router:
        router.get("https://shop.example/orders").respond(401, text=echo)
        client = httpx.Client(auth=("shop-user", "canary-basic-pw"))
        with pytest.raises(nucleo.Http401Exception) as info:
            Shop(client).request(
                "GET",
                "/orders",
                headers={"X-Api-Key": "a/b+c=canary-key", "Cookie": "s=canary-cookie-9"},
            )
    failure = info.value
    for shown in (str(failure), repr(failure), failure.explain_to_llm()):
        for secret in ("canary-basic-pw", "canary-key", "canary-cookie"):
            assert secret not in shown, (secret, shown)
