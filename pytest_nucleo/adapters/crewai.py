"""CrewAI: failures reach the model as CrewAI's own ``ToolFailure``, carrying ``explain_to_llm()``.

Use it when your tools run under CrewAI agents or crews (``crewai``; install
``pytest-nucleo[crewai]``, in an environment of its own: CrewAI pins older releases of mcp,
openai, httpx and pydantic than the other adapters' extras). Importing this module imports
``crewai``; ``import pytest_nucleo`` does not.

- :func:`crewai_tool` turns a tool function (sync or ``async def``) into a CrewAI ``Tool``
  once, through CrewAI's own ``@tool``: CrewAI builds the same argument schema and
  description from the signature and docstring as for the bare function. Every call runs
  through :func:`~pytest_nucleo.run_tool` / :func:`~pytest_nucleo.arun_tool`, and a failure
  is returned as a ``ToolFailure`` (:func:`tool_failure`).
- :func:`run_through_crewai` / :func:`arun_through_crewai` (for tests) run one call of a tool
  through a real CrewAI ``Agent`` whose model is a scripted ``BaseLLM`` (no network, no API
  key, CrewAI's telemetry off), on native function calling or on the ReAct text path, and
  return :class:`CrewAIReceived`: exactly the text the model reads next.

What CrewAI does with a failure (crewai 1.15, ``agents/agent_executor.py`` and
``tools/tool_usage.py``), pinned by ``tests/test_adapter_crewai.py``:

- A tool that returns a ``ToolFailure`` is recorded as failed (``Agent.last_tool_failures``,
  the event bus, ``TaskOutput.tool_failures``), and the model reads
  ``ToolFailure.as_agent_message()``: the message as it is when ``code`` is None, else
  followed by `` (code: <code>)``. So the adapter returns the runner's text as the message,
  with no code.
- The model is sent no error flag: on native function calling the text is the content of a
  ``role="tool"`` message, on the ReAct path it follows ``Observation:`` in the transcript,
  the same for a failure and a success. The hint line is all the model has to tell them apart.
- A raised exception reaches the model as ``Error executing tool: <str(exc)>`` on native
  calling (the raw message, secrets and all), and on the ReAct path the tool is called again:
  each of CrewAI's three attempts calls it twice, six calls before the model reads a long
  error text with the raw message in it.
- Arguments CrewAI's schema refuses (a missing or mistyped one) are a raised error too:
  pydantic's report after ``Error executing tool:`` on native calling, and on the ReAct path
  the long error text after CrewAI's three attempts. The adapter's tool answers them with a
  correctable :class:`~pytest_nucleo.InvalidInputException` text naming the parameter
  instead.
- ``ToolFailure.retryable`` means "the same call could plausibly succeed", which is not
  correctability (a typo is correctable, and the same call fails again). The adapter sets it
  from :data:`RETRYABLE`, a table over the failure set; CrewAI records the flag (records,
  events, traces) and does not act on it.

A success reads as the runner's text (a ``str`` as is, anything else as sorted-key JSON,
bounded by ``text_limit``); a ``ToolFailure`` the tool returns itself is handed to CrewAI
unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import json
import os
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal, Unpack, overload

import pydantic

with warnings.catch_warnings():
    # Importing crewai 1.15 warns when its crewai.rag module refuses the attribute Python sets
    # for a submodule (an ImportWarning about CrewAI itself), which -W error turns into a
    # failed import.
    warnings.simplefilter("ignore", ImportWarning)
    from crewai import Agent
    from crewai.events.event_bus import crewai_event_bus
    from crewai.llms.base_llm import BaseLLM
    from crewai.tools import ToolFailure
    from crewai.tools import tool as crewai_tool_decorator
    from crewai.tools.base_tool import Tool
    from crewai.tools.structured_tool import CrewStructuredTool

from pytest_nucleo._exceptions import (
    ContextOverflowException,
    CorrectableLLMException,
    CorrectableRuntimeLLMException,
    ExternalServiceException,
    GuardrailException,
    InvalidInputException,
    JobCancelledException,
    JobTimeoutException,
    LLMReadableCheckedException,
    LLMReadableException,
    LLMReadableRuntimeException,
    ModelNotFoundException,
    PermissionDeniedException,
    PromptNotFoundException,
    ProviderRefusalException,
    QuotaExhaustedException,
    ResourceNotFoundException,
    SpendCapExceededException,
    SystemException,
    UnauthorizedException,
    UncorrectableLLMException,
    UncorrectableRuntimeLLMException,
    UpstreamThrottleException,
)
from pytest_nucleo._http._status import (
    Http400Exception,
    Http401Exception,
    Http403Exception,
    Http404Exception,
    Http413Exception,
    Http422Exception,
    Http429Exception,
    Http500Exception,
    Http502Exception,
    Http503Exception,
    HttpQuotaExhaustedException,
    HttpThrottledStatusException,
    HttpUnmappedStatusException,
)
from pytest_nucleo._runner._results import RetriesExhaustedException, ToolResult
from pytest_nucleo.adapters._core import (
    RunnerOptions,
    check_runner_options,
    log_failure,
    schema_failure,
    success_text_unless,
    through_runner,
    tool_name,
)
from pytest_nucleo.limits._refusal import LimiterRefusalException

__all__ = [
    "RETRYABLE",
    "CrewAIReceived",
    "arun_through_crewai",
    "crewai_tool",
    "is_retryable",
    "run_through_crewai",
    "tool_failure",
]

NATIVE_CHANNEL = "tool message"
"""What a result reaches the model in on native function calling: a ``role="tool"`` message."""

REACT_CHANNEL = "observation"
"""What a result reaches the model in on the ReAct path: the text after ``Observation:``."""

RETRYABLE: Mapping[type[LLMReadableException], bool] = {
    # Correctable: the model must change the call; the same call fails the same way.
    CorrectableLLMException: False,
    CorrectableRuntimeLLMException: False,
    InvalidInputException: False,
    Http400Exception: False,
    Http413Exception: False,
    Http422Exception: False,
    ResourceNotFoundException: False,
    Http404Exception: False,
    GuardrailException: False,
    # The service failed, not the call: the same call may succeed once it recovers or the
    # pause it asked for is over.
    ExternalServiceException: True,
    Http500Exception: True,
    Http502Exception: True,
    Http503Exception: True,
    UpstreamThrottleException: True,
    Http429Exception: True,
    HttpThrottledStatusException: True,
    RetriesExhaustedException: True,  # retry signals outlasted the runner's budget
    LimiterRefusalException: True,  # our own limiter holds the tool off for a while
    JobTimeoutException: True,  # this run took too long; another may not
    # A status whose meaning we do not know (a 409, a 501): claim the least.
    HttpUnmappedStatusException: False,
    # Nothing changes by itself: credentials, access rules, a bug, a stop someone asked for,
    # an account or a model that is not there.
    UnauthorizedException: False,
    Http401Exception: False,
    Http403Exception: False,
    PermissionDeniedException: False,
    SystemException: False,
    JobCancelledException: False,
    ContextOverflowException: False,
    PromptNotFoundException: False,
    QuotaExhaustedException: False,
    HttpQuotaExhaustedException: False,  # a used-up quota or a declined payment: the user acts
    SpendCapExceededException: False,
    ModelNotFoundException: False,
    ProviderRefusalException: False,
    # The bases: a failure that says no more than its family claims the least.
    LLMReadableException: False,
    LLMReadableCheckedException: False,
    LLMReadableRuntimeException: False,
    UncorrectableLLMException: False,
    UncorrectableRuntimeLLMException: False,
}
"""CrewAI's ``retryable`` for each class of the failure set: whether the same call, unchanged,
could succeed later. Not correctability, which says whether the model may fix the call: a
404 is correctable and not retryable, a 429 retryable and not correctable. A subclass of your
own takes the entry of its nearest class here."""


def is_retryable(exc: LLMReadableException) -> bool:
    """CrewAI's ``retryable`` for ``exc``: the :data:`RETRYABLE` entry of the nearest class in
    its hierarchy."""
    if not isinstance(exc, LLMReadableException):
        raise TypeError(
            f"is_retryable takes an exception of the failure set; got a {type(exc).__name__}"
        )
    for cls in type(exc).__mro__:
        if cls in RETRYABLE:
            return RETRYABLE[cls]
    raise AssertionError("unreachable: LLMReadableException is in the table")


def tool_failure(result: ToolResult) -> ToolFailure:
    """The ``ToolFailure`` a failed call returns to CrewAI: the runner's text as ``message``
    (the model reads it as it is), no ``code`` (CrewAI would append `` (code: ...)`` to the
    text), ``retryable`` from :data:`RETRYABLE`, and the failure's class and correctability in
    ``details`` for your listeners. Use it when you run a tool through
    :func:`~pytest_nucleo.run_tool` yourself inside a CrewAI tool."""
    if not result.is_error or result.exception is None:
        raise ValueError("tool_failure takes a failed call's result; this call succeeded")
    return _failure(result.exception, result.text)


def _failure(failure: LLMReadableException, text: str) -> ToolFailure:
    return ToolFailure(
        message=text,
        code=None,
        retryable=is_retryable(failure),
        details={"exception": type(failure).__name__, "correctable": failure.is_correctable},
    )


def _refused(tool: Tool[..., Any], error: ValueError) -> ToolFailure:
    """The correctable failure for arguments CrewAI's schema refused before the runner saw
    them (``error`` is CrewAI's, its cause pydantic's or json's), logged as the runner would;
    ``error`` itself when it is not such a refusal."""
    cause = error.__cause__
    errors: Sequence[Mapping[str, Any]]
    if isinstance(cause, pydantic.ValidationError):
        errors = cause.errors(include_url=False)
    elif isinstance(cause, json.JSONDecodeError):
        errors = []  # not a JSON object at all
    else:
        raise error
    failure = schema_failure(inspect.signature(tool.func), errors)
    log_failure(tool.name, failure)
    return _failure(failure, failure.explain_to_llm())


class _NucleoStructuredTool(CrewStructuredTool):
    """The form CrewAI's ReAct path calls a tool in, refusing arguments as the tool does."""

    def invoke(self, input: str | dict[str, Any], config: Any = None, **kwargs: Any) -> Any:
        """CrewAI's ``invoke``; arguments its schema refuses are a correctable failure."""
        try:
            return super().invoke(input, config, **kwargs)
        except ValueError as error:
            return _refused(self._original_tool, error)

    async def ainvoke(self, input: str | dict[str, Any], config: Any = None, **kwargs: Any) -> Any:
        """CrewAI's ``ainvoke``; arguments its schema refuses are a correctable failure."""
        try:
            return await super().ainvoke(input, config, **kwargs)
        except ValueError as error:
            return _refused(self._original_tool, error)


class _NucleoTool(Tool[..., Any]):
    """CrewAI's ``Tool`` whose refusals of the model's arguments reach the model as a
    correctable failure, naming the parameter, on every path: CrewAI's own refusal is a
    raised error, which it sends as pydantic's report (native calling) or answers by calling
    the tool again (the ReAct path)."""

    def run(self, *args: Any, **kwargs: Any) -> Any:
        """CrewAI's ``run``; arguments its schema refuses are a correctable failure."""
        try:
            return super().run(*args, **kwargs)
        except ValueError as error:
            return _refused(self, error)

    async def arun(self, *args: Any, **kwargs: Any) -> Any:
        """CrewAI's ``arun``; arguments its schema refuses are a correctable failure."""
        try:
            return await super().arun(*args, **kwargs)
        except ValueError as error:
            return _refused(self, error)

    def to_structured_tool(self) -> CrewStructuredTool:
        """CrewAI's structured form of the tool, refusing arguments as the tool does."""
        plain = super().to_structured_tool()
        made = _NucleoStructuredTool(
            **{field: getattr(plain, field) for field in CrewStructuredTool.model_fields}
        )
        made._original_tool = self
        return made


def _is_native(value: object) -> bool:
    """Whether CrewAI takes ``value`` as it is: a ``ToolFailure`` the tool returned itself."""
    return isinstance(value, ToolFailure)


_SUCCESS = success_text_unless(_is_native)


@overload
def crewai_tool(
    func: Callable[..., Any],
    /,
    *,
    result_as_answer: bool = False,
    max_usage_count: int | None = None,
    **options: Unpack[RunnerOptions],
) -> Tool[..., Any]: ...
@overload
def crewai_tool(
    *,
    result_as_answer: bool = False,
    max_usage_count: int | None = None,
    **options: Unpack[RunnerOptions],
) -> Callable[[Callable[..., Any]], Tool[..., Any]]: ...
def crewai_tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    result_as_answer: bool = False,
    max_usage_count: int | None = None,
    **options: Unpack[RunnerOptions],
) -> Tool[..., Any] | Callable[[Callable[..., Any]], Tool[..., Any]]:
    """Make a tool function a CrewAI ``Tool`` whose failures the model understands.

    ``@crewai_tool`` or ``@crewai_tool(retries=5, timeout=10)`` on a ``def`` or ``async
    def``; pass the result in ``Agent(tools=[...])``. Use it instead of CrewAI's ``@tool``:
    CrewAI builds the same schema and description (the function needs a docstring, as for
    ``@tool``). The name is the runner's (``name=``, else ``@tool(name=...)`` of
    pytest_nucleo beneath, else ``__name__``); ``result_as_answer`` and ``max_usage_count``
    are CrewAI's. A failure is returned as a ``ToolFailure`` (:func:`tool_failure`), which
    CrewAI records as a failed call and never turns into the task's answer.
    """
    checked = check_runner_options(options, "crewai_tool")

    def make(target: Callable[..., Any]) -> Tool[..., Any]:
        if not callable(target):
            raise TypeError(f"crewai_tool wraps a function; got a {type(target).__name__}")
        if not (getattr(target, "__doc__", None) or "").strip():
            raise ValueError(
                f"{tool_name(target)} has no docstring: CrewAI sends it to the model as the "
                "tool's description, so write one"
            )
        name = checked.get("name") or tool_name(target)
        wrapped = through_runner(
            target, tool_failure, on_success=_SUCCESS, options={**checked, "name": name}
        )
        # An async wrapper (an async def, or any tool under a timeout) is fine for CrewAI:
        # its sync paths run the coroutine to its end, its async paths await it.
        plain: Tool[..., Any] = crewai_tool_decorator(
            name, result_as_answer=result_as_answer, max_usage_count=max_usage_count
        )(wrapped)
        return _NucleoTool(**{field: getattr(plain, field) for field in Tool.model_fields})

    return make if func is None else make(func)


@dataclasses.dataclass(frozen=True, slots=True)
class CrewAIReceived:
    """What the model received for one tool call under a CrewAI agent.

    ``text`` is what the model reads in its next call, byte for byte: the content of the
    ``role="tool"`` message (native function calling) or the text after ``Observation:``
    (the ReAct path); ``channel`` says which. ``is_error`` is whether CrewAI recorded the
    call as failed (a ``ToolFailure``, which ``failure`` holds); CrewAI does not send it to
    the model. ``messages`` are the model's next input, whole.
    """

    is_error: bool
    """Whether CrewAI recorded the call as failed (it does not send this to the model)."""
    text: str
    """What the model reads in its next call for the tool's result."""
    channel: str = NATIVE_CHANNEL
    """``"tool message"`` on native function calling, ``"observation"`` on the ReAct path."""
    failure: ToolFailure | None = dataclasses.field(default=None, compare=False, repr=False)
    """The ``ToolFailure`` CrewAI recorded for the call, or None."""
    messages: tuple[Mapping[str, Any], ...] = dataclasses.field(
        default=(), compare=False, repr=False
    )
    """The model's next input, every message of it."""


_CALL_ID = "call_nucleo_1"
_MODEL = "nucleo-scripted"
_OBSERVATION = "\nObservation: "
_FINAL = "Thought: I have the tool's result.\nFinal Answer: done"


class _ScriptedLLM(BaseLLM):
    """The model side: call the one tool, then keep the messages of the next call and end.

    On native function calling it answers with a tool call, on the ReAct path with the
    ``Action:`` text CrewAI's parser reads. No network, no API key.
    """

    native: bool = True
    tool_name: str = ""
    arguments: dict[str, Any] = {}  # noqa: RUF012  # a pydantic field, copied per instance
    inputs: list[list[dict[str, Any]]] = []  # noqa: RUF012

    def supports_function_calling(self) -> bool:
        """Native function calling or the ReAct text path, as the harness was asked."""
        return self.native

    def call(
        self,
        messages: str | list[Any],
        tools: list[dict[str, Any]] | None = None,
        callbacks: list[Any] | None = None,
        available_functions: dict[str, Any] | None = None,
        from_task: Any = None,
        from_agent: Any = None,
        response_model: Any = None,
    ) -> str | Any:
        """The scripted answer to CrewAI's call (see the class)."""
        sent = [{"role": "user", "content": messages}] if isinstance(messages, str) else messages
        self.inputs.append([dict(message) for message in sent])
        if len(self.inputs) > 1:
            return _FINAL if not self.native else "done"
        if self.native:
            return [
                {
                    "id": _CALL_ID,
                    "type": "function",
                    "function": {"name": self.tool_name, "arguments": json.dumps(self.arguments)},
                }
            ]
        return (
            "Thought: I should call the tool.\n"
            f"Action: {self.tool_name}\n"
            f"Action Input: {json.dumps(self.arguments)}"
        )

    async def acall(
        self,
        messages: str | list[Any],
        tools: list[dict[str, Any]] | None = None,
        callbacks: list[Any] | None = None,
        available_functions: dict[str, Any] | None = None,
        from_task: Any = None,
        from_agent: Any = None,
        response_model: Any = None,
    ) -> str | Any:
        """The same answers under CrewAI's async path."""
        return self.call(messages, tools, callbacks, available_functions)


# CrewAI's own switches: telemetry spans and traces off, no version check against PyPI.
_OFFLINE = {
    "CREWAI_DISABLE_TELEMETRY": "true",
    "OTEL_SDK_DISABLED": "true",
    "CREWAI_TRACING_ENABLED": "false",
    "CREWAI_DISABLE_VERSION_CHECK": "true",
}


@contextlib.contextmanager
def _offline() -> Iterator[None]:
    """CrewAI's telemetry off while the harness runs (CrewAI reads these at each span), and
    its warnings about itself silenced."""
    before = {key: os.environ.get(key) for key in _OFFLINE}
    os.environ.update(_OFFLINE)
    try:
        with warnings.catch_warnings():
            # CrewAI reads its own deprecated fields as it runs: warnings about CrewAI, not
            # about the tool (they would fail a suite run with -W error).
            warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"crewai\.")
            yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _agent(tool: Tool[..., Any], arguments: Mapping[str, Any] | None, native: bool) -> Agent:
    model = _ScriptedLLM(
        model=_MODEL, native=native, tool_name=tool.name, arguments=dict(arguments or {})
    )
    return Agent(
        role="Order assistant",
        goal="Answer with what the tool says",
        backstory="A test harness",
        llm=model,
        tools=[tool],
        max_iter=2,
        verbose=False,
    )


def _received(agent: Agent, native: bool) -> CrewAIReceived:
    model = agent.llm
    assert isinstance(model, _ScriptedLLM)
    if len(model.inputs) != 2:
        raise AssertionError(
            f"expected CrewAI to call the model twice (the tool call, then its result), got "
            f"{len(model.inputs)}"
        )
    sent = model.inputs[1]
    failures = list(agent.last_tool_failures)
    failure = failures[-1].failure if failures else None
    if native:
        answers = [m for m in sent if m.get("role") == "tool" and m.get("tool_call_id") == _CALL_ID]
        if len(answers) != 1:
            raise AssertionError(f"expected one tool message for {_CALL_ID}, got {sent!r}")
        text = str(answers[0].get("content"))
    else:
        steps = [
            m
            for m in sent
            if m.get("role") == "assistant" and _OBSERVATION in str(m.get("content", ""))
        ]
        if len(steps) != 1:
            raise AssertionError(f"expected one observation in the transcript, got {sent!r}")
        text = str(steps[0]["content"]).split(_OBSERVATION, 1)[1]
    channel = NATIVE_CHANNEL if native else REACT_CHANNEL
    return CrewAIReceived(failure is not None, text, channel, failure, tuple(sent))


_UNDER_A_LOOP = (
    "this harness cannot run under a running event loop: use `await arun_through_crewai(...)`"
)


def run_through_crewai(
    tool: Tool[..., Any],
    arguments: Mapping[str, Any] | None = None,
    *,
    path: Literal["native", "react"] = "native",
) -> CrewAIReceived:
    """Run one call of ``tool`` through a CrewAI ``Agent`` and return what the model reads next.

    The agent's model is a scripted ``BaseLLM``: its first answer calls ``tool`` with
    ``arguments``, its second reads the result and ends. ``path="native"`` scripts a model with
    native function calling, ``path="react"`` one CrewAI drives with its ReAct text prompts
    (``Action:`` / ``Observation:``). CrewAI's telemetry and version check are off while it
    runs. For tests, outside a running event loop; under one, ``await``
    :func:`arun_through_crewai`.
    """
    native = _check_path(path)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(_UNDER_A_LOOP)
    with _offline():
        agent = _agent(tool, arguments, native)
        agent.kickoff("Call the tool.")
        # CrewAI's event handlers (its console panels among them) run in worker threads: let
        # them finish inside the call, not in whatever test runs next.
        crewai_event_bus.flush()
    return _received(agent, native)


async def arun_through_crewai(
    tool: Tool[..., Any],
    arguments: Mapping[str, Any] | None = None,
    *,
    path: Literal["native", "react"] = "native",
) -> CrewAIReceived:
    """:func:`run_through_crewai` under a running event loop, through CrewAI's
    ``Agent.kickoff_async``."""
    native = _check_path(path)
    with _offline():
        agent = _agent(tool, arguments, native)
        await agent.kickoff_async("Call the tool.")
        await asyncio.to_thread(crewai_event_bus.flush)
    return _received(agent, native)


def _check_path(path: str) -> bool:
    if path not in ("native", "react"):
        raise ValueError(f"path must be 'native' or 'react'; got {path!r}")
    return path == "native"
