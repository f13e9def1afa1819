"""The OpenAI Agents SDK adapter: tools whose failures reach the model as ``explain_to_llm()``.

Use it when your agent runs on the OpenAI Agents SDK (``openai-agents``; install
``pytest-nucleo[openai-agents]``). Importing this module imports ``agents``; ``import
pytest_nucleo`` does not.

- :func:`nucleo_function_tool` turns a tool function (sync or async) into the SDK's
  ``FunctionTool`` once, with ``agents.function_tool``: the description (the docstring) and the
  parameter schema come from the function as usual, the name is the runner's (``@tool(name=...)``
  or ``__name__``). Every call runs through
  :func:`~pytest_nucleo.run_tool` / :func:`~pytest_nucleo.arun_tool` (limiters, retry signals,
  logging), and a failure reaches the model as its ``explain_to_llm()`` text; anything outside
  the set as the SystemException text, never the raw message.
- :func:`failure_error_function` is that error formatter on its own, for a tool you build with
  the SDK's ``function_tool(..., failure_error_function=...)`` yourself. Prefer the decorator:
  without the runner there are no limiters, retries or boundary logging.
- :func:`run_through_agents` / :func:`arun_through_agents` (for tests) run one call of a tool
  through ``Runner.run`` with the SDK's own scripted model (``agents.testing.ScriptedModel``),
  offline and with tracing off, and return :class:`AgentsReceived`: exactly the tool output the
  model reads on its next turn.

What the SDK can carry, and what it cannot (openai-agents 0.24):

- The SDK's default formatter hides every failure: the model reads ``"An error occurred while
  running the tool. Please try again."`` whatever went wrong, and that text even invites a retry
  that cannot help. This adapter replaces it.
- The string a ``failure_error_function`` returns reaches the model verbatim: no prefix.
- There is no error flag: a failure is an ordinary ``function_call_output`` item, the same
  channel and shape as a success. The model can tell them apart only by the text, which is why
  the hint line of ``explain_to_llm()`` matters here. In your own code, a failed call's
  ``ToolCallOutputItem.output`` is a :class:`ToolFailureText` (a ``str``), so you can tell.
- The SDK validates the model's arguments against the schema before the tool runs, so
  arguments that do not fit never reach ``run_tool``'s own checks. This adapter sends the model a
  correctable :class:`~pytest_nucleo.InvalidInputException` for them, naming the parameter (or
  ``arguments`` for JSON that does not parse), rather than the SystemException text: the model
  can fix its arguments.
- A success reaches the model as the runner's text (a ``str`` as is, anything else as
  sorted-key JSON, bounded by ``text_limit``), the same text as under every other adapter;
  the SDK's own outputs (``ToolOutputText``, ``ToolOutputImage``, ``ToolOutputFileContent``)
  are passed on for the SDK to convert.
- A tool taking the SDK's ``RunContextWrapper`` / ``ToolContext`` first gets it; the runner
  checks and passes the model's arguments only. A tool with ``**kwargs`` needs
  ``strict_mode=False`` (the SDK's rule).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable, Mapping
from typing import Any, Unpack, overload

from agents import (
    Agent,
    FunctionTool,
    RunConfig,
    Runner,
    ToolOutputFileContent,
    ToolOutputImage,
    ToolOutputText,
    function_tool,
)
from agents.exceptions import ModelBehaviorError
from agents.function_schema import FuncSchema, function_schema
from agents.items import ToolCallOutputItem
from agents.run_context import RunContextWrapper
from agents.testing import ScriptedModel, assistant_message, function_call
from agents.tool_context import ToolContext
from pydantic import ValidationError

from pytest_nucleo._causes import find_in_chain
from pytest_nucleo._exceptions import (
    InvalidInputException,
    JobCancelledException,
    LLMReadableException,
    SystemException,
)
from pytest_nucleo._runner._tools import run_sync
from pytest_nucleo._text._message import described
from pytest_nucleo.adapters._core import (
    RaisedFailure,
    RunnerOptions,
    ToolFailureText,
    check_runner_options,
    raise_failure,
    schema_failure,
    success_text_unless,
    through_runner,
    tool_name,
)

_UNDER_A_LOOP = (
    "this harness cannot run under a running event loop: use `await arun_through_agents(...)`"
)

__all__ = [
    "AgentsReceived",
    "ToolFailureText",
    "arun_through_agents",
    "failure_error_function",
    "nucleo_function_tool",
    "run_through_agents",
]

CHANNEL = "function_call_output"
"""The Responses item a tool's result reaches the model in, success or failure alike."""


def _component(ctx: RunContextWrapper[Any]) -> str:
    return ctx.tool_name if isinstance(ctx, ToolContext) else "the tool"


def _bad_arguments(
    ctx: RunContextWrapper[Any],
    error: ModelBehaviorError,
    schema: FuncSchema | None,
) -> InvalidInputException:
    """The SDK refused the model's arguments before calling the tool: a correctable failure,
    naming the parameter when it can be found (the SDK keeps pydantic's error as the cause only
    with OPENAI_AGENTS_DONT_LOG_TOOL_DATA=0, so a decorated tool validates again to find it)."""
    raw = ctx.tool_arguments if isinstance(ctx, ToolContext) else None
    invalid = find_in_chain(error, ValidationError)
    if invalid is None and schema is not None and raw is not None:
        try:
            parsed = json.loads(raw) if raw else {}
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            try:
                schema.params_pydantic_model(**parsed)
            except ValidationError as found:
                invalid = found
    if invalid is not None and schema is not None:
        return schema_failure(schema.signature, invalid.errors(include_url=False))
    return InvalidInputException(
        "arguments",
        raw,
        "must be a JSON object whose fields match the tool's parameter schema",
    )


def _failure_text(
    ctx: RunContextWrapper[Any], error: Exception, schema: FuncSchema | None
) -> ToolFailureText:
    if isinstance(error, RaisedFailure):
        return ToolFailureText(error.result.text, error.result.exception)
    found = find_in_chain(error, LLMReadableException)
    failure: LLMReadableException
    if found is not None:
        failure = found
    elif isinstance(error, ModelBehaviorError):
        failure = _bad_arguments(ctx, error, schema)
    elif isinstance(getattr(error, "cancelled_error", None), asyncio.CancelledError):
        # The SDK hands a cancelled call over as an Exception carrying the CancelledError.
        failure = JobCancelledException()
    else:
        failure = SystemException(_component(ctx), described(error), error)
    return ToolFailureText(failure.explain_to_llm(), failure)


def failure_error_function(ctx: RunContextWrapper[Any], error: Exception) -> str:
    """The SDK's ``failure_error_function``: what the model reads when a tool call fails.

    - A failure from a :func:`nucleo_function_tool` tool: the runner's text, i.e. the failure's
      ``explain_to_llm()`` (a foreign exception already as the SystemException text).
    - An LLM-readable exception anywhere in the chain of ``error`` (a tool built with the SDK's
      ``function_tool`` and this formatter): its ``explain_to_llm()``.
    - Arguments the SDK refused (``ModelBehaviorError``): a correctable
      :class:`InvalidInputException`, since the model can send them again.
    - The call was cancelled: :class:`JobCancelledException`.
    - Anything else: the SystemException text naming the tool; the raw message never.

    The return value is a :class:`ToolFailureText`, so code can tell a failure from a success.
    """
    return _failure_text(ctx, error, None)


def _is_native(value: object) -> bool:
    """Whether the SDK has its own form for ``value``: its text, image and file outputs."""
    if isinstance(value, list | tuple):
        return any(_is_native(item) for item in value)
    return isinstance(value, ToolOutputText | ToolOutputImage | ToolOutputFileContent)


_SUCCESS = success_text_unless(_is_native)


@overload
def nucleo_function_tool(func: Callable[..., Any], /) -> FunctionTool: ...
@overload
def nucleo_function_tool(
    *,
    description: str | None = None,
    strict_mode: bool = True,
    name_override: str | None = None,
    is_enabled: Any = True,
    needs_approval: Any = False,
    **options: Unpack[RunnerOptions],
) -> Callable[[Callable[..., Any]], FunctionTool]: ...
def nucleo_function_tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    description: str | None = None,
    strict_mode: bool = True,
    name_override: str | None = None,
    is_enabled: Any = True,
    needs_approval: Any = False,
    **options: Unpack[RunnerOptions],
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Make a tool function an Agents SDK ``FunctionTool`` whose failures the model understands.

    ``@nucleo_function_tool`` or ``@nucleo_function_tool(description=...)`` on a ``def`` or
    ``async def``; pass the result in ``Agent(tools=[...])``. The SDK builds the description
    (default: the docstring, with its ``Args:`` section as parameter descriptions) and the
    parameter schema from the function. The name is the runner's: ``name_override`` (or the
    runner option ``name``), else ``@tool(name=...)`` under this decorator, else the function's
    ``__name__``; the SDK and the failure texts use the same one. Calls run through the runner
    with its options (``retries``, ``timeout``, ``cancel``, ``clock``, ``limiters``, ...);
    failures reach the model through :func:`failure_error_function`. ``is_enabled`` and
    ``needs_approval`` are the SDK's, passed on. A tool taking the SDK's ``RunContextWrapper``
    or ``ToolContext`` first gets it; the runner checks the model's arguments only.

    Use the SDK's own ``function_tool`` with ``failure_error_function=failure_error_function``
    instead only when the tool must not run through the runner.
    """
    if name_override is not None and "name" in options and options["name"] != name_override:
        raise TypeError(
            f"name_override={name_override!r} and name={options['name']!r} disagree: give one"
        )
    checked = check_runner_options(
        {**options, **({"name": name_override} if name_override is not None else {})},
        "nucleo_function_tool",
    )

    def make(target: Callable[..., Any]) -> FunctionTool:
        # One name for the SDK and the runner (which names the tool in its failure texts).
        name = checked.get("name") or tool_name(target)
        schema = function_schema(target, name_override=name, strict_json_schema=strict_mode)

        def failure_text(ctx: RunContextWrapper[Any], error: Exception) -> str:
            return _failure_text(ctx, error, schema)

        return function_tool(
            through_runner(
                target,
                raise_failure,
                on_success=_SUCCESS,
                options={**checked, "name": name},
                context=schema.takes_context,
            ),
            name_override=name,
            description_override=description,
            failure_error_function=failure_text,
            strict_mode=strict_mode,
            is_enabled=is_enabled,
            needs_approval=needs_approval,
        )

    return make if func is None else make(func)


@dataclasses.dataclass(frozen=True, slots=True)
class AgentsReceived:
    """What the model received for one tool call under the Agents SDK.

    ``text`` is the ``output`` of the ``function_call_output`` item as the model reads it on
    its next turn (byte for byte, including anything the SDK adds); ``is_error`` is whether the
    call failed (the model itself gets no such flag: see the module docs); ``channel`` is the
    item type, ``"function_call_output"`` for success and failure alike.
    """

    is_error: bool
    """Whether the call failed (the model itself gets no such flag)."""
    text: str
    """The ``output`` of the ``function_call_output`` item, byte for byte."""
    channel: str = CHANNEL
    """The item type, ``"function_call_output"`` for success and failure alike."""


async def arun_through_agents(
    tool: FunctionTool, arguments: Mapping[str, Any] | str | None = None
) -> AgentsReceived:
    """Run one call of ``tool`` through the SDK's ``Runner.run`` and return what the model got.

    The model is the SDK's ``ScriptedModel``: its first turn calls ``tool`` with ``arguments``
    (a mapping, or the raw JSON string a model would send), its second turn answers; the tool
    output is read from the input of that second turn, i.e. exactly what a model would read.
    Offline: no API key, no network, tracing disabled for the run. For tests; in a running
    event loop. Use :func:`run_through_agents` from sync code.
    """
    call_id = "call_nucleo_1"
    model = ScriptedModel(
        [
            [function_call(tool.name, arguments or {}, call_id=call_id)],
            [assistant_message("done")],
        ]
    )
    agent: Agent[None] = Agent(name="nucleo-harness", model=model, tools=[tool])
    result = await Runner.run(
        agent, "Call the tool.", run_config=RunConfig(tracing_disabled=True), max_turns=2
    )
    model.assert_complete()
    second = model.last_call
    if second is None or not isinstance(second.input, list):
        raise AssertionError("the scripted model was not called back with the tool's output")
    sent = [
        item
        for item in second.input
        if isinstance(item, Mapping)
        and item.get("type") == CHANNEL
        and item.get("call_id") == call_id
    ]
    if len(sent) != 1:
        raise AssertionError(f"expected one {CHANNEL} item for {call_id}, got {sent!r}")
    output = sent[0]["output"]
    text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    outputs = [item for item in result.new_items if isinstance(item, ToolCallOutputItem)]
    is_error = len(outputs) == 1 and isinstance(outputs[0].output, ToolFailureText)
    return AgentsReceived(is_error=is_error, text=text, channel=str(sent[0]["type"]))


def run_through_agents(
    tool: FunctionTool, arguments: Mapping[str, Any] | str | None = None
) -> AgentsReceived:
    """:func:`arun_through_agents` for sync code (tests without an event loop)."""
    return run_sync(lambda: arun_through_agents(tool, arguments), refusal=_UNDER_A_LOOP)
