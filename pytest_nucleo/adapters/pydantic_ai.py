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
  It counts against the tool's retry budget (``max_retries``, the agent's ``retries``, default 1).
  On the tool's last attempt a :func:`make_tool` tool raises ``ToolFailed`` with the same text
  instead, so the model reads it and the run goes on (``past_retries``, see :data:`PastRetries`);
  a plain :func:`wrap_tool` function cannot see its attempts, and one more correctable failure
  than the budget allows ends the run with pydantic-ai's ``UnexpectedModelBehavior``.
- an uncorrectable failure raises ``ToolFailed(explain_to_llm())``: ``outcome='failed'``, content
  exactly that text, no retry budget used.
- anything outside the set (a ``KeyError``, a bug) becomes the SystemException text ("A system
  error occurred in <tool>. ...") on the ``ToolFailed`` channel instead of crashing the run, which
  is what pydantic-ai does with it unwrapped.
- a ``ModelRetry`` or ``ToolFailed`` the tool raises itself is pydantic-ai's own way to tell
  the model something: it reads as its message, word for word, a ``ModelRetry`` as a correctable
  failure, a ``ToolFailed`` as a final one (an empty message reads as the SystemException
  text).

pydantic-ai 2.68 adds no prefix or suffix to either channel: the "Fix the errors and try again."
line of the deprecated ``RetryPromptPart`` is not sent for a tool retry. What differs is the
provider: one with a native error channel (Anthropic ``is_error``, Bedrock ``status='error'``)
sends the content as is; the others (OpenAI, Mistral, Groq, ...) send the JSON text
``{"error":"<text>"}``, and Google sends ``{"error": <text>}`` as a structured object.
:class:`ModelReceived` gives both texts.

A success reads as the runner's text (the same under every adapter); ``BinaryContent``, file
URLs and ``ToolReturn`` are handed to pydantic-ai unchanged. A tool taking ``RunContext`` first
gets it; the runner checks and passes the model's arguments only.

Limitation: arguments that do not fit the tool's schema never reach the runner. pydantic-ai
validates them first and answers on the ``'retried'`` channel with pydantic's validation errors
(a JSON list), not with :class:`~pytest_nucleo.InvalidInputException`'s text.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, NoReturn, TypeVar, Unpack, cast, overload

from pydantic_ai import Agent, ModelRetry, RunContext, Tool, ToolFailed, capture_run_messages
from pydantic_ai.messages import (
    ERROR_OUTCOMES,
    BinaryContent,
    FileUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturn,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.toolsets import AbstractToolset

from pytest_nucleo._exceptions import (
    CORRECTABLE_HINT,
    UNCORRECTABLE_HINT,
    LLMReadableRuntimeException,
)
from pytest_nucleo._runner._results import ToolResult
from pytest_nucleo._runner._tools import run_sync
from pytest_nucleo.adapters._core import (
    RUNNER_OPTIONS,
    RunnerOptions,
    check_runner_options,
    own_error_failure,
    success_text_unless,
    through_runner,
)

_UNDER_A_LOOP = (
    "this harness cannot run under a running event loop: use `await acall_through_agent(...)`"
)

__all__ = [
    "ModelReceived",
    "acall_through_agent",
    "call_through_agent",
    "keep_mcp_failures",
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


def _is_native(value: object) -> bool:
    """Whether pydantic-ai has its own form for ``value``: files, images, a ``ToolReturn``."""
    if isinstance(value, list | tuple):
        return any(_is_native(item) for item in value)
    return isinstance(value, BinaryContent | FileUrl | ToolReturn)


_SUCCESS = success_text_unless(_is_native)

PastRetries = Literal["tool failed", "end run"]
"""What a correctable failure does once the tool's retry budget is spent: ``"tool failed"``
(the default) answers the call on the failed channel, with the same text, so the model reads
it and the run goes on; ``"end run"`` keeps pydantic-ai's own rule, ``UnexpectedModelBehavior``
ending the run."""


def _takes_run_context(func: Callable[..., Any]) -> bool:
    parameters = list(inspect.signature(func).parameters.values())
    if not parameters:
        return False
    try:
        first = typing.get_type_hints(func).get(parameters[0].name)
    except Exception:  # unresolvable annotations: pydantic-ai will report them itself
        first = None
    return first is RunContext or typing.get_origin(first) is RunContext


def _check_signature(func: Callable[..., Any]) -> bool:
    """Refuse, at wrap time, signatures pydantic-ai would call positionally; say whether the
    tool takes pydantic-ai's ``RunContext`` first (passed on to it, never to the runner).

    pydantic-ai passes ``RunContext``, positional-only parameters and ``*args`` positionally, and
    the runner takes the named arguments a model sends; a mismatch would otherwise surface only
    when the model calls the tool, as a crash of the run.
    """
    name = getattr(func, "__qualname__", repr(func))
    takes_ctx = _takes_run_context(func)
    parameters = list(inspect.signature(func).parameters.values())[1 if takes_ctx else 0 :]
    for parameter in parameters:
        if parameter.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.VAR_POSITIONAL):
            raise TypeError(
                f"{name}: parameter {parameter.name!r} is passed positionally by pydantic-ai; "
                "a wrapped tool takes named parameters only (use a list parameter for *args)"
            )
    return takes_ctx


def _past_the_budget(ctx: RunContext[Any], retry: ModelRetry) -> Exception:
    """The failure to raise for a correctable one on the tool's last attempt: the same text on
    the failed channel, which spends no budget, so the model reads it instead of a crash."""
    if not ctx.last_attempt:
        return retry
    failed = ToolFailed(retry.message)
    failed.__cause__ = retry.__cause__
    return failed


def _with_budget_check(
    inner: Callable[..., Any], func: Callable[..., Any], takes_ctx: bool
) -> Callable[..., Any]:
    """A wrapper taking pydantic-ai's ``RunContext`` first (the tool may not), to know when a
    correctable failure comes on the tool's last attempt."""
    if inspect.iscoroutinefunction(inner):

        @functools.wraps(inner)
        async def checked_async(ctx: RunContext[Any], /, *args: Any, **kwargs: Any) -> Any:
            try:
                if takes_ctx:
                    return await inner(ctx, *args, **kwargs)
                return await inner(*args, **kwargs)
            except ModelRetry as retry:
                raise _past_the_budget(ctx, retry) from retry.__cause__

        wrapper: Callable[..., Any] = checked_async
    else:

        @functools.wraps(inner)
        def checked(ctx: RunContext[Any], /, *args: Any, **kwargs: Any) -> Any:
            try:
                return inner(ctx, *args, **kwargs) if takes_ctx else inner(*args, **kwargs)
            except ModelRetry as retry:
                raise _past_the_budget(ctx, retry) from retry.__cause__

        wrapper = checked
    if not takes_ctx:
        # pydantic-ai reads the schema from this signature, dropping the first parameter.
        signature = inspect.signature(func)
        # No annotation: the wrapper's type hints are the tool's, and pydantic-ai skips an
        # unannotated first parameter of a tool taking the context.
        context = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_ONLY)
        wrapper.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[context, *signature.parameters.values()]
        )
    return wrapper


def _wrap(func: Callable[..., Any], options: RunnerOptions) -> tuple[Callable[..., Any], bool]:
    if not callable(func):
        raise TypeError(f"a pydantic-ai tool wraps a function; got a {type(func).__name__}")
    takes_ctx = _check_signature(func)
    wrapper = through_runner(
        func,
        _deliver,
        on_success=_SUCCESS,
        options=options,
        context=takes_ctx,
        own_error=_read_own_error,
    )
    return wrapper, takes_ctx


def _read_own_error(exc: BaseException) -> LLMReadableRuntimeException | None:
    """pydantic-ai's errors for a message to the model, raised by the tool itself: a
    ``ModelRetry`` reads as its message, correctable; a ``ToolFailed`` as its message, final."""
    if isinstance(exc, ModelRetry):
        return own_error_failure(exc)
    if isinstance(exc, ToolFailed):
        return own_error_failure(exc, correctable=False)
    return None


@overload
def wrap_tool(func: F, /) -> F: ...
@overload
def wrap_tool(**options: Unpack[RunnerOptions]) -> Callable[[F], F]: ...
def wrap_tool(func: F | None = None, /, **options: Unpack[RunnerOptions]) -> F | Callable[[F], F]:
    """Wrap a tool function once for pydantic-ai; use as a decorator.

    The result keeps the function's name, docstring and signature (pydantic-ai builds the tool's
    JSON schema and description from them), is sync or async like the function, and runs every
    call through the runner: correctable failures go to ``ModelRetry``, uncorrectable ones and
    anything outside the set to ``ToolFailed``, always with the ``explain_to_llm()`` text.
    A tool taking ``RunContext`` first gets it (and so ``ctx.deps``); register it with
    ``Agent(tools=[f])`` or ``agent.tool``, a plain one with ``agent.tool_plain``.
    ``@wrap_tool(retries=..., timeout=..., name=...)`` sets the runner's options (with a
    ``timeout`` the wrapper is async). For pydantic-ai's ``Tool`` options, and to answer a
    correctable failure past the retry budget as a failed call, use :func:`make_tool`.
    Wrapping a wrapped function returns it unchanged. Raises ``TypeError`` for positional-only
    parameters or ``*args``.
    """
    checked = check_runner_options(options, "wrap_tool")

    def wrap(target: F) -> F:
        if getattr(target, _WRAPPED, False):
            return target
        wrapper, _ = _wrap(target, checked)
        setattr(wrapper, _WRAPPED, True)
        return cast(F, wrapper)

    return wrap if func is None else wrap(func)


def make_tool(
    func: Callable[..., Any],
    *,
    past_retries: PastRetries = "tool failed",
    **options: Any,
) -> Tool[Any]:
    """A ``pydantic_ai.Tool`` for ``func``, run through the runner like :func:`wrap_tool`.

    Keywords are the runner's options (``name``, ``retries``, ``backoff``, ``max_backoff``,
    ``timeout``, ``cancel``, ``clock``, ``limiters``, ``text_limit``) and ``Tool``'s own
    (``max_retries``, ``description``, ``strict``, ...). ``name`` names the tool for both, so the
    model reads the name it called; ``timeout`` is the runner's (the call ends as
    :class:`~pytest_nucleo.JobTimeoutException`, its text with its hint line), not
    pydantic-ai's. ``max_retries`` is pydantic-ai's budget of correctable failures; past it,
    ``past_retries`` decides (:data:`PastRetries`, default ``"tool failed"``). ``takes_ctx``
    is worked out from the function: a ``RunContext`` first parameter is passed on.
    """
    if "takes_ctx" in options:
        raise TypeError(
            "make_tool works out takes_ctx itself (a RunContext first parameter is passed on): "
            "leave it out"
        )
    if past_retries not in typing.get_args(PastRetries):
        raise ValueError(
            f"past_retries must be one of {', '.join(map(repr, typing.get_args(PastRetries)))}; "
            f"got {past_retries!r}"
        )
    runner = {key: options.pop(key) for key in RUNNER_OPTIONS if key in options}
    checked = check_runner_options(runner, "make_tool")
    if "name" in checked:
        options["name"] = checked["name"]
    if getattr(func, _WRAPPED, False):
        func = func.__wrapped__  # type: ignore[attr-defined]  # set by functools.wraps
    wrapper, takes_ctx = _wrap(func, checked)
    if past_retries == "end run":
        return Tool(wrapper, takes_ctx=takes_ctx, **options)
    return Tool(_with_budget_check(wrapper, func, takes_ctx), takes_ctx=True, **options)


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
    """The ``ToolReturnPart.outcome``: ``'retried'``, ``'failed'`` or ``'success'``."""
    is_error: bool
    """True for the two error channels."""
    text: str
    """What a provider with a native error channel sends: the content unchanged."""
    wrapped_text: str
    """What a provider without one sends: ``{"error":"<text>"}`` for a failure."""
    part: ToolReturnPart = dataclasses.field(compare=False, repr=False)
    """The ``ToolReturnPart`` itself, for anything else."""


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


def _agent(
    tool: Callable[..., Any] | Tool[Any] | AbstractToolset[Any], script: _ScriptedModel
) -> Agent[None, str]:
    if isinstance(tool, AbstractToolset):
        return Agent(FunctionModel(script), toolsets=[tool])
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
    tool: Callable[..., Any] | Tool[Any] | AbstractToolset[Any],
    arguments: Mapping[str, Any] | None = None,
) -> ModelReceived:
    """Run ``tool`` once through a real pydantic-ai ``Agent`` and return what the model receives.

    For tests: the agent's model is pydantic-ai's ``FunctionModel``, scripted to call ``tool``
    (a function registered as with ``tool_plain``, a ``Tool``, or a toolset of one tool such as
    an ``MCPToolset``) with ``arguments`` and to read
    the next request, inside ``capture_run_messages``. No network. Pass the wrapped tool to test
    what your users get; an unwrapped one shows pydantic-ai's own handling (a foreign exception
    then propagates from this call, as it ends a real run). Under a running event loop use
    :func:`acall_through_agent`.
    """
    return run_sync(lambda: acall_through_agent(tool, arguments), refusal=_UNDER_A_LOOP)


async def acall_through_agent(
    tool: Callable[..., Any] | Tool[Any] | AbstractToolset[Any],
    arguments: Mapping[str, Any] | None = None,
) -> ModelReceived:
    """:func:`call_through_agent` for async tests: ``await`` it under a running event loop."""
    script = _ScriptedModel(arguments)
    with capture_run_messages() as messages:
        await _agent(tool, script).run("Call the tool.")
    return _received(script, messages)


async def keep_mcp_failures(
    ctx: RunContext[Any],
    call_tool: Callable[[str, dict[str, Any]], Awaitable[Any]],
    name: str,
    tool_args: dict[str, Any],
) -> Any:
    """A ``process_tool_call`` hook for pydantic-ai's ``MCPToolset`` that keeps the difference
    between a failure the model can correct and one it cannot.

    ``MCPToolset(client, process_tool_call=keep_mcp_failures)``. The toolset turns every MCP
    ``isError`` result into one channel (``tool_error_behavior``: a retry by default, so a 429,
    a timeout and a bug all spend the tool's retry budget and invite the same call again). Our
    MCP tools (:func:`pytest_nucleo.adapters.mcp.mcp_tool`) end every failure text with the
    hint line, so this hook reads it: an uncorrectable failure becomes ``ToolFailed`` (the model
    reads the same text, no retry spent), a correctable one stays a ``ModelRetry``. A failure
    whose text has no uncorrectable hint (a server of someone else's, a protocol error) keeps
    the toolset's own channel.
    """
    try:
        return await call_tool(name, tool_args)
    except ModelRetry as retry:
        if retry.message.endswith(UNCORRECTABLE_HINT):
            raise ToolFailed(retry.message) from retry
        raise
    except ToolFailed as failed:
        if failed.message.endswith(UNCORRECTABLE_HINT):
            raise
        if failed.message.endswith(CORRECTABLE_HINT):
            raise ModelRetry(failed.message) from failed
        raise
