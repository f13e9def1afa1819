"""Semantic Kernel: failures reach the model as the tool message's text, ``explain_to_llm()``.

Use it when your agent runs on Semantic Kernel (``semantic-kernel``; install
``pytest-nucleo[semantic-kernel]``, in an environment of its own: it pins ``mcp<2`` and
``pydantic<2.14``). Importing this module imports ``semantic_kernel``; ``import
pytest_nucleo`` does not.

- :func:`nucleo_kernel_function` replaces Semantic Kernel's ``@kernel_function`` on a
  function or a plugin's method (sync or ``async def``): Semantic Kernel builds the same
  function metadata, so the model gets the same name, description and parameter schema.
  Every call runs through :func:`~pytest_nucleo.run_tool` /
  :func:`~pytest_nucleo.arun_tool`, and a failure's result is its ``explain_to_llm()``
  text, a :class:`ToolFailureText`.
- :func:`nucleo_function_filter` is a function-invocation filter
  (``kernel.add_filter(FilterTypes.FUNCTION_INVOCATION, nucleo_function_filter)``) answering
  a call of any other function that raised: the ``explain_to_llm()`` of an exception of the
  set in its chain, else the SystemException text naming the function, instead of Semantic
  Kernel's own answer.
- :func:`run_through_semantic_kernel` / :func:`arun_through_semantic_kernel` (for tests) run
  one call of a function through a real ``Kernel`` and ``ChatCompletionAgent`` whose chat
  service is scripted (no network, no API key), and return :class:`SemanticKernelReceived`:
  exactly the tool message the model's next request carries.

What Semantic Kernel does with a failure (semantic-kernel 1.45, ``kernel.py``,
``_inner_auto_function_invoke_handler``), pinned by ``tests/test_adapter_semantic_kernel.py``:

- Under automatic function calling, a function's exception is caught and the model reads
  ``An error occurred while invoking the function <plugin>-<function>: <str(exc)>``: the raw
  message, with any secret in it, and no hint whether to retry. The exception is logged with
  its traceback (``logger.exception``), raw message included. Called with ``kernel.invoke``,
  the exception propagates to your code.
- The result reaches the model as ``str()`` of the function's value (a dict as its Python
  ``repr``), in a ``role="tool"`` message of the content and the call id only: there is no
  error flag, on any of its chat services. A failure and a success are the same message; the
  model tells them apart by the text, which is why the hint line of ``explain_to_llm()``
  matters here. Your code can: a failed call's value is a :class:`ToolFailureText`.
- Under automatic function calling, Semantic Kernel answers missing, unexpected and malformed
  arguments itself before any function or filter runs, in its own words, with no hint line.
  An argument it cannot convert to the parameter's type fails inside the call, before the
  function runs (so before the decorator's runner): the filter answers it with a correctable
  :class:`~pytest_nucleo.InvalidInputException` naming the parameter. Install the filter
  beside the decorator.
- A success reads as the runner's text (a ``str`` as is, anything else as sorted-key JSON,
  bounded by ``text_limit``); Semantic Kernel's own contents (``TextContent``,
  ``ImageContent``, a ``FunctionResult``...), or a list of them, are handed to it unchanged.

Limitations: Semantic Kernel's ``kernel``, ``service``, ``execution_settings`` and
``arguments`` parameters reach the function by name, and the runner passes them on unchecked.
The failure texts name the function (``fetch_order``), not the plugin-qualified name the model
called (``Shop-fetch_order``): the decorator runs before the function joins a plugin. A
streamed invocation's failures happen while its stream is read, past the filter.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, ClassVar, Unpack, overload

from pydantic import TypeAdapter, ValidationError
from semantic_kernel import Kernel
from semantic_kernel.agents import ChatCompletionAgent
from semantic_kernel.connectors.ai.chat_completion_client_base import ChatCompletionClientBase
from semantic_kernel.connectors.ai.function_choice_behavior import FunctionChoiceBehavior
from semantic_kernel.connectors.ai.prompt_execution_settings import PromptExecutionSettings
from semantic_kernel.contents import (
    AuthorRole,
    ChatHistory,
    ChatMessageContent,
    FunctionCallContent,
    FunctionResultContent,
)
from semantic_kernel.contents.kernel_content import KernelContent
from semantic_kernel.exceptions import FunctionExecutionException
from semantic_kernel.filters import FilterTypes, FunctionInvocationContext
from semantic_kernel.functions import FunctionResult, KernelFunction, kernel_function

from pytest_nucleo._causes import find_in_chain
from pytest_nucleo._exceptions import (
    InvalidInputException,
    LLMReadableException,
    SystemException,
)
from pytest_nucleo._runner._results import ToolResult
from pytest_nucleo._runner._tools import run_sync
from pytest_nucleo._text._message import described
from pytest_nucleo.adapters._core import (
    RunnerOptions,
    ToolFailureText,
    check_runner_options,
    log_failure,
    schema_failure,
    success_text_unless,
    through_runner,
    tool_name,
)

__all__ = [
    "SemanticKernelReceived",
    "ToolFailureText",
    "arun_through_semantic_kernel",
    "nucleo_function_filter",
    "nucleo_kernel_function",
    "run_through_semantic_kernel",
]

CHANNEL = "tool message"
"""What a function's result reaches the model in: a ``role="tool"`` message, failure or not."""

_UNDER_A_LOOP = (
    "this harness cannot run under a running event loop: use "
    "`await arun_through_semantic_kernel(...)`"
)

_INJECTED = frozenset({"kernel", "service", "execution_settings", "arguments"})
"""The parameters Semantic Kernel fills itself, never from the model's arguments."""


def _failure_text(result: ToolResult) -> ToolFailureText:
    return ToolFailureText(result.text, result.exception)


def _is_native(value: object) -> bool:
    """Whether Semantic Kernel has its own form for ``value``: its contents, a function's
    result, or a list of them."""
    if isinstance(value, list | tuple) and value:
        return all(_is_native(item) for item in value)
    return isinstance(value, KernelContent | FunctionResult)


_SUCCESS = success_text_unless(_is_native)


def _refused_argument(context: FunctionInvocationContext) -> InvalidInputException | None:
    """The argument Semantic Kernel could not convert to its parameter's type (it says which in
    words only): the first one pydantic refuses for that type, or a required one left out."""
    method = getattr(context.function, "method", None)
    signature = inspect.signature(method) if callable(method) else inspect.Signature()
    for parameter in context.function.parameters:
        name = parameter.name
        if name is None or name in _INJECTED:
            continue
        if name not in context.arguments:
            if parameter.is_required:
                return schema_failure(signature, [{"type": "missing", "loc": (name,)}])
            continue
        kind = parameter.type_object
        if kind is None or kind is inspect.Parameter.empty or kind is Any:
            continue
        try:
            TypeAdapter(kind).validate_python(context.arguments[name])
        except ValidationError as invalid:
            errors = [
                {**error, "loc": (name, *error["loc"])}
                for error in invalid.errors(include_url=False)
            ]
            return schema_failure(signature, errors)
        except Exception:  # a type pydantic has no schema for: not the one
            continue
    return None


def _failure_of(context: FunctionInvocationContext, error: Exception) -> LLMReadableException:
    found = find_in_chain(error, LLMReadableException)
    if found is not None:
        return found
    if isinstance(error, FunctionExecutionException):
        refused = _refused_argument(context)
        if refused is not None:
            return refused
    return SystemException(context.function.name, described(error), error)


async def nucleo_function_filter(
    context: FunctionInvocationContext,
    next: Callable[[FunctionInvocationContext], Awaitable[None]],  # the kernel passes it so
) -> None:
    """Semantic Kernel's function-invocation filter: answer a call that raised with a text the
    model can act on.

    ``kernel.add_filter(FilterTypes.FUNCTION_INVOCATION, nucleo_function_filter)``. When the
    call below it raises, its result is a :class:`ToolFailureText`: the ``explain_to_llm()`` of
    an exception of the set in the chain, else, for an argument Semantic Kernel could not
    convert to its parameter's type, a correctable :class:`~pytest_nucleo.InvalidInputException`
    naming it, else the SystemException text naming the function; the raw message never. The
    failure is logged as the runner would (it never saw the call). The call then ends as a
    success for Semantic Kernel, under automatic function calling and ``kernel.invoke`` alike.
    """
    try:
        await next(context)
    except Exception as error:
        failure = _failure_of(context, error)
        log_failure(context.function.name, failure)
        context.result = FunctionResult(
            function=context.function.metadata,
            value=ToolFailureText(failure.explain_to_llm(), failure),
        )


@overload
def nucleo_kernel_function(
    func: Callable[..., Any],
    /,
    *,
    description: str | None = None,
    **options: Unpack[RunnerOptions],
) -> Callable[..., Any]: ...
@overload
def nucleo_kernel_function(
    *,
    description: str | None = None,
    **options: Unpack[RunnerOptions],
) -> Callable[[Callable[..., Any]], Callable[..., Any]]: ...
def nucleo_kernel_function(
    func: Callable[..., Any] | None = None,
    /,
    *,
    description: str | None = None,
    **options: Unpack[RunnerOptions],
) -> Callable[..., Any]:
    """Make a function (or a plugin's method) a Semantic Kernel function whose failures the model
    understands.

    ``@nucleo_kernel_function`` or ``@nucleo_kernel_function(retries=5, timeout=10)`` instead
    of ``@kernel_function``, on a ``def`` or ``async def``; add it as Semantic Kernel's own
    (``kernel.add_function("Shop", fetch_order)``, or a method of a plugin object given to
    ``kernel.add_plugin``). Semantic Kernel builds the same metadata as for the bare function.
    The name is the runner's: ``name=``, else that of a ``@kernel_function(name=...)`` or
    pytest_nucleo's ``@tool(name=...)`` beneath, else ``__name__``; ``description`` (default:
    that of a ``@kernel_function`` beneath, else the docstring) is Semantic Kernel's. A failure
    is returned as its ``explain_to_llm()`` text, a :class:`ToolFailureText`.
    """
    checked = check_runner_options(options, "nucleo_kernel_function")

    def make(target: Callable[..., Any]) -> Callable[..., Any]:
        if not callable(target):
            raise TypeError(
                f"nucleo_kernel_function wraps a function; got a {type(target).__name__}"
            )
        name = (
            checked.get("name")
            or getattr(target, "__kernel_function_name__", None)
            or tool_name(target)
        )
        wrapped = through_runner(
            target, _failure_text, on_success=_SUCCESS, options={**checked, "name": name}
        )
        said = description or getattr(target, "__kernel_function_description__", None)
        made: Callable[..., Any] = kernel_function(wrapped, name=name, description=said)
        return made

    return make if func is None else make(func)


@dataclasses.dataclass(frozen=True, slots=True)
class SemanticKernelReceived:
    """What the model received for one function call under Semantic Kernel.

    ``text`` is the content of the ``role="tool"`` message of the model's next request, byte
    for byte; ``is_error`` whether the call failed (its value is a :class:`ToolFailureText`;
    the model gets no such flag: see the module docs); ``channel`` is ``"tool message"`` for
    failure and success; ``message`` the tool message as the request carries it.
    """

    is_error: bool
    """Whether the call failed (the model itself gets no such flag)."""
    text: str
    """The content of the ``role="tool"`` message of the model's next request."""
    channel: str = CHANNEL
    """What the text reached the model in: a tool message, failure or not."""
    message: Mapping[str, Any] = dataclasses.field(default_factory=dict, compare=False, repr=False)
    """The tool message as the request carries it."""


_CALL_ID = "call_nucleo_1"


class _ScriptedService(ChatCompletionClientBase):
    """The model side: call the one function, then keep the tool message of the next request
    (as Semantic Kernel's chat services prepare it) and answer with text."""

    SUPPORTS_FUNCTION_CALLING: ClassVar[bool] = True
    function_name: str = ""
    arguments: dict[str, Any] = {}  # noqa: RUF012  # a pydantic field, copied per instance
    sent: list[dict[str, Any]] = []  # noqa: RUF012
    results: list[FunctionResultContent] = []  # noqa: RUF012

    async def _inner_get_chat_message_contents(
        self, chat_history: ChatHistory, settings: PromptExecutionSettings
    ) -> list[ChatMessageContent]:
        request = self._prepare_chat_history_for_request(chat_history)
        answers = [message for message in request if message.get("role") == "tool"]
        if not answers:
            call = FunctionCallContent(
                id=_CALL_ID, name=self.function_name, arguments=json.dumps(self.arguments)
            )
            return [ChatMessageContent(role=AuthorRole.ASSISTANT, items=[call])]
        self.sent.extend(answers)
        self.results.extend(
            item
            for message in chat_history.messages
            for item in message.items
            if isinstance(item, FunctionResultContent)
        )
        return [ChatMessageContent(role=AuthorRole.ASSISTANT, content="done")]


async def arun_through_semantic_kernel(
    function: Callable[..., Any] | KernelFunction,
    arguments: Mapping[str, Any] | None = None,
    *,
    plugin_name: str = "tools",
    filters: Sequence[Callable[..., Awaitable[None]]] = (nucleo_function_filter,),
) -> SemanticKernelReceived:
    """Run one call of ``function`` through a ``ChatCompletionAgent`` and return what the model
    reads next.

    ``function`` (a kernel function, or a function made one by :func:`nucleo_kernel_function`
    or ``@kernel_function``) joins the plugin ``plugin_name`` of a fresh ``Kernel`` with the
    function-invocation ``filters`` (default :func:`nucleo_function_filter`; pass ``()`` to see
    Semantic Kernel's own handling). The agent's chat service is scripted, with automatic
    function calling: its first answer calls the function with ``arguments``, its second reads
    the tool message and ends the run. For tests, under a running event loop;
    :func:`run_through_semantic_kernel` from sync code.
    """
    kernel = Kernel()
    added = kernel.add_function(plugin_name, function)
    assert isinstance(added, KernelFunction)  # not the plugin: return_plugin is False
    for invocation_filter in filters:
        kernel.add_filter(FilterTypes.FUNCTION_INVOCATION, invocation_filter)
    service = _ScriptedService(
        ai_model_id="nucleo-scripted",
        function_name=added.fully_qualified_name,
        arguments=dict(arguments or {}),
    )
    agent = ChatCompletionAgent(
        kernel=kernel,
        service=service,
        name="nucleo_harness",
        function_choice_behavior=FunctionChoiceBehavior.Auto(),
    )
    response = await agent.get_response(messages="Call the tool.")
    if len(service.sent) != 1 or len(service.results) != 1 or response.content.content != "done":
        raise AssertionError(
            f"expected one tool message, then the run's end; got {service.sent!r}, then "
            f"{response.content.content!r}"
        )
    message = service.sent[0]
    content = message.get("content")
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    is_error = isinstance(service.results[0].result, ToolFailureText)
    return SemanticKernelReceived(is_error, text, CHANNEL, message)


def run_through_semantic_kernel(
    function: Callable[..., Any] | KernelFunction,
    arguments: Mapping[str, Any] | None = None,
    *,
    plugin_name: str = "tools",
    filters: Sequence[Callable[..., Awaitable[None]]] = (nucleo_function_filter,),
) -> SemanticKernelReceived:
    """:func:`arun_through_semantic_kernel` for sync code (tests without an event loop)."""
    return run_sync(
        lambda: arun_through_semantic_kernel(
            function, arguments, plugin_name=plugin_name, filters=filters
        ),
        refusal=_UNDER_A_LOOP,
    )
