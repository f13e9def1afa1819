"""Error pages and XML errors read with a real parser, where a regex used to go wrong.

Each case is one a regex over markup gets wrong: a ``>`` inside an attribute, a comment or a
CDATA section holding tags, a script or style holding text, entities; plus a 5 MB page, of
which only a window is ever parsed, and an XML entity bomb, which is never expanded.
"""

from __future__ import annotations

import tracemalloc
from typing import Any

import pytest

import pytest_nucleo as nucleo
from pytest_nucleo import body_excerpt
from pytest_nucleo._text import _markup
from pytest_nucleo.testing import text_problems
from pytest_nucleo.testing._fake._pages import error_page


def page(body: str) -> str:
    return body_excerpt(body.encode(), content_type="text/html")


def test_attribute_values_holding_a_closing_bracket_stay_out() -> None:
    # The regex stopped each tag at the first ">", even inside a quoted value, and let the
    # rest of the attribute through: 'Error b">Service down y"> retry later'.
    markup = '<p data-x="a>b">Error <b class="x>b">Service down</b> <span title="x>y">retry later</span></p>'
    assert page(markup) == "Error Service down retry later"


def test_comments_and_cdata_holding_tags_stay_out() -> None:
    markup = (
        "<html><body><!-- <p>old message</p> --><p>Service down</p>"
        "<![CDATA[ <p>not text</p> ]]><!--[if IE]><p>legacy</p><![endif]--></body></html>"
    )
    assert page(markup) == "Service down"


def test_scripts_styles_and_templates_are_not_text() -> None:
    markup = (
        "<html><head><style>p { content: '<p>styled</p>'; }</style></head><body>"
        "<script>var shown = '</p><p>scripted';</script><p>Service down</p>"
        "<template><p>template text</p></template><noscript>enable scripts</noscript></body></html>"
    )
    assert page(markup) == "Service down"


def test_entities_are_decoded_once() -> None:
    assert page("<p>Caf&eacute; &amp; bar &#8212; &quot;closed&quot; &amp;amp;</p>") == (
        'Café & bar — "closed" &amp;'
    )


def test_navigation_footers_and_server_signatures_are_left_out() -> None:
    markup = (
        "<html><head><title>Maintenance</title></head><body><nav><a href='/'>Home</a> "
        "<a href='/help'>Help</a></nav><div class='site-footer'>Copyright 2026</div>"
        "<h1>Maintenance</h1><p>Back at 14:00 UTC.</p><hr><center>nginx/1.27.3</center>"
        "</body></html>"
    )
    assert page(markup) == "Maintenance. Back at 14:00 UTC."


@pytest.mark.parametrize("status", [520, 521, 522, 523, 524, 525, 526])
def test_a_cloudflare_page_reads_as_its_title_and_what_happened(status: int) -> None:
    # Was: "... Visit cloudflare.com for more information. You Browser Working Frankfurt
    # Cloudflare Working ... Cloudflare Ray ID: ...".
    served = error_page(status, server="cloudflare")
    text = body_excerpt(served.body("status.widgets.example"), content_type="text/html")
    assert text.startswith(f"status.widgets.example | {status}: ")
    for boilerplate in ("Visit cloudflare.com", "Browser", "Working", "Ray ID", "visitor"):
        assert boilerplate not in text


def test_a_5_mb_page_is_parsed_only_in_its_head_window(monkeypatch: pytest.MonkeyPatch) -> None:
    # What either reader of a page is handed (html.parser, or the scan of plain markup).
    given: list[int] = []
    for name in ("_read_plain", "_parsed"):
        read = getattr(_markup, name)

        def counting(markup: str, need: int, read: Any = read) -> Any:
            given.append(len(markup))
            return read(markup, need)

        monkeypatch.setattr(_markup, name, counting)
    row = "<div class='row'><span>upstream</span> <b>timed out</b></div>\n"
    huge = "<html><head><title>502 Bad Gateway</title></head><body>" + row * 85_000
    assert len(huge) > 5_000_000
    text = body_excerpt(huge.encode(), content_type="text/html")
    # A repeated row is one statement: the page reads as it, once, and how much was not shown.
    assert (
        text == "502 Bad Gateway. upstream timed out [... 5270020 of 5270055 bytes not shown ...]"
    )
    assert given
    assert 0 < max(given) <= 4096  # a window, never the page


AWS_SLOWDOWN = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code><Message>Please '
    "reduce your request rate.</Message><RequestId>4442587FB7D0A2F9</RequestId>"
    "<HostId>vlR7PnpV2Ce81l0PRw6jlUpck7Jo5ZsQjryTjKlc5aLWGVHPZLj5NeC6qMa0emYBDXOo6QBU0Wo=</HostId>"
    "</Error>"
)


def test_an_xml_error_keeps_its_code_and_message_not_its_ids() -> None:
    assert body_excerpt(AWS_SLOWDOWN.encode(), content_type="application/xml") == (
        "SlowDown. Please reduce your request rate."
    )


def _bomb(levels: int) -> bytes:
    entities = ['<!ENTITY lol0 "lol">'] + [
        f'<!ENTITY lol{i} "{"".join(f"&lol{i - 1};" for _ in range(10))}">'
        for i in range(1, levels)
    ]
    return (
        f'<?xml version="1.0"?>\n<!DOCTYPE lolz [{"".join(entities)}]>'
        f"<lolz><message>&lol{levels - 1};</message></lolz>"
    ).encode()


def test_an_xml_entity_bomb_is_refused_not_expanded() -> None:
    # Ten levels of ten: 10**10 "lol"s, 30 GB, if any entity were expanded.
    bomb = _bomb(10)
    tracemalloc.start()
    try:
        text = body_excerpt(bomb, content_type="application/xml")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "lol" not in text
    assert peak < 1_000_000  # bytes: the declarations are refused before anything grows
    failure = nucleo.http_exception("Files", "/f.xml", 500, bomb, {"Content-Type": "text/xml"})
    assert "lol" not in failure.llm_message
    assert text_problems(failure.explain_to_llm()) == []


def test_an_external_entity_is_never_fetched() -> None:
    xxe = (
        b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        b"<Error><Message>&x;</Message></Error>"
    )
    assert "root" not in body_excerpt(xxe, content_type="application/xml")
