"""DSPy: failures reach the model as the observation of ``dspy.ReAct``, ``explain_to_llm()``.

Use it when your agent is a DSPy program calling tools through ``dspy.ReAct`` (``dspy``; install
``pytest-nucleo[dspy]``). Importing this module imports ``dspy``; ``import pytest_nucleo``
does not.

- :func:`dspy_tool` turns a tool function (sync or ``async def``) into a ``dspy.Tool`` once:
  DSPy builds the same name, description and argument schema (``name``, ``desc``, ``args``)
  as from the bare function. Every call runs through :func:`~pytest_nucleo.run_tool` /
  :func:`~pytest_nucleo.arun_tool`, on ``tool(...)`` (``ReAct.forward``) and on
  ``await tool.acall(...)`` (``ReAct.aforward``) alike.
- :func:`run_through_dspy` / :func:`arun_through_dspy` (for tests) run one call of a tool
  through a real ``dspy.ReAct`` whose model is a scripted ``dspy.LM`` engine (no network, no
  API key, no LiteLLM, no response cache), and return :class:`DSPyReceived`: exactly the
  observation the model reads on its next call.

What DSPy does with a failure (dspy 3.4.1), pinned by ``tests/test_adapter_dspy.py``:

- ``dspy.ReAct`` (``predict/react.py``, ``forward`` and ``aforward``) catches any exception of
  a tool and makes the observation ``Execution error in <name>: `` plus
  ``format_error_for_lm(err, traceback_frames=5)`` (``utils/exceptions.py``): the whole
  traceback, with file paths, source lines and the exception's message (a secret in a foreign
  exception's message included). The observation goes into the ``trajectory`` field of the
  model's next prompt, as text.
- There is no error flag: an observation is text in the trajectory, the same for a failure and
  a success. So the adapter raises nothing: a failed call returns the ``explain_to_llm()``
  text, as a :class:`ToolFailureText` (a ``str``), which the trajectory carries as it is; the
  model tells a failure by its hint line, your code by the type.
- ``dspy.Tool`` (``adapters/types/tool.py``) checks the model's arguments against its
  ``args`` schema (jsonschema, then pydantic) before the function runs, and refuses one with a
  ``ValueError``, which ``ReAct`` turns into a traceback too. The adapter's tool answers a
  refused argument with a correctable :class:`~pytest_nucleo.InvalidInputException` text
  naming the parameter; a name the tool does not take and a missing one are left to the
  runner, which answers them in its own words.
- An ``async def`` tool on the sync path (``tool(...)``) follows DSPy's rule: it runs only with
  ``dspy.configure(allow_tool_async_sync_conversion=True)``; use ``acall``. A sync tool with a
  ``timeout`` (its wrapper is async) runs to its end on the sync path, as a sync tool should.
- DSPy's experimental ``dspy.ReActV2`` sends tool results with an ``is_error`` flag, set only
  when the tool raises: under it, the adapter's failure text arrives with the flag unset.

A success reads as the runner's text (a ``str`` as is, anything else as sorted-key JSON,
bounded by ``text_limit``); DSPy's own types (``dspy.Image``, ``dspy.Audio``, ``dspy.File``
and the other ``dspy.Type`` values, or a list of them) are handed to it unchanged, since the
trajectory carries them to the model as media.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from collections.abc import Callable, Mapping
from typing import Any, Unpack, overload

import dspy
import pydantic
from dspy.dsp.utils.settings import settings
from dspy.lm15 import Message, Request, Response, TextPart, Usage, response_to_events
from dspy.utils.callback import with_callbacks

from pytest_nucleo._runner._results import ToolResult
from pytest_nucleo._runner._tools import run_sync
from pytest_nucleo.adapters._core import (
    RunnerOptions,
    ToolFailureText,
    check_runner_options,
    log_failure,
    schema_failure,
    success_text_unless,
    through_runner,
)

__all__ = [
    "DSPyReceived",
    "ToolFailureText",
    "arun_through_dspy",
    "dspy_tool",
    "run_through_dspy",
]

CHANNEL = "observation"
"""What a tool's result reaches the model in: the observation of ``ReAct``'s trajectory."""


def _failure_text(result: ToolResult) -> ToolFailureText:
    return ToolFailureText(result.text, result.exception)


def _is_native(value: object) -> bool:
    """Whether DSPy has its own form for ``value``: its types (media, files), or a list of them."""
    if isinstance(value, list | tuple) and value:
        return all(isinstance(item, dspy.Type) for item in value)
    return isinstance(value, dspy.Type)


_SUCCESS = success_text_unless(_is_native)


def _refusal(tool: dspy.Tool, key: str, value: Any, error: ValueError) -> ToolFailureText:
    """The correctable failure for the argument ``key`` DSPy refused (logged as the runner
    would: the runner never saw the call)."""
    if isinstance(error, pydantic.ValidationError):
        # DSPy parses each argument as the field "value" of a model of its own.
        errors = [
            {**found, "loc": (key, *found["loc"][1:])} for found in error.errors(include_url=False)
        ]
    else:
        # DSPy's "Arg ... is invalid" ValueError, raised while handling jsonschema's error.
        invalid = error.__context__
        message = getattr(invalid, "message", None)
        where = tuple(getattr(invalid, "absolute_path", ()))
        errors = [
            {
                "loc": (key, *where),
                "msg": message if isinstance(message, str) else "does not match the tool's schema",
                "input": getattr(invalid, "instance", value),
            }
        ]
    failure = schema_failure(inspect.signature(tool.func), errors)
    log_failure(tool.name, failure)
    return ToolFailureText(failure.explain_to_llm(), failure)


class _NucleoTool(dspy.Tool):
    """``dspy.Tool`` whose refusal of an argument reads as a correctable failure, not a
    traceback, and whose sync path runs a sync function under a timeout to its end."""

    _runs_to_end: bool = pydantic.PrivateAttr(default=False)

    def _checked(self, kwargs: dict[str, Any]) -> dict[str, Any] | ToolFailureText:
        """The arguments as DSPy checks and parses them, one at a time (so the refusal names
        its parameter); a name the tool does not take goes on to the runner."""
        parsed = dict(kwargs)
        for key, value in kwargs.items():
            if key not in (self.args or {}):
                continue
            try:
                parsed.update(self._validate_and_parse_args(**{key: value}))
            except ValueError as error:  # pydantic's ValidationError is a ValueError too
                return _refusal(self, key, value, error)
        return parsed

    @with_callbacks  # type: ignore[untyped-decorator]  # DSPy ships no type information
    def __call__(self, **kwargs: Any) -> Any:
        checked = self._checked(kwargs)
        if isinstance(checked, ToolFailureText):
            return checked
        if not inspect.iscoroutinefunction(self.func):
            return self.func(**checked)
        if not (self._runs_to_end or settings.allow_tool_async_sync_conversion):
            # DSPy's own rule for an async tool on the sync path (its message, shortened).
            raise ValueError(
                "You are calling `__call__` on an async tool, please use `acall` instead or "
                "enable async-to-sync conversion with "
                "`dspy.configure(allow_tool_async_sync_conversion=True)`."
            )
        return run_sync(
            lambda: self.func(**checked),
            refusal=f"{self.name} is async here: under a running event loop, call it with "
            "`await tool.acall(...)` (ReAct's aforward)",
        )

    @with_callbacks  # type: ignore[untyped-decorator]  # DSPy ships no type information
    async def acall(self, **kwargs: Any) -> Any:
        checked = self._checked(kwargs)
        if isinstance(checked, ToolFailureText):
            return checked
        result = self.func(**checked)
        return await result if inspect.isawaitable(result) else result


@overload
def dspy_tool(func: Callable[..., Any], /) -> dspy.Tool: ...
@overload
def dspy_tool(
    *,
    desc: str | None = None,
    arg_desc: dict[str, str] | None = None,
    **options: Unpack[RunnerOptions],
) -> Callable[[Callable[..., Any]], dspy.Tool]: ...
def dspy_tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    desc: str | None = None,
    arg_desc: dict[str, str] | None = None,
    **options: Unpack[RunnerOptions],
) -> dspy.Tool | Callable[[Callable[..., Any]], dspy.Tool]:
    """Make a tool function a ``dspy.Tool`` whose failures the model understands.

    ``@dspy_tool`` or ``@dspy_tool(desc=..., retries=5, timeout=10)`` on a ``def`` or ``async
    def``; pass the result in ``dspy.ReAct(signature, tools=[...])``. Use it instead of
    ``dspy.Tool(fn)``: DSPy builds the same name, description and argument schema. The name is
    the runner's (``name=``, else ``@tool(name=...)`` beneath, else ``__name__``); ``desc`` and
    ``arg_desc`` are DSPy's, passed on. A failure is returned as its ``explain_to_llm()`` text,
    a :class:`ToolFailureText` (DSPy sends the model no error flag: see the module docs).
    """
    checked = check_runner_options(options, "dspy_tool")

    def make(target: Callable[..., Any]) -> dspy.Tool:
        if not callable(target):
            raise TypeError(f"dspy_tool wraps a function; got a {type(target).__name__}")
        wrapped = through_runner(target, _failure_text, on_success=_SUCCESS, options=checked)
        tool = _NucleoTool(wrapped, name=wrapped.__name__, desc=desc, arg_desc=arg_desc)
        # A sync function under a timeout has an async wrapper: the sync path runs it through.
        tool._runs_to_end = not inspect.iscoroutinefunction(target) and (
            inspect.iscoroutinefunction(wrapped)
        )
        return tool

    return make if func is None else make(func)


@dataclasses.dataclass(frozen=True, slots=True)
class DSPyReceived:
    """What the model received for one tool call under ``dspy.ReAct``.

    ``text`` is the observation as the model's next prompt carries it, byte for byte (the
    ``observation_0`` field of its ``trajectory``); ``is_error`` is whether the tool returned
    a :class:`ToolFailureText` (DSPy sends the model no such flag: see the module docs);
    ``channel`` is ``"observation"`` for failure and success; ``observation`` is the value in
    the returned trajectory; ``message`` the model's next message itself.
    """

    is_error: bool
    """Whether the tool returned a :class:`ToolFailureText` (the model gets no such flag)."""
    text: str
    """The observation as the model's next prompt carries it, byte for byte."""
    channel: str = CHANNEL
    """What the text reached the model in: the trajectory's observation, failure or not."""
    observation: Any = dataclasses.field(default=None, compare=False, repr=False)
    """The observation as ``ReAct``'s returned trajectory holds it."""
    message: Message | None = dataclasses.field(default=None, compare=False, repr=False)
    """The user message of the model's next call, as DSPy sent it."""


_OBSERVATION = "[[ ## observation_0 ## ]]\n"


class _ScriptedEngine:
    """The model side, a ``dspy.LM`` engine: call the one tool, then finish, then answer; keep
    every request it is sent."""

    def __init__(self, tool_name: str, arguments: Mapping[str, Any]) -> None:
        self.requests: list[Request] = []
        self.answers = [
            {
                "next_thought": "Call the tool.",
                "next_tool_name": tool_name,
                "next_tool_args": json.dumps(dict(arguments), ensure_ascii=False),
            },
            {"next_thought": "Done.", "next_tool_name": "finish", "next_tool_args": "{}"},
            {"reasoning": "Read the observation.", "answer": "done"},
        ]

    def complete(self, request: Request) -> Response:
        self.requests.append(request)
        if len(self.requests) > len(self.answers):
            raise AssertionError(f"the model was called {len(self.requests)} times")
        fields = self.answers[len(self.requests) - 1]
        # The ChatAdapter's format: each output field under its header, then the end marker.
        text = "\n\n".join(f"[[ ## {name} ## ]]\n{value}" for name, value in fields.items())
        return Response(
            id=None,
            model="nucleo-scripted",
            message=Message.assistant([TextPart(text + "\n\n[[ ## completed ## ]]")]),
            finish_reason="stop",
            usage=Usage(input_tokens=0, output_tokens=0, total_tokens=0),
        )

    def stream(self, request: Request) -> Any:
        return response_to_events(self.complete(request))

    def close(self) -> None:
        pass


class _AsyncScriptedEngine:
    """The same script for DSPy's async path."""

    def __init__(self, script: _ScriptedEngine) -> None:
        self.script = script

    async def complete(self, request: Request) -> Response:
        return self.script.complete(request)

    async def stream(self, request: Request) -> Any:
        for event in self.script.stream(request):
            yield event

    async def aclose(self) -> None:
        pass


def _prepared(
    tool: dspy.Tool | Callable[..., Any], arguments: Mapping[str, Any] | None
) -> tuple[dspy.ReAct, dspy.LM, _ScriptedEngine]:
    react = dspy.ReAct("request -> answer", tools=[tool], max_iters=2)
    names = [name for name in react.tools if name != "finish"]
    script = _ScriptedEngine(names[0], arguments or {})
    lm = dspy.LM(
        "nucleo/scripted",
        engine=script,
        async_engine=_AsyncScriptedEngine(script),
        cache=False,  # no response cache: nothing written to DSPy's cache directory
        num_retries=0,
    )
    return react, lm, script


def _received(react: dspy.ReAct, script: _ScriptedEngine, trajectory: Any) -> DSPyReceived:
    if len(script.requests) != len(script.answers):
        raise AssertionError(
            f"expected the model to be called {len(script.answers)} times (the tool call, the "
            f"finish, the answer), got {len(script.requests)}"
        )
    message = script.requests[1].messages[-1]
    sent = "".join(part.text for part in message.parts if isinstance(part, TextPart))
    # The trajectory is the last input field; the ChatAdapter's reminder of the outputs follows.
    reminder = "\n\n" + dspy.ChatAdapter().user_message_output_requirements(react.react.signature)
    if _OBSERVATION not in sent or not sent.endswith(reminder):
        raise AssertionError(f"no observation in the model's next message: {sent!r}")
    text = sent[sent.index(_OBSERVATION) + len(_OBSERVATION) : -len(reminder)]
    observation = trajectory["observation_0"]
    return DSPyReceived(
        isinstance(observation, ToolFailureText), text, CHANNEL, observation, message
    )


def _context(lm: dspy.LM) -> Any:
    # The ChatAdapter (DSPy's default) whatever is configured; no history or trace kept.
    return dspy.context(lm=lm, adapter=dspy.ChatAdapter(), disable_history=True, trace=[])


def run_through_dspy(
    tool: dspy.Tool | Callable[..., Any], arguments: Mapping[str, Any] | None = None
) -> DSPyReceived:
    """Run one call of ``tool`` through ``dspy.ReAct`` (its sync ``forward``) and return what
    the model reads next.

    The model is a scripted ``dspy.LM`` engine: its first answer calls ``tool`` with
    ``arguments``, its second finishes, its third gives the answer; the observation is read
    from the prompt of its second call. Offline: no API key, no network, no response cache.
    ``tool`` is a ``dspy.Tool`` (or a function, which ``ReAct`` wraps itself). For tests;
    :func:`arun_through_dspy` drives ``ReAct``'s async path.
    """
    react, lm, script = _prepared(tool, arguments)
    with _context(lm):
        prediction = react(request="Call the tool.")
    return _received(react, script, prediction.trajectory)


async def arun_through_dspy(
    tool: dspy.Tool | Callable[..., Any], arguments: Mapping[str, Any] | None = None
) -> DSPyReceived:
    """:func:`run_through_dspy` through ``ReAct``'s async path (``acall``, which awaits the
    tool's ``acall``); under a running event loop."""
    react, lm, script = _prepared(tool, arguments)
    with _context(lm):
        prediction = await react.acall(request="Call the tool.")
    return _received(react, script, prediction.trajectory)
