"""MCP: tool failures as error tool results whose text is ``explain_to_llm()``.

Use this module when your tools are served over the Model Context Protocol, by the official SDK's
server (``mcp.server.mcpserver.MCPServer``, called ``FastMCP`` before mcp 2) or by the standalone
``fastmcp`` package (``fastmcp.FastMCP``). Install ``pytest-nucleo[mcp]``; importing this module
imports ``mcp`` (``fastmcp`` is only touched when you pass one of its servers), and
``import pytest_nucleo`` imports neither.

:func:`mcp_tool` wraps a tool function once, under the server's own decorator::

    @server.tool()
    @mcp_tool
    def get_order(order_number: str) -> str: ...

Every call runs through :func:`~pytest_nucleo.run_tool` / :func:`~pytest_nucleo.arun_tool`. A
failure comes back as an MCP error result (``isError: true``) whose only content is the
``explain_to_llm()`` text; an exception outside the set comes back as the SystemException text,
never its own message. The servers' own ``ToolError`` (mcp's or fastmcp's), which a tool
raises to send the model a message, is read as that message: the model reads it word for word,
as a correctable failure (see :func:`~pytest_nucleo.adapters._core.own_error_failure`). The name, docstring and signature are kept, so the server builds the
same input schema as for the bare function.
``@mcp_tool(name="fetch_order", retries=5, timeout=10, limiters=[shop])`` takes the runner's
options (:class:`~pytest_nucleo.adapters.RunnerOptions`); ``name`` also names the tool for the
server, so the model calls it by the name its failure texts use. A name given to the server's
decorator instead (``@server.tool(name="fetch_order")``) works as well: the failure texts use
the name the model called.

A success reads as the runner's text (a string as it is, anything else as sorted-key JSON,
bounded by ``text_limit``), the same under both servers and every other adapter. A tool whose
return annotation gives it an output schema also sends ``structuredContent``, built by the
server's own rules; MCP content (``Image``, ``Audio``, fastmcp's ``File``, content blocks, a
``CallToolResult``) is handed to the server unchanged, which converts it natively.

:func:`call_mcp_tool` (and :func:`acall_mcp_tool` under a running event loop) calls a tool
through the server's own in-memory client and returns an :class:`MCPReceived`: the error flag
and the exact text the model reads, ready for ``assert received.text == llm_snapshot``.

Why the adapter *returns* an error result instead of raising: both servers prefix or hide what
a raised exception says. In mcp 2.3 ``MCPServer`` sends a ``ToolError`` as
``Error executing tool <name>: <message>`` and anything else as the bare
``Error executing tool <name>``; ``fastmcp`` 4.2 sends a foreign exception as
``Error calling tool '<name>': <raw message>`` (or without the message under
``mask_error_details``). A ``CallToolResult`` with ``is_error=True`` returned by the tool is
passed through untouched by both, so the model reads ``explain_to_llm()`` byte for byte. The
consequence: the server does not log these failures as exceptions and ``fastmcp`` middleware
sees an error *result*, not an exception; the runner has already logged them (WARNING for
correctable failures, ERROR with the stack for the rest).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar, Unpack, overload

from mcp import Client
from mcp.server import Server
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata, func_metadata
from mcp.server.mcpserver.utilities.types import Audio, Image
from mcp_types import (
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)

from pytest_nucleo._runner._results import ToolResult, _serialize
from pytest_nucleo._runner._tools import run_sync
from pytest_nucleo.adapters._core import (
    RunnerOptions,
    check_runner_options,
    own_error_failure,
    through_runner,
)

if TYPE_CHECKING:
    from fastmcp import FastMCP

_UNDER_A_LOOP = (
    "this harness cannot run under a running event loop: use `await acall_mcp_tool(...)`"
)

__all__ = ["MCPReceived", "acall_mcp_tool", "call_mcp_tool", "error_result", "mcp_tool"]

F = TypeVar("F", bound=Callable[..., Any])

# Set on the wrapper so that wrapping it again is a no-op rather than a second runner pass.
_WRAPPED_MARK = "__pytest_nucleo_mcp__"

# MCPServer hands a tool its Context when one parameter's type hint is Context, and builds the
# input schema from the signature. The wrapper's type hints (not its signature) carry this
# extra name, so the server passes the Context, whose request names the tool the model called,
# while the schema stays the bare function's.
_CONTEXT_KWARG = "_pytest_nucleo_context"


def _called_name(wrapper: Callable[..., Any], kwargs: dict[str, Any]) -> str | None:
    """The name a server called ``wrapper`` by, when given to the server's own decorator."""
    context = kwargs.pop(_CONTEXT_KWARG, None)
    if context is None:  # a tool taking a Context of its own: the server fills that one alone
        context = next((value for value in kwargs.values() if isinstance(value, Context)), None)
    if isinstance(context, Context):
        try:
            params = context.request_context.params  # MCPServer: the tools/call request
        except ValueError:  # called outside a request (server.call_tool in code)
            params = None
        if params is not None and isinstance(params.get("name"), str):
            return str(params["name"])
    # fastmcp's decorator records its options, the name among them, on the function.
    name = getattr(getattr(wrapper, "__fastmcp__", None), "name", None)
    return name if isinstance(name, str) and name else None


def error_result(result: ToolResult) -> CallToolResult:
    """The MCP error result for a failed call: ``isError`` set, ``result.text`` as its only content.

    :func:`mcp_tool` uses it for every failure; call it yourself only when you run a tool through
    :func:`~pytest_nucleo.run_tool` by hand (in a low-level ``mcp.server.Server`` handler, say).
    """
    return CallToolResult(content=[TextContent(type="text", text=result.text)], is_error=True)


_CONTENT = (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)


def _is_mcp_content(value: object) -> bool:
    """Whether the server has a native form for ``value``: content it converts itself."""
    if isinstance(value, list | tuple):
        return any(_is_mcp_content(item) for item in value)
    if isinstance(value, (*_CONTENT, CallToolResult, Image, Audio, bytes)):
        return True
    # fastmcp's own media and result types, without importing fastmcp for a user of the SDK.
    return type(value).__module__.startswith("fastmcp.") and type(value).__name__ in (
        "Image",
        "Audio",
        "File",
        "ToolResult",
    )


def _output_metadata(func: Callable[..., Any]) -> FuncMetadata | None:
    """The server's view of the tool's output schema (from its return annotation), if any."""
    try:
        metadata = func_metadata(func)
    except Exception:  # a signature the server itself will refuse at registration
        return None
    return metadata if metadata.output_schema is not None else None


def _as_json_object(value: object) -> dict[str, Any] | None:
    """``value`` as a JSON object when it is a dict, each value in the form the runner's text
    writes it (a date as ISO 8601, a model as its dump); None for anything else, or a dict
    with no JSON form."""
    if not isinstance(value, dict):
        return None
    try:
        loaded = json.loads(_serialize(value))
    except (TypeError, ValueError):  # keys that are not strings, a circular value
        return None
    return loaded if isinstance(loaded, dict) else None


def _success(func: Callable[..., Any]) -> Callable[[ToolResult], Any]:
    metadata = _output_metadata(func)

    def deliver(result: ToolResult) -> Any:
        if _is_mcp_content(result.value):
            return result.value
        if metadata is None:
            structured = _as_json_object(result.value)
            if structured is not None:
                # fastmcp gives a bare ``-> dict`` an object output schema where the official
                # SDK gives none, and then refuses a text alone: the dict goes as the
                # structured content beside the runner's text, which either server accepts.
                return CallToolResult(
                    content=[TextContent(type="text", text=result.text)],
                    structured_content=structured,
                )
            return result.text
        # A tool with an output schema must send structuredContent (clients validate it):
        # built by the server's own rules, beside the runner's text.
        converted = metadata.convert_result(result.value)
        structured = getattr(converted, "structured_content", None)
        return CallToolResult(
            content=[TextContent(type="text", text=result.text)], structured_content=structured
        )

    return deliver


def _is_tool_error(exc: BaseException) -> bool:
    """Whether ``exc`` is the servers' error for a message to the model: mcp's ``ToolError``
    or fastmcp's (looked up only once fastmcp was imported)."""
    if isinstance(exc, ToolError):
        return True
    fastmcp_errors = sys.modules.get("fastmcp.exceptions")
    return fastmcp_errors is not None and isinstance(exc, fastmcp_errors.ToolError)


@overload
def mcp_tool(func: F, /) -> F: ...
@overload
def mcp_tool(**options: Unpack[RunnerOptions]) -> Callable[[F], F]: ...
def mcp_tool(func: F | None = None, /, **options: Unpack[RunnerOptions]) -> F | Callable[[F], F]:
    """Wrap one tool function so its failures reach the model as MCP error results.

    Put it *under* the server's decorator (``@server.tool()`` of ``MCPServer`` or ``FastMCP``),
    or pass the wrapped function to ``server.add_tool``. Sync and ``async def`` tools both work;
    the wrapper keeps the name, docstring and signature (so the input schema is the one the
    server builds for the bare function). ``@mcp_tool(name=..., retries=..., timeout=...)``
    sets the runner's options; ``name`` also renames the tool for the server. On success the
    model reads the runner's text (MCP content is passed on as it is); on failure the wrapper
    returns :func:`error_result` of the runner's result. Wrapping twice wraps once.
    """
    checked = check_runner_options(options, "mcp_tool")

    def wrap(target: F) -> F:
        if getattr(target, _WRAPPED_MARK, False):
            return target
        wrapped = through_runner(
            target,
            error_result,
            on_success=_success(target),
            options=checked,
            called_name=_called_name,
            own_error=lambda exc: own_error_failure(exc) if _is_tool_error(exc) else None,
        )
        own = getattr(target, "__annotations__", None)
        if isinstance(own, dict):  # a function; a partial or a callable object has no hints
            # A new dict: functools.wraps shares the function's own.
            wrapped.__annotations__ = {**own, _CONTEXT_KWARG: Context}
        setattr(wrapped, _WRAPPED_MARK, True)
        return wrapped  # type: ignore[return-value]  # same signature, by functools.wraps

    return wrap if func is None else wrap(func)


@dataclass(frozen=True)
class MCPReceived:
    """What an MCP client received for one tool call: what the model reads.

    ``is_error`` is the result's ``isError`` flag; ``text`` the text content blocks joined by a
    newline (a block of another kind appears as ``[<type> content]``, so it cannot go unseen);
    ``channel`` names the MCP channel: ``"error result"`` or ``"result"``. A protocol-level
    error (a JSON-RPC error instead of a result) is raised by the client, not returned.
    """

    is_error: bool
    """The result's ``isError`` flag."""
    text: str
    """The text content blocks joined by a newline (another kind of block as ``[<type> content]``)."""
    channel: Literal["result", "error result"]
    """``"error result"`` or ``"result"``."""

    @classmethod
    def from_result(cls, result: CallToolResult) -> MCPReceived:
        """Read an ``mcp_types.CallToolResult`` as the model will."""
        parts = [
            block.text if isinstance(block, TextContent) else f"[{block.type} content]"
            for block in result.content
        ]
        return cls(
            is_error=result.is_error,
            text="\n".join(parts),
            channel="error result" if result.is_error else "result",
        )


def _fastmcp_server_class() -> type[Any] | None:
    # A FastMCP server can only exist once fastmcp is imported, so looking in sys.modules keeps
    # fastmcp optional: a user of the official SDK alone never needs it installed.
    module = sys.modules.get("fastmcp")
    server_class = getattr(module, "FastMCP", None)
    return server_class if isinstance(server_class, type) else None


async def acall_mcp_tool(
    server: MCPServer | Server[Any] | FastMCP[Any],
    name: str,
    arguments: Mapping[str, Any] | None = None,
) -> MCPReceived:
    """Call tool ``name`` on ``server`` through the framework's in-memory client.

    The official SDK's servers (``MCPServer``, low-level ``Server``) are called through
    ``mcp.Client(server)``, ``fastmcp.FastMCP`` servers through ``fastmcp.Client(server)``: the
    same request path a real client takes, without network. Returns what the client received;
    use :func:`call_mcp_tool` from a plain (sync) test.
    """
    args = dict(arguments or {})
    if isinstance(server, MCPServer | Server):
        async with Client(server) as client:
            return MCPReceived.from_result(await client.call_tool(name, args))
    fastmcp_class = _fastmcp_server_class()
    if fastmcp_class is not None and isinstance(server, fastmcp_class):
        from fastmcp import Client as FastMCPClient

        async with FastMCPClient(server) as fast_client:
            # call_tool_mcp returns the protocol result as received; call_tool would raise on
            # isError or parse the content, and the test wants the raw text.
            return MCPReceived.from_result(await fast_client.call_tool_mcp(name, args))
    raise TypeError(
        "call_mcp_tool needs an MCP server: mcp.server.mcpserver.MCPServer, "
        f"mcp.server.Server or fastmcp.FastMCP; got a {type(server).__name__}"
    )


def call_mcp_tool(
    server: MCPServer | Server[Any] | FastMCP[Any],
    name: str,
    arguments: Mapping[str, Any] | None = None,
) -> MCPReceived:
    """:func:`acall_mcp_tool` for a sync test: runs it on a fresh event loop.

    Under a running event loop (an ``async def`` test) await :func:`acall_mcp_tool` instead.
    """
    return run_sync(lambda: acall_mcp_tool(server, name, arguments), refusal=_UNDER_A_LOOP)
