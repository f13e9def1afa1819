"""The worst texts the package used to send, pinned in their new wording.

Each was found in the committed snapshots when they were read as a model reads them; the
style they broke is "How the texts are written" in docs/explanation/failure-contract.md.
"""

from __future__ import annotations

import json

import httpx
import pytest

import pytest_nucleo as nucleo
from pytest_nucleo import LimiterRefusalException, UpstreamFailure
from pytest_nucleo.testing import text_problems

NOT_CORRECTABLE = nucleo.UNCORRECTABLE_HINT
CORRECTABLE = nucleo.CORRECTABLE_HINT


def test_a_throttle_under_the_not_correctable_line_no_longer_asks_to_call_again() -> None:
    # Was: "... It asked us to wait 30 seconds before calling again." above "not correctable",
    # the text all four adapters delivered for a 429.
    text = nucleo.UpstreamThrottleException(
        "orders-api", "429 Too Many Requests", retry_after=30
    ).explain_to_llm()
    assert text == (
        "The external service orders-api is throttling our requests (too many requests): 429 "
        "Too Many Requests. This tool will not work for about 30 seconds; use another way or "
        f"come back later.\n{NOT_CORRECTABLE}"
    )
    no_wait = nucleo.UpstreamThrottleException("orders-api", "429").explain_to_llm()
    assert "No wait was given; use another way or come back later." in no_wait
    assert text_problems(text) == text_problems(no_wait) == []


def test_an_outage_does_not_repeat_its_hint_line() -> None:
    # Was: "... Calling it again now is unlikely to help." right above the line saying so.
    text = nucleo.http_exception(
        "Shop API", "/v1/orders/00000099", 500, "Internal Server Error"
    ).explain_to_llm()
    assert text == (
        "The external service Shop API failed with an internal error on /v1/orders/00000099 "
        '(HTTP 500 Internal Server Error). It said: "Internal Server Error". Use another way, '
        f"or come back later.\n{NOT_CORRECTABLE}"
    )


def _wrapped(status: int, body: bytes) -> nucleo.LLMReadableException:
    try:
        with nucleo.service_call("PubChem", "cid", 2244, "compound fetch"):
            raise nucleo.http_exception(
                "PubChem",
                "https://pubchem.example/rest/pug/compound/cid/2244/JSON",
                status,
                body,
            )
    except nucleo.LLMReadableException as failure:
        return failure
    raise AssertionError("service_call let the failure through")


def test_a_service_call_names_the_service_once_and_does_not_call_a_413_the_values_fault() -> None:
    # Was: "The parameter 'cid' got 2244, which is not valid: compound fetch: The service
    # PubChem rejected the request ... as too large ... Send less", and "The external service
    # PubChem failed during compound fetch: The external service PubChem ...".
    too_large = _wrapped(413, b'{"error": "request too large"}').explain_to_llm()
    assert too_large == (
        "During compound fetch, with the parameter 'cid' = 2244: The service PubChem rejected "
        "the request to /rest/pug/compound/cid/2244/JSON as too large (HTTP 413 Content Too "
        'Large). It said: "{"error": "request too large"}". Ask for less: a smaller input, '
        f"fewer items or a narrower range.\n{CORRECTABLE}"
    )
    outage = _wrapped(500, b"backend down").explain_to_llm()
    assert outage == (
        "During compound fetch: The external service PubChem failed with an internal error on "
        '/rest/pug/compound/cid/2244/JSON (HTTP 500 Internal Server Error). It said: "backend '
        f'down". Use another way, or come back later.\n{NOT_CORRECTABLE}'
    )
    assert text_problems(too_large) == text_problems(outage) == []


S3_SIGNATURE = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SignatureDoesNotMatch</Code>'
    b"<Message>The request signature we calculated does not match the signature you provided. "
    b"Check your key and signing method.</Message><AWSAccessKeyId>AKIAIOSFODNN7EXAMPLE"
    b"</AWSAccessKeyId><StringToSign>AWS4-HMAC-SHA256\n20261201T201409Z\n"
    b"20261201/us-east-1/s3/aws4_request</StringToSign><SignatureProvided>9f86d081"
    b"</SignatureProvided><CanonicalRequest>GET\n/reports/2026-12.json</CanonicalRequest>"
    b"<RequestId>4442587FB7D0A2FA</RequestId><HostId>9Gjjt1m+cjU4OPvX9O9</HostId></Error>"
)


def test_quotes_carry_words_never_masks_brackets_or_signing_details() -> None:
    # Was: quotes of bodies made of [REDACTED], of S3's canonical request and key scope, and
    # about 1,100 brackets of a deep JSON body.
    s3 = nucleo.http_exception(
        "Reports bucket", "/reports/2026-12.json", 403, S3_SIGNATURE,
        {"Content-Type": "application/xml"},
    ).llm_message  # fmt: skip
    assert s3 == (
        "The service Reports bucket refused the tool access to /reports/2026-12.json with its "
        'credentials (HTTP 403 Forbidden). It said: "SignatureDoesNotMatch. The request '
        "signature we calculated does not match the signature you provided. Check your key and "
        "signing method.\". Only the user can fix this: tell them the tool's credentials lack "
        "the permission this needs; the model cannot grant it."
    )
    deep = nucleo.http_exception(
        "Shop API", "/api/orders", 500, b"[" * 100_000 + b"]" * 100_000,
        {"Content-Type": "application/json"},
    ).llm_message  # fmt: skip
    assert "Its answer was a JSON body of 195 kB with no message field." in deep
    assert "[[" not in deep
    echo = nucleo.http_exception(
        "Shop", "/orders/7", 500,
        b'{"error": "upstream failure", "echo": {"api_key": "[REDACTED]", "aws": "[REDACTED]"},'
        b' "authorization": "[REDACTED]", "received": ["[REDACTED]"]}',
    ).llm_message  # fmt: skip
    assert 'It said: "upstream failure".' in echo
    assert "REDACTED" not in echo


def test_no_loopback_address_and_no_limiter_settings_reach_the_model() -> None:
    # Was: "The external service 127.0.0.1 gave no answer ..." and "The rate limiter
    # 'github-search' of this tool (nominal rate: 30 requests per 60 seconds) ... It stays off
    # for the next 45 seconds ... the server asked us to wait 60 seconds" (two waits).
    refused = httpx.ConnectError(
        "refused", request=httpx.Request("GET", "http://127.0.0.1:8080/orders/7")
    )
    local = nucleo.unwrap(refused, component="get_order").llm_message
    assert local.startswith("The external service called by get_order gave no answer")
    assert "127.0.0.1" not in local
    refusal = LimiterRefusalException(
        "github-search", 30, 60, 45, "open",
        UpstreamFailure("GitHub", "API rate limit exceeded", 429, 60),
    )  # fmt: skip
    assert refusal.explain_to_llm() == (
        "This tool's calls were stopped after repeated failures of the service it calls (the "
        'last: HTTP 429 from GitHub, saying "API rate limit exceeded"). This tool will not work '
        f"for about 45 seconds; use another way or come back later.\n{NOT_CORRECTABLE}"
    )
    assert text_problems(refusal.explain_to_llm(), retry_after=45) == []
    assert [p.rule for p in text_problems(refusal.explain_to_llm(), retry_after=60)] == ["wait"]


def test_instructions_meant_for_a_person_are_not_quoted() -> None:
    # Was: "... Incorrect API key provided: [REDACTED]. You can find your API key at
    # https://platform.openai.com/account/api-keys." in a provider's credentials text.
    from pytest_nucleo._text._quote import without_instructions

    said = (
        "Incorrect API key provided: [REDACTED]. You can find your API key at "
        "https://platform.openai.com/account/api-keys."
    )
    assert without_instructions(said) == "Incorrect API key provided: [REDACTED]."
    billing = "Your credit balance is too low. Please go to Plans & Billing to upgrade."
    assert without_instructions(billing) == "Your credit balance is too low."
    only_a_link = "See https://status.example for details."
    assert without_instructions(only_a_link) == only_a_link  # nothing else to say: kept


# A service name and a path near the lengths they are bounded to (200 and 300 characters):
# the sentence naming both passed the bound of the text before its hint line (446 to 668
# characters for a 404), which the package's own text checks then reported.
LONG_SERVICE = "Inventory " * 20
LONG_URL = "https://api.example/" + "/".join(f"segment{n}" for n in range(28)) + "/item-42"


def test_the_long_path_is_as_long_as_a_path_is_kept() -> None:
    assert len(nucleo.safe_endpoint(LONG_URL)) == len(LONG_URL) - len("https://api.example") > 250


def _fits(text: str) -> None:
    assert [p for p in text_problems(text) if p.rule == "too long"] == []


def test_a_long_service_and_path_keep_every_mapped_text_within_its_bound() -> None:
    for status in [*nucleo.HTTP_STATUS_TABLE, 300, 418, 599]:
        for service in (LONG_SERVICE, "Inventory"):
            failure = nucleo.http_exception(service, LONG_URL, status, "no such thing")
            text = failure.explain_to_llm()
            _fits(text)
            assert "/segment0/" in text  # what kind of resource
            assert "/item-42" in text  # and which one
    throttled = nucleo.http_exception(LONG_SERVICE, LONG_URL, 403, "API rate limit exceeded")
    assert isinstance(throttled, nucleo.HttpThrottledStatusException)
    _fits(throttled.explain_to_llm())


def test_a_long_service_and_path_keep_the_no_answer_and_not_json_texts_within_their_bound() -> None:
    from pytest_nucleo._http._clients import ResponseView
    from pytest_nucleo._http._clients._kinds import Transport, transport_exception
    from pytest_nucleo._http._clients._not_json import not_json_exception

    for kind in Transport:
        failure = transport_exception(LONG_SERVICE, TimeoutError(), kind, "GET", LONG_URL)
        _fits(failure.explain_to_llm())
        assert "GET /segment0/" in failure.explain_to_llm()
    view = ResponseView(200, LONG_URL, {}, b"<html>Sign in</html>", ())
    for deep in (False, True):
        text = not_json_exception(LONG_SERVICE, view, "text/html", "no JSON", deep=deep)
        _fits(text.explain_to_llm())


def _buried(service: str, status: int | None, body: str) -> nucleo.LLMReadableException:
    from pytest_nucleo._http._clients._kinds import Transport, transport_exception

    if status is None:  # no answer at all
        return transport_exception(service, TimeoutError(), Transport.READ_TIMEOUT, "GET", LONG_URL)
    return nucleo.http_exception(service, LONG_URL, status, body)


WORDS_AT_THEIR_BOUND = "an item fetch " * 14  # 196 characters of words, no long run to cut
STEP_OF_LONG_WORDS = (
    "copying gs://analytics-exports-eu/2024/daily/part-000123.parquet to "
    "s3://warehouse-landing-zone/imports/2024/daily/part-000123.parquet and "
    "s3://backup-zone/imports/2024/daily/part-000123.parquet"
)


@pytest.mark.parametrize("body", ["no such thing " * 10, ""])
@pytest.mark.parametrize("service", ["Inventory", "Inventory " * 10, LONG_SERVICE, "I" * 200])
@pytest.mark.parametrize("status", [*nucleo.HTTP_STATUS_TABLE, 599, None])
def test_a_long_service_and_path_keep_a_wrapped_text_within_its_bound(
    service: str, status: int | None, body: str
) -> None:
    # service_call puts the step (and the parameter) before the buried text, which had fit
    # the bound alone: the wrapper's words are paid for by the quote, then the path; past
    # that, the step, the parameter, the value and the service's name are cut, even when
    # every one of them is near its own bound of 200 characters.
    for step, parameter, value in [
        ("an item fetch", "item", "42"),
        (WORDS_AT_THEIR_BOUND, WORDS_AT_THEIR_BOUND, "42" * 100),
        (WORDS_AT_THEIR_BOUND, "item", WORDS_AT_THEIR_BOUND),
        (WORDS_AT_THEIR_BOUND, WORDS_AT_THEIR_BOUND, WORDS_AT_THEIR_BOUND),
        (STEP_OF_LONG_WORDS, "item", "\x00 " * 100),  # JSON shows each control as \u0000
    ]:
        step_call = nucleo.service_call("Inventory", parameter, value, step)
        with pytest.raises(nucleo.LLMReadableException) as wrapped, step_call:
            raise _buried(service, status, body)
        text = wrapped.value.explain_to_llm()
        _fits(text)
        assert text.startswith(f"During {step[:20]}")
        plain = nucleo.wrap_with_context(_buried(service, status, body), service, "item", 4, step)
        _fits(plain.explain_to_llm())
        assert "/item-42" in text  # which resource stays in view


def test_a_wrapped_text_cuts_the_service_where_it_names_the_service() -> None:
    # The service's name is cut in the text that names the service, never inside the value
    # the model sent, which quotes the same words.
    service = "Semantic Scholar Academic Graph API"
    value = f"papers that cite the {service} in their methods section and more and more"
    search = nucleo.service_call(service, "query", value, "a paper search")
    with pytest.raises(nucleo.LLMReadableException) as wrapped, search:
        raise nucleo.http_exception(service, LONG_URL, 404, "")
    text = wrapped.value.llm_message
    _fits(text)
    assert f"'query' = {json.dumps(value)}: " in text


def test_shortening_a_name_never_lengthens_a_text() -> None:
    from pytest_nucleo._text._render import shorten_names

    name = "Acme... the global inventory management platform"  # "..." of its own
    text = "X" * 350 + " on Acme... the global inventory management pla... (HTTP 404)"
    shorter = shorten_names(text, [name], 400, 30)
    assert len(shorter) == 400
    assert shorter.endswith(" on Acme... the global inventory man... (HTTP 404)")
    assert (
        shorten_names(text, [name], 300, 30)
        == "X" * 350 + " on Acme... the global inventor... (HTTP 404)"
    )
    assert shorten_names("fits", [name], 400, 30) == "fits"


def test_a_long_path_is_shown_by_its_start_and_its_end(llm_snapshot: object) -> None:
    from pytest_nucleo._http._clients._kinds import Transport, transport_exception

    text = nucleo.http_exception(LONG_SERVICE, LONG_URL, 404, "no such thing").explain_to_llm()
    assert text == llm_snapshot
    no_answer = transport_exception(
        LONG_SERVICE, TimeoutError(), Transport.READ_TIMEOUT, "GET", LONG_URL
    )
    assert no_answer.explain_to_llm() == llm_snapshot
    step = nucleo.service_call("Inventory", "item", "42", "an item fetch")
    with pytest.raises(nucleo.LLMReadableException) as wrapped, step:
        raise nucleo.http_exception("Inventory " * 10, LONG_URL, 503, "maintenance")
    assert wrapped.value.explain_to_llm() == llm_snapshot
    every_name_long = nucleo.service_call(
        "Inventory", WORDS_AT_THEIR_BOUND, WORDS_AT_THEIR_BOUND, WORDS_AT_THEIR_BOUND
    )
    with pytest.raises(nucleo.LLMReadableException) as wrapped, every_name_long:
        raise nucleo.http_exception(LONG_SERVICE, LONG_URL, 404, "no such item")
    assert wrapped.value.explain_to_llm() == llm_snapshot
