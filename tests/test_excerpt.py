"""Body excerpts and endpoint paths: bounded, readable, secret-free."""

from __future__ import annotations

import pytest

from pytest_nucleo import body_excerpt, safe_endpoint
from pytest_nucleo._text._excerpt import EXCERPT_HEAD, EXCERPT_LIMIT, EXCERPT_TAIL

NGINX_502 = (
    b"<html>\r\n<head><title>502 Bad Gateway</title><style>body{color:red}</style></head>\r\n"
    b"<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
    b"<script>window.secret = 1;</script></body>\r\n</html>\r\n"
)


def test_short_text_is_shown_whole_with_whitespace_collapsed() -> None:
    assert body_excerpt(b'{"error":\r\n  "no such  order"}\n') == '{"error": "no such order"}'


def test_empty_body_is_empty() -> None:
    assert body_excerpt(b"") == body_excerpt(None) == body_excerpt("") == ""


def test_html_is_reduced_to_visible_text() -> None:
    assert body_excerpt(NGINX_502) == "502 Bad Gateway"  # nginx's signature is boilerplate
    by_header = body_excerpt(b"<p>Service&nbsp;down &amp; out</p>", content_type="text/html")
    assert by_header == "Service down & out"


def test_a_title_the_page_repeats_as_its_heading_is_read_once() -> None:
    # nginx and Django repeat the title as the heading; reading both said it twice.
    repeated = "<html><head><title>Server\n Error (500)</title></head><h1>Server Error (500)</h1>"
    assert body_excerpt(repeated) == "Server Error (500)"
    # A title the text does not start with still comes first: it may be the only clue.
    other = "<html><head><title>Service down</title></head><body><p>Try later</p></body></html>"
    assert body_excerpt(other) == "Service down. Try later"
    prefix = "<html><head><title>Error 502</title></head><body><p>Error 502 at the gateway</p>"
    assert body_excerpt(prefix) == "Error 502 at the gateway"


def test_a_long_body_keeps_head_and_tail_and_says_how_much_was_cut() -> None:
    body = b"HEAD-MARK " + b"lorem ipsum " * 100_000 + b"TAIL-MARK"
    text = body_excerpt(body)
    assert text.startswith("HEAD-MARK lorem")
    assert text.endswith("ipsum TAIL-MARK")
    assert f"of {len(body)} bytes not shown ...]" in text
    assert len(text) <= EXCERPT_LIMIT
    head, rest = text.split(" [... ")
    hidden, tail = rest.split(f" of {len(body)} bytes not shown ...] ")
    assert int(hidden) + len(head.encode()) + len(tail.encode()) == len(body)


def test_a_text_body_counts_characters() -> None:
    text = body_excerpt("é" * 20_000)
    assert "[... 19100 of 20000 characters not shown ...]" in text


def test_a_huge_body_is_never_decoded_past_its_windows() -> None:
    # A body that would fail to decode in the middle: decoding only the ends, nothing fails,
    # and the middle's secret cannot show.
    body = b"start " * 1000 + b"\xff\xfe sk-middle0123456789abcdef " * 50_000 + b" end" * 1000
    text = body_excerpt(body)
    assert "sk-middle" not in text
    assert text.startswith("start start")
    assert text.endswith("end end")


def test_cut_never_shows_part_of_a_word_split_by_a_window() -> None:
    secret = "Zq8" * 30  # no known shape: only the word rule keeps it whole or out
    body = (" " * 4090 + secret + " rest" * 5000).encode()
    assert "Zq8" not in body_excerpt(body)


def test_binary_is_shown_by_size_only() -> None:
    assert body_excerpt(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00" * 100) == (
        "<116 bytes of binary data>"
    )


def test_a_declared_utf16_body_is_text_not_binary() -> None:
    body = "quota gone".encode("utf-16")
    assert body_excerpt(body, content_type="text/plain; charset=UTF-16") == "quota gone"
    assert body_excerpt(body) == f"<{len(body)} bytes of binary data>"  # undeclared


def test_charset_of_the_content_type_is_used() -> None:
    assert body_excerpt("café".encode("latin-1"), content_type="text/plain; charset=latin-1") == (
        "café"
    )
    assert body_excerpt(b"ok", content_type="text/plain; charset=no-such-codec") == "ok"


@pytest.mark.parametrize(
    ("body", "secret"),
    [
        (b"bad key sk-proj-AbCdEf0123456789xyzXYZ", "AbCdEf0123456789"),
        (b'{"echo": {"Authorization": "Bearer abcdef123456"}}', "abcdef123456"),
        (b"see https://bob:hunter2hunter@api.example/x?token=t0ps3cret", "hunter2hunter"),
        (b"see https://bob:hunter2hunter@api.example/x?token=t0ps3cret", "t0ps3cret"),
        (b"<html><body>key AKIAIOSFODNN7EXAMPLE</body></html>", "AKIAIOSFODNN7EXAMPLE"),
    ],
)
def test_secret_shapes_are_masked(body: bytes, secret: str) -> None:
    assert secret not in body_excerpt(body)


def test_known_values_are_masked_at_both_ends_of_a_cut_body() -> None:
    known = "plain-looking-value-42"
    body = f"{known} ".encode() + b"x " * 100_000 + f" {known}".encode()
    text = body_excerpt(body, known=[known])
    assert known not in text
    assert text.count("[REDACTED]") == 2


def test_head_and_tail_bounds() -> None:
    text = body_excerpt(("word " * 10_000).encode())
    head, tail = text.split(" [... ")[0], text.split(" ...] ")[1]
    assert EXCERPT_HEAD - 40 <= len(head) <= EXCERPT_HEAD
    assert EXCERPT_TAIL - 40 <= len(tail) <= EXCERPT_TAIL


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("https://alice:pw@api.example/v1/orders/7?api_key=k#top", "/v1/orders/7"),
        ("/v1/orders/7?page=2", "/v1/orders/7"),
        ("orders/7#frag", "orders/7"),
        ("//cdn.example/x", "/x"),
        ("https://api.example", "/"),
        ("", "/"),
        ("http://[broken/x?y", "/x"),
        (
            "/bot123456:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/send",
            "/bot[REDACTED]/send",  # a Telegram bot token in the path is a credential
        ),
        ("/v1/keys/sk-live-0123456789abcdefABCDEF", "/v1/keys/[REDACTED]"),
        ("/a\r\nb", "/a b"),
    ],
    ids=[
        "full",
        "query",
        "fragment",
        "network-path",
        "no-path",
        "empty",
        "broken",
        "path-token",
        "shaped-secret",
        "crlf",
    ],
)
def test_endpoint_is_the_path_only(url: str, path: str) -> None:
    assert safe_endpoint(url) == path


def test_endpoint_masks_known_values_and_is_bounded() -> None:
    assert safe_endpoint("/bot123456:TOKENVALUE/send", known=["123456:TOKENVALUE"]) == (
        "/bot[REDACTED]/send"
    )
    long = safe_endpoint("/" + "a" * 10_000)
    assert len(long) == 300
    assert long.endswith("...")


TOKEN = "tOkEn0" * 216  # a ~1,300-character bearer token, as some identity providers issue


@pytest.mark.parametrize("before", [3000, 3500, 4000, 4500, 5000, 5500, 6000, 7000])
def test_a_long_known_token_split_by_a_cut_shows_no_part_of_it(before: int) -> None:
    # Wherever the windows and the cuts fall in the token, no piece of it is shown: the head
    # cut masks the part of a known value it keeps, and the tail's cut leaves out the split word.
    body = "e" * before + " echo: " + TOKEN + " end" + " z" * 1200
    known = ("Bearer " + TOKEN, TOKEN)
    for excerpt in (body_excerpt(body.encode(), known=known), body_excerpt(body, known=known)):
        assert "tOkEn0tOkEn0" not in excerpt
    # Not passed as known, the token's tail is still not shown after the tail's cut.
    assert "tOkEn0tOkEn0" not in body_excerpt("Bearer " + TOKEN + " z" * 3000 + TOKEN)


def test_a_known_value_split_at_the_head_cut_is_masked_for_the_part_kept() -> None:
    value = "known-plain-value-" * 30
    body = "w " * 280 + value + " x" * 3000
    excerpt = body_excerpt(body, known=[value])
    assert "known-plain" not in excerpt
    assert "[REDACTED]" in excerpt


def test_a_quoted_passphrase_split_by_the_tail_cut_is_masked_when_known() -> None:
    phrase = "correct horse battery staple " * 20
    body = "x " * 3000 + phrase + "end"
    assert "battery staple" not in body_excerpt(body, known=[phrase.strip()])


def test_a_lone_surrogate_never_reaches_an_excerpt() -> None:
    for body in ("bad \ud800 value", "bad \udfff value " * 500):
        excerpt = body_excerpt(body)
        excerpt.encode("utf-8")  # raises for a lone surrogate
        assert excerpt.startswith("bad")


def test_an_endpoint_masks_a_known_value_its_cut_splits() -> None:
    value = "path-secret-" * 60
    for prefix in (100, 250, 290, 400, 540):
        assert "path-secret" not in safe_endpoint("/v1/" + "p" * prefix + value, known=[value])


def test_a_quote_cut_to_its_budget_keeps_words_or_is_left_out() -> None:
    # Cut to a short budget, a small JSON body can keep only its keys and brackets; the text
    # then quotes nothing rather than '{"error": {"code": 1...'.
    from pytest_nucleo._text._quote import quote_of

    body = '{"error": {"code": 1, "message": "Service temporarily unavailable"}}'
    assert quote_of(body, len(body), 30).words == ""
    assert quote_of(body, len(body), 200).words == body


def test_a_quote_mark_at_the_edge_of_an_answer_is_not_quoted() -> None:
    # '" a' quoted as is reads 'It said: "" a".', which ends the quote before its words.
    from pytest_nucleo._text._quote import quote_of

    assert quote_of('" a', 3, 200).words == "a"
    assert quote_of('"Service down"', 14, 200).words == "Service down"


def test_fitting_a_text_cuts_its_quote_and_keeps_the_sentence_after_it() -> None:
    from pytest_nucleo._text._quote import fit_quote

    quote = "order not found in any of the warehouses we know of"
    text = f'Shop failed. It said: "{quote}". Check the value of "order_number".'
    fitted = fit_quote(text, len(text) - 20)
    assert fitted.endswith(' Check the value of "order_number".')
    assert fitted.startswith('Shop failed. It said: "order not found')
    assert len(fitted) <= len(text) - 20


def test_fitting_a_text_leaves_out_a_quote_cut_down_to_no_words() -> None:
    # A wrapper's words before a long throttle text left room for the start of a JSON body
    # only: '{"error": {"code": 1...' says nothing, so the text quotes nothing.
    from pytest_nucleo._text._quote import fit_quote

    quote = '{"error": {"code": 1, "message": "rate limit exceeded"}}'
    text = f'PubChem is throttling. It said: "{quote}". Come back in 100 seconds.'
    fitted = fit_quote(text, len(text) - 30)
    assert fitted == "PubChem is throttling. Come back in 100 seconds."
