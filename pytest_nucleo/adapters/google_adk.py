"""Google ADK: failures reach the model as a function response ``{"error": explain_to_llm()}``.

Use it when your agent runs on the Agent Development Kit (``google-adk``; install
``pytest-nucleo[google-adk]``). Importing this module imports ``google.adk``; ``import
pytest_nucleo`` does not.

- :func:`adk_tool` turns a tool function (sync or ``async def``) into ADK's ``FunctionTool``
  once: ADK builds the same declaration (name, docstring, parameter schema) as from the bare
  function. Every call runs through :func:`~pytest_nucleo.run_tool` /
  :func:`~pytest_nucleo.arun_tool`, and a failure is raised into ADK's tool-error channel.
- :func:`on_tool_error` is ADK's ``on_tool_error_callback`` (``LlmAgent(...,
  on_tool_error_callback=on_tool_error)``) and :class:`NucleoToolErrorPlugin` the same for a
  whole ``Runner(plugins=[...])``: either answers a failed call with ``{"error": <text>}``, so
  the model reads the text and the run goes on. Install one of them: ADK has no other way to
  answer a raised exception, and without a callback it ends the run.
- :func:`run_through_adk` / :func:`arun_through_adk` (for tests) run one call of a tool
  through a real ``Runner`` and ``LlmAgent`` whose model is a scripted ``BaseLlm`` (no network,
  no API key), and return :class:`ADKReceived`: exactly the function response the model reads
  on its next turn.

What ADK does with a failure (google-adk 2.13, ``flows/llm_flows/tools/_caller.py``), pinned by
``tests/test_adapter_google_adk.py``:

- A tool's exception runs the plugins' and the agent's ``on_tool_error_callback``; the first
  that returns a dict answers the call with it. With none, the exception propagates out of
  ``run_async`` and ends the run (a 429 and a typo alike).
- Gemini's function response has no error flag of its own; its documented convention is the
  ``"error"`` key (``"output"`` for a result), which is what the callback sends. A success
  goes through ADK as usual: a value that is not a dict is sent as ``{"result": <value>}``;
  the adapter hands ADK the runner's text, so the model reads ``{"result": "<text>"}``.
- ADK's ``ReflectAndRetryToolPlugin`` answers every failure with the exception's class name
  and a "retry attempt 1 of 3" guidance, even for a 429 that no retry can fix. Put
  :class:`NucleoToolErrorPlugin` before it, or use it instead.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any, Unpack, overload

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import InMemoryRunner
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from pytest_nucleo._causes import find_in_chain
from pytest_nucleo._exceptions import LLMReadableException, SystemException
from pytest_nucleo._runner._tools import run_sync
from pytest_nucleo._text._message import described
from pytest_nucleo.adapters._core import (
    RaisedFailure,
    RunnerOptions,
    check_runner_options,
    raise_failure,
    success_text_unless,
    through_runner,
    tool_name,
)

__all__ = [
    "ADKReceived",
    "NucleoToolErrorPlugin",
    "adk_tool",
    "arun_through_adk",
    "on_tool_error",
    "run_through_adk",
]

CHANNEL = "function_response"
"""The part a tool's result reaches the model in; a failure's response has an ``error`` key."""

ERROR_KEY = "error"
"""The key of a failed call's response: Gemini's convention for a function's error."""

_UNDER_A_LOOP = (
    "this harness cannot run under a running event loop: use `await arun_through_adk(...)`"
)


def _is_native(value: object) -> bool:
    """Whether ADK has its own form for ``value``: a ``google.genai`` part or content."""
    return isinstance(value, types.Part | types.Content)


_SUCCESS = success_text_unless(_is_native)


def failure_response(tool: BaseTool | None, error: Exception) -> dict[str, Any]:
    """The function response for ``error`` raised by a call of ``tool``: ``{"error": text}``.

    The runner's text for a failure of an :func:`adk_tool` tool; for any other tool the
    ``explain_to_llm()`` of an LLM-readable exception in the chain of ``error``, else the
    SystemException text naming the tool (the raw message never).
    """
    if isinstance(error, RaisedFailure):
        return {ERROR_KEY: error.result.text}
    found = find_in_chain(error, LLMReadableException)
    component = tool.name if tool is not None else "the tool"
    failure = found if found is not None else SystemException(component, described(error), error)
    return {ERROR_KEY: failure.explain_to_llm()}


def on_tool_error(
    tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, error: Exception
) -> dict[str, Any]:
    """ADK's ``on_tool_error_callback``: answer a failed call with ``{"error": <text>}``.

    ``LlmAgent(..., on_tool_error_callback=on_tool_error)``; for every agent of a runner at
    once, :class:`NucleoToolErrorPlugin`. See :func:`failure_response` for the text.
    """
    return failure_response(tool, error)


class NucleoToolErrorPlugin(BasePlugin):
    """An ADK plugin answering every failed tool call with ``{"error": <text>}``.

    ``Runner(..., plugins=[NucleoToolErrorPlugin()])``: the same as :func:`on_tool_error` on
    every agent of the runner. Plugins run before the agents' callbacks, in their order.
    """

    def __init__(self, name: str = "nucleo_tool_errors") -> None:
        super().__init__(name=name)

    async def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        error: Exception,
    ) -> dict[str, Any] | None:
        """ADK's hook for a failed call: the ``{"error": <text>}`` response, as :func:`on_tool_error`."""
        return failure_response(tool, error)


@overload
def adk_tool(func: Callable[..., Any], /) -> FunctionTool: ...
@overload
def adk_tool(
    *, require_confirmation: bool = False, **options: Unpack[RunnerOptions]
) -> Callable[[Callable[..., Any]], FunctionTool]: ...
def adk_tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    require_confirmation: bool = False,
    **options: Unpack[RunnerOptions],
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Make a tool function an ADK ``FunctionTool`` whose failures the model understands.

    ``@adk_tool`` or ``@adk_tool(retries=5, timeout=10)`` on a ``def`` or ``async def``; pass
    the result in ``LlmAgent(tools=[...])`` with ``on_tool_error_callback=on_tool_error`` (or
    :class:`NucleoToolErrorPlugin` on the runner). ADK builds the declaration from the
    function as for a bare one; the name is the runner's (``name=``, else ``@tool(name=...)``
    beneath, else ``__name__``). ``require_confirmation`` is ADK's, passed on.
    """
    checked = check_runner_options(options, "adk_tool")

    def make(target: Callable[..., Any]) -> FunctionTool:
        if not callable(target):
            raise TypeError(f"adk_tool wraps a function; got a {type(target).__name__}")
        name = checked.get("name") or tool_name(target)
        wrapped = through_runner(
            target, raise_failure, on_success=_SUCCESS, options={**checked, "name": name}
        )
        return FunctionTool(wrapped, require_confirmation=require_confirmation)

    return make if func is None else make(func)


@dataclasses.dataclass(frozen=True, slots=True)
class ADKReceived:
    """What the model received for one tool call under ADK.

    ``response`` is the function response as the model's next request carries it;
    ``is_error`` whether it is an error response (it has the ``"error"`` key); ``text`` its
    ``"error"`` (or, for a success, ``"result"``) value as the model reads it.
    """

    is_error: bool
    """Whether the function response is an error response (it has the ``"error"`` key)."""
    text: str
    """The response's ``"error"`` (for a success, ``"result"``) value as the model reads it."""
    channel: str = CHANNEL
    """What the text reached the model in: a function response, failure or not."""
    response: Mapping[str, Any] = dataclasses.field(default_factory=dict, compare=False, repr=False)
    """The function response as the model's next request carries it."""


_CALL_ID = "adk_nucleo_1"


class _ScriptedLlm(BaseLlm):
    """The model side: call the one tool, then keep the function response it is sent."""

    tool_name: str = ""
    arguments: dict[str, Any] = {}  # noqa: RUF012  # a pydantic field, copied per instance
    sent: list[types.FunctionResponse] = []  # noqa: RUF012

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        answers = [
            part.function_response
            for content in llm_request.contents
            for part in content.parts or []
            if part.function_response is not None
        ]
        if not answers:
            call = types.FunctionCall(id=_CALL_ID, name=self.tool_name, args=self.arguments)
            yield LlmResponse(
                content=types.Content(role="model", parts=[types.Part(function_call=call)])
            )
            return
        self.sent.extend(answers)
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="done")]))


async def arun_through_adk(
    tool: FunctionTool,
    arguments: Mapping[str, Any] | None = None,
    *,
    plugins: list[BasePlugin] | None = None,
    on_tool_error_callback: Any = on_tool_error,
) -> ADKReceived:
    """Run one call of ``tool`` through an ADK ``Runner`` and return what the model reads next.

    The agent's model is a scripted ``BaseLlm``: its first turn calls ``tool`` with
    ``arguments``, its second reads the function response and ends. The agent has
    ``on_tool_error_callback`` (default :func:`on_tool_error`; pass None to see ADK's own
    handling) and the runner ``plugins``. For tests, under a running event loop;
    :func:`run_through_adk` from sync code.
    """
    model = _ScriptedLlm(
        model="nucleo-scripted", tool_name=tool.name, arguments=dict(arguments or {})
    )
    agent = LlmAgent(
        name="nucleo_harness",
        model=model,
        tools=[tool],
        on_tool_error_callback=on_tool_error_callback,
    )
    app = App(name="nucleo_harness", root_agent=agent, plugins=list(plugins or []))
    runner = InMemoryRunner(app=app)
    session = await runner.session_service.create_session(app_name="nucleo_harness", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="Call the tool.")])
    try:
        async for _event in runner.run_async(
            user_id="u", session_id=session.id, new_message=message
        ):
            pass
    finally:
        await runner.close()
    if len(model.sent) != 1:
        raise AssertionError(f"expected one function response, got {model.sent!r}")
    response = dict(model.sent[0].response or {})
    is_error = ERROR_KEY in response
    value = response.get(ERROR_KEY if is_error else "result", response)
    text = value if isinstance(value, str) else str(value)
    return ADKReceived(is_error, text, CHANNEL, response)


def run_through_adk(
    tool: FunctionTool,
    arguments: Mapping[str, Any] | None = None,
    *,
    plugins: list[BasePlugin] | None = None,
    on_tool_error_callback: Any = on_tool_error,
) -> ADKReceived:
    """:func:`arun_through_adk` for sync code (tests without an event loop)."""
    return run_sync(
        lambda: arun_through_adk(
            tool, arguments, plugins=plugins, on_tool_error_callback=on_tool_error_callback
        ),
        refusal=_UNDER_A_LOOP,
    )
