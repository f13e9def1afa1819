"""html_error's pages: shaped like what nginx, Cloudflare, Django and Rails send, and read well."""

from __future__ import annotations

import re

import httpx
import pytest
from _tls import TLS
from syrupy.assertion import SnapshotAssertion

from pytest_nucleo import body_excerpt, exception_for_response
from pytest_nucleo.testing import FakeUpstream, html_error, text_problems
from pytest_nucleo.testing._fake._pages import _STATUSES, SERVERS, default_server

HOST = "status.widgets.example"
URL = f"https://{HOST}/api/v1/incidents/4711"

# Every page a server has, by (server, status).
EVERY_PAGE = [(server, status) for server in SERVERS for status in _STATUSES[server]]

# What the title says for a sample of them, as the real servers word it.
TITLES = {
    ("nginx", 502): "502 Bad Gateway",
    ("nginx", 504): "504 Gateway Time-out",
    ("nginx", 503): "503 Service Temporarily Unavailable",
    ("nginx", 404): "404 Not Found",
    ("nginx", 401): "401 Authorization Required",
    ("cloudflare", 520): f"{HOST} | 520: Web server is returning an unknown error",
    ("cloudflare", 521): f"{HOST} | 521: Web server is down",
    ("cloudflare", 522): f"{HOST} | 522: Connection timed out",
    ("cloudflare", 523): f"{HOST} | 523: Origin is unreachable",
    ("cloudflare", 524): f"{HOST} | 524: A timeout occurred",
    ("cloudflare", 525): f"{HOST} | 525: SSL handshake failed",
    ("cloudflare", 526): f"{HOST} | 526: Invalid SSL certificate",
    ("django", 500): "Server Error (500)",
    ("django", 400): "Bad Request (400)",
    ("django", 403): "403 Forbidden",
    ("django", 404): "Not Found",
    ("rails", 500): "We're sorry, but something went wrong (500)",
    ("rails", 404): "The page you were looking for doesn't exist (404)",
    ("rails", 422): "The change you wanted was rejected (422)",
}

# The pages whose model text is snapshotted: each shape, and each Cloudflare code.
READ = [
    ("nginx", 502),
    ("nginx", 504),
    ("nginx", 503),
    ("nginx", 404),
    *((("cloudflare", code)) for code in range(520, 527)),
    ("django", 500),
    ("django", 404),
    ("rails", 500),
    ("rails", 422),
]


def _fetch(status: int, **options: object) -> httpx.Response:
    with FakeUpstream() as upstream:
        upstream.get(URL).html_error(status, **options)  # type: ignore[arg-type]
        return httpx.get(URL, verify=TLS)


def _title(page: str) -> str:
    match = re.search(r"<title>(.*?)</title>", page, re.S)
    assert match, page[:200]
    return match.group(1)


@pytest.mark.parametrize(("server", "status"), EVERY_PAGE, ids=lambda v: str(v))
def test_every_page_is_html_whose_title_names_its_status(server: str, status: int) -> None:
    response = _fetch(status, server=server)
    assert response.status_code == status
    assert response.headers["content-type"].startswith("text/html")
    title = _title(response.text)
    if (server, status) in TITLES:
        assert title == TITLES[server, status]
    if server == "django" and status == 404:
        return  # Django's 404 page says "Not Found", without the number
    assert str(status) in title


def test_nginx_pages_have_nginx_markup() -> None:
    response = _fetch(502, server="nginx")
    assert response.text == (
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
        "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
        "</body>\r\n</html>\r\n"
    )
    assert response.headers["server"] == "nginx"


def test_a_cloudflare_page_names_the_host_and_its_ray_id() -> None:
    response = _fetch(522)
    assert response.headers["server"] == "cloudflare"
    ray, colo = response.headers["cf-ray"].split("-")
    assert re.fullmatch(r"[0-9a-f]{16}", ray)
    assert colo == "FRA"
    text = body_excerpt(response.content, content_type=response.headers["content-type"])
    # The title and what happened; not the status boxes, the visitor's instructions or the Ray ID.
    assert text == (
        f"{HOST} | 522: Connection timed out. The initial connection between Cloudflare's "
        "network and the origin web server timed out. As a result, the web page can not be "
        "displayed."
    )
    assert ray not in text
    # The same route answers another host with that host's page and its own id.
    with FakeUpstream() as upstream:
        upstream.get("https://other.example/").html_error(522)
        other = httpx.get("https://other.example/")
    assert _title(other.text) == "other.example | 522: Connection timed out"
    assert other.headers["cf-ray"] != response.headers["cf-ray"]


def test_framework_pages_are_the_debug_off_ones() -> None:
    django = _fetch(500, server="django").text
    assert "<h1>Server Error (500)</h1><p></p>" in django
    rails = _fetch(500, server="rails").text
    assert "<h1>We're sorry, but something went wrong.</h1>" in rails
    assert "<!-- This file lives in public/500.html -->" in rails


@pytest.mark.parametrize(
    ("status", "server"),
    [
        (502, "nginx"),
        (504, "nginx"),
        (503, "nginx"),
        (404, "nginx"),
        (429, "nginx"),
        (500, "django"),
        *((code, "cloudflare") for code in range(520, 527)),
    ],
)
def test_the_default_page_of_a_status(status: int, server: str) -> None:
    assert default_server(status) == server
    assert _fetch(status).text == _fetch(status, server=server).text


def test_a_status_nginx_has_no_page_for_gets_an_nginx_shaped_one_by_default() -> None:
    assert default_server(418) == "nginx"
    assert _title(_fetch(418).text) == "418 I'm a Teapot"
    assert _title(_fetch(451).text) == "451 Unavailable For Legal Reasons"
    assert _title(_fetch(599).text) == "599"  # no standard phrase: the number alone
    assert "<hr><center>nginx</center>" in _fetch(418).text


@pytest.mark.parametrize(("server", "status"), READ, ids=lambda v: str(v))
def test_what_the_model_reads_of_each_page(
    server: str, status: int, llm_snapshot: SnapshotAssertion
) -> None:
    failure = exception_for_response("Status page", _fetch(status, server=server))
    assert failure is not None
    text = failure.explain_to_llm()
    assert text_problems(text) == []  # no markup, no secret-looking token, bounded
    assert text == llm_snapshot


def test_what_the_model_reads_of_an_nginx_502() -> None:
    failure = exception_for_response("Status page", _fetch(502))
    assert failure is not None
    assert 'It said: "502 Bad Gateway".' in failure.explain_to_llm()


@pytest.mark.parametrize(
    ("server", "status"), [("nginx", 502), ("django", 500), ("cloudflare", 522)]
)
def test_size_pads_the_page_with_comments_the_excerpt_drops(server: str, status: int) -> None:
    small = _fetch(status, server=server)
    big = _fetch(status, server=server, size=300_000)
    assert len(big.content) == 300_000
    assert big.content.startswith(small.content)
    assert re.fullmatch(rb"(?:<!--[^>]*-->\r?\n)* *", big.content[len(small.content) :])
    kind = small.headers["content-type"]
    whole = body_excerpt(small.content, content_type=kind)
    cut = body_excerpt(big.content, content_type=kind)
    assert cut.startswith(whole[:200])
    assert cut.endswith("of 300000 bytes not shown ...]")


def test_the_default_size_is_the_real_pages_own() -> None:
    assert len(_fetch(502).content) < 200
    assert len(_fetch(500).content) < 200
    assert len(_fetch(522).content) < 4096  # shown whole by the excerpt
    assert len(_fetch(500, size=200_000).content) == 200_000


def test_the_outcome_says_which_page_it_serves() -> None:
    assert html_error(502).description == "nginx 502 error page"
    assert (
        html_error(500, size=300_000).description == "Django 500 error page padded to 300000 bytes"
    )
    assert html_error(522, server="cloudflare").description == "Cloudflare 522 error page"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: html_error(502, server="apache"),  # type: ignore[arg-type]
            "html_error(server='apache') names no server this fake has pages of: choose one of "
            "'nginx', 'cloudflare', 'django', 'rails', or leave server out for the usual page "
            "of the status",
        ),
        (
            lambda: html_error(502, server=1),  # type: ignore[arg-type]
            "html_error(server=1) names no server",
        ),
        (
            lambda: html_error(404, server="cloudflare"),
            "html_error(404, server='cloudflare'): Cloudflare has no error page of its own for "
            "404; it has one for 520, 521, 522, 523, 524, 525, 526. Pick one of those, or",
        ),
        (
            lambda: html_error(502, server="django"),
            "html_error(502, server='django'): Django has no error page of its own for 502; it "
            "has one for 400, 403, 404, 500.",
        ),
        (
            lambda: html_error(503, server="rails"),
            "Rails has no error page of its own for 503; it has one for 404, 422, 500.",
        ),
        (
            lambda: html_error(418, server="nginx"),
            "nginx has no error page of its own for 418; it has one for 400, 401,",
        ),
        (
            lambda: html_error(302),
            "html_error(302) serves error pages: give a status from 400 to 599, or use "
            "respond(302, text=...) for another answer",
        ),
        (lambda: html_error("502"), "unknown HTTP status '502'"),  # type: ignore[arg-type]
        (lambda: html_error(size=-1), "size must be a number of bytes >= 0, got -1"),
        (lambda: html_error(size=True), "size must be a number of bytes >= 0, got True"),
        (
            lambda: html_error(502, size=100),
            "size=100 is smaller than the nginx 502 page itself (150 bytes): give at least "
            "150, or leave size out",
        ),
    ],
)
def test_bad_input_says_what_to_give(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        call()  # type: ignore[operator]
