"""LlamaIndex: failures reach the model as the tool message's text, ``explain_to_llm()``.

Use it when your tools run under a LlamaIndex agent (``llama-index-core``'s ``FunctionAgent``,
``ReActAgent``, ``AgentWorkflow``, or ``llm.predict_and_call``); install
``pytest-nucleo[llama-index]``. Importing this module imports ``llama_index.core``; ``import
pytest_nucleo`` does not.

- :func:`llama_index_tool` turns a tool function (sync or ``async def``) into a LlamaIndex
  ``FunctionTool`` once, with ``FunctionTool.from_defaults``: LlamaIndex builds the same
  schema and description from the signature and docstring as for the bare function. Every
  call runs through :func:`~pytest_nucleo.run_tool` / :func:`~pytest_nucleo.arun_tool`.
- :func:`run_through_agent` / :func:`arun_through_agent` (for tests) run one call of a tool
  through a ``FunctionAgent`` on LlamaIndex's own ``MockFunctionCallingLLM``, scripted to call
  the tool and then to read the next chat, and return :class:`LlamaIndexReceived`: exactly the
  tool message the model reads.

What LlamaIndex can carry (llama-index-core 0.14, ``agent/workflow/base_agent.py``), pinned
by ``tests/test_adapter_llama_index.py``:

- It has no error flag the model sees. A tool's ``ToolOutput`` has ``is_error``, but the
  message sent to the model is a ``role="tool"`` chat message with the output's blocks and the
  call id only, the same for a failure and a success. The model tells them apart by the text,
  which is why the hint line of ``explain_to_llm()`` matters here.
- A raised exception reaches the model as its bare ``str()`` under the agents (our own
  exceptions' technical message, with the upstream's body), and as ``Encountered error:
  <str>`` under ``call_tool`` / ``predict_and_call``. So the adapter raises nothing: it returns
  the failure text as the tool's result, which reads the same on every path, and marks the
  ``ToolOutput`` with ``is_error=True`` (and the failure as ``exception``) for your code.

A success reads as the runner's text (a ``str`` as is, anything else as sorted-key JSON,
bounded by ``text_limit``); LlamaIndex's own content blocks, nodes and documents are handed to
it unchanged.
"""

from __future__ import annotations

import dataclasses
import inspect
import warnings
from collections.abc import Callable, Mapping
from typing import Any, Unpack, overload

from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult
from llama_index.core.base.llms.types import (
    AudioBlock,
    ChatMessage,
    ContentBlock,
    DocumentBlock,
    ImageBlock,
    MessageRole,
    TextBlock,
    ToolCallBlock,
)
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.schema import BaseNode
from llama_index.core.tools import FunctionTool, ToolOutput
from pydantic.warnings import PydanticDeprecationWarning

from pytest_nucleo._runner._results import ToolResult
from pytest_nucleo._runner._tools import run_sync
from pytest_nucleo.adapters._core import (
    RunnerOptions,
    ToolFailureText,
    check_runner_options,
    success_text_unless,
    sync_entry,
    through_runner,
)

__all__ = [
    "LlamaIndexReceived",
    "ToolFailureText",
    "arun_through_agent",
    "llama_index_tool",
    "run_through_agent",
]

CHANNEL = "tool message"
"""What a tool's result reaches the model in: a ``role="tool"`` chat message, failure or not."""

_UNDER_A_LOOP = (
    "this harness cannot run under a running event loop: use `await arun_through_agent(...)`"
)


def _failure_text(result: ToolResult) -> ToolFailureText:
    return ToolFailureText(result.text, result.exception)


_BLOCKS = (TextBlock, ImageBlock, AudioBlock, DocumentBlock)


def _is_native(value: object) -> bool:
    """Whether LlamaIndex has its own form for ``value``: content blocks, nodes, documents."""
    if isinstance(value, list | tuple) and value:
        return all(_is_native(item) for item in value)
    return isinstance(value, (*_BLOCKS, BaseNode))


_SUCCESS = success_text_unless(_is_native)


def _marked(output: ToolOutput) -> ToolOutput:
    if isinstance(output.raw_output, ToolFailureText):
        output.is_error = True
        # ToolOutput keeps its exception in a private attribute behind a read-only property.
        output._exception = output.raw_output.exception
    return output


class _NucleoFunctionTool(FunctionTool):
    """``FunctionTool`` whose ``ToolOutput`` says ``is_error`` for a failed call."""

    def call(self, *args: Any, **kwargs: Any) -> ToolOutput:
        return _marked(super().call(*args, **kwargs))

    async def acall(self, *args: Any, **kwargs: Any) -> ToolOutput:
        return _marked(await super().acall(*args, **kwargs))


@overload
def llama_index_tool(func: Callable[..., Any], /) -> FunctionTool: ...
@overload
def llama_index_tool(
    *,
    description: str | None = None,
    return_direct: bool = False,
    **options: Unpack[RunnerOptions],
) -> Callable[[Callable[..., Any]], FunctionTool]: ...
def llama_index_tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    description: str | None = None,
    return_direct: bool = False,
    **options: Unpack[RunnerOptions],
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Make a tool function a LlamaIndex ``FunctionTool`` whose failures the model understands.

    ``@llama_index_tool`` or ``@llama_index_tool(description=..., retries=5, timeout=10)`` on a
    ``def`` or ``async def``; pass the result in ``FunctionAgent(tools=[...])`` or any agent.
    Use it instead of ``FunctionTool.from_defaults(fn)``: LlamaIndex builds the same schema and
    description. The name is the runner's (``name=``, else ``@tool(name=...)`` beneath, else
    ``__name__``); ``return_direct`` is LlamaIndex's. A failure is returned as its
    ``explain_to_llm()`` text (LlamaIndex sends the model no error flag: see the module docs),
    with the ``ToolOutput`` marked ``is_error=True``.
    """
    checked = check_runner_options(options, "llama_index_tool")

    def make(target: Callable[..., Any]) -> FunctionTool:
        if not callable(target):
            raise TypeError(f"llama_index_tool wraps a function; got a {type(target).__name__}")
        wrapped = through_runner(target, _failure_text, on_success=_SUCCESS, options=checked)
        is_async = inspect.iscoroutinefunction(wrapped)
        tool = _NucleoFunctionTool.from_defaults(
            # A sync function under a timeout runs through the async runner: its sync path
            # runs that to its end, so call and acall both work.
            fn=None
            if inspect.iscoroutinefunction(target)
            else (sync_entry(wrapped) if is_async else wrapped),
            async_fn=wrapped if is_async else None,
            name=wrapped.__name__,
            description=description,
            return_direct=return_direct,
        )
        assert isinstance(tool, _NucleoFunctionTool)
        return tool

    return make if func is None else make(func)


@dataclasses.dataclass(frozen=True, slots=True)
class LlamaIndexReceived:
    """What the model received for one tool call under a LlamaIndex agent.

    ``text`` is the content of the ``role="tool"`` chat message of the model's next call, byte
    for byte; ``is_error`` is the ``ToolOutput``'s flag (LlamaIndex does not send it to the
    model: see the module docs); ``channel`` is ``"tool message"`` for failure and success;
    ``message`` is the chat message itself.
    """

    is_error: bool
    """The ``ToolOutput``'s flag (LlamaIndex does not send it to the model)."""
    text: str
    """The content of the ``role="tool"`` chat message of the model's next call."""
    channel: str = CHANNEL
    """What the text reached the model in: a tool message, failure or not."""
    message: ChatMessage | None = dataclasses.field(default=None, compare=False, repr=False)
    """The chat message itself."""


_CALL_ID = "call_nucleo_1"


class _Script:
    """The model side: call the one tool, then keep the tool message of the next chat."""

    def __init__(self, tool_name: str, arguments: Mapping[str, Any] | None) -> None:
        self.tool_name = tool_name
        self.arguments = dict(arguments or {})
        self.sent: list[ChatMessage] = []

    def __call__(self, messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        answers = [m for m in messages if m.role == MessageRole.TOOL]
        if not answers:
            block = ToolCallBlock(
                tool_call_id=_CALL_ID, tool_name=self.tool_name, tool_kwargs=self.arguments
            )
            blocks: list[ContentBlock] = [block]
            return ChatMessage(role=MessageRole.ASSISTANT, blocks=blocks)
        self.sent = answers
        return ChatMessage(role=MessageRole.ASSISTANT, content="done")


async def arun_through_agent(
    tool: FunctionTool, arguments: Mapping[str, Any] | None = None
) -> LlamaIndexReceived:
    """Run one call of ``tool`` through a LlamaIndex ``FunctionAgent`` and return what the model
    reads next. The model is LlamaIndex's ``MockFunctionCallingLLM``, scripted: no network, no
    API key. For tests, under a running event loop; :func:`run_through_agent` from sync code."""
    script = _Script(tool.metadata.get_name(), arguments)
    llm = MockFunctionCallingLLM(response_generator=script)
    with warnings.catch_warnings():
        # llama-index-workflows reads the agent's members with inspect.getmembers, touching
        # pydantic's deprecated attributes: warnings about LlamaIndex, not about the tool.
        warnings.filterwarnings("ignore", category=PydanticDeprecationWarning)
        agent = FunctionAgent(tools=[tool], llm=llm, streaming=False)
        handler = agent.run("Call the tool.")
        outputs = [
            event async for event in handler.stream_events() if isinstance(event, ToolCallResult)
        ]
        await handler
    if len(script.sent) != 1 or len(outputs) != 1:
        raise AssertionError(
            f"expected one tool message after one call, got {script.sent!r} after {outputs!r}"
        )
    message = script.sent[0]
    text = "".join(block.text for block in message.blocks if isinstance(block, TextBlock))
    return LlamaIndexReceived(outputs[0].tool_output.is_error, text, CHANNEL, message)


def run_through_agent(
    tool: FunctionTool, arguments: Mapping[str, Any] | None = None
) -> LlamaIndexReceived:
    """:func:`arun_through_agent` for sync code (tests without an event loop)."""
    return run_sync(lambda: arun_through_agent(tool, arguments), refusal=_UNDER_A_LOOP)
