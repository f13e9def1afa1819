"""Rendering helpers for model-facing text."""

from __future__ import annotations

import pytest

from pytest_nucleo._text._render import clean_block, duration, one_line, render_value, seconds


def test_one_line_collapses_whitespace_and_control_characters() -> None:
    assert one_line("a\r\n\tb\x00\x1b[31m  c\u2028d") == "a b [31m c d"


def test_one_line_bounds_and_counts_the_cut() -> None:
    assert one_line("abcdefghij" * 100, limit=10) == "abcdefghij... (990 more characters cut)"


def test_a_secret_straddling_the_cut_is_masked_not_half_shown() -> None:
    text = "x" * 95 + " sk-" + "A" * 40
    assert "sk-AA" not in one_line(text, limit=100)


def test_clean_block_keeps_single_line_breaks() -> None:
    assert clean_block("one\r\ntwo\rthree\n\n\n\nfour\x07") == "one\ntwo\nthree\n\nfour"


def test_render_value_never_shows_reprs() -> None:
    class Custom:
        def __repr__(self) -> str:
            return "<Custom at 0xdeadbeef>"

    assert render_value(Custom()) == "<a value of type Custom>"
    assert render_value({"k": Custom()}) == '{"k": "<a value of type Custom>"}'
    assert render_value(float("nan")) == "NaN"
    assert render_value(bytearray(b"ab")) == "<2 bytes of binary data>"


@pytest.mark.parametrize(
    ("value", "text"),
    [(1, "1 second"), (30.0, "30 seconds"), (0.25, "0.25 seconds"), (0, "0 seconds")],
)
def test_seconds(value: float, text: str) -> None:
    assert seconds(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.5, "0.5 seconds"),
        (1, "1 second"),
        (2.44, "2.4 seconds"),  # to the tenth under ten seconds
        (118.903, "119 seconds"),  # whole seconds under two minutes
        (119.6, "120 seconds"),
        (120, "2 minutes"),
        (150, "3 minutes"),  # "about": rounded half up
        (900, "15 minutes"),
        (3569, "59 minutes"),
        (3570, "1 hour"),
        (4499, "1 hour"),
        (4500, "1.5 hours"),  # to the half hour
        (7200, "2 hours"),
        (86_400, "24 hours"),
        (1e10, "2777778 hours"),  # never in exponent form
        (float("inf"), "inf seconds"),  # no finite wait: as seconds() shows it
    ],
)
def test_a_wait_reads_in_the_unit_a_model_takes_at_a_glance(value: float, text: str) -> None:
    assert duration(value) == text


def test_fast_paths_change_no_result() -> None:
    """one_line and clean_block skip passes that cannot change the text; check them against
    the plain regex passes over every kind of whitespace and control character."""
    import random

    from pytest_nucleo._text import _render as _text

    def plain_block(text: str) -> str:
        head = text.replace("\r\n", "\n").replace("\r", "\n")
        head = _text._CONTROL_BUT_NEWLINE.sub(" ", head)
        head = "\n".join(line.strip() for line in head.split("\n"))
        return _text._BLANK_LINES.sub("\n\n", head).strip()

    rng = random.Random(4)
    alphabet = [chr(c) for c in range(0x40)] + [
        "\x7f", "\x85", "\u2028", "\u2029", "\xa0", "\u3000", "\u200b", "a", "\u00e9", " ",
    ]  # fmt: skip
    for _ in range(50_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert _text.one_line(text) == _text._WHITESPACE.sub(" ", text).strip(), repr(text)
        assert _text.clean_block(text) == plain_block(text), repr(text)


def test_invisible_format_characters_are_treated_as_controls() -> None:
    # U+202E reverses what follows on screen; U+200B hides a break inside a word.
    assert one_line("pay\u202eusd 01\u200b") == "pay usd 01"
    assert clean_block("line\u2066one\ufeff\nline two") == "line one\nline two"


def test_a_known_value_split_by_the_cut_is_masked_for_the_part_kept() -> None:
    value = "plain-known-value-" * 40  # longer than the headroom masked past a cut
    for prefix in range(0, 120, 7):
        text = "x" * prefix + " " + value + " end"
        shown = one_line(text, limit=100, known=[value])
        assert "plain-known" not in shown, prefix
    assert one_line("see " + value, limit=100, known=[value]).startswith("see [REDACTED]...")


@pytest.mark.parametrize("text", ["bad \ud800 value", "bad \udc80\ud83d value", "\udfff" * 3])
def test_a_lone_surrogate_never_reaches_a_model_text(text: str) -> None:
    for shown in (one_line(text), clean_block(text), render_value(text), render_value([text])):
        shown.encode("utf-8")  # raises for a lone surrogate


def test_a_model_text_with_a_lone_surrogate_encodes_as_utf8() -> None:
    import pytest_nucleo as nucleo

    failures = [
        nucleo.ExternalServiceException("Sh\ud800op", "down \udc00 now"),
        nucleo.InvalidInputException("isbn", "97\ud800", "bad \udfff digit"),
        nucleo.http_exception("Shop", "/b\ud800", 500, "oops \ud800 body"),
    ]
    for failure in failures:
        failure.explain_to_llm().encode("utf-8")
        str(failure).encode("utf-8")

    def refuse(isbn: str) -> str:
        raise nucleo.InvalidInputException("is\udc00bn", isbn, "bad \ud800 digit")

    nucleo.run_tool(refuse, {"isbn": "97\ud800"}).text.encode("utf-8")
