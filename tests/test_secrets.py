"""Masking of secret-looking tokens: no credential reaches a text, a repr or a log."""

from __future__ import annotations

import base64
import json
import random
import re

import pytest
from secret_canaries import KEY_FORMATS

from pytest_nucleo import ExternalServiceException, http_exception
from pytest_nucleo._text._secrets import MASK, _mask_value, redact


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("key sk-proj-AbCdEf0123456789xyzXYZ rejected", "AbCdEf0123456789xyzXYZ"),
        ("Authorization: Bearer eyabc.def-ghi_jkl", "eyabc.def-ghi_jkl"),
        ("Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
        ("aws AKIAIOSFODNN7EXAMPLE used", "AKIAIOSFODNN7EXAMPLE"),
        ("aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
        ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghij"),
        ("slack xoxb-1234567890-abcdefghij", "xoxb-1234567890"),
        ("google AIzaSyA-1234567890abcdefghijklmnopqrstu", "AIzaSyA-1234567890"),
        ("jwt eyJhbGciOi.eyJzdWIiOiIx.SflKxwRJSM", "eyJzdWIiOiIx"),
        ('{"api_key": "live-123456"}', "live-123456"),
        ("api-key=hunter22&page=2", "hunter22"),
        ("password: correct-horse", "correct-horse"),
        ("X-Amz-Signature=abcdef0123", "abcdef0123"),
        ("see https://alice:s3cr3tpw@api.example/v1/orders", "s3cr3tpw"),
        ("GET https://api.example/v1/orders?q=1&api_key=zzz-top-secret", "zzz-top-secret"),
        ("Cookie: session=abcdef123456", "abcdef123456"),
    ],
)
def test_secret_shapes_are_masked(text: str, secret: str) -> None:
    masked = redact(text)
    assert secret not in masked


def test_known_values_are_masked_wherever_they_appear() -> None:
    assert redact("echo: my-plain-key-42 was wrong", known=["my-plain-key-42"]) == (
        f"echo: {MASK} was wrong"
    )


def test_short_known_values_are_ignored() -> None:
    assert redact("page 1 of 10", known=["1", ""]) == "page 1 of 10"


def test_ordinary_text_is_left_alone() -> None:
    text = (
        "The order 00012345 was not found; the key must be 8 digits. Try https://shop.example/help"
    )
    assert redact(text) == text


def test_urls_keep_host_and_path() -> None:
    assert redact("https://u:p@api.example/v1/x?token=abc#frag") == "https://api.example/v1/x#frag"


def _redact_running_every_pattern(text: str) -> str:
    """``redact`` without its shortcuts (the hint checks, and the key=value pattern's speed-up
    lookahead): the reference they must agree with."""
    from pytest_nucleo._text import _secrets as s

    text = s._PEM.sub(MASK, text)
    text = s._USERINFO.sub(r"\1", text)
    text = s._QUERY.sub(r"\1", text)
    text = s._RELATIVE_QUERY.sub(r"\1", text)
    text = s._WEBHOOK.sub(lambda match: f"{match.group(1) or match.group(2)}{MASK}", text)
    text = s._TOKENS.sub(MASK, text)
    text = s._UNPREFIXED.sub(MASK, text)
    text = s._CARD.sub(s._card, text)
    text = s._AUTH_SCHEME.sub(rf"\1\2{MASK}", text)
    text = s._AUTH_HEADER.sub(rf"\1\2{MASK}", text)
    text = re.compile(r"(?ix)\b" + s._PAIR_BODY).sub(rf"\g<key>\g<sep>{MASK}", text)
    text = s._KEY_PROVIDED.sub(rf"\1\2{MASK}", text)
    text = s._AWS_SECRET.sub(s._aws_secret, text)
    text = s._BASE64_RUN.sub(s._encoded_base64, text)
    return s._PERCENT_RUN.sub(s._encoded_percent, text)


def test_shortcuts_change_no_result() -> None:
    rng = random.Random(11)
    pieces = [
        "api_key",
        "ap\u0130_key",
        "\u017fecret",
        "\u212aey",
        "toKen",
        "sig",
        "Bearer",
        "bAsic",
        "digest",
        "x-amz-credential",
        "Set-Cookie",
        "passwd",
        "pass_phrase",
        "authorization",
        "sk-",
        "AKIA",
        "ghp_",
        "xoxb-",
        "AIza",
        "eyJ",
        "https://",
        "u:p@",
        "?q=",
        "=",
        ": ",
        '"',
        "'",
        " ",
        "-",
        "_",
        "abcdefghij0123456789",
        "ABCDEFGHIJKLMNOP",
        "[REDACTED]",
        "&",
        "\u0131",
        "/",
        "\\",
        "%3d",
        "%3A",
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----END PRIVATE KEY-----",
        "4111111111111111",
        "4111 1111",
        "services/",
        "T0123456/B0123456/",
        "123456:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
        "sk_live_",
        "Q~",
        "SK0123456789abcdef0123456789abcdef",
        ":\\/\\/",
        "SSWS ",
        "Authorization: Bot ",
        "pwd",
        "=>",
        "&quot;",
        "API key provided: ",
        "whsec_",
        "/v1/x?k=",
        "%5F",
        "%22",
        "c2tfbGl2ZV80ZUMzOUhxTHlqV0Rhcmp0VDF6ZHA3ZGM=",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYCn4ryK3Y01",
        ";",
        "{",
        "}",
        "\n",
        ". ",
        # Where the patterns tried only where a match can start look for it (_anchored).
        "a.b-c+d://",
        "_http://",
        "git+ssh://",
        "@",
        "x-api-key",
        "my-api_key",
        "dop_v1_",
        "xoxb-",
        "shpat_",
        "sq0atp-",
        "2026-12",
    ]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        assert redact(text) == _redact_running_every_pattern(text), text


def test_an_escaped_json_pair_is_masked_at_any_depth() -> None:
    once = '{\\"password\\": \\"canary-pw-1\\", \\"user\\": \\"bob\\"}'
    assert redact(once) == '{\\"password\\": \\"[REDACTED]\\", \\"user\\": \\"bob\\"}'
    twice = json.dumps({"error": once})
    assert "canary-pw-1" not in redact(twice)
    assert "bob" in redact(twice)


def test_a_url_with_escaped_slashes_loses_its_userinfo() -> None:
    assert redact("see https:\\/\\/admin:pw-canary@host.example\\/v1") == (
        "see https:\\/\\/host.example\\/v1"
    )


def test_a_quoted_value_is_masked_to_its_closing_quote() -> None:
    assert redact('{"password": "correct horse battery staple", "user": "bob"}') == (
        '{"password": "[REDACTED]", "user": "bob"}'
    )
    assert redact("passphrase='two words'; next") == "passphrase='[REDACTED]'; next"


def test_a_percent_encoded_separator_still_names_the_pair() -> None:
    assert redact("/login?x#password%3dhunter-22%26page") == "/login?x#password%3d[REDACTED]"


def test_a_known_value_is_masked_whatever_the_case_of_its_escapes() -> None:
    echoed = "the server saw key=a%2fb%2Bc%3D and refused it"
    assert redact(echoed, known=["a%2Fb%2Bc%3D"]) == f"the server saw key={MASK} and refused it"


def _mask_value_by_regex(text: str, value: str) -> str:
    """The reference for masking a known value with percent-escapes: one regex, the escapes'
    hexadecimal digits in either case, the rest as it is."""
    pattern = "".join(
        re.sub("[0-9A-Fa-f]", lambda digit: f"[{digit[0].lower()}{digit[0].upper()}]", piece)
        if index % 2
        else re.escape(piece)
        for index, piece in enumerate(re.split(r"(%[0-9A-Fa-f]{2})", value))
    )
    return re.sub(pattern, MASK, text)


def test_a_known_value_with_escapes_is_masked_as_a_regex_would() -> None:
    # A value's letters may be the hexadecimal digits of an escape in the text: there they
    # must not match by the escape's case.
    assert _mask_value("%ABC%41", "BC%41") == "%A" + MASK
    assert _mask_value("%ABC%41", "bc%41") == "%ABC%41"
    rng = random.Random(7)
    alphabet = "%%%2aAfF3b-"
    for _ in range(3000):
        value = "".join(rng.choices(alphabet, k=rng.randint(3, 9)))
        if not re.search("%[0-9A-Fa-f]{2}", value):
            continue
        # The text: noise, and copies of the value with the case of some letters swapped.
        parts = []
        for _ in range(rng.randint(1, 5)):
            if rng.random() < 0.5:
                parts.append("".join(rng.choices(alphabet, k=rng.randint(0, 4))))
            else:
                parts.append("".join(c.swapcase() if rng.random() < 0.3 else c for c in value))
        # Once as drawn, once crowded with candidates (another way of matching takes over).
        for text in ("".join(parts), "".join(parts) * 40):
            assert _mask_value(text, value) == _mask_value_by_regex(text, value), (text, value)


def test_a_basic_credential_masks_the_password_it_encodes() -> None:
    header = "Basic " + base64.b64encode(b"shop-user:canary-basic-pw").decode()
    echoed = "login shop-user:canary-basic-pw refused; password canary-basic-pw is wrong"
    masked = redact(echoed, known=[header])
    assert "canary-basic-pw" not in masked
    assert redact("Basic !!notbase64!!", known=["Basic !!notbase64!!"]) == MASK


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawX/getMe",
            f"https://api.telegram.org/bot{MASK}/getMe",
        ),
        (
            "https://hooks.slack.com/services/T01ABCDEF/B02GHIJKL/abcdefghijklmnopqrstuvwx",
            f"https://hooks.slack.com/services/{MASK}",
        ),
        (
            "https://discord.com/api/webhooks/123456789012345678/abcdefghijklmnopqrstuvwxyz0123456789",
            f"https://discord.com/api/webhooks/{MASK}",
        ),
    ],
    ids=["telegram", "slack", "discord"],
)
def test_credentials_in_a_url_path_are_masked(text: str, shown: str) -> None:
    assert redact(text) == shown


def test_a_pem_block_is_masked_whole_even_when_cut() -> None:
    block = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIcanaryPemLine0000\nAoGBAcanaryPemLine1111==\n"
    end = "-----END EC PRIVATE KEY-----"
    assert redact(f"key:\n{block}{end}\ndone") == f"key:\n{MASK}\ndone"
    assert redact(f"key: {block}") == f"key: {MASK}"  # the END was cut away
    tail = "AoGBAcanaryPemLine1111==\n" + end + " done"
    assert redact(tail) == f"{MASK} done"  # the BEGIN was cut away


@pytest.mark.parametrize(
    "number",
    ["4111111111111111", "4111 1111 1111 1111", "5555-5555-5555-4444", "378282246310005"],
)
def test_a_card_number_that_passes_luhn_is_masked(number: str) -> None:
    assert redact(f"card {number} declined") == f"card {MASK} declined"
    assert redact(json.dumps({"pan": number})) == json.dumps({"pan": MASK})


@pytest.mark.parametrize(
    "text",
    [
        "order 4111111111111112 shipped",  # fails the Luhn check
        "order number 1234 5678 9012 3456 shipped",  # fails the Luhn check
        "at 1733091387123 ms",  # a timestamp: no card scheme starts with 1
        "ISBN 9780306406157",  # passes Luhn, but no card scheme starts with 9
        "build 2026-12-01 22:16:27, version 4.11.1111.1111",
    ],
)
def test_numbers_that_are_not_cards_stay_visible(text: str) -> None:
    assert redact(text) == text


def test_ordinary_words_near_the_new_shapes_stay_visible() -> None:
    text = (
        "ASK the TASK SKU team; services/teams and webhooks docs; glossary-of-terms; "
        "hf_ is a prefix; npm_config is set; the sk_ prefix; Q~ is odd; time 12:30:45"
    )
    assert redact(text) == text


@pytest.mark.parametrize(("name", "token"), KEY_FORMATS, ids=[name for name, _ in KEY_FORMATS])
def test_each_key_format_is_masked_in_a_url_a_header_a_body_and_a_message(
    name: str, token: str
) -> None:
    # Places where no key name gives the credential away: only its shape can.
    planted = [
        f"GET https://api.example/v1/{token}/orders failed",
        f"X-Upstream-Echo: {token}",
        json.dumps({"detail": "refused", "value": token}),
    ]
    for text in planted:
        masked = redact(text)
        assert token[-16:] not in masked, (text, masked)
        assert MASK in masked
    failures = [
        ExternalServiceException("Shop", f"the call failed with {token}"),
        http_exception("Shop", f"https://shop.example/v1/{token}", 502, json.dumps({"v": token})),
    ]
    for failure in failures:
        for shown in (str(failure), repr(failure), failure.explain_to_llm()):
            assert token[-16:] not in shown, shown


def test_words_that_start_like_the_key_formats_stay_visible() -> None:
    text = (
        "a key-value store; key-3f is short; secret_sauce and secret_key_base; the dapi module; "
        "ya29. alone; xai-grok; shpat_ is a prefix; lin_api_docs; PMAK-1; HRKU-AA; ATATT3x; "
        "GOCSPX-x; sq0atp-short; gsk_short; dop_v1_abc"
    )
    assert redact(text) == text
