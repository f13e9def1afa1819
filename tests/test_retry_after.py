"""Retry-After: total, finite, bounded, RFC 9110 forms only."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta, timezone

import pytest

from pytest_nucleo import RETRY_AFTER_CAP, parse_retry_after

NOW = datetime(2015, 10, 21, 7, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("120", 120.0),
        ("0", 0.0),
        (" 5\t", 5.0),  # optional whitespace around a field value
        ("007", 7.0),
        (b"30", 30.0),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 1680.0),  # IMF-fixdate
        ("Wednesday, 21-Oct-15 07:28:00 GMT", 1680.0),  # obsolete RFC 850 form
        ("Wed Oct 21 07:28:00 2015", 1680.0),  # asctime form, read as UTC
        ("Tue, 20 Oct 2015 07:28:00 GMT", 0.0),  # in the past: no wait
        ("Wed, 21 Oct 2015 07:00:00 GMT", 0.0),  # now
    ],
    ids=[
        "seconds",
        "zero",
        "ows",
        "leading-zeros",
        "bytes",
        "imf-date",
        "rfc850",
        "asctime",
        "past-date",
        "now-date",
    ],
)
def test_valid_values(value: str | bytes, expected: float) -> None:
    assert parse_retry_after(value, now=NOW) == expected


@pytest.mark.parametrize(
    "value",
    [
        "+1",
        "1e3",
        "1.5",
        "-1",
        "nan",
        "NaN",
        "inf",
        "-inf",
        "Infinity",
        "\uff11\uff12",
        "\u0661\u0662",
        "12a",
        "",
        "   ",
        "0x10",
        "1 2",
        "soon",
        "Mon, 32 Oct 2015 07:28:00 GMT",
        "Wed, 21 Oct 2015 07:28:00 +9999",
        "x" * 1_000_000,
        None,
    ],
    ids=lambda v: repr(v)[:20],
)
def test_malformed_values_are_none(value: str | None) -> None:
    assert parse_retry_after(value, now=NOW) is None


def test_waits_beyond_the_cap_are_capped() -> None:
    assert parse_retry_after("86401") == RETRY_AFTER_CAP
    assert parse_retry_after("9" * 10_000) == RETRY_AFTER_CAP  # past int()'s digit limit
    assert parse_retry_after("600", cap=60) == 60
    far = (NOW + timedelta(days=400)).strftime("%a, %d %b %Y %H:%M:%S GMT")
    assert parse_retry_after(far, now=NOW, cap=3600) == 3600


def test_an_impossible_cap_gives_none() -> None:
    assert parse_retry_after("5", cap=float("nan")) is None
    assert parse_retry_after("5", cap=-1) is None
    assert parse_retry_after("5", cap=float("inf")) is None


def test_date_arithmetic_uses_the_given_now_in_any_zone() -> None:
    tokyo = NOW.astimezone(timezone(timedelta(hours=9)))
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=tokyo) == 1680.0
    naive = NOW.replace(tzinfo=None)  # a naive now is UTC, never local time
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=naive) == 1680.0


def test_a_date_without_now_is_measured_against_utc_wall_clock() -> None:
    soon = datetime.now(UTC) + timedelta(seconds=120)
    wait = parse_retry_after(soon.strftime("%a, %d %b %Y %H:%M:%S GMT"))
    assert wait is not None
    assert 100 <= wait <= 120


def test_total_over_random_values() -> None:
    rng = random.Random(5)
    alphabet = "0123456789+-.eEnaifINF ,:GMTWedOct\t\uff11\u0663\x00\u00a0"
    for _ in range(20_000):
        value = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        wait = parse_retry_after(value, now=NOW, cap=rng.choice([0.0, 1.0, 3600.0]))
        assert wait is None or (math.isfinite(wait) and 0 <= wait <= 3600)
