"""pydantic-ai: a tool's failures reach the model through pydantic-ai's own two error channels.

Use this module when your tools run under a pydantic-ai ``Agent``: wrap each tool function once
with :func:`wrap_tool` (register the result with ``Agent(tools=[...])`` or
``@agent.tool_plain``), or build a ``pydantic_ai.Tool`` with :func:`make_tool` when you need the
tool's options (``max_retries``, ``name``, ...). In tests, :func:`call_through_agent` (or
:func:`acall_through_agent` under a running event loop) runs one call through a real ``Agent`` on
pydantic-ai's ``FunctionModel`` and returns what the model receives, ready for ``llm_snapshot``.
Install with ``pip install 'pytest-nucleo[pydantic-ai]'``. Importing this module imports
pydantic-ai; ``import pytest_nucleo`` never does.

Every call runs through :func:`~pytest_nucleo.run_tool` / :func:`~pytest_nucleo.arun_tool`
(limiters, retry signals, logging), and a failure is delivered as follows (pydantic-ai-slim 2.68,
read in its source and pinned by ``tests/test_adapter_pydantic_ai.py``):

- a correctable failure raises ``ModelRetry(explain_to_llm())``: pydantic-ai answers the call with
  a ``ToolReturnPart`` whose ``outcome`` is ``'retried'`` and whose content is exactly that text.
  It counts against the tool's retry budget (``max_retries``, the agent's ``retries``, default 1):
  one more correctable failure than the budget allows ends the run with pydantic-ai's
  ``UnexpectedModelBehavior``. Raise the budget (``make_tool(f, max_retries=3)``) for tools the
  model is expected to get wrong more than once.
- an uncorrectable failure raises ``ToolFailed(explain_to_llm())``: ``outcome='failed'``, content
  exactly that text, no retry budget used.
- anything outside the set (a ``KeyError``, a bug) becomes the SystemException text ("A system
  error occurred in <tool>. ...") on the ``ToolFailed`` channel instead of crashing the run, which
  is what pydantic-ai does with it unwrapped.

pydantic-ai 2.68 adds no prefix or suffix to either channel: the "Fix the errors and try again."
line of the deprecated ``RetryPromptPart`` is not sent for a tool retry. What differs is the
provider: one with a native error channel (Anthropic ``is_error``, Bedrock ``status='error'``)
sends the content as is; the others (OpenAI, Mistral, Groq, ...) send the JSON text
``{"error":"<text>"}``, and Google sends ``{"error": <text>}`` as a structured object.
:class:`ModelReceived` gives both texts.

Limitation: arguments that do not fit the tool's schema never reach the runner. pydantic-ai
validates them first and answers on the ``'retried'`` channel with pydantic's validation errors
(a JSON list), not with :class:`~pytest_nucleo.InvalidInputException`'s text.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any, Literal, NoReturn, TypeVar, cast

from pydantic_ai import Agent, ModelRetry, RunContext, Tool, ToolFailed, capture_run_messages
from pydantic_ai.messages import (
    ERROR_OUTCOMES,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from pytest_nucleo._runner import ToolResult, run_sync
from pytest_nucleo.adapters._core import through_runner

_UNDER_A_LOOP = (
    "this harness cannot run under a running event loop: use `await acall_through_agent(...)`"
)

__all__ = [
    "ModelReceived",
    "acall_through_agent",
    "call_through_agent",
    "make_tool",
    "wrap_tool",
]

F = TypeVar("F", bound=Callable[..., Any])

# Set on a wrapper so that wrapping it again returns it unchanged: one runner per call, not two.
_WRAPPED = "__nucleo_pydantic_ai__"
_CALL_ID = "nucleo-call-1"


def _deliver(result: ToolResult) -> NoReturn:
    """Hand a failed call to pydantic-ai: correctable ones to ``ModelRetry``, the rest to
    ``ToolFailed``, both carrying exactly the text the runner made."""
    failure = result.exception
    if failure is not None and failure.is_correctable:
        raise ModelRetry(result.text) from failure
    raise ToolFailed(result.text) from failure


def _check_signature(func: Callable[..., Any]) -> None:
    """Refuse, at wrap time, signatures pydantic-ai would call positionally.

    pydantic-ai passes ``RunContext``, positional-only parameters and ``*args`` positionally, and
    the runner takes the named arguments a model sends; a mismatch would otherwise surface only
    when the model calls the tool, as a crash of the run.
    """
    name = getattr(func, "__qualname__", repr(func))
    parameters = list(inspect.signature(func).parameters.values())
    for parameter in parameters:
        if parameter.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.VAR_POSITIONAL):
            raise TypeError(
                f"{name}: parameter {parameter.name!r} is passed positionally by pydantic-ai; "
                "a wrapped tool takes named parameters only (use a list parameter for *args)"
            )
    if parameters:
        try:
            first = typing.get_type_hints(func).get(parameters[0].name)
        except Exception:  # unresolvable annotations: pydantic-ai will report them itself
            first = None
        if first is RunContext or typing.get_origin(first) is RunContext:
            raise TypeError(
                f"{name}: takes a RunContext; a wrapped tool is a plain tool "
                "(register it with tool_plain), since the runner calls it with the model's "
                "arguments only"
            )


def wrap_tool(func: F) -> F:
    """Wrap a tool function once for pydantic-ai; use as a decorator.

    The result keeps the function's name, docstring and signature (pydantic-ai builds the tool's
    JSON schema and description from them), is sync or async like the function, and runs every
    call through the runner: correctable failures go to ``ModelRetry``, uncorrectable ones and
    anything outside the set to ``ToolFailed``, always with the ``explain_to_llm()`` text.
    Register it with ``Agent(tools=[f])`` or ``agent.tool_plain(f)``; for tool options use
    :func:`make_tool`. Wrapping a wrapped function returns it unchanged. Raises ``TypeError`` for
    a function taking ``RunContext``, positional-only parameters or ``*args``.
    """
    if getattr(func, _WRAPPED, False):
        return func
    _check_signature(func)
    wrapper = through_runner(func, _deliver)
    setattr(wrapper, _WRAPPED, True)
    return cast(F, wrapper)


def make_tool(func: Callable[..., Any], **options: Any) -> Tool[Any]:
    """A ``pydantic_ai.Tool`` for ``func``, wrapped with :func:`wrap_tool`.

    Use it instead of :func:`wrap_tool` to set ``Tool`` options, passed through as keywords:
    ``max_retries`` above all (a correctable failure spends one retry; past the budget pydantic-ai
    ends the run), ``name``, ``description``, ``strict``, ``timeout``. ``takes_ctx`` is always
    False.
    """
    if "takes_ctx" in options:
        raise TypeError("make_tool builds plain tools: takes_ctx cannot be set")
    return Tool(wrap_tool(func), takes_ctx=False, **options)


Channel = Literal["success", "retried", "failed"]


@dataclasses.dataclass(frozen=True, slots=True)
class ModelReceived:
    """What the model received for one tool call under pydantic-ai.

    ``channel`` is the ``ToolReturnPart.outcome`` pydantic-ai answered the call with:
    ``'retried'`` is the ``ModelRetry`` channel (it also carries argument validation errors),
    ``'failed'`` the ``ToolFailed`` channel, ``'success'`` a returned value. ``is_error`` is True
    for the two error channels (pydantic-ai's ``ERROR_OUTCOMES``).

    ``text`` is what a provider with a native error channel (Anthropic, Bedrock) sends: the
    content unchanged, i.e. ``explain_to_llm()`` for a failure. ``wrapped_text`` is what the
    providers without one (OpenAI, Mistral, Groq, ...) send: ``{"error":"<text>"}`` for a
    failure, the same as ``text`` for a success. ``part`` is the ``ToolReturnPart`` itself, for
    anything else (``part.retry`` says which attempt a retry was).
    """

    channel: Channel
    is_error: bool
    text: str
    wrapped_text: str
    part: ToolReturnPart = dataclasses.field(compare=False, repr=False)


class _ScriptedModel:
    """The model side of the harness: call the one tool once, then read what comes back."""

    def __init__(self, arguments: Mapping[str, Any] | None) -> None:
        self.arguments = dict(arguments or {})
        self.received: ToolReturnPart | None = None

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        called = any(
            isinstance(message, ModelResponse)
            and any(isinstance(part, ToolCallPart) for part in message.parts)
            for message in messages
        )
        if not called:
            tools = info.function_tools
            if len(tools) != 1:
                raise TypeError(f"the harness runs an agent with one tool; got {len(tools)}")
            call = ToolCallPart(tool_name=tools[0].name, args=self.arguments, tool_call_id=_CALL_ID)
            return ModelResponse(parts=[call])
        if self.received is None:
            # The request after our call: its parts are exactly what this model receives.
            self.received = next(
                (
                    part
                    for part in messages[-1].parts
                    if isinstance(part, ToolReturnPart) and part.tool_call_id == _CALL_ID
                ),
                None,
            )
        return ModelResponse(parts=[TextPart("done")])


def _agent(tool: Callable[..., Any] | Tool[Any], script: _ScriptedModel) -> Agent[None, str]:
    return Agent(FunctionModel(script), tools=[tool])


def _received(script: _ScriptedModel, messages: list[ModelMessage]) -> ModelReceived:
    part = script.received
    if part is None:
        requests = [m for m in messages if isinstance(m, ModelRequest)]
        raise AssertionError(
            "the model never received the tool call's result; the run's requests were: "
            f"{requests!r}"
        )
    channel = part.outcome
    if channel not in ("success", "retried", "failed"):
        raise AssertionError(f"unexpected tool return outcome {channel!r}: {part!r}")
    return ModelReceived(
        channel=channel,
        is_error=channel in ERROR_OUTCOMES,
        text=part.model_response_str(wrap_if_error=False),
        wrapped_text=part.model_response_str(),
        part=part,
    )


def call_through_agent(
    tool: Callable[..., Any] | Tool[Any], arguments: Mapping[str, Any] | None = None
) -> ModelReceived:
    """Run ``tool`` once through a real pydantic-ai ``Agent`` and return what the model receives.

    For tests: the agent's model is pydantic-ai's ``FunctionModel``, scripted to call ``tool``
    (a function registered as with ``tool_plain``, or a ``Tool``) with ``arguments`` and to read
    the next request, inside ``capture_run_messages``. No network. Pass the wrapped tool to test
    what your users get; an unwrapped one shows pydantic-ai's own handling (a foreign exception
    then propagates from this call, as it ends a real run). Under a running event loop use
    :func:`acall_through_agent`.
    """
    return run_sync(lambda: acall_through_agent(tool, arguments), refusal=_UNDER_A_LOOP)


async def acall_through_agent(
    tool: Callable[..., Any] | Tool[Any], arguments: Mapping[str, Any] | None = None
) -> ModelReceived:
    """:func:`call_through_agent` for async tests: ``await`` it under a running event loop."""
    script = _ScriptedModel(arguments)
    with capture_run_messages() as messages:
        await _agent(tool, script).run("Call the tool.")
    return _received(script, messages)
