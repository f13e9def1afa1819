"""The mapping's fast paths give what the plain way gives: each is checked against it over many
random inputs made of the pieces its shortcut turns on."""

from __future__ import annotations

import random
import re
import string

import pytest

from pytest_nucleo._http import _body_rules
from pytest_nucleo._text import _excerpt, _markup, _quote, _secrets

# --- the page reader ---------------------------------------------------------------------------

_TAGS = [
    "html", "head", "body", "title", "style", "script", "div", "p", "span", "b", "h1", "li",
    "nav", "footer", "br", "section", "center", "Div", "P", "textarea", "noscript",
]  # fmt: skip
_CLASSES = ["row", "nav", "footer", "cf-error-status", "main", "", "skip-link", "cookie banner"]
_WORDS = [
    "upstream", "timed out", "502 Bad Gateway", "nginx", "What can I do?", "Error code 520",
    "\n", " ", "  ", "\t", "caf\u00e9", "a > b", "x" * 150,
]  # fmt: skip
# Markup the fast reader leaves to html.parser, sprinkled in rarely.
_ODD_MARKUP = ["&amp;", "<!-- c -->", "<br/>", "<p >", "<input disabled>", "a < b", "<?x?>"]


# Elements with raw text (title, style, script) or left to html.parser: rarer, so that many
# pages are plain.
_TAG_WEIGHTS = [
    0.3 if name in ("title", "style", "script", "textarea", "noscript") else 3 for name in _TAGS
]


def _tag(rng: random.Random) -> str:
    name = rng.choices(_TAGS, _TAG_WEIGHTS)[0]
    roll = rng.random()
    if roll < 0.35:
        return f"</{name}>"
    attributes = "".join(
        f" {rng.choice(['class', 'id', 'ID', 'data-x'])}={quote}{rng.choice(_CLASSES)}{quote}"
        for quote in rng.choices(["'", '"'], k=rng.choice([0, 0, 1, 2]))
    )
    return f"<{name}{attributes}>"


def _page(rng: random.Random) -> str:
    parts = ["<!DOCTYPE html>"] if rng.random() < 0.3 else []
    for _ in range(rng.choice([rng.randint(0, 30), rng.randint(60, 140)])):
        roll = rng.random()
        if roll < 0.005:
            parts.append(rng.choice(_ODD_MARKUP))
        elif roll < 0.5:
            parts.append(_tag(rng))
        else:
            parts.append(rng.choice(_WORDS))
    return "".join(parts)


def _state(reader: _markup._PageReader) -> tuple[object, ...]:
    return (
        reader.title, reader.lines, reader._open, reader._hidden, reader._in_title,
        reader.tags, reader.seen,
    )  # fmt: skip


def test_the_plain_page_reader_reads_as_html_parser_does(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(5)
    fast = 0
    cases = 2000
    pages = [_page(rng) for _ in range(cases)]
    needs = rng.choices([0, 1, 40, 300, 1001], k=cases)
    for markup, need in zip(pages, needs, strict=True):
        read = _markup._read_plain(markup, need)
        if read is not None:
            fast += 1
            assert _state(read) == _state(_markup._parsed(markup, need)), (markup, need)
    assert fast > cases // 3  # the fast reader was tried, not only refused
    texts = [_markup.page_text(markup, need) for markup, need in zip(pages, needs, strict=True)]
    monkeypatch.setattr(_markup, "_read_plain", lambda markup, need: None)
    for markup, need, text in zip(pages, needs, texts, strict=True):
        assert _markup.page_text(markup, need) == text, (markup, need)


def test_a_plain_error_page_is_read_without_html_parser() -> None:
    row = "<div class='row'><span>upstream</span> <b>timed out</b></div>\n"
    page = "<html><head><title>502</title><style>b{}</style></head><body>" + row * 60
    assert _markup._read_plain(page, 1001) is not None
    assert _markup._read_plain("<p>a &amp; b</p>" + page, 0) is None
    assert _markup._read_plain("<title>cut here", 0) is None  # html.parsers differ on it


def test_text_before_refused_markup_is_read_up_to_the_stop_as_html_parser_reads_it() -> None:
    # html.parser hands over text up to the end of each piece it is fed; reading can stop
    # there, before markup the fast reader refuses, and then the fast reader's state is the
    # same.
    for words in (100, 300, 301, 600):
        for markup in ("<br/>", "<!-- c -->", "a < b", "<p >"):
            page = "<html><body><pre>" + "word " * words + markup + "</pre></body></html>"
            for need in (0, 40, 1001):
                read = _markup._read_plain(page, need)
                stops = need and 5 * words >= need + need // 2 + 128
                assert (read is not None) == bool(stops), (words, markup, need)
                if read is not None:
                    assert _state(read) == _state(_markup._parsed(page, need))


def test_the_markup_is_split_lazily_as_a_split_at_once_splits_it() -> None:
    # The reader splits a window a few dozen pieces at a time; the pieces must be those of
    # one split, at every count of "<" around a multiple of the pieces split at a time.
    ahead = _markup._SPLIT_AHEAD
    rng = random.Random(13)
    for count in [*range(0, 4), *range(ahead - 2, ahead + 3), *range(2 * ahead - 2, 2 * ahead + 3)]:
        for _ in range(20):
            markup = "".join(
                rng.choice(["", "a", "p>", "<", "\n"]) + "<" for _ in range(count)
            ) + rng.choice(["", "tail", ">"])
            assert markup.count("<") >= count
            assert list(_markup._split_lazily(markup)) == markup.split("<"), (count, markup)
    page = "<html><body>" + "<p>x</p>" * 200 + "</body></html>"
    assert list(_markup._split_lazily(page)) == page.split("<")


def test_the_plain_page_reader_looks_at_each_tag_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # The markup is split at each "<" once, and a tag it has not seen is checked once: a
    # search that retried at every character of a long text before markup the reader
    # refuses once cost 160 ms for 4 kB of words.
    checked: list[str] = []
    pattern = _markup._PLAIN_TAG

    class Counted:
        def fullmatch(self, text: str) -> re.Match[str] | None:
            checked.append(text)
            return pattern.fullmatch(text)

    monkeypatch.setattr(_markup, "_PLAIN_TAG", Counted())
    monkeypatch.setattr(_markup, "_FACTS", {})
    page = "<html><body><p>" + "word " * 800 + "a < b</p></body></html>"
    assert _markup._read_plain(page, 0) is None
    assert checked == ["<html>", "<body>", "<p>"]  # " b</p>" has no ">" before its next "<"
    checked.clear()
    _markup._FACTS.clear()
    assert _markup._read_plain("<p>x</p>" * 50, 0) is not None
    assert checked == ["<p>", "</p>"]


def test_boilerplate_lines_are_found_as_one_regex_found_them() -> None:
    rng = random.Random(10)
    plain = re.compile(
        r"^(?:nginx|apache|openresty|cloudflare|microsoft-iis|envoy|caddy)(?:/[\w.]+)?"
        r"(?: \(\w+\))?$|^error code \d+$|^visit \S+ for more information\.?$|\bray id\b"
        r"|^performance (?:&|and) security by\b|^what happened\??$"
        r"|\b(?:owner|visitor) of this website\b|\bapplication owner\b",
        re.I,
    )
    pieces = [
        "nginx", "NGINX/1.25.3", " (Ubuntu)", "Error code 520", "visit example.com for more "
        "information.", "Cloudflare Ray ID: 8a1", "RAY \u0131D", "ray id", "Performance & security "
        "by Cloudflare", "What happened?", "the owner of this website", "VISITOR of th\u0131s "
        "web\u017fite", "application OWNER", "Application Owner", "x", " ", "ray", "id", "owner",
        "of this", "website", "\u0130", "\u017f", "ofthis website", "rayid", "RAY \u0130D",
        "\u0130d", "appl\u0130cation owner",
    ]  # fmt: skip
    for _ in range(30_000):
        line = " ".join("".join(rng.choices(pieces, k=rng.randint(1, 6))).split())
        assert _markup._is_boilerplate(line) == bool(plain.search(line)), line


# --- collapsing ---------------------------------------------------------------------------------


def test_collapsing_ascii_on_its_bytes_changes_no_result() -> None:
    rng = random.Random(6)
    alphabet = [chr(c) for c in range(0x21)] + ["\x7f", "a", "b", " ", "\ufffd", "\u200b", "\xa0"]

    def plain(text: str) -> str:
        return " ".join(_excerpt._ODD.sub(" ", text).split())

    for _ in range(30_000):
        text = "".join(rng.choices(alphabet[:-3] if rng.random() < 0.7 else alphabet, k=30))
        assert _excerpt._collapse(text) == plain(text), repr(text)


# --- the throttle rule ----------------------------------------------------------------------------


def test_every_throttle_core_is_filed_under_a_mark_it_holds() -> None:
    cores = [core for _, group in _body_rules._THROTTLE_CORE_GROUPS for core in group]
    assert len(cores) == len(set(cores)) == 15
    for mark, group in _body_rules._THROTTLE_CORE_GROUPS:
        assert all(mark in core for core in group), mark


def test_every_throttle_pattern_holds_a_core() -> None:
    # The shortcut may say "no throttle" only when no pattern can match: each pattern's
    # shortest match, squeezed as the shortcut squeezes, holds a core.
    samples = [
        "rate limit", "too many requests", "throttl", "slow down", "reduce your request rate",
        "rate exceeded", "quota exceeded", "daily limit exceeded", "user_limit exceeded",
        "request limit exceeded", "abuse detection", "robot detect", "are you a robot",
        "not a robot", "captcha", "login attempts exceeded", "provisioned throughput exceeded",
    ]  # fmt: skip
    assert all(_body_rules._THROTTLE.fullmatch(sample) for sample in samples)
    covered = {pattern for pattern in _body_rules.THROTTLE_PATTERNS for sample in samples
               if re.fullmatch(pattern, sample, re.I)}  # fmt: skip
    assert covered == set(_body_rules.THROTTLE_PATTERNS)
    cores = [core for _, group in _body_rules._THROTTLE_CORE_GROUPS for core in group]
    for sample in samples:
        squeezed = sample.encode().lower().translate(None, _body_rules._SEPARATORS)
        assert any(core in squeezed for core in cores), sample


def test_the_throttle_shortcut_changes_no_result() -> None:
    rng = random.Random(7)
    pieces = [
        "rate limit", "Rate-Limit", "too_many requests", "THROTTLED", "slow down", "captcha",
        "quota exceeded", "daily_limit_exceeded", "abuse detection", "robot", "not a robot",
        "\"Throttling\"", "<Code>SlowDown</Code>", "ratelimited", "rate exceeded", " ", "-", "_",
        "\n", "permission denied", "q", "x", "b", "m", "h", "w", "p", "\u00e9", "are you a ",
        "RobotDetected", "ro", "bot", "robots", "abuse",
    ]  # fmt: skip
    for _ in range(8_000):
        text = "".join(rng.choices(pieces, k=rng.randint(0, 8)))
        for status in (400, 403):
            expected = bool(
                text
                and (_body_rules._THROTTLE_400 if status == 400 else _body_rules._THROTTLE).search(
                    text
                )
            )
            assert _body_rules.body_says_throttled(text, status=status) == expected, (text, status)
            assert _body_rules.body_says_throttled(text.encode(), status=status) == expected


# --- masking and quoting ------------------------------------------------------------------------


def test_every_hint_is_filed_under_a_mark_it_holds() -> None:
    # The token hints' marks are held by their patterns rather than by the hints ("xox" is
    # always followed by "-"): test_shortcuts_change_no_result checks those.
    for groups in (
        _secrets._UNPREFIXED_HINT_GROUPS, _secrets._URL_HINT_GROUPS,
        _secrets._WEBHOOK_HINT_GROUPS, _secrets._AUTH_HINT_GROUPS, _secrets._PAIR_HINT_GROUPS,
    ):  # fmt: skip
        for mark, hints in groups:
            assert all(mark in hint for hint in hints), mark


def test_the_quote_finds_the_cut_mark_as_a_split_did() -> None:
    rng = random.Random(8)
    old = re.compile(r" ?\[\.\.\. \d+ of \d+ (?:bytes|characters) not shown \.\.\.\] ?")
    pieces = [
        "[... 12 of 300 bytes not shown ...]", "[... 1 of 2 characters not shown ...]",
        "[... x of 2 bytes not shown ...]", " ", "  ", "'", '"', "word", "[...", "...]",
    ]  # fmt: skip
    for _ in range(20_000):
        excerpt = "".join(rng.choices(pieces + list(string.ascii_letters[:4]), k=6))
        cut = _quote._CUT_MARK.search(excerpt)
        head = excerpt[: cut.start()] if cut else excerpt
        assert head.strip() == old.split(excerpt, maxsplit=1)[0].strip(), excerpt


def test_json_strings_unrolled_match_as_before() -> None:
    rng = random.Random(9)
    string_before = r'"(?:[^"\\]|\\.)*"'
    field = re.compile(r'"(' + "|".join(_quote._MESSAGE_KEYS) + r')"\s*:\s*(' + string_before + ")")
    key = re.compile(string_before + r"\s*:")
    pieces = ['"message"', '"error"', ": ", ":", '"', "\\", '\\"', "ab", " ", "\n", "{", "\u00e9"]
    for _ in range(20_000):
        text = "".join(rng.choices(pieces, k=rng.randint(0, 12)))
        found = [match.group(1, 2) for match in _quote._FIELD.finditer(text)]
        assert found == [match.group(1, 2) for match in field.finditer(text)], text
        assert _quote._JSON_KEY.sub("", text) == key.sub("", text), text


# --- masking tried only where a match can start ---------------------------------------------------


_ANCHOR_PIECES = [
    "https://", "HTTP://", "wss://", "ws:\\/\\/", "http:/\\/", "a.b-c+d://", "_http://", "1x://",
    "u:p@", "@", "?q=1", "?", "#", "/", " ", "-", "_", ".", "+", ":", "=", ": ", '"', "'",
    "api_key", "X-Api-Key", "my-api_key", "-token", "Tokens", "passwd", "pass-phrase", "sig",
    "secret", "cookie", "pwd", "x-amz-credential", "authorization", "Bearer ", "basic\t",
    "deepl-auth-key ", "apikey", "SSWS", "abcdefghij0123456789", "[REDACTED]", "API key: ",
    "api\tkey provided: ", "sk-", "sk_live_", "task_", "gsk_", "dop_v1_", "_v1_", "xoxb-",
    "shpat_", "sq0atp-", "SG.", "ya29.", "AKIA", "AIza", "eyJ", "SK", "dapi", "key-", "2026-12",
]  # fmt: skip


def test_patterns_tried_where_a_match_can_start_mask_as_the_whole_pattern() -> None:
    # Each (pattern, where its matches can start, replacement) _secrets uses, against the
    # pattern run over the whole text, on ASCII texts made of what the starts turn on.
    from pytest_nucleo._text import _anchored as a

    cases = [
        (_secrets._USERINFO, a.url_starts, _secrets._first_group),
        (_secrets._QUERY, a.query_starts, _secrets._first_group),
        (_secrets._TOKENS, a.token_starts, lambda match: _secrets.MASK),
        (
            _secrets._AUTH_SCHEME,
            lambda text: a.hint_starts(text.lower(), _secrets._AUTH_HINT_GROUPS),
            _secrets._two_groups_masked,
        ),
        (
            _secrets._SECRET_PAIR,
            lambda text: a.pair_starts(
                text, a.hint_starts(text.lower(), _secrets._PAIR_HINT_GROUPS)
            ),
            _secrets._pair_masked,
        ),
        (
            _secrets._KEY_PROVIDED,
            lambda text: a.found_at(text.lower(), _secrets._KEY_PROVIDED_STARTS),
            _secrets._two_groups_masked,
        ),
    ]
    rng = random.Random(12)
    for _ in range(20_000):
        text = "".join(rng.choices(_ANCHOR_PIECES, k=rng.randint(1, 10)))
        for pattern, starts, replace in cases:
            assert a.sub_at(pattern, replace, text, starts(text)) == pattern.sub(replace, text), (
                pattern.pattern[:30],
                text,
            )


def test_every_token_pattern_starts_where_token_starts_looks() -> None:
    # Each alternative of _TOKENS begins with a literal start filed in _anchored; a sample
    # of each, after a space, is found where it starts, and so is a separator run long
    # enough that each start is searched for instead.
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from pytest_nucleo._text import _anchored as a

    alternatives = [pattern.replace(r"\b", "") for pattern in _secrets._TOKEN_PATTERNS]

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.sampled_from(alternatives).flatmap(
        lambda pattern: st.from_regex(pattern, fullmatch=True, alphabet=st.characters(codec="ascii"))
    ), st.sampled_from(["", "-" * 40, "_" * 40, "." * 40]))  # fmt: skip
    def found(sample: str, separators: str) -> None:
        if _secrets._TOKENS.match(sample):  # a sample whose end breaks the \b is no token
            assert 1 in a.token_starts(" " + sample)
            assert len(separators) + 1 in a.token_starts(f"{separators} {sample}")

    found()


# --- what a request sent -------------------------------------------------------------------------


def test_a_request_that_sends_nothing_gives_what_reading_it_gives() -> None:
    import httpx
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from pytest_nucleo._http._clients import _sent

    names = ["Accept", "user-agent", "Host", "Connection", "X-Api-Key", "Authorization", "Cookie"]
    headers = st.lists(st.tuples(st.sampled_from(names), st.sampled_from(["k-1234567", "*/*"])))
    urls = st.sampled_from([
        "http://api.example/v1", "http://api.example/v1?key=s3cr3t-v", "http://u:pw12@api.example/",
        "http://api.example/v1?", "http://api.example/a%20b",
    ])  # fmt: skip
    bodies = st.sampled_from([b"", b'{"card": "4111111111111111"}', b"a=b"])

    @settings(max_examples=300, deadline=None)
    @given(headers, urls, bodies)
    def same(pairs: list[tuple[str, str]], url: str, body: bytes) -> None:
        request = httpx.Request("POST", url, headers=pairs, content=body)
        assert _sent.sent_values(request) == _read_without_shortcut(_sent, request), (
            pairs,
            url,
            body,
        )

    same()


def _read_without_shortcut(sent: object, request: object) -> tuple[str, ...]:
    """``sent_values(request)`` with its nothing-sent shortcut turned off."""
    mp = pytest.MonkeyPatch()
    try:
        mp.setattr(sent, "_sends_nothing", lambda request: False)
        return sent.sent_values(request)  # type: ignore[attr-defined,no-any-return]
    finally:
        mp.undo()
