"""LangChain adapter: failures come back as a ``ToolMessage`` with ``status="error"``.

Use this when your tools reach the model through LangChain (``langchain-core`` 1.x), whose
agents call a tool with a ``ToolCall`` (a dict with an ``id``) and hand its ``ToolMessage`` to
the model. Install the extra: ``pip install 'pytest-nucleo[langchain]'``. Importing this
module imports ``langchain_core``; ``import pytest_nucleo`` does not.

- :func:`langchain_tool` turns a tool function (sync or ``async def``) into a LangChain
  ``StructuredTool`` once. Every call runs through :func:`~pytest_nucleo.run_tool` /
  :func:`~pytest_nucleo.arun_tool`; a failure becomes the call's ``ToolMessage`` with
  ``status="error"`` and exactly the ``explain_to_llm()`` text (anything outside the set as the
  SystemException text), with no ``handle_tool_error`` for you to configure. Arguments that fail
  LangChain's own schema validation (a missing or mistyped parameter) come back the same way, as
  a correctable :class:`~pytest_nucleo.InvalidInputException` text.
- :func:`invoke_tool` / :func:`ainvoke_tool` are the test harness: they invoke a LangChain tool
  with a ``ToolCall`` dict, the way an agent does, and return :class:`ToolCallReceived`, what
  the model receives (``status``, ``is_error``, ``text``), ready for ``llm_snapshot``.

How LangChain carries an error (read in ``langchain_core/tools/base.py``, 1.8): only a
``ToolException`` raised by the tool is turned into a result, and only when the tool's
``handle_tool_error`` is set; a callable handler's return value becomes the content unchanged
(no prefix is added). Every other exception, and a ``ToolException`` without a handler,
propagates out of ``invoke`` and stops the agent. The adapter therefore raises a private
``ToolException`` subclass carrying the runner's result and installs its own handler.

A ``ToolException`` raised inside the function is LangChain's own error for a message to the
model: the model reads that message word for word (what LangChain sends with
``handle_tool_error=True``), as a correctable failure. One with an empty message says nothing
and reads as the SystemException text, like any exception outside the set.

LangGraph's ``GraphBubbleUp`` (``interrupt(...)`` asking a human, a ``Command`` to the parent
graph), which LangGraph's ``ToolNode`` lets through for a plain tool, passes through the
adapter unchanged too: it is the graph's control flow, not a failure.

Limitations of LangChain itself, pinned by ``tests/test_adapter_langchain.py``:

- The error flag exists only on a ``ToolMessage``, which LangChain builds only when the tool is
  invoked with a ``ToolCall`` (it has an ``id``). Invoked with a bare ``dict`` of arguments the
  tool returns the failure text as a plain string, indistinguishable from a successful result.
- A tool from ``async def`` has only LangChain's async path (``ainvoke``); its sync ``invoke``
  raises ``NotImplementedError``, as for LangChain's own ``@tool``.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import inspect
from collections.abc import Callable, Mapping
from typing import Any, Literal, NoReturn, Unpack, overload

from langchain_core.messages import ToolCall, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import ValidationError

from pytest_nucleo._exceptions import InvalidInputException
from pytest_nucleo._runner._results import ToolInfo, ToolResult
from pytest_nucleo._text._message import message_of
from pytest_nucleo.adapters._core import (
    OnSuccess,
    RunnerOptions,
    check_runner_options,
    log_failure,
    own_error_failure,
    schema_failure,
    success_text,
    success_text_unless,
    sync_entry,
    through_runner,
)

__all__ = ["ToolCallReceived", "ainvoke_tool", "invoke_tool", "langchain_tool"]


class _ToolFailed(ToolException):
    """The runner's failure on its way through LangChain's only error channel.

    ``args[0]`` is the model text too, so even LangChain's ``handle_tool_error=True`` (which
    sends ``args[0]``) would send the right text if someone replaced our handler.
    """

    def __init__(self, result: ToolResult) -> None:
        super().__init__(result.text)
        self.result = result


def _raise_failure(result: ToolResult) -> NoReturn:
    raise _ToolFailed(result)


def _tool_error_text(error: ToolException) -> str:
    """``handle_tool_error``: what the model reads for a failed call."""
    if isinstance(error, _ToolFailed):
        return error.result.text
    # Unreachable through our wrapper (the runner turns any exception the function raises into
    # a result); kept as LangChain's own default so a stray ToolException still reads sensibly.
    return message_of(error) if error.args else "Tool execution error"


def _validation_error_handler(func: Callable[..., Any], name: str) -> Callable[[Any], str]:
    def handle(error: Any) -> str:
        failure = (
            schema_failure(inspect.signature(func), error.errors(include_url=False))
            if isinstance(error, ValidationError)
            # A pydantic.v1 error: only from a schema the user built, never from one inferred.
            else InvalidInputException("arguments", None, "must match the tool's parameters")
        )
        # The runner never saw this call, so log it as the runner would (WARNING, no stack).
        log_failure(name, failure)
        return failure.explain_to_llm()

    return handle


def _is_native(value: object) -> bool:
    """Whether LangChain passes ``value`` on as its own: a message or a langgraph ``Command``,
    which a tool returns to say exactly what the model (or the graph) gets."""
    if isinstance(value, ToolMessage):
        return True
    kind = type(value)
    return kind.__name__ == "Command" and kind.__module__.startswith("langgraph.")


def _on_success(response_format: ResponseFormat, text_limit: int | None) -> OnSuccess:
    plain = success_text_unless(_is_native)
    if response_format == "content":
        return plain

    def content_and_artifact(result: ToolResult) -> Any:
        value = result.value
        if not (isinstance(value, tuple) and len(value) == 2):
            raise ValueError(
                f"a tool with response_format='content_and_artifact' returns a (content, "
                f"artifact) pair; got a {type(value).__name__}"
            )
        content, artifact = value
        # The model reads the content, in the runner's rendering; the artifact is for code.
        return success_text(content, text_limit), artifact

    return content_and_artifact


ResponseFormat = Literal["content", "content_and_artifact"]


def _text_limit(func: Callable[..., Any], options: RunnerOptions) -> int | None:
    """The tool's limit on a success text, as the runner would read it (None: the default)."""
    if "text_limit" in options:
        return options["text_limit"]
    info = ToolInfo.of(func)
    return info.text_limit if info is not None else None


def _build(
    func: Callable[..., Any],
    description: str | None,
    response_format: ResponseFormat,
    return_direct: bool,
    args_schema: Any,
    options: RunnerOptions,
) -> StructuredTool:
    if not callable(func):
        raise TypeError(f"langchain_tool wraps a function; got a {type(func).__name__}")
    if response_format not in ("content", "content_and_artifact"):
        raise ValueError(
            f"response_format must be 'content' or 'content_and_artifact'; got {response_format!r}"
        )
    wrapped = through_runner(
        func,
        _raise_failure,
        on_success=_on_success(response_format, _text_limit(func, options)),
        options=options,
        own_error=lambda exc: own_error_failure(exc) if isinstance(exc, ToolException) else None,
        passes=_langgraph_flow(),
    )
    is_async = inspect.iscoroutinefunction(wrapped)
    return StructuredTool.from_function(
        # A sync function under a timeout runs through the async runner: its sync path runs
        # that to its end, so invoke and ainvoke both work.
        func=None
        if inspect.iscoroutinefunction(func)
        else (sync_entry(wrapped) if is_async else wrapped),
        coroutine=wrapped if is_async else None,
        # The runner's name (``name=``, ``@nucleo.tool(name=...)`` or ``__name__``): the one
        # its failure texts use, so the model sees one name for the tool.
        name=wrapped.__name__,
        # LangChain keeps a docstring's indentation; the model should read it clean.
        description=description if description is not None else inspect.getdoc(func),
        response_format=response_format,
        return_direct=return_direct,
        args_schema=args_schema,
        handle_tool_error=_tool_error_text,
        handle_validation_error=_validation_error_handler(func, wrapped.__name__),
    )


@functools.cache
def _langgraph_flow() -> tuple[type[Exception], ...]:
    """LangGraph's own control flow a tool may raise, which LangGraph's ``ToolNode`` lets
    through: ``GraphBubbleUp``, the base of ``GraphInterrupt`` (``interrupt(...)``, asking a
    human) and of a ``Command`` to the parent graph. None where LangGraph is not installed,
    since nothing can raise them there."""
    if importlib.util.find_spec("langgraph") is None:
        return ()
    from langgraph.errors import GraphBubbleUp

    return (GraphBubbleUp,)


@overload
def langchain_tool(func: Callable[..., Any], /) -> StructuredTool: ...
@overload
def langchain_tool(
    *,
    description: str | None = None,
    response_format: ResponseFormat = "content",
    return_direct: bool = False,
    args_schema: Any = None,
    **options: Unpack[RunnerOptions],
) -> Callable[[Callable[..., Any]], StructuredTool]: ...
def langchain_tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    description: str | None = None,
    response_format: ResponseFormat = "content",
    return_direct: bool = False,
    args_schema: Any = None,
    **options: Unpack[RunnerOptions],
) -> StructuredTool | Callable[[Callable[..., Any]], StructuredTool]:
    """Make a LangChain ``StructuredTool`` of a tool function whose failures reach the model.

    ``@langchain_tool`` or ``@langchain_tool(description="...", retries=5, timeout=10)``, over
    a sync or ``async def`` function. The tool's name is the runner's (``name=``, else
    ``@nucleo.tool(name=...)`` beneath, else the function's ``__name__``), its description the
    docstring (or ``description``), its argument schema inferred by LangChain from the
    signature (or ``args_schema``). The keywords besides LangChain's own
    (``response_format``, ``return_direct``, ``args_schema``) are the runner's options. A
    success reads as the runner's text (a ``ToolMessage`` or langgraph ``Command`` the tool
    returns is passed on as it is); with ``response_format="content_and_artifact"`` the tool
    returns ``(content, artifact)`` and the content is rendered so. A failure comes back as a
    ``ToolMessage`` with ``status="error"`` whose content is exactly ``explain_to_llm()``; a
    foreign exception as the SystemException text. To see what the model receives, use
    :func:`invoke_tool` / :func:`ainvoke_tool`.
    """
    checked = check_runner_options(options, "langchain_tool")
    if response_format not in ("content", "content_and_artifact"):
        raise ValueError(
            f"response_format must be 'content' or 'content_and_artifact'; got {response_format!r}"
        )

    def build(target: Callable[..., Any]) -> StructuredTool:
        return _build(target, description, response_format, return_direct, args_schema, checked)

    return build if func is None else build(func)


@dataclasses.dataclass(frozen=True, slots=True)
class ToolCallReceived:
    """What the model receives for one tool call through LangChain.

    ``status`` is the ``ToolMessage`` status, LangChain's error channel (``"success"`` or
    ``"error"``); ``is_error`` is ``status == "error"``; ``text`` is the message content as the
    model reads it (content blocks, which our tools never produce, joined by newlines);
    ``message`` is the ``ToolMessage`` itself, for anything else you want to check.
    """

    is_error: bool
    """``status == "error"``."""
    status: str
    """The ``ToolMessage`` status, LangChain's error channel: ``"success"`` or ``"error"``."""
    text: str
    """The message content as the model reads it."""
    name: str | None
    """The tool name the message carries."""
    tool_call_id: str
    """The id of the tool call the message answers."""
    message: ToolMessage = dataclasses.field(repr=False, compare=False)
    """The ``ToolMessage`` itself, for anything else."""


def _tool_call(tool: BaseTool, args: Mapping[str, Any] | None, call_id: str) -> ToolCall:
    if not isinstance(tool, BaseTool):
        raise TypeError(
            f"invoke_tool takes a LangChain tool (BaseTool); got a {type(tool).__name__}: "
            "wrap the function with @langchain_tool first"
        )
    return {"name": tool.name, "args": dict(args or {}), "id": call_id, "type": "tool_call"}


def _text(content: str | list[str | dict[str, Any]]) -> str:
    if isinstance(content, str):
        return content
    parts = [block if isinstance(block, str) else str(block.get("text", "")) for block in content]
    return "\n".join(parts)


def _received(output: object) -> ToolCallReceived:
    if not isinstance(output, ToolMessage):
        raise TypeError(
            f"the tool returned a {type(output).__name__}, not a ToolMessage: LangChain passes "
            "a ToolMessage (or Command) the tool builds itself through unchanged"
        )
    return ToolCallReceived(
        is_error=output.status == "error",
        status=output.status,
        text=_text(output.content),
        name=output.name,
        tool_call_id=output.tool_call_id,
        message=output,
    )


def invoke_tool(
    tool: BaseTool, args: Mapping[str, Any] | None = None, *, call_id: str = "call_1"
) -> ToolCallReceived:
    """Invoke a LangChain tool with a ``ToolCall``, as an agent does, and return what the model
    receives. For an ``async def`` tool use :func:`ainvoke_tool`.

    An exception the tool lets through (a plain LangChain tool without ``handle_tool_error``)
    propagates, exactly as it would stop the agent.
    """
    call = _tool_call(tool, args, call_id)
    return _received(tool.invoke(call))


async def ainvoke_tool(
    tool: BaseTool, args: Mapping[str, Any] | None = None, *, call_id: str = "call_1"
) -> ToolCallReceived:
    """:func:`invoke_tool` through LangChain's async path (``ainvoke``), for sync and async
    tools alike (a sync tool runs in LangChain's executor)."""
    call = _tool_call(tool, args, call_id)
    return _received(await tool.ainvoke(call))
