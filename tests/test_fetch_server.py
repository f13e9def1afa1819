"""The reference MCP fetch server (mcp-server-fetch), driven with its private-address guard ON:
its fetch tool resolves the host and refuses what is not a public address, and the fake
upstream's address for a routed host passes that check, so the tool reaches the fake.

The server comes with the frameworks extra; without it these tests skip, saying so.
"""

from __future__ import annotations

import asyncio
from types import ModuleType
from typing import Any

import pytest

from pytest_nucleo.testing import FakeUpstream
from pytest_nucleo.testing._fake import _names
from tests._frameworks import needs_frameworks

needs_frameworks("mcp_server_fetch")

# readabilipy's pure-Python extractor still calls BeautifulSoup's old names.
pytestmark = pytest.mark.filterwarnings("ignore:Call to deprecated method:DeprecationWarning")

PAGE = "https://example.com/page"
ROBOTS = "https://example.com/robots.txt"
HTML = (
    "<html><head><title>Example</title></head><body><article><h1>Example Domain</h1>"
    "<p>This domain is for use in documentation examples without needing permission.</p>"
    "</article></body></html>"
)


@pytest.fixture
def fetch_server(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    from mcp_server_fetch import server
    from readabilipy import simple_json

    # readabilipy runs Readability.js when it finds node, installing its npm packages first
    # (from the network) when they are missing: its pure-Python extractor instead.
    monkeypatch.setattr(simple_json, "have_node", lambda: False)
    return server


def call_fetch(server: ModuleType, url: str) -> Any:
    """What the model gets from the server's fetch tool, called as an MCP client calls it."""
    from mcp.client import Client

    async def call() -> Any:
        # The guard is on by default; the argument spells it out.
        async with Client(server.create_server(allow_private_ips=False)) as client:
            return await client.call_tool("fetch", {"url": url})

    return asyncio.run(call())


def test_the_guard_accepts_the_fake_s_address(fetch_server: ModuleType) -> None:
    with FakeUpstream(assert_all_called=False) as upstream:
        upstream.get(PAGE).respond(200)
        address = asyncio.run(fetch_server._resolve_host("example.com"))
        assert address  # one IPv4 and, mapped, the same as IPv6
        assert all(fetch_server._is_public_address(each) for each in address)


def test_the_tool_reaches_the_fake_with_its_guard_on(
    fake_upstream: FakeUpstream, fetch_server: ModuleType
) -> None:
    robots = fake_upstream.get(ROBOTS).respond(404)  # no robots.txt: autonomous fetching allowed
    page = fake_upstream.get(PAGE).respond(200, text=HTML, headers={"Content-Type": "text/html"})
    result = call_fetch(fetch_server, PAGE)
    assert not result.is_error
    [content] = result.content
    assert content.text.startswith(f"Contents of {PAGE}:\n")
    assert "This domain is for use in documentation examples" in content.text
    assert "<p>" not in content.text  # the page was simplified to Markdown
    assert (len(robots.calls), len(page.calls)) == (1, 1)


def test_a_missing_page_is_the_tool_s_error_result(
    fake_upstream: FakeUpstream, fetch_server: ModuleType
) -> None:
    fake_upstream.get(ROBOTS).respond(404)
    fake_upstream.get(PAGE).respond(404, text="no such page")
    result = call_fetch(fetch_server, PAGE)
    assert result.is_error
    [content] = result.content
    assert content.text == f"Error executing tool fetch: Failed to fetch {PAGE} - status code 404"


def test_robots_txt_that_forbids_the_page_is_read_from_the_fake(
    fake_upstream: FakeUpstream, fetch_server: ModuleType
) -> None:
    fake_upstream.get(ROBOTS).respond(200, text="User-agent: *\nDisallow: /page\n")
    result = call_fetch(fetch_server, PAGE)
    assert result.is_error
    assert "specifies that autonomous fetching of this page is not allowed" in (
        result.content[0].text
    )


@pytest.mark.nucleo(assert_all_called=False)
def test_with_the_shared_address_space_the_guard_refuses_the_fake(
    fake_upstream: FakeUpstream, fetch_server: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # nucleo_fake_addresses = shared: what a project whose tools must see a private address
    # chooses; this server refuses it, before any request.
    monkeypatch.setattr(_names, "_choice", ["shared"])
    fake_upstream.get(ROBOTS).respond(404)
    fake_upstream.get(PAGE).respond(200, text=HTML)
    result = call_fetch(fetch_server, PAGE)
    assert result.is_error
    text = result.content[0].text
    assert text.startswith(
        f"Error executing tool fetch: Refused to fetch {ROBOTS}: example.com resolves to 100."
    )
    assert text.endswith(
        "which is not a public address. Start the server with "
        "--allow-private-ips to allow private, loopback and link-local addresses."
    )
    assert fake_upstream.requests == []  # refused before it was sent
