"""The DSPy adapter, through a real ``dspy.ReAct`` on a scripted ``dspy.LM`` engine, offline.

The model is a custom engine (no LiteLLM, no network, no response cache): its first answer
calls the tool, its second finishes. The text asserted is the observation in the trajectory
of the model's second prompt.
"""

from __future__ import annotations

from tests._frameworks import needs_frameworks

needs_frameworks("dspy")

import asyncio
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import adapter_tools
import dspy
import pydantic
import pytest
from adapter_tools import FAILURES, ORDER_TEXT, SECRET, arrange, expected_text
from dspy.lm15 import ImagePart
from dspy.utils.callback import BaseCallback
from syrupy.assertion import SnapshotAssertion

import pytest_nucleo as nucleo
from pytest_nucleo import CORRECTABLE_HINT
from pytest_nucleo.adapters.dspy import (
    DSPyReceived,
    ToolFailureText,
    arun_through_dspy,
    dspy_tool,
    run_through_dspy,
)

SYNC_TOOL = dspy_tool(adapter_tools.fetch_order)
ASYNC_TOOL = dspy_tool(adapter_tools.afetch_order, name="fetch_order")


def _through_forward(tool: dspy.Tool, arguments: dict[str, Any]) -> DSPyReceived:
    return run_through_dspy(tool, arguments)


def _through_aforward(tool: dspy.Tool, arguments: dict[str, Any]) -> DSPyReceived:
    return asyncio.run(arun_through_dspy(tool, arguments))


@pytest.fixture(
    params=[
        ("sync", SYNC_TOOL, _through_forward),
        ("sync", SYNC_TOOL, _through_aforward),
        ("async", ASYNC_TOOL, _through_aforward),
    ],
    ids=["def-forward", "def-aforward", "async-def-aforward"],
)
def through(request: pytest.FixtureRequest) -> Any:
    """One call of the same tool, as a def and as an async def, through ReAct's sync and async
    paths (an async def tool on the sync path needs DSPy's opt-in: see below)."""
    _kind, tool, run = request.param
    return lambda arguments: run(tool, arguments)


@pytest.mark.nucleo(expect_leaks=True)
@pytest.mark.parametrize("failure", FAILURES)
def test_each_failure_reaches_the_model_as_the_observation(
    fake_upstream: Any, through: Any, failure: str, llm_snapshot: SnapshotAssertion
) -> None:
    arguments = arrange(fake_upstream, failure)
    received = through(arguments)
    assert received.is_error  # the returned type: DSPy sends the model no flag
    assert received.channel == "observation"
    assert received.text == expected_text(arguments)
    assert received.observation == received.text  # nothing added, nothing cut on the way
    assert isinstance(received.observation, ToolFailureText)
    assert "Traceback" not in received.text
    assert SECRET not in received.text
    assert received.text == llm_snapshot


def test_a_success_is_the_runner_s_text() -> None:
    received = run_through_dspy(dspy_tool(adapter_tools.order_dict), {"order_number": "1042"})
    assert received == DSPyReceived(is_error=False, text=ORDER_TEXT)


def test_dspy_s_own_types_are_passed_on_as_media() -> None:
    def draw(month: str) -> dspy.Image:
        """Draw the month's orders."""
        return dspy.Image("https://shop.example/charts/may.png")

    received = run_through_dspy(dspy_tool(draw), {"month": "May"})
    assert not received.is_error
    assert isinstance(received.observation, dspy.Image)
    assert received.message is not None
    images = [part for part in received.message.parts if isinstance(part, ImagePart)]
    assert [image.url for image in images] == ["https://shop.example/charts/may.png"]
    assert received.text == ""  # the observation is the image, no text


def test_the_run_goes_on_after_a_failure(fake_upstream: Any) -> None:
    arguments = arrange(fake_upstream, "throttled")
    # The harness asserts the model was called again (to finish, then to answer).
    assert run_through_dspy(SYNC_TOOL, arguments).is_error


@pytest.mark.parametrize("tool", [SYNC_TOOL, ASYNC_TOOL], ids=["def", "async-def"])
def test_the_schema_is_the_one_dspy_builds(tool: dspy.Tool) -> None:
    plain = dspy.Tool(adapter_tools.fetch_order)
    assert (tool.name, tool.desc, tool.args) == (plain.name, plain.desc, plain.args)
    assert (tool.arg_types, tool.has_kwargs) == (plain.arg_types, plain.has_kwargs)
    assert str(tool) == str(plain)  # the line ReAct's instructions show the model


def test_desc_and_arg_desc_are_dspy_s() -> None:
    tool = dspy_tool(desc="Look an order up.", arg_desc={"order_number": "8 digits"})(
        adapter_tools.fetch_order
    )
    plain = dspy.Tool(
        adapter_tools.fetch_order, desc="Look an order up.", arg_desc={"order_number": "8 digits"}
    )
    assert (tool.desc, tool.args) == (plain.desc, plain.args)
    assert tool.args["order_number"]["description"] == "8 digits"


class Line(pydantic.BaseModel):
    sku: str
    quantity: int

    @pydantic.field_validator("sku")
    @classmethod
    def sku_is_upper_case(cls, sku: str) -> str:
        if sku != sku.upper():
            raise ValueError("a SKU is upper case")
        return sku


def add_line(order_number: str, line: Line) -> str:
    """Add a line to an order."""
    return f"{line.quantity} x {line.sku} added to {order_number}"


def test_arguments_are_parsed_as_dspy_parses_them() -> None:
    received = run_through_dspy(
        dspy_tool(add_line), {"order_number": "7", "line": {"sku": "TEA", "quantity": 2}}
    )
    assert received == DSPyReceived(is_error=False, text="2 x TEA added to 7")


def test_arguments_dspy_refuses_are_a_correctable_failure_naming_the_parameter(
    llm_snapshot: SnapshotAssertion, caplog: pytest.LogCaptureFixture
) -> None:
    tool = dspy_tool(add_line)
    line = {"sku": "TEA", "quantity": 2}
    wrong_type = run_through_dspy(tool, {"order_number": 7, "line": line})  # jsonschema
    nested = run_through_dspy(tool, {"order_number": "7", "line": {"sku": "TEA"}})  # jsonschema
    validator = run_through_dspy(
        tool, {"order_number": "7", "line": {"sku": "tea", "quantity": 2}}
    )  # pydantic, past the schema
    refused = (wrong_type, nested, validator)
    for received in refused:
        assert received.is_error
        assert received.text.endswith("\n" + CORRECTABLE_HINT)
        assert "Traceback" not in received.text
    assert "'order_number'" in wrong_type.text
    assert "'line'" in nested.text
    assert "'line'" in validator.text
    assert "a SKU is upper case (at sku)" in validator.text
    for received in refused:
        assert received.text == llm_snapshot
    # The runner never saw these calls: each is logged as it would log it.
    logged = [r for r in caplog.records if r.name == "pytest_nucleo.runner"]
    assert [r.levelno for r in logged] == [logging.WARNING] * 3
    assert all(r.getMessage().startswith("tool add_line failed (correctable)") for r in logged)


def test_a_name_dspy_does_not_check_is_the_runner_s_to_refuse(
    llm_snapshot: SnapshotAssertion,
) -> None:
    unknown = run_through_dspy(SYNC_TOOL, {"order": "7"})  # DSPy itself refuses it
    missing = run_through_dspy(SYNC_TOOL, {})  # DSPy itself calls the function without it
    assert unknown.is_error
    assert missing.is_error
    assert unknown.text == nucleo.run_tool(adapter_tools.fetch_order, {"order": "7"}).text
    assert missing.text == nucleo.run_tool(adapter_tools.fetch_order, {}).text
    assert unknown.text == llm_snapshot
    assert missing.text == llm_snapshot


def test_runner_options_apply() -> None:
    lookup = adapter_tools.flaky_order()
    received = run_through_dspy(dspy_tool(lookup, retries=1, backoff=0), {"order_number": "7"})
    assert received == DSPyReceived(is_error=False, text='{"number": "7", "status": "shipped"}')
    assert lookup.state.calls == 2


def test_a_timeout_reads_as_job_timeout_on_both_paths() -> None:
    clock = nucleo.FakeClock()

    def slow(order_number: str) -> str:
        """Wait for the shop forever."""
        clock.sleep(60)
        return "late"

    tool = dspy_tool(slow, timeout=30, clock=clock)
    timed_out = DSPyReceived(is_error=True, text=adapter_tools.TIMEOUT_TEXT)
    assert run_through_dspy(tool, {"order_number": "1"}) == timed_out  # run to its end
    assert asyncio.run(arun_through_dspy(tool, {"order_number": "1"})) == timed_out


def test_an_async_tool_on_the_sync_path_follows_dspy_s_rule() -> None:
    arguments = {"order_number": "1"}
    tool = dspy_tool(adapter_tools.always_overloaded, retries=0)
    without = run_through_dspy(tool, arguments)
    assert not without.is_error
    assert without.text.startswith("Execution error in always_overloaded: \nTraceback")
    assert "please use `acall` instead" in without.text
    with dspy.context(allow_tool_async_sync_conversion=True):
        converted = run_through_dspy(tool, arguments)
    expected = nucleo.run_tool(adapter_tools.always_overloaded, arguments, retries=0).text
    assert converted == DSPyReceived(is_error=True, text=expected)


@pytest.mark.nucleo(expect_leaks=True)
def test_code_calling_the_tool_tells_a_failure_by_its_type() -> None:
    tool = dspy_tool(adapter_tools.leaky)
    for output in (tool(order_number="1"), asyncio.run(tool.acall(order_number="1"))):
        assert isinstance(output, ToolFailureText)
        assert isinstance(output.exception, nucleo.SystemException)
        assert output == nucleo.run_tool(adapter_tools.leaky, {"order_number": "1"}).text
    assert not isinstance(dspy_tool(adapter_tools.order_dict)(order_number="1"), ToolFailureText)


class _Seen(BaseCallback):
    def __init__(self) -> None:
        self.outputs: list[Any] = []

    def on_tool_end(self, call_id: str, outputs: Any, exception: Exception | None = None) -> None:
        self.outputs.append((outputs, exception))


@pytest.mark.nucleo(expect_leaks=True)
def test_dspy_s_callbacks_see_each_call_and_its_text() -> None:
    seen = _Seen()
    with dspy.context(callbacks=[seen]):
        received = run_through_dspy(dspy_tool(adapter_tools.leaky), {"order_number": "1"})
    # The tool's call, then ReAct's own finish: both through DSPy's callbacks.
    assert seen.outputs == [(received.text, None), ("Completed.", None)]


@pytest.mark.nucleo(expect_leaks=True)
def test_the_decorator_names_the_tool_and_its_failure_text() -> None:
    @dspy_tool(name="fetch")
    def get_order(order_number: str) -> str:
        """Fetch one order."""
        raise KeyError(order_number)  # a bug

    assert get_order.name == "fetch"
    received = run_through_dspy(get_order, {"order_number": "1"})
    assert received.text.startswith("A system error occurred in fetch.")


def test_no_response_cache_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # DSPy builds its cache (on disk, under DSPY_CACHEDIR) the first time dspy.cache is read.
    monkeypatch.setenv("DSPY_CACHEDIR", str(tmp_path / "cache"))
    if "cache" in vars(dspy):  # built by an earlier test: build it anew if read (not hasattr,
        monkeypatch.delattr(dspy, "cache")  # which would build it)
    received = run_through_dspy(dspy_tool(adapter_tools.order_dict), {"order_number": "1"})
    assert not received.is_error
    assert "cache" not in vars(dspy)
    assert not (tmp_path / "cache").exists()


# --- what DSPy sends without the adapter -------------------------------------------------------


@pytest.mark.nucleo(expect_leaks=True)
def test_without_the_adapter_the_model_reads_the_traceback(fake_upstream: Any) -> None:
    arguments = arrange(fake_upstream, "not found")
    received = run_through_dspy(dspy.Tool(nucleo.llm_errors(adapter_tools.fetch_order)), arguments)
    assert not received.is_error  # an observation like any other
    assert received.text.startswith("Execution error in fetch_order: \nTraceback (most recent")
    assert 'File "' in received.text  # file paths and source lines
    assert received.text.endswith('{"error":"no such order"}')  # the upstream's own body
    assert received.text != expected_text(arguments)


@pytest.mark.nucleo(expect_leaks=True)
def test_without_the_adapter_a_foreign_secret_reaches_the_model() -> None:
    received = run_through_dspy(adapter_tools.leaky, {"order_number": "1"})
    assert SECRET in received.text


def test_without_the_adapter_a_refused_argument_reads_as_a_traceback() -> None:
    received = run_through_dspy(dspy.Tool(adapter_tools.fetch_order), {"order_number": 7})
    assert received.text.startswith("Execution error in fetch_order: \nTraceback")
    assert received.text.endswith(
        "ValueError: Arg order_number is invalid: 7 is not of type 'string'"
    )


def test_options_are_checked_when_the_tool_is_wrapped() -> None:
    with pytest.raises(TypeError, match="unknown option 'retry'"):
        dspy_tool(retry=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="wraps a function"):
        dspy_tool()(42)  # type: ignore[arg-type]


def test_import_pytest_nucleo_imports_no_dspy() -> None:
    code = (
        "import sys, pytest_nucleo, pytest_nucleo.adapters\n"
        "print(sorted(m for m in ('dspy', 'pytest_nucleo.adapters.dspy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
