"""fake_upstream fakes mcp's streamable-HTTP client (it rides on httpx2): a tool call answered,
refused with a 503, and timed out, each surfacing as the mcp client surfaces it."""

from __future__ import annotations

from tests._frameworks import needs_frameworks

needs_frameworks("mcp")

from typing import Any

import anyio
import httpx2
import pytest
from mcp import ClientSession, MCPError
from mcp.client.streamable_http import streamable_http_client

from pytest_nucleo.testing import FakeUpstream, Outcome, respond, timeout

URL = "https://tools.upstream.example/mcp"
# The JSON-RPC answers, by the ids the client numbers its requests with.
INITIALIZED = {
    "jsonrpc": "2.0",
    "id": 1,
    "result": {
        "protocolVersion": "2025-06-18",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "stock", "version": "1.0"},
    },
}
CALLED = {
    "jsonrpc": "2.0",
    "id": 2,
    "result": {"content": [{"type": "text", "text": "42 in stock"}], "isError": False},
}
LISTED = {  # the client lists the tools after a call, to validate its output
    "jsonrpc": "2.0",
    "id": 3,
    "result": {"tools": [{"name": "stock", "inputSchema": {"type": "object"}}]},
}


def _call_stock(upstream: FakeUpstream, *outcomes: Outcome) -> Any:
    upstream.post(URL).sequence(respond(200, json=INITIALIZED), respond(202), *outcomes)
    upstream.get(URL).respond(405)  # no server-to-client stream

    async def call() -> Any:
        with anyio.fail_after(10):  # a safeguard against a hang, never reached when it works
            async with (
                streamable_http_client(URL) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return await session.call_tool("stock", {"sku": "A1"})

    return anyio.run(call)


def test_a_tool_call_is_answered() -> None:
    with FakeUpstream(assert_all_called=False) as upstream:
        result = _call_stock(upstream, respond(200, json=CALLED), respond(200, json=LISTED))
        methods = [request.content for request in upstream.requests]
    assert result.content[0].text == "42 in stock"
    assert b'"method":"tools/call"' in methods[2]


def test_a_503_surfaces_as_the_clients_error() -> None:
    with (
        FakeUpstream(assert_all_called=False) as upstream,
        pytest.raises(ExceptionGroup) as caught,
    ):
        _call_stock(upstream, respond(503, text="down for maintenance"))
    assert caught.group_contains(MCPError, match="Server returned an error response", depth=2)


def test_a_read_timeout_surfaces_as_httpx2s_own() -> None:
    with (
        FakeUpstream(assert_all_called=False) as upstream,
        pytest.raises(ExceptionGroup) as caught,
    ):
        _call_stock(upstream, timeout())
    assert caught.group_contains(httpx2.ReadTimeout, match="The read operation timed out")
