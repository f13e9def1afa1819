"""Microsoft Agent Framework: failures reach the model as the function result's text.

Use it when your agent runs on the Microsoft Agent Framework (``agent-framework-core``; install
``pytest-nucleo[agent-framework]``). Importing this module imports ``agent_framework``;
``import pytest_nucleo`` does not.

- :func:`agent_framework_tool` turns a tool function (sync or ``async def``) into the
  framework's ``FunctionTool`` once, as its own ``@tool`` does: the framework builds the same
  name, description and parameter schema as for the bare function. Every call runs through
  :func:`~pytest_nucleo.run_tool` / :func:`~pytest_nucleo.arun_tool`, and a failure's result
  is its ``explain_to_llm()`` text, with or without the middleware below.
- :class:`NucleoFunctionMiddleware` is a function middleware (``Agent(...,
  middleware=[NucleoFunctionMiddleware()])``) answering a call of any other tool that raised:
  the ``explain_to_llm()`` of an exception of the set in its chain, else the SystemException
  text naming the tool, instead of the framework's own answer.
- :func:`run_through_agent_framework` / :func:`arun_through_agent_framework` (for tests) run
  one call of a tool through a real ``Agent`` whose chat client is scripted (no network, no
  API key), and return :class:`AgentFrameworkReceived`: exactly the function result the
  model's next request carries.

What the framework does with a failure (agent-framework-core 1.26, ``_tools.py``,
``_auto_invoke_function`` and ``_function_execution_error_result``), pinned by
``tests/test_adapter_agent_framework.py``:

- A tool's exception is caught and the model reads ``Error: Function failed.``, whatever
  failed: a typo, a 404 and a 429 read the same, and nothing says whether to retry. With
  ``include_detailed_errors=True`` it reads ``Error: Function failed. Exception: <str(exc)>``,
  the raw message with any secret in it.
- The failure flag is the function result's ``exception`` field, which the framework fills
  with ``str(exc)``: the raw message, secret included. What a provider's client makes of it
  is the client's (separate packages, not pinned here): the OpenAI clients do not send it,
  Anthropic's sends it as ``is_error``, Bedrock's as ``status="error"`` with the field's text
  appended to the result's content (agent-framework-anthropic and -bedrock, 1.0.0b260730).
  A function middleware can set the result the model reads, but not that field: under the
  adapter a failure is an ordinary function result, its text's hint line telling the model
  it failed, and no secret sits in the field. The framework's count of failed calls
  (``max_invocation_exceptions``) and its telemetry still see the failure.
- Arguments the framework's schema refuses never reach the function: the model reads
  ``Error: Argument parsing failed.``. Under the adapter (and the middleware) it reads a
  correctable :class:`~pytest_nucleo.InvalidInputException` naming the parameter.
- A success reads as the runner's text (a ``str`` as is, anything else as sorted-key JSON,
  bounded by ``text_limit``); the framework's own ``Content`` (an image, a file), or a list
  holding one, is handed to it unchanged.

Limitations: a tool taking the framework's ``FunctionInvocationContext`` gets it, and the
runner passes it on unchecked. The framework's control-flow signals raised from a tool's own
body (``UserInputRequiredException``, ``MiddlewareTermination``, ``MiddlewareFailure``)
become a failure under the runner, like any exception; the middleware lets them through.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, MutableSequence, Sequence
from typing import Any, Literal, Unpack, overload

from agent_framework import (
    Agent,
    BaseChatClient,
    ChatMiddlewareLayer,
    ChatResponse,
    Content,
    FunctionInvocationContext,
    FunctionInvocationLayer,
    FunctionMiddleware,
    FunctionTool,
    Message,
)
from agent_framework.exceptions import MiddlewareException, UserInputRequiredException
from agent_framework.observability import ChatTelemetryLayer
from pydantic import BaseModel, ValidationError

from pytest_nucleo._causes import find_in_chain
from pytest_nucleo._exceptions import LLMReadableException, SystemException
from pytest_nucleo._runner._tools import run_sync
from pytest_nucleo._text._message import described
from pytest_nucleo.adapters._core import (
    RaisedFailure,
    RunnerOptions,
    ToolFailureText,
    check_runner_options,
    log_failure,
    raise_failure,
    schema_failure,
    success_text_unless,
    through_runner,
    tool_name,
)

__all__ = [
    "AgentFrameworkReceived",
    "NucleoFunctionMiddleware",
    "agent_framework_tool",
    "arun_through_agent_framework",
    "failure_contents",
    "run_through_agent_framework",
]

CHANNEL = "function_result"
"""The content a tool's result reaches the model in, failure or not."""

_UNDER_A_LOOP = (
    "this harness cannot run under a running event loop: use "
    "`await arun_through_agent_framework(...)`"
)

_SIGNALS = (MiddlewareException, UserInputRequiredException)
"""The framework's control-flow signals (``MiddlewareTermination`` and ``MiddlewareFailure``
are ``MiddlewareException``): they steer the loop, they are not a tool's failure."""


def _is_native(value: object) -> bool:
    """Whether the framework has its own form for ``value``: its ``Content``, or a list of them."""
    if isinstance(value, list | tuple):
        return any(isinstance(item, Content) for item in value)
    return isinstance(value, Content)


_SUCCESS = success_text_unless(_is_native)


def _text_of(failure: LLMReadableException, text: str | None = None) -> list[Content]:
    """The function result's items for a failure: its text, the failure kept alongside."""
    said = ToolFailureText(failure.explain_to_llm() if text is None else text, failure)
    return [Content.from_text(str(said), raw_representation=said)]


def failure_contents(function: FunctionTool, error: BaseException) -> list[Content]:
    """The function result's items for ``error`` raised by a call of ``function``.

    - A failure of an :func:`agent_framework_tool` tool: the runner's text.
    - An LLM-readable exception anywhere in the chain of ``error``: its ``explain_to_llm()``.
    - Arguments the framework's schema refused: a correctable
      :class:`~pytest_nucleo.InvalidInputException` naming the parameter.
    - Anything else: the SystemException text naming the tool; the raw message never.

    A failure the runner did not see is logged as the runner would (a correctable one at
    WARNING, any other at ERROR with its masked stack). The one item is a text whose
    ``raw_representation`` is a :class:`ToolFailureText` of the same text, carrying the
    failure (a provider's client sends the text only).
    """
    if isinstance(error, RaisedFailure):
        failed = error.result
        assert failed.exception is not None  # the runner keeps a failure's exception
        return _text_of(failed.exception, failed.text)
    failure = find_in_chain(error, LLMReadableException)
    invalid = find_in_chain(error, ValidationError)
    target = function.func
    if failure is None and invalid is not None and target is not None:
        failure = schema_failure(inspect.signature(target), invalid.errors(include_url=False))
    elif failure is None:
        failure = SystemException(function.name, described(error), error)
    log_failure(function.name, failure)
    return _text_of(failure)


class NucleoFunctionMiddleware(FunctionMiddleware):
    """A function middleware answering every call that raised with a text the model can act on.

    ``Agent(..., middleware=[NucleoFunctionMiddleware()])`` (or a chat client's or one run's
    middleware): when the call below it raises, the function result is
    :func:`failure_contents` instead of the framework's ``Error: Function failed.``, and the
    run goes on. The framework's control-flow signals (``MiddlewareTermination``,
    ``MiddlewareFailure``, ``UserInputRequiredException``) pass through. Put it first, so it
    answers for the middleware after it too.
    """

    async def process(
        self, context: FunctionInvocationContext, call_next: Callable[[], Awaitable[None]]
    ) -> None:
        """Run the call; answer an exception with :func:`failure_contents`."""
        try:
            await call_next()
        except _SIGNALS:
            raise
        except Exception as error:
            context.result = failure_contents(context.function, error)


class _NucleoFunctionTool(FunctionTool):
    """``FunctionTool`` whose failed call is a result: the runner's text, or for arguments the
    schema refused a correctable failure, so the model reads the same with or without
    :class:`NucleoFunctionMiddleware`."""

    async def invoke(
        self,
        *,
        arguments: BaseModel | Mapping[str, Any] | None = None,
        context: FunctionInvocationContext | None = None,
        tool_call_id: str | None = None,
        skip_parsing: bool = False,
        **kwargs: Any,
    ) -> Any:
        # The framework's overloads tell the two values of skip_parsing apart; one call here.
        invoke: Callable[..., Awaitable[Any]] = super().invoke
        try:
            return await invoke(
                arguments=arguments,
                context=context,
                tool_call_id=tool_call_id,
                skip_parsing=skip_parsing,
                **kwargs,
            )
        except Exception as error:
            if not isinstance(error, RaisedFailure) and (
                not isinstance(error, TypeError) or find_in_chain(error, ValidationError) is None
            ):
                raise
            items = failure_contents(self, error)
            # Without parsing the caller reads the value itself: the text, as a str.
            return items[0].raw_representation if skip_parsing else items


@overload
def agent_framework_tool(
    func: Callable[..., Any],
    /,
    *,
    description: str | None = None,
    schema: type[BaseModel] | Mapping[str, Any] | None = None,
    approval_mode: Literal["always_require", "never_require"] | None = None,
    kind: str | None = None,
    max_invocations: int | None = None,
    max_invocation_exceptions: int | None = None,
    additional_properties: dict[str, Any] | None = None,
    **options: Unpack[RunnerOptions],
) -> FunctionTool: ...
@overload
def agent_framework_tool(
    *,
    description: str | None = None,
    schema: type[BaseModel] | Mapping[str, Any] | None = None,
    approval_mode: Literal["always_require", "never_require"] | None = None,
    kind: str | None = None,
    max_invocations: int | None = None,
    max_invocation_exceptions: int | None = None,
    additional_properties: dict[str, Any] | None = None,
    **options: Unpack[RunnerOptions],
) -> Callable[[Callable[..., Any]], FunctionTool]: ...
def agent_framework_tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    description: str | None = None,
    schema: type[BaseModel] | Mapping[str, Any] | None = None,
    approval_mode: Literal["always_require", "never_require"] | None = None,
    kind: str | None = None,
    max_invocations: int | None = None,
    max_invocation_exceptions: int | None = None,
    additional_properties: dict[str, Any] | None = None,
    **options: Unpack[RunnerOptions],
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Make a tool function an Agent Framework ``FunctionTool`` whose failures the model
    understands.

    ``@agent_framework_tool`` or ``@agent_framework_tool(retries=5, timeout=10)`` on a ``def``
    or ``async def``, instead of the framework's ``@tool``; pass the result in
    ``Agent(tools=[...])``. The framework builds the same description (the docstring, unless
    ``description``) and parameter schema as for the bare function; the name is the runner's
    (``name=``, else ``@tool(name=...)`` of pytest_nucleo beneath, else ``__name__``). The
    other keywords are the framework's ``@tool``'s, passed on. A failure is the function's
    result: its ``explain_to_llm()`` text, with or without :class:`NucleoFunctionMiddleware`.
    """
    checked = check_runner_options(options, "agent_framework_tool")

    def make(target: Callable[..., Any]) -> FunctionTool:
        if not callable(target):
            raise TypeError(f"agent_framework_tool wraps a function; got a {type(target).__name__}")
        name = checked.get("name") or tool_name(target)
        wrapped = through_runner(
            target, raise_failure, on_success=_SUCCESS, options={**checked, "name": name}
        )
        return _NucleoFunctionTool(
            name=name,
            description=description or (target.__doc__ or ""),
            approval_mode=approval_mode,
            kind=kind,
            max_invocations=max_invocations,
            max_invocation_exceptions=max_invocation_exceptions,
            additional_properties=additional_properties or {},
            func=wrapped,
            input_model=schema,
        )

    return make if func is None else make(func)


@dataclasses.dataclass(frozen=True, slots=True)
class AgentFrameworkReceived:
    """What the model received for one tool call under the Agent Framework.

    ``text`` is the function result's text as the model's next request carries it;
    ``is_error`` whether the call failed (the framework flagged the result, or its text is a
    failure's); ``flagged`` whether the framework's own flag, the result's ``exception``
    field, is set (what Anthropic's client sends as ``is_error``; see the module docs).
    """

    is_error: bool
    """Whether the call failed: the result is flagged, or its text is a failure's."""
    text: str
    """The function result's text as the model's next request carries it."""
    channel: str = CHANNEL
    """What the text reached the model in: a function result, failure or not."""
    flagged: bool = False
    """Whether the result's ``exception`` field, the framework's failure flag, is set."""
    content: Content | None = dataclasses.field(default=None, compare=False, repr=False)
    """The function result itself, as the model's next request carries it."""


_CALL_ID = "call_nucleo_1"


class _ScriptedClient(
    FunctionInvocationLayer[Any],
    ChatMiddlewareLayer[Any],
    ChatTelemetryLayer[Any],
    BaseChatClient[Any],
):
    """The model side, a chat client with the framework's layers: call the one tool, then keep
    the function results of the next request and answer with text."""

    def __init__(self, tool_name: str, arguments: Mapping[str, Any]) -> None:
        super().__init__()
        self.tool_name = tool_name
        self.arguments = dict(arguments)
        self.sent: list[Content] = []

    def _inner_get_response(  # type: ignore[override]  # one path: no streaming
        self,
        *,
        messages: MutableSequence[Message],
        stream: bool,
        options: Mapping[str, Any],
        **kwargs: Any,
    ) -> Awaitable[ChatResponse[Any]]:
        async def answer() -> ChatResponse[Any]:
            results = [
                content
                for message in messages
                for content in message.contents
                if content.type == CHANNEL
            ]
            if not results:
                call = Content.from_function_call(
                    call_id=_CALL_ID, name=self.tool_name, arguments=json.dumps(self.arguments)
                )
                return ChatResponse(messages=Message(role="assistant", contents=[call]))
            self.sent.extend(results)
            return ChatResponse(messages=Message(role="assistant", contents=["done"]))

        return answer()


async def arun_through_agent_framework(
    tool: FunctionTool,
    arguments: Mapping[str, Any] | None = None,
    *,
    middleware: Sequence[Any] | None = None,
    include_detailed_errors: bool = False,
) -> AgentFrameworkReceived:
    """Run one call of ``tool`` through an ``Agent`` and return what the model reads next.

    The agent's chat client is scripted, with the framework's function-calling, middleware and
    telemetry layers: its first response calls ``tool`` with ``arguments``, its second reads
    the function result and ends the run. The agent has ``middleware`` (default one
    :class:`NucleoFunctionMiddleware`; pass ``()`` to see the framework's own handling);
    ``include_detailed_errors`` is the framework's setting of that name. For tests, under a
    running event loop; :func:`run_through_agent_framework` from sync code.
    """
    client = _ScriptedClient(tool.name, arguments or {})
    client.function_invocation_configuration["include_detailed_errors"] = include_detailed_errors
    used = [NucleoFunctionMiddleware()] if middleware is None else list(middleware)
    agent = Agent(client=client, name="nucleo_harness", tools=[tool], middleware=used)
    response = await agent.run("Call the tool.")
    if len(client.sent) != 1 or response.text != "done":
        raise AssertionError(
            f"expected one function result, then the run's end; got {client.sent!r}, "
            f"then {response.text!r}"
        )
    result = client.sent[0]
    items = result.items or []
    failed = any(isinstance(item.raw_representation, ToolFailureText) for item in items)
    flagged = result.exception is not None
    return AgentFrameworkReceived(
        is_error=flagged or failed,
        text=result.result or "",
        channel=result.type,
        flagged=flagged,
        content=result,
    )


def run_through_agent_framework(
    tool: FunctionTool,
    arguments: Mapping[str, Any] | None = None,
    *,
    middleware: Sequence[Any] | None = None,
    include_detailed_errors: bool = False,
) -> AgentFrameworkReceived:
    """:func:`arun_through_agent_framework` for sync code (tests without an event loop)."""
    return run_sync(
        lambda: arun_through_agent_framework(
            tool,
            arguments,
            middleware=middleware,
            include_detailed_errors=include_detailed_errors,
        ),
        refusal=_UNDER_A_LOOP,
    )
