"""Agno: failures reach the model as the tool message's text, ``explain_to_llm()``.

Use it when your agent runs on Agno (``agno``; install ``pip install 'pytest-nucleo[agno]'``).
Importing this module imports ``agno``; ``import pytest_nucleo`` does not.

- :func:`agno_tool` turns a tool function (sync or ``async def``) into Agno's ``Function``
  once, in place of Agno's ``@tool``: Agno builds the same name, description and parameter
  schema as from the bare function. Every call runs through :func:`~pytest_nucleo.run_tool` /
  :func:`~pytest_nucleo.arun_tool`; a failure is raised into Agno's tool-error channel as an
  exception whose message is the ``explain_to_llm()`` text (anything outside the set as the
  SystemException text).
- :func:`nucleo_tool_hook` is an Agno tool hook (``Agent(..., tool_hooks=[nucleo_tool_hook])``)
  for tools not built with :func:`agno_tool`: an exception of the set reads as its
  ``explain_to_llm()``, anything else as the SystemException text, never the raw message.
- :func:`run_through_agno` / :func:`arun_through_agno` (for tests) run one call of a tool
  through a real ``agno.agent.Agent`` whose model is a scripted subclass of Agno's ``Model``
  (no network, no API key, telemetry off), and return :class:`AgnoReceived`: exactly the tool
  message the model reads on its next turn.

What Agno does with a failure (agno 3.1.10, ``tools/function.py`` ``FunctionCall.execute``
and ``models/base.py`` ``Model.run_function_call``), pinned by ``tests/test_adapter_agno.py``:

- An exception a tool raises becomes the tool message's content as its bare ``str()``: the
  technical message with whatever it carries (an upstream body, a secret), and no hint line. Agno
  logs it too (a WARNING with the message, the traceback with ``logger.exception``) to the
  ``agno`` logger, which prints to stdout. The run goes on.
- The tool message has an error flag, ``tool_call_error``, which Agno keeps for your code
  (``RunOutput.tools``, its ``ToolCallErrorEvent``) and does not send: the OpenAI and Anthropic
  formats carry the text alone, so the model tells a failure by the text, its hint line. The
  adapter raises, so the flag is set for a failure, and Agno logs the failure's text and the
  adapter's own exception (nothing of the original: the runner logged that, masked).
- Agno checks the model's arguments with pydantic's ``validate_call`` around the tool and sends
  pydantic's report for a mistyped one. Under :func:`agno_tool` the runner checks them first
  (a missing or unknown one) and Agno's same validation then reads as a correctable
  :class:`~pytest_nucleo.InvalidInputException` text naming the parameter. Under the hook,
  Agno's report is sent as it is. Arguments that are not JSON, or a tool name Agno does not
  know, are answered by Agno before any tool or hook runs, in its own words and unflagged.
- A success reaches the model as ``str()`` of the value (a dict as its Python ``repr``). The
  adapter hands Agno the runner's text instead (the same JSON text as under every adapter);
  Agno's own ``ToolResult`` (text with images, files) and an iterator are passed on unchanged.
- Agno's own control flow, ``RetryAgentRun``, ``StopAgentRun`` and ``RunCancelledException``
  raised by the tool, passes through both unchanged, for Agno to act on.
- ``Agent(tool_hooks=...)`` replaces each tool's own hooks; put :func:`nucleo_tool_hook` first
  in the list, so it answers for what the other hooks raise too. A tool built with Agno's
  ``@tool`` logs the raw exception itself (``Error in tool ...``) before any hook runs.
- Agno calls an ``async def`` tool only from ``Agent.arun`` (its rule). A sync tool with a
  ``timeout`` stays a sync tool for Agno, so ``run`` and ``arun`` both work.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import functools
import inspect
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NoReturn, Unpack, cast, overload

from agno.agent import Agent
from agno.exceptions import AgentRunException, RunCancelledException
from agno.models.base import Model
from agno.models.message import Message
from agno.models.response import ModelResponse
from agno.run import RunStatus
from agno.run.agent import RunOutput
from agno.tools.function import Function, ToolResult, get_entrypoint_docstring
from pydantic import ValidationError

from pytest_nucleo._causes import find_in_chain
from pytest_nucleo._exceptions import LLMReadableException, SystemException
from pytest_nucleo._runner._results import ToolResult as RunnerResult
from pytest_nucleo._runner._tools import run_sync
from pytest_nucleo._text._message import described
from pytest_nucleo._text._render import encodable
from pytest_nucleo.adapters._core import (
    RunnerOptions,
    catching,
    check_runner_options,
    log_failure,
    schema_failure,
    through_runner,
    tool_name,
)

__all__ = [
    "AgnoReceived",
    "agno_tool",
    "arun_through_agno",
    "nucleo_tool_hook",
    "run_through_agno",
]

CHANNEL = "tool message"
"""What a tool's result reaches the model in: a ``role="tool"`` message, failure or not."""

_AGNO_FLOW = (AgentRunException, RunCancelledException)
"""Agno's own control flow a tool may raise (retry with a message, stop, cancelled)."""

_UNDER_A_LOOP = (
    "this harness cannot run under a running event loop: use `await arun_through_agno(...)`"
)


class _ToolFailed(Exception):
    """A failure on its way through Agno's tool-error channel: its message is exactly the text
    the model reads (Agno sends ``str()`` of a tool's exception)."""

    def __init__(self, text: str, exception: LLMReadableException | None) -> None:
        super().__init__(encodable(text))
        self.exception = exception


def _raise_failure(result: RunnerResult) -> Any:
    raise _ToolFailed(result.text, result.exception)


class _RaisedByTheTool(Exception):
    """A pydantic ``ValidationError`` raised inside the tool, told apart from the one the
    argument validation around it raises."""

    def __init__(self, error: ValidationError) -> None:
        super().__init__()
        self.error = error


def _entered(target: Callable[..., Any]) -> Callable[..., Any]:
    """``target`` marking a ``ValidationError`` of its own as :class:`_RaisedByTheTool`."""

    def mark(error: Exception) -> NoReturn:
        raise _RaisedByTheTool(cast(ValidationError, error)) from None

    return catching(target, ValidationError, mark)


def _validated(target: Callable[..., Any]) -> Callable[..., Any]:
    """``target`` under the argument validation Agno puts around a tool (pydantic's
    ``validate_call``, skipped where Agno skips it), its refusal read as the correctable
    failure naming the parameter. Agno is told not to validate again (``_wrapped_for_validation``),
    so the runner sees the model's arguments first."""
    entered = _entered(target)
    try:
        checked: Callable[..., Any] = Function._validate_callable(entered)
    except Exception:  # Agno then runs the tool unvalidated as well (it logs a warning)
        checked = entered
    signature = inspect.signature(target)

    def refused(error: ValidationError) -> Exception:
        return schema_failure(signature, error.errors(include_url=False))

    if inspect.iscoroutinefunction(entered):

        @functools.wraps(target)
        async def acall(*args: Any, **kwargs: Any) -> Any:
            try:
                return await checked(*args, **kwargs)
            except _RaisedByTheTool as raised:
                own = raised.error
            except ValidationError as error:
                raise refused(error) from error
            raise own  # outside the handler: the tool's own error, as it raised it

        return acall

    @functools.wraps(target)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return checked(*args, **kwargs)
        except _RaisedByTheTool as raised:
            own = raised.error
        except ValidationError as error:
            raise refused(error) from error
        raise own

    return call


def _is_native(value: object) -> bool:
    """Whether Agno has its own form for ``value``: its ``ToolResult`` (text with media), or an
    iterator, whose items it reads itself."""
    return isinstance(value, ToolResult | Iterator)


def _deliver(result: RunnerResult) -> Any:
    value = result.value
    return value if _is_native(value) else result.text


def _sync_entry(wrapper: Callable[..., Any]) -> Callable[..., Any]:
    """A sync function running the async ``wrapper`` (a sync tool under a timeout) to its end,
    so Agno keeps it a sync tool. Under a running event loop (Agno calls a sync tool in the
    loop's own thread when a tool hook is async) it runs in a thread of its own."""
    refusal = f"{wrapper.__name__} runs under a timeout and needs an event loop of its own"

    @functools.wraps(wrapper)
    def run(*args: Any, **kwargs: Any) -> Any:
        def start() -> Awaitable[Any]:
            return wrapper(*args, **kwargs)  # type: ignore[no-any-return]

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return run_sync(start, refusal=refusal)
        context = contextvars.copy_context()
        with ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(context.run, run_sync, start, refusal=refusal).result()

    return run


@overload
def agno_tool(
    func: Callable[..., Any],
    /,
    *,
    description: str | None = None,
    instructions: str | None = None,
    strict: bool | None = None,
    show_result: bool | None = None,
    stop_after_tool_call: bool = False,
    requires_confirmation: bool | None = None,
    **options: Unpack[RunnerOptions],
) -> Function: ...
@overload
def agno_tool(
    *,
    description: str | None = None,
    instructions: str | None = None,
    strict: bool | None = None,
    show_result: bool | None = None,
    stop_after_tool_call: bool = False,
    requires_confirmation: bool | None = None,
    **options: Unpack[RunnerOptions],
) -> Callable[[Callable[..., Any]], Function]: ...
def agno_tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    description: str | None = None,
    instructions: str | None = None,
    strict: bool | None = None,
    show_result: bool | None = None,
    stop_after_tool_call: bool = False,
    requires_confirmation: bool | None = None,
    **options: Unpack[RunnerOptions],
) -> Function | Callable[[Callable[..., Any]], Function]:
    """Make a tool function an Agno ``Function`` whose failures the model understands.

    ``@agno_tool`` or ``@agno_tool(retries=5, timeout=10)`` on a ``def`` or ``async def``, in
    place of Agno's ``@tool``; pass the result in ``Agent(tools=[...])``. Agno builds the
    description (the docstring, or ``description``) and the parameter schema from the function
    as for a bare one; the name is the runner's (``name=``, else ``@tool(name=...)`` of
    pytest_nucleo beneath, else ``__name__``). ``instructions``, ``strict``, ``show_result``,
    ``stop_after_tool_call`` and ``requires_confirmation`` are Agno's, passed on. A parameter
    Agno fills itself (``agent``, ``run_context``, ``images``, ...) reaches the tool by name.
    """
    checked = check_runner_options(options, "agno_tool")
    flags: dict[str, Any] = {
        "instructions": instructions,
        "strict": strict,
        "requires_confirmation": requires_confirmation,
    }
    flags = {key: value for key, value in flags.items() if value is not None}

    def make(target: Callable[..., Any]) -> Function:
        if isinstance(target, Function):
            raise TypeError(
                "agno_tool wraps a function; got an Agno Function (from Agno's @tool): put "
                "agno_tool on the function itself, in place of @tool"
            )
        if not callable(target):
            raise TypeError(f"agno_tool wraps a function; got a {type(target).__name__}")
        if inspect.isgeneratorfunction(target) or inspect.isasyncgenfunction(target):
            raise TypeError(
                "agno_tool wraps a function that returns its result; a generator's items are "
                "made after the runner has returned, so their failures would not reach the "
                "model as their text"
            )
        name = checked.get("name") or tool_name(target)
        wrapped = through_runner(
            _validated(target),
            _raise_failure,
            on_success=_deliver,
            options={**checked, "name": name},
            passes=_AGNO_FLOW,
        )
        is_async = inspect.iscoroutinefunction(target)
        entry = (
            wrapped
            if is_async or not inspect.iscoroutinefunction(wrapped)
            else _sync_entry(wrapped)
        )
        # The wrapper validates the arguments as Agno would, after the runner's own checks.
        entry._wrapped_for_validation = True  # type: ignore[attr-defined]
        function = Function(
            name=name,
            description=description if description is not None else get_entrypoint_docstring(entry),
            entrypoint=entry,
            # As Agno's @tool: a result that ends the run is shown, unless told otherwise.
            show_result=stop_after_tool_call if show_result is None else show_result,
            stop_after_tool_call=stop_after_tool_call,
            **flags,
        )
        function.process_entrypoint()
        return function

    return make if func is None else make(func)


def _hook_failure(function_name: str, error: Exception) -> _ToolFailed:
    """The failure the model reads for ``error``, raised by a tool under the hook: the
    ``explain_to_llm()`` of an LLM-readable exception in its chain, else the SystemException
    text naming the tool. Logged as the runner logs a failure (a masked copy)."""
    found = find_in_chain(error, LLMReadableException)
    failure = (
        found if found is not None else SystemException(function_name, described(error), error)
    )
    log_failure(function_name, failure)
    return _ToolFailed(failure.explain_to_llm(), failure)


def _refused_by_agno(error: Exception) -> bool:
    """Whether ``error`` is Agno's own check of the model's arguments: a ``ValidationError``
    raised by the ``validate_call`` wrapper Agno puts around the tool, called by Agno itself,
    before the tool ran (the tool's frames would follow)."""
    if not isinstance(error, ValidationError):
        return False
    modules = []
    trace = error.__traceback__
    while trace is not None:
        modules.append(str(trace.tb_frame.f_globals.get("__name__", "")))
        trace = trace.tb_next
    inner = len(modules)
    while inner > 0 and modules[inner - 1].startswith("pydantic."):
        inner -= 1
    return 0 < inner < len(modules) and modules[inner - 1].startswith("agno.")


def _passes(error: Exception) -> bool:
    """Whether the hook lets ``error`` through unchanged: a failure already in its text,
    Agno's own control flow, or Agno's own refusal of the arguments."""
    return isinstance(error, (_ToolFailed, *_AGNO_FLOW)) or _refused_by_agno(error)


async def _awaited(function_name: str, pending: Awaitable[Any]) -> Any:
    try:
        return await pending
    except Exception as error:
        if _passes(error):
            raise
        failure = _hook_failure(function_name, error)
    raise failure  # outside the handler: the original is not chained to what Agno logs


def nucleo_tool_hook(
    function_name: str, function_call: Callable[..., Any], arguments: dict[str, Any]
) -> Any:
    """Agno's tool hook: a failed call reads as its ``explain_to_llm()`` text.

    ``Agent(..., tool_hooks=[nucleo_tool_hook])`` (first in the list), for tools not built with
    :func:`agno_tool` (plain functions, Agno's ``@tool``, toolkits): an exception of the set,
    anywhere in the chain, reads as its ``explain_to_llm()``; anything else as the
    SystemException text naming the tool, never its message. The failure is logged as the
    runner logs one, and re-raised with that text, so Agno marks the call ``tool_call_error``.
    Works in Agno's sync and async paths (there it returns an awaitable, which Agno awaits).
    """
    try:
        result = function_call(**arguments)
    except Exception as error:
        if _passes(error):
            raise
        failure = _hook_failure(function_name, error)
    else:
        if inspect.isawaitable(result):
            return _awaited(function_name, result)
        return result
    raise failure  # outside the handler: the original is not chained to what Agno logs


@dataclasses.dataclass(frozen=True, slots=True)
class AgnoReceived:
    """What the model received for one tool call under an Agno agent.

    ``text`` is the content of the ``role="tool"`` message of the model's next call, byte for
    byte; ``is_error`` is that message's ``tool_call_error`` (Agno does not send it to the
    model: see the module docs); ``channel`` is ``"tool message"`` for failure and success;
    ``message`` is Agno's ``Message`` itself.
    """

    is_error: bool
    """The tool message's ``tool_call_error`` (Agno does not send it to the model)."""
    text: str
    """The content of the ``role="tool"`` message of the model's next call."""
    channel: str = CHANNEL
    """What the text reached the model in: a tool message, failure or not."""
    message: Message | None = dataclasses.field(default=None, compare=False, repr=False)
    """Agno's tool message itself."""


_CALL_ID = "call_nucleo_1"


@dataclasses.dataclass
class _ScriptedModel(Model):
    """The model side: call the one tool, then keep the tool messages of the next call."""

    tool_name: str = ""
    arguments: str = "{}"
    sent: list[Message] = dataclasses.field(default_factory=list)
    calls: int = 0

    def invoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
        self.calls += 1
        messages: list[Message] = kwargs["messages"]
        answers = [message for message in messages if message.role == self.tool_message_role]
        if not answers:
            call = {"name": self.tool_name, "arguments": self.arguments}
            return ModelResponse(
                role=self.assistant_message_role,
                tool_calls=[{"id": _CALL_ID, "type": "function", "function": call}],
            )
        self.sent = answers
        return ModelResponse(role=self.assistant_message_role, content="done")

    async def ainvoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return self.invoke(*args, **kwargs)

    def invoke_stream(self, *args: Any, **kwargs: Any) -> Iterator[ModelResponse]:
        raise NotImplementedError("the harness runs without streaming")

    def ainvoke_stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[ModelResponse]:
        raise NotImplementedError("the harness runs without streaming")

    def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
        raise NotImplementedError("the scripted model answers with ModelResponse itself")

    def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
        raise NotImplementedError("the harness runs without streaming")


@contextlib.contextmanager
def _offline() -> Iterator[None]:
    """Agno's telemetry off while the harness runs: ``AGNO_TELEMETRY`` overrides the agent's
    ``telemetry=False`` at each run, so it is set too, and restored after."""
    before = os.environ.get("AGNO_TELEMETRY")
    os.environ["AGNO_TELEMETRY"] = "false"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("AGNO_TELEMETRY", None)
        else:
            os.environ["AGNO_TELEMETRY"] = before


def _agent(
    tool: Function | Callable[..., Any],
    arguments: Mapping[str, Any] | str | None,
    tool_hooks: list[Callable[..., Any]] | None,
) -> tuple[Agent, _ScriptedModel]:
    # The name Agno registers the tool under: a Function's own, else the callable's __name__.
    name = tool.name if isinstance(tool, Function) else getattr(tool, "__name__", "")
    sent = arguments if isinstance(arguments, str) else json.dumps(dict(arguments or {}))
    model = _ScriptedModel(id="nucleo-scripted", tool_name=name, arguments=sent)
    agent = Agent(model=model, tools=[tool], tool_hooks=tool_hooks, telemetry=False)
    return agent, model


def _received(output: RunOutput, model: _ScriptedModel) -> AgnoReceived:
    answers = [message for message in model.sent if message.tool_call_id == _CALL_ID]
    if model.calls != 2 or len(answers) != 1 or output.status != RunStatus.completed:
        raise AssertionError(
            f"expected one tool message and a completed run after one call, got {answers!r} "
            f"after {model.calls} model calls (run {output.status})"
        )
    message = answers[0]
    content = message.content
    text = content if isinstance(content, str) else message.get_content_string()
    return AgnoReceived(bool(message.tool_call_error), text, CHANNEL, message)


def _is_async(tool: Function | Callable[..., Any]) -> bool:
    entry = tool.entrypoint if isinstance(tool, Function) else tool
    return inspect.iscoroutinefunction(entry)


async def arun_through_agno(
    tool: Function | Callable[..., Any],
    arguments: Mapping[str, Any] | str | None = None,
    *,
    tool_hooks: list[Callable[..., Any]] | None = None,
) -> AgnoReceived:
    """Run one call of ``tool`` through Agno's ``Agent.arun`` and return what the model reads
    next.

    ``tool`` is an :func:`agno_tool` tool, or anything Agno takes (a plain function, an Agno
    ``Function``), to see what Agno does without the adapter. The agent's model is a scripted
    subclass of Agno's ``Model``: its first turn calls ``tool`` with ``arguments`` (a mapping,
    or the raw JSON text a model would send), its second reads the tool message and ends. The
    agent has ``tool_hooks`` (e.g. ``[nucleo_tool_hook]``). No network, no API key, telemetry
    off. For tests, under a running event loop; :func:`run_through_agno` from sync code.
    """
    agent, model = _agent(tool, arguments, tool_hooks)
    with _offline():
        output = await agent.arun("Call the tool.")
    return _received(output, model)


def run_through_agno(
    tool: Function | Callable[..., Any],
    arguments: Mapping[str, Any] | str | None = None,
    *,
    tool_hooks: list[Callable[..., Any]] | None = None,
) -> AgnoReceived:
    """:func:`arun_through_agno` from sync code, through Agno's sync ``Agent.run``; an
    ``async def`` tool runs through ``Agent.arun``, the only path Agno allows it."""
    if _is_async(tool):
        return run_sync(
            lambda: arun_through_agno(tool, arguments, tool_hooks=tool_hooks),
            refusal=_UNDER_A_LOOP,
        )
    agent, model = _agent(tool, arguments, tool_hooks)
    with _offline():
        output = agent.run("Call the tool.")
    return _received(output, model)
