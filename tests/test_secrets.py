"""Masking of secret-looking tokens (CONTRACT section 6)."""

from __future__ import annotations

import random
import re

import pytest

from pytest_nucleo._secrets import MASK, redact


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
    from pytest_nucleo import _secrets as s

    text = s._PEM.sub(MASK, text)
    text = s._USERINFO.sub(r"\1", text)
    text = s._QUERY.sub(r"\1", text)
    text = s._WEBHOOK.sub(lambda match: f"{match.group(1) or match.group(2)}{MASK}", text)
    text = s._TOKENS.sub(MASK, text)
    text = s._CARD.sub(s._card, text)
    text = s._AUTH_SCHEME.sub(rf"\1\2{MASK}", text)
    return re.compile(r"(?ix)\b" + s._PAIR_BODY).sub(rf"\1\2{MASK}", text)


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
    ]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        assert redact(text) == _redact_running_every_pattern(text), text
