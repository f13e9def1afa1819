"""The Anthropic SDK's tool runner: failures reach the model as a ``tool_result`` with
``is_error: true`` and exactly the ``explain_to_llm()`` text.

Use it when your agent loop is the SDK's own ``client.beta.messages.tool_runner(...)`` over
``@beta_tool`` functions (``anthropic``; install ``pytest-nucleo[anthropic]``). Importing this
module imports ``anthropic``; ``import pytest_nucleo`` does not.

- :func:`anthropic_tool` turns a tool function into the SDK's ``BetaFunctionTool`` (or
  ``BetaAsyncFunctionTool`` for an ``async def``, for the async client's runner) once: the SDK
  builds the description (the docstring) and the input schema from the function as for
  ``@beta_tool``. Every call runs through :func:`~pytest_nucleo.run_tool` /
  :func:`~pytest_nucleo.arun_tool` (limiters, retry signals, logging, the runner's options).
- :func:`run_through_tool_runner` / :func:`arun_through_tool_runner` (for tests) run one call
  of a tool through ``tool_runner`` with the Messages API faked by an ``httpx2.MockTransport``
  (no socket, no network, no API key) and return :class:`AnthropicReceived`: exactly the
  ``tool_result`` block the next request sends the model.

What the SDK does with a failure (anthropic 2.10, ``lib/tools/_beta_runner.py``), pinned by
``tests/test_adapter_anthropic.py``:

- A raised ``anthropic.lib.tools.ToolError(content)`` becomes a ``tool_result`` with
  ``is_error: true`` whose content is exactly ``content``, and the SDK logs nothing. The adapter
  raises it with the runner's text.
- Any other exception reaches the model as its ``repr()`` (``KeyError('eta')``, or
  ``Http404Exception(service='Shop', ...)`` for one of ours), cut at the SDK's field limit, and
  the SDK logs the exception with its stack, message and all.
- Returning ``run_tool(...).text`` from a plain ``@beta_tool`` loses ``is_error``: the failure
  reads as a success.
- The SDK validates the model's input with ``pydantic.validate_call`` before the function
  runs and sends a refusal as ``ValueError('Invalid arguments for function <name>')``. The
  adapter sends a correctable :class:`~pytest_nucleo.InvalidInputException` text naming the
  parameter instead.

A success reads as the runner's text (a ``str`` as is, anything else as sorted-key JSON,
bounded by ``text_limit``); a list of the SDK's content blocks (``{"type": "text", ...}``,
images, documents) is passed on as it is.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
from collections.abc import Callable, Mapping
from typing import Any, NoReturn, Unpack, overload

import httpx2
import pydantic
from anthropic import Anthropic, AsyncAnthropic
from anthropic.lib.tools import (
    BetaAsyncFunctionTool,
    BetaFunctionTool,
    ToolError,
)

from pytest_nucleo._runner._results import ToolResult
from pytest_nucleo._runner._tools import run_sync
from pytest_nucleo.adapters._core import (
    RunnerOptions,
    check_runner_options,
    log_failure,
    schema_failure,
    success_text_unless,
    sync_entry,
    through_runner,
    tool_name,
)

__all__ = [
    "AnthropicReceived",
    "anthropic_tool",
    "arun_through_tool_runner",
    "run_through_tool_runner",
]

CHANNEL = "tool_result"
"""The content block a tool's result reaches the model in; a failure has ``is_error: true``."""

_UNDER_A_LOOP = (
    "this harness cannot run under a running event loop: use `await arun_through_tool_runner(...)`"
)


def _raise_failure(result: ToolResult) -> NoReturn:
    # The SDK's only error channel: its content is sent as it is, with is_error.
    raise ToolError(result.text)


def _is_native(value: object) -> bool:
    """Whether ``value`` is already tool-result content: a list of the SDK's content blocks."""
    return (
        isinstance(value, list | tuple)
        and bool(value)
        and all(isinstance(block, Mapping) and "type" in block for block in value)
    )


_SUCCESS = success_text_unless(_is_native)


def _refused(tool: BetaFunctionTool[Any] | BetaAsyncFunctionTool[Any], error: ValueError) -> None:
    """Turn the SDK's refusal of the model's input into a correctable failure (and log it as
    the runner would: the runner never saw the call)."""
    cause = error.__cause__
    if not isinstance(cause, pydantic.ValidationError):
        return
    # validate_call names a missing argument "missing_argument", a model field "missing".
    errors = [
        {**error, "type": "missing"} if error["type"] == "missing_argument" else error
        for error in cause.errors(include_url=False)
    ]
    failure = schema_failure(inspect.signature(tool.func), errors)
    log_failure(tool.name, failure)
    raise ToolError(failure.explain_to_llm()) from None


class _NucleoFunctionTool(BetaFunctionTool[Any]):
    """``BetaFunctionTool`` whose input refusals reach the model as a correctable failure."""

    def call(self, input: object) -> Any:
        try:
            return super().call(input)
        except ValueError as error:
            _refused(self, error)
            raise


class _NucleoAsyncFunctionTool(BetaAsyncFunctionTool[Any]):
    """``BetaAsyncFunctionTool`` whose input refusals reach the model as a correctable failure."""

    async def call(self, input: object) -> Any:
        try:
            return await super().call(input)
        except ValueError as error:
            _refused(self, error)
            raise


AnthropicTool = BetaFunctionTool[Any] | BetaAsyncFunctionTool[Any]


@overload
def anthropic_tool(func: Callable[..., Any], /) -> AnthropicTool: ...
@overload
def anthropic_tool(
    *, description: str | None = None, **options: Unpack[RunnerOptions]
) -> Callable[[Callable[..., Any]], AnthropicTool]: ...
def anthropic_tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    description: str | None = None,
    **options: Unpack[RunnerOptions],
) -> AnthropicTool | Callable[[Callable[..., Any]], AnthropicTool]:
    """Make a tool function a tool of the SDK's ``tool_runner`` whose failures the model
    understands.

    ``@anthropic_tool`` or ``@anthropic_tool(description=..., retries=5, timeout=10)`` on a
    ``def`` (a ``BetaFunctionTool``, for ``Anthropic().beta.messages.tool_runner``) or an
    ``async def`` (a ``BetaAsyncFunctionTool``, for ``AsyncAnthropic``'s). Use it instead of
    the SDK's ``@beta_tool`` / ``@beta_async_tool``: the SDK builds the same input schema and
    description from the function. The name is the runner's (``name=``, else
    ``@tool(name=...)`` beneath, else ``__name__``). A failure is raised as the SDK's
    ``ToolError`` with the ``explain_to_llm()`` text, so the model reads it with ``is_error``;
    a sync tool with a ``timeout`` runs the async runner to its end on each call.
    """
    checked = check_runner_options(options, "anthropic_tool")

    def make(target: Callable[..., Any]) -> AnthropicTool:
        if not callable(target):
            raise TypeError(f"anthropic_tool wraps a function; got a {type(target).__name__}")
        name = checked.get("name") or tool_name(target)
        wrapped = through_runner(
            target, _raise_failure, on_success=_SUCCESS, options={**checked, "name": name}
        )
        if inspect.iscoroutinefunction(target):
            return _NucleoAsyncFunctionTool(wrapped, name=name, description=description)
        if inspect.iscoroutinefunction(wrapped):  # a sync tool under a timeout
            wrapped = sync_entry(wrapped)
        return _NucleoFunctionTool(wrapped, name=name, description=description)

    return make if func is None else make(func)


@dataclasses.dataclass(frozen=True, slots=True)
class AnthropicReceived:
    """What the model received for one tool call under the SDK's tool runner.

    ``is_error`` is the ``tool_result`` block's ``is_error`` flag as sent (False when absent);
    ``text`` its content as the model reads it (text blocks joined by newlines); ``block`` the
    block itself, as sent in the next request's JSON.
    """

    is_error: bool
    """The ``tool_result`` block's ``is_error`` flag as sent (False when absent)."""
    text: str
    """The block's content as the model reads it: its text blocks joined by newlines."""
    channel: str = CHANNEL
    """What the text reached the model in: a ``tool_result`` block, failure or not."""
    block: Mapping[str, Any] = dataclasses.field(default_factory=dict, compare=False, repr=False)
    """The ``tool_result`` block itself, as the next request's JSON carries it."""


_TOOL_USE_ID = "toolu_nucleo_1"
_MODEL = "claude-nucleo-harness"


class _FakeMessagesAPI:
    """The Messages API as a scripted model: first a ``tool_use`` of the one tool, then an
    ``end_turn``; it keeps the ``tool_result`` the second request carries."""

    def __init__(self, tool_name: str, arguments: Mapping[str, Any] | None) -> None:
        self.tool_name = tool_name
        self.arguments = dict(arguments or {})
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        if len(self.requests) == 1:
            content: list[dict[str, Any]] = [
                {
                    "type": "tool_use",
                    "id": _TOOL_USE_ID,
                    "name": self.tool_name,
                    "input": self.arguments,
                }
            ]
            stop = "tool_use"
        else:
            content, stop = [{"type": "text", "text": "done"}], "end_turn"
        return httpx2.Response(
            200,
            json={
                "id": f"msg_nucleo_{len(self.requests)}",
                "type": "message",
                "role": "assistant",
                "model": _MODEL,
                "content": content,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        )

    def received(self) -> AnthropicReceived:
        if len(self.requests) != 2:
            raise AssertionError(
                f"expected the runner to call the Messages API twice, got {len(self.requests)}"
            )
        last = self.requests[1]["messages"][-1]
        blocks = [
            block
            for block in last["content"]
            if block.get("type") == CHANNEL and block.get("tool_use_id") == _TOOL_USE_ID
        ]
        if len(blocks) != 1:
            raise AssertionError(f"expected one tool_result for {_TOOL_USE_ID}, got {last!r}")
        block = blocks[0]
        content = block.get("content")
        if isinstance(content, str):
            text = content
        elif content is None:
            text = ""
        else:
            text = "\n".join(str(part.get("text", "")) for part in content)
        return AnthropicReceived(bool(block.get("is_error", False)), text, CHANNEL, block)


_API_KEY = "sk-ant-nucleo-harness"  # never sent: the transport answers in-process
_BASE_URL = "https://api.anthropic.invalid"


def _runner_kwargs(tool: Any) -> dict[str, Any]:
    return {
        "model": _MODEL,
        "max_tokens": 64,
        "max_iterations": 2,
        "messages": [{"role": "user", "content": "Call the tool."}],
        "tools": [tool],
    }


def run_through_tool_runner(
    tool: AnthropicTool, arguments: Mapping[str, Any] | None = None
) -> AnthropicReceived:
    """Run one call of ``tool`` through the SDK's ``tool_runner`` and return the
    ``tool_result`` the model reads next.

    The Messages API is faked in-process (``httpx2.MockTransport``): its first answer calls
    ``tool`` with ``arguments``, its second ends the turn; the block is read from the second
    request, exactly as it would reach the model. A sync tool runs under ``Anthropic``'s
    runner, an ``async def`` one under ``AsyncAnthropic``'s. For tests, outside a running event
    loop; under one, ``await`` :func:`arun_through_tool_runner`.
    """
    if isinstance(tool, BetaAsyncFunctionTool):
        return run_sync(lambda: arun_through_tool_runner(tool, arguments), refusal=_UNDER_A_LOOP)
    api = _FakeMessagesAPI(tool.name, arguments)
    with httpx2.Client(transport=httpx2.MockTransport(api)) as http:
        client = Anthropic(http_client=http, max_retries=0, api_key=_API_KEY, base_url=_BASE_URL)
        client.beta.messages.tool_runner(**_runner_kwargs(tool)).until_done()
    return api.received()


async def arun_through_tool_runner(
    tool: AnthropicTool, arguments: Mapping[str, Any] | None = None
) -> AnthropicReceived:
    """:func:`run_through_tool_runner` under a running event loop: an ``async def`` tool
    through ``AsyncAnthropic``'s runner, a sync one through ``Anthropic``'s in a worker
    thread."""
    if not isinstance(tool, BetaAsyncFunctionTool):
        return await asyncio.to_thread(run_through_tool_runner, tool, arguments)
    api = _FakeMessagesAPI(tool.name, arguments)

    async def answer(request: httpx2.Request) -> httpx2.Response:
        await request.aread()
        return api(request)

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(answer)) as http:
        client = AsyncAnthropic(
            http_client=http, max_retries=0, api_key=_API_KEY, base_url=_BASE_URL
        )
        await client.beta.messages.tool_runner(**_runner_kwargs(tool)).until_done()
    return api.received()
