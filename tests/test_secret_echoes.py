"""A value the tool sent stays masked however the server echoes it back (escaped, re-cased,
encoded, wrapped or shortened), on every path a text takes; and a Python structure's repr
quoted as the server's words is flagged by the contract's cleanliness check."""

from __future__ import annotations

import base64
import html
import json

import httpx
import pytest
import respx

import pytest_nucleo as nucleo
from pytest_nucleo import body_excerpt
from pytest_nucleo._text._excerpt import EXCERPT_HEAD
from pytest_nucleo._text._quote import said_of
from pytest_nucleo._text._secrets import MASK, redact
from pytest_nucleo.testing import text_problems

# A key with the characters servers escape ("/", "+", "="), letters and digits.
KEY = "Cn4ry/Kn0wn+Key=0123456789abcdefXYZ"

# (name, the echo as the server wrote it, what of it must not be shown)
ECHOES: list[tuple[str, str, str]] = [
    ("exact", KEY, KEY),
    # PHP's json_encode escapes "/" unless told not to
    # (https://www.php.net/manual/en/json.constants.php, JSON_UNESCAPED_SLASHES).
    ("json-escaped-slash", KEY.replace("/", "\\/"), KEY.replace("/", "\\/")),
    ("upper-case", KEY.upper(), KEY.upper()),
    ("lower-case", KEY.lower(), KEY.lower()),
    ("html-escaped", html.escape(KEY), html.escape(KEY)),
    # Encoders that write every sign as a reference (OWASP's, hexadecimal; others decimal).
    (
        "html-hex-references",
        KEY.replace("/", "&#x2F;").replace("+", "&#x2B;").replace("=", "&#x3D;"),
        "Kn0wn&#x2B;Key",
    ),
    (
        "html-decimal-references",
        KEY.replace("/", "&#47;").replace("+", "&#43;").replace("=", "&#61;"),
        "Kn0wn&#43;Key",
    ),
    ("base64", base64.b64encode(KEY.encode()).decode(), base64.b64encode(KEY.encode()).decode()),
    (
        "base64-inside-a-message",
        base64.b64encode(f"key {KEY} was refused".encode()).decode(),
        base64.b64encode(f"key {KEY} was refused".encode()).decode()[8:40],
    ),
    ("line-break", KEY[:12] + "\n" + KEY[12:], KEY[12:]),
    ("escaped-line-break", KEY[:20] + "\\n  " + KEY[20:], KEY[:20]),
    ("first-16", KEY[:16] + "...", KEY[:16]),
    ("last-12", "****" + KEY[-12:], KEY[-12:]),
]
IDS = [name for name, _, _ in ECHOES]


@pytest.mark.parametrize(("name", "echo", "shown"), ECHOES, ids=IDS)
def test_each_echo_form_is_masked(name: str, echo: str, shown: str) -> None:
    for text in (
        f"the key {echo} is not valid",
        json.dumps({"error": f"invalid key {echo}"}),
        f"<p>key: {echo}</p>",
    ):
        masked = redact(text, known=[KEY])
        assert shown not in masked, (text, masked)
        assert MASK in masked


@pytest.mark.parametrize(("name", "echo", "shown"), ECHOES, ids=IDS)
def test_each_echo_form_is_masked_in_an_excerpt(name: str, echo: str, shown: str) -> None:
    body = f"error: the key {echo} was refused"
    assert shown not in body_excerpt(body.encode(), known=[KEY])
    # Cut short after the echo: the head and tail of a long body are kept.
    long_body = "word " * (EXCERPT_HEAD // 5) + body + " end" * 2000
    assert shown not in body_excerpt(long_body.encode(), known=[KEY])


class Shop(nucleo.ServiceClient):
    service_name = "Shop"
    base_url = "https://shop.example"


@pytest.mark.parametrize(("name", "echo", "shown"), ECHOES, ids=IDS)
def test_each_echo_form_is_masked_in_the_client_failure(name: str, echo: str, shown: str) -> None:
    with respx.mock(assert_all_called=True) as router:
        router.get("https://shop.example/orders").respond(
            401, json={"error": {"message": f"API key {echo} is not valid"}}
        )
        with pytest.raises(nucleo.Http401Exception) as info:
            Shop(httpx.Client()).request("GET", "/orders", headers={"X-Api-Key": KEY})
    failure = info.value
    for text in (str(failure), repr(failure), failure.explain_to_llm()):
        assert shown not in text, text


@pytest.mark.parametrize(
    "text",
    [
        "the order-for-customer-list is empty",  # a long value without digits
        "ORDER-FOR-CUSTOMER-LIST",
    ],
)
def test_pieces_of_an_ordinary_known_value_stay_visible(text: str) -> None:
    # The first 16 and last 12 characters are masked only for a value with letters and
    # digits: the words of an ordinary value sent to the service stay readable.
    assert redact(text, known=["order-for-customer-list-x"]) == text


def test_short_known_values_are_masked_only_as_sent() -> None:
    # Under 8 characters, a value is masked as it was sent, not re-cased.
    assert redact("ABCD and abcd", known=["abcd"]) == "ABCD and " + MASK


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("password: hunter2. Try again with the new one", "Try again with the new one"),
        ("password: correct horse, then try again", "then try again"),
        ("password: correct horse battery\nnext line", "next line"),
        ("password: abc user: bob", "user: bob"),
        ("level=error token=abc123 expired at 12:00", "expired at 12:00"),  # after "=", a word
        ("Authorization: Bot abcdefgh.ijklmn", "Authorization: Bot "),
        ("see /v1/help? for more", "see /v1/help? for more"),
        ("a sha1 0123456789abcdef0123456789abcdef01234567 stays", "0123456789abcdef0123"),
        ("the path v1/Orders/2024/Items/ReturnedGoodsByRegion9 stays", "ReturnedGoods"),
    ],
)
def test_what_follows_a_masked_value_stays_visible(text: str, kept: str) -> None:
    assert kept in redact(text)


def test_a_python_dict_repr_quoted_as_the_server_words_is_flagged() -> None:
    text = (
        "The external service Shop failed on /v1/orders (HTTP 502 Bad Gateway). "
        "It said: \"{'error': 'upstream said 404'}\"."
    )
    assert [problem.rule for problem in text_problems(text)] == ["raw structure"]
    # JSON, which a short body is quoted as, is not flagged.
    as_json = text.replace("\"{'error': 'upstream said 404'}\"", '{"error": "upstream said 404"}')
    assert "raw structure" not in [problem.rule for problem in text_problems(as_json)]


def test_a_python_dict_repr_body_is_quoted_by_its_message() -> None:
    assert said_of("{'error': 'upstream said 404'}", 30, 200) == ' It said: "upstream said 404".'
