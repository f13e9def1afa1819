"""Strands Agents: failures reach the model as a tool result with ``status: "error"``.

Use it when your agent runs on Strands Agents (``strands-agents``; install
``pytest-nucleo[strands]``). Importing this module imports ``strands``; ``import
pytest_nucleo`` does not.

- :func:`strands_tool` replaces ``@strands.tool`` on a ``def`` or ``async def``: Strands builds
  the same tool spec (name, description, input schema) as from the bare function. Every call
  runs through :func:`~pytest_nucleo.run_tool` / :func:`~pytest_nucleo.arun_tool`, and a
  failure comes back as Strands' own error result, ``{"status": "error", "content": [{"text":
  <explain_to_llm() text>}]}``, with no prefix.
- :func:`run_through_strands` / :func:`arun_through_strands` (for tests) run one call of a tool
  through a real ``strands.Agent`` whose model is a scripted ``strands.models.Model`` (no
  network, no API key) and return :class:`StrandsReceived`: the ``toolResult`` block the model
  is sent on its next turn.

What Strands does with a failure (strands-agents 1.65, ``tools/decorator.py``,
``tools/executors/_executor.py``, ``telemetry/tracer.py``, ``models/*.py``), pinned by
``tests/test_adapter_strands.py``:

- A decorated tool's exception becomes an error result whose text is ``Error: <class name> -
  <str(exc)>``: the raw message, any secret in it included, and no hint line (and Strands'
  Anthropic, Bedrock and LiteLLM providers log each whole request at DEBUG). Strands then hands the exception itself to its
  hooks (``AfterToolCallEvent.exception``) and its tracer, which records its message and stack
  on the tool's span once an OpenTelemetry provider is configured. Under the adapter the tool
  raises nothing: the result carries the text, the hooks see no exception, and the span has
  the error status and that text only. Strands exports nothing unless you configure
  OpenTelemetry.
- Strands validates the model's input against the function's pydantic model before the
  function runs, and sends a refusal as ``Error: Validation failed for input parameters: ...``
  (pydantic's report). The adapter sends a correctable
  :class:`~pytest_nucleo.InvalidInputException` text naming the parameter instead.
- ``status: "error"`` is on the result every provider is handed, but only some send it on:
  Anthropic's provider as ``is_error: true``, Bedrock's as ``status: "error"`` when the model id
  names an Anthropic Claude or Amazon Nova model (``include_tool_result_status="auto"``, the
  default; ``True`` sends it for any model). OpenAI (Chat Completions and Responses), LiteLLM,
  Gemini, Ollama, Mistral and the other OpenAI-compatible providers send the text alone, as for
  a success: there the hint line is what tells the model a failure.
- A result of Strands' own shape (a dict with ``status`` and ``content``) returned by the
  function is Strands' native form and is handed over unchanged; any other value reads as the
  runner's text. Strands' ``InterruptException`` (``tool_context.interrupt(...)``, asking a
  human) is not a failure: it reaches Strands as raised, and the agent stops for the answer.
- An async generator function (Strands' streaming tools) is refused: the runner runs a call to
  its end and has no stream to pass on.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any, Unpack, overload

import pydantic
import strands
from strands import Agent
from strands.interrupt import InterruptException
from strands.models.model import Model
from strands.tools.decorator import DecoratedFunctionTool
from strands.types.content import Messages
from strands.types.events import ToolResultEvent
from strands.types.streaming import StreamEvent
from strands.types.tools import AgentTool, ToolGenerator, ToolSpec, ToolUse
from strands.types.tools import ToolResult as StrandsResult

from pytest_nucleo._causes import find_in_chain
from pytest_nucleo._exceptions import LLMReadableException, SystemException
from pytest_nucleo._runner._results import ToolResult
from pytest_nucleo._runner._tools import run_sync
from pytest_nucleo._text._message import described
from pytest_nucleo.adapters._core import (
    RunnerOptions,
    check_runner_options,
    log_failure,
    schema_failure,
    success_text_unless,
    through_runner,
    tool_name,
)

__all__ = ["StrandsReceived", "arun_through_strands", "run_through_strands", "strands_tool"]

CHANNEL = "toolResult"
"""The content block a tool's result reaches the model in; a failure has ``status: "error"``."""

_UNDER_A_LOOP = (
    "this harness cannot run under a running event loop: use `await arun_through_strands(...)`"
)


def _failure(result: ToolResult) -> dict[str, Any]:
    """Strands' error result for a failed call; Strands adds the call's ``toolUseId``."""
    return {"status": "error", "content": [{"text": result.text}]}


def _is_native(value: object) -> bool:
    """Whether Strands takes ``value`` as a tool result of its own (its decorator's test)."""
    return isinstance(value, dict) and "status" in value and "content" in value


_TEXT = success_text_unless(_is_native)


class _NucleoFunctionTool(DecoratedFunctionTool[..., Any]):
    """Strands' decorated tool whose own refusals (input that fails the schema, before the
    function runs) reach the model as the runner's failures do."""

    def __get__(self, instance: Any, obj_type: type | None = None) -> _NucleoFunctionTool:
        bound = super().__get__(instance, obj_type)
        if bound is self:
            return self
        return _NucleoFunctionTool(
            bound.tool_name, bound.tool_spec, bound._tool_func, self._metadata
        )

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> ToolGenerator:
        """Strands' own run of the tool, with any error result Strands made itself (the
        function, run through the runner, raises nothing) replaced by the failure's text."""
        async for event in super().stream(tool_use, invocation_state, **kwargs):
            if isinstance(event, ToolResultEvent) and event.exception is not None:
                text = self._refusal(event.exception)
                yield ToolResultEvent(
                    StrandsResult(
                        toolUseId=event.tool_use_id, status="error", content=[{"text": text}]
                    )
                )
                continue
            yield event

    def _refusal(self, error: Exception) -> str:
        """The text for an error Strands raised before the function ran: its input validation
        (a correctable failure naming the parameter), else the SystemException text."""
        invalid = find_in_chain(error, pydantic.ValidationError)
        failure: LLMReadableException
        if invalid is not None:
            parameters = [
                parameter
                for name, parameter in self._metadata.signature.parameters.items()
                if not self._metadata._is_special_parameter(name)
            ]
            failure = schema_failure(
                inspect.Signature(parameters), invalid.errors(include_url=False)
            )
        else:
            failure = SystemException(self.tool_name, described(error), error)
        log_failure(self.tool_name, failure)
        return failure.explain_to_llm()


@overload
def strands_tool(
    func: Callable[..., Any],
    /,
    *,
    description: str | None = None,
    inputSchema: dict[str, Any] | None = None,  # noqa: N803  # Strands' own keyword
    context: bool | str = False,
    **options: Unpack[RunnerOptions],
) -> DecoratedFunctionTool[..., Any]: ...
@overload
def strands_tool(
    *,
    description: str | None = None,
    inputSchema: dict[str, Any] | None = None,  # noqa: N803  # Strands' own keyword
    context: bool | str = False,
    **options: Unpack[RunnerOptions],
) -> Callable[[Callable[..., Any]], DecoratedFunctionTool[..., Any]]: ...
def strands_tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    description: str | None = None,
    inputSchema: dict[str, Any] | None = None,  # noqa: N803
    context: bool | str = False,
    **options: Unpack[RunnerOptions],
) -> (
    DecoratedFunctionTool[..., Any]
    | Callable[[Callable[..., Any]], DecoratedFunctionTool[..., Any]]
):
    """Make a tool function a Strands tool whose failures the model understands.

    ``@strands_tool`` or ``@strands_tool(retries=5, timeout=10)`` on a ``def`` or ``async
    def``, instead of ``@strands.tool``; pass the result in ``Agent(tools=[...])``. Strands
    builds the tool spec from the function as for a bare one; ``description``,
    ``inputSchema`` and ``context`` are Strands' own, passed on (a ``ToolContext`` parameter
    and an ``agent`` parameter are filled by Strands and reach the function by name). The name
    is the runner's (``name=``, else ``@tool(name=...)`` beneath, else ``__name__``), for
    Strands and the failure texts alike. A failure is returned as Strands' error result with
    the ``explain_to_llm()`` text. A sync tool with a ``timeout`` becomes an ``async def``
    (Strands awaits it; a direct call returns a coroutine).
    """
    checked = check_runner_options(options, "strands_tool")

    def make(target: Callable[..., Any]) -> DecoratedFunctionTool[..., Any]:
        if not callable(target):
            raise TypeError(f"strands_tool wraps a function; got a {type(target).__name__}")
        if inspect.isasyncgenfunction(target):
            raise TypeError(
                f"strands_tool cannot wrap the async generator {tool_name(target)}: the runner "
                "runs a call to its end and has no stream to pass on; return the result instead"
            )
        name = checked.get("name") or tool_name(target)
        wrapped = through_runner(
            target,
            _failure,
            on_success=_TEXT,
            options={**checked, "name": name},
            passes=(InterruptException,),  # a question for a human, Strands' to ask
        )
        made = strands.tool(
            description=description, inputSchema=inputSchema, name=name, context=context
        )(wrapped)
        return _NucleoFunctionTool(made.tool_name, made.tool_spec, made._tool_func, made._metadata)

    return make if func is None else make(func)


@dataclasses.dataclass(frozen=True, slots=True)
class StrandsReceived:
    """What the model received for one tool call under Strands.

    ``block`` is the ``toolResult`` block of the messages the model is handed on its next turn;
    ``is_error`` whether its ``status`` is ``"error"`` (which reaches the model only through
    the providers that send it: see the module docs); ``text`` its content as the model reads
    it.
    """

    is_error: bool
    """Whether the block's ``status`` is ``"error"``."""
    text: str
    """The block's content as the model reads it: its text (and JSON) parts, joined by
    newlines."""
    channel: str = CHANNEL
    """What the text reached the model in: a ``toolResult`` block, failure or not."""
    block: Mapping[str, Any] = dataclasses.field(default_factory=dict, compare=False, repr=False)
    """The ``toolResult`` block itself, as the model is handed it."""


_TOOL_USE_ID = "tooluse_nucleo_1"


class _ScriptedModel(Model):
    """The model side: call the one tool, then keep the messages it is handed and end."""

    def __init__(self, tool: str, arguments: Mapping[str, Any]) -> None:
        self.tool = tool
        self.arguments = dict(arguments)
        self.turns: list[Messages] = []
        """The messages the model was handed, turn by turn."""

    def update_config(self, **model_config: Any) -> None:
        """Nothing to configure."""

    def get_config(self) -> dict[str, Any]:
        """No configuration: no model id."""
        return {}

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        """Not scripted: the harness asks for no structured output."""
        raise NotImplementedError("the scripted model gives no structured output")

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[StreamEvent, None]:
        """The first turn calls the tool; the next ones keep what they are handed and end."""
        self.turns.append(copy.deepcopy(messages))
        yield {"messageStart": {"role": "assistant"}}
        if len(self.turns) == 1:
            start = {"toolUse": {"toolUseId": _TOOL_USE_ID, "name": self.tool}}
            yield {"contentBlockStart": {"start": start}}  # type: ignore[typeddict-item]
            delta = {"toolUse": {"input": json.dumps(self.arguments)}}
            yield {"contentBlockDelta": {"delta": delta}}  # type: ignore[typeddict-item]
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
            return
        yield {"contentBlockDelta": {"delta": {"text": "done"}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}


def _results(messages: Messages) -> list[Mapping[str, Any]]:
    return [
        dict(block["toolResult"])
        for message in messages
        for block in message["content"]
        if "toolResult" in block and block["toolResult"].get("toolUseId") == _TOOL_USE_ID
    ]


def _text_of(block: Mapping[str, Any]) -> str:
    parts = []
    for part in block.get("content") or []:
        if "text" in part:
            parts.append(str(part["text"]))
        elif "json" in part:
            parts.append(json.dumps(part["json"], ensure_ascii=False))
    return "\n".join(parts)


async def arun_through_strands(
    tool: AgentTool, arguments: Mapping[str, Any] | None = None
) -> StrandsReceived:
    """Run one call of ``tool`` through a Strands ``Agent`` and return what the model reads next.

    The agent's model is a scripted ``strands.models.Model``: its first turn calls ``tool``
    with ``arguments``, its second keeps the messages it is handed and ends the turn; the
    ``toolResult`` block is read from those messages. No callback handler (Strands' default
    prints to stdout). For tests, under a running event loop; :func:`run_through_strands` from
    sync code.
    """
    model = _ScriptedModel(tool.tool_name, arguments or {})
    agent = Agent(model=model, tools=[tool], callback_handler=None)
    await agent.invoke_async("Call the tool.")
    if len(model.turns) != 2:
        raise AssertionError(
            f"expected the model to be called again after the tool, got {len(model.turns)} call(s)"
        )
    blocks = _results(model.turns[1])
    if len(blocks) != 1:
        raise AssertionError(f"expected one toolResult for {_TOOL_USE_ID}, got {blocks!r}")
    block = blocks[0]
    return StrandsReceived(block.get("status") == "error", _text_of(block), CHANNEL, block)


def run_through_strands(
    tool: AgentTool, arguments: Mapping[str, Any] | None = None
) -> StrandsReceived:
    """:func:`arun_through_strands` for sync code (tests without an event loop)."""
    return run_sync(lambda: arun_through_strands(tool, arguments), refusal=_UNDER_A_LOOP)
