"""The shared part of the framework adapters: one wrapper, through the runner."""

from __future__ import annotations

import asyncio
import inspect
import subprocess
import sys

import pytest

import pytest_nucleo as nucleo
from pytest_nucleo._runner._results import ToolResult
from pytest_nucleo.adapters._core import through_runner


class Delivered(Exception):
    def __init__(self, result: ToolResult) -> None:
        super().__init__(result.text)
        self.result = result


def deliver(result: ToolResult) -> None:
    raise Delivered(result)


def get_order(order_number: str, include_items: bool = False) -> dict[str, object]:
    """Fetch one order."""
    if order_number == "99":
        raise nucleo.ResourceNotFoundException("order", order_number)
    if order_number == "bug":
        return {}["eta"]  # type: ignore[return-value]
    return {"number": order_number, "items": include_items}


async def aget_order(order_number: str) -> dict[str, object]:
    """Fetch one order, asynchronously."""
    return get_order(order_number)


def test_the_wrapper_keeps_name_docstring_and_signature() -> None:
    wrapped = through_runner(get_order, deliver)
    assert wrapped.__name__ == "get_order"
    assert wrapped.__doc__ == "Fetch one order."
    assert inspect.signature(wrapped) == inspect.signature(get_order)
    assert not inspect.iscoroutinefunction(wrapped)
    assert inspect.iscoroutinefunction(through_runner(aget_order, deliver))


def test_the_wrapper_takes_arguments_by_position_too() -> None:
    wrapped = through_runner(get_order, deliver)
    assert wrapped("1", True) == {"number": "1", "items": True}
    assert wrapped("1", include_items=True) == {"number": "1", "items": True}
    assert asyncio.run(through_runner(aget_order, deliver)("7")) == {"number": "7", "items": False}
    with pytest.raises(TypeError, match=r"get_order\(\) takes 2 positional arguments but 3"):
        wrapped("1", True, "extra")
    with pytest.raises(TypeError, match=r"get_order\(\) got multiple values for order_number"):
        wrapped("1", order_number="2")
    # A named argument the tool does not take is the model's mistake, judged by the runner.
    with pytest.raises(Delivered) as info:
        wrapped("1", colour="red")
    failure = info.value.result.exception
    assert isinstance(failure, nucleo.InvalidInputException)
    assert failure.parameter_name == "colour"


def test_extra_positions_fill_a_star_parameter() -> None:
    def tag(first: str, *more: str) -> str:
        return ",".join((first, *more))

    assert through_runner(tag, deliver)("a", "b", "c") == "a,b,c"
    assert through_runner(tag, deliver)("a") == "a"


def test_a_callable_without_a_signature_takes_named_arguments() -> None:
    class NoSignature:
        __name__ = "no_signature"

        @property
        def __signature__(self) -> None:
            raise ValueError("no signature")

        def __call__(self, **kwargs: object) -> object:
            return kwargs

    wrapped = through_runner(NoSignature(), deliver)
    assert wrapped(q="x") == {"q": "x"}


@pytest.mark.nucleo(expect_leaks=True)
def test_success_returns_the_value_and_failures_go_to_the_framework() -> None:
    wrapped = through_runner(get_order, deliver)
    assert wrapped(order_number="1", include_items=True) == {"number": "1", "items": True}
    with pytest.raises(Delivered) as info:
        wrapped(order_number="99")
    assert info.value.result.text == info.value.result.exception.explain_to_llm()
    with pytest.raises(Delivered) as info:
        wrapped(order_number="bug")
    assert isinstance(info.value.result.exception, nucleo.SystemException)


def test_async_tools_run_through_the_async_runner() -> None:
    wrapped = through_runner(aget_order, deliver)
    assert asyncio.run(wrapped(order_number="1")) == {"number": "1", "items": False}
    with pytest.raises(Delivered, match="No order was found"):
        asyncio.run(wrapped(order_number="99"))


def test_import_pytest_nucleo_imports_no_adapter() -> None:
    code = "import sys, pytest_nucleo\nprint(any(m.startswith('pytest_nucleo.adapters') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_no_public_name_of_the_package_imports_a_framework() -> None:
    # The namespace is lazy: importing it proves little. Touch every name, the plugin, the
    # testing toolkit and the strategies, then look for the frameworks.
    code = (
        "import sys, pytest_nucleo, pytest_nucleo.plugin, pytest_nucleo.testing\n"
        "import pytest_nucleo.strategies\n"
        "for module in (pytest_nucleo, pytest_nucleo.testing):\n"
        "    for name in module.__all__:\n"
        "        getattr(module, name)\n"
        "frameworks = ('mcp', 'fastmcp', 'pydantic_ai', 'langchain_core', 'agents',\n"
        "              'anthropic', 'llama_index', 'crewai', 'strands', 'dspy', 'agno',\n"
        "              'agent_framework', 'semantic_kernel', 'pytest_nucleo.adapters')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in frameworks\n"
        "             or m.startswith(('pytest_nucleo.adapters', 'google.adk'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_schema_failures_read_like_the_runners_own_checks() -> None:
    from pytest_nucleo.adapters._core import schema_failure

    signature = inspect.signature(get_order)
    missing = schema_failure(signature, [{"type": "missing", "loc": ("order_number",)}])
    assert missing.llm_message.startswith("The required parameter 'order_number' is missing.")
    nested = schema_failure(
        signature,
        [
            {
                "type": "int_parsing",
                "loc": ("items", 0, "qty"),
                "msg": "Input should be an integer",
                "input": "x",
            }
        ],
    )
    assert (nested.parameter_name, nested.invalid_value) == ("items", "x")
    assert nested.validation_rule == "Input should be an integer (at 0.qty)"
    assert schema_failure(signature, []).parameter_name == "arguments"


def test_run_sync_refuses_a_running_loop() -> None:
    from pytest_nucleo._runner._tools import run_sync

    async def answer() -> int:
        return 42

    assert run_sync(answer, refusal="unused") == 42

    async def nested() -> None:
        run_sync(answer, refusal="use `await aharness(...)`")

    with pytest.raises(RuntimeError, match=r"use `await aharness\(\.\.\.\)`"):
        asyncio.run(nested())


@pytest.mark.nucleo(expect_leaks=True)
def test_the_wrapper_carries_the_runners_name_for_the_tool() -> None:
    @nucleo.tool(name="lookup_order")
    def fetch(order_number: str) -> object:
        return get_order(order_number)

    wrapped = through_runner(fetch, deliver)
    assert wrapped.__name__ == "lookup_order"
    with pytest.raises(Delivered, match="A system error occurred in lookup_order"):
        wrapped(order_number="bug")


# --- the runner's options, the framework's context --------------------------------------------


def test_runner_options_are_checked_when_the_tool_is_wrapped() -> None:
    from pytest_nucleo.adapters._core import check_runner_options

    with pytest.raises(TypeError, match=r"unknown option 'retry'; the runner's options are: name"):
        check_runner_options({"retry": 1}, "mcp_tool")
    with pytest.raises(TypeError, match=r"cancel must be a pytest_nucleo\.CancelToken"):
        check_runner_options({"cancel": True}, "mcp_tool")
    with pytest.raises(TypeError, match="clock must be a Clock"):
        check_runner_options({"clock": object()}, "mcp_tool")
    with pytest.raises(ValueError, match="timeout must be a finite number"):
        check_runner_options({"timeout": -1}, "mcp_tool")
    with pytest.raises(ValueError, match="text_limit must be"):
        check_runner_options({"text_limit": 0}, "mcp_tool")
    with pytest.raises(TypeError, match="limiters must be a list"):
        check_runner_options({"limiters": 3}, "mcp_tool")
    assert check_runner_options({"retries": 0, "name": "x"}, "mcp_tool") == {
        "retries": 0,
        "name": "x",
    }


def test_a_timeout_makes_the_wrapper_of_a_sync_tool_async() -> None:
    wrapped = through_runner(get_order, deliver, options={"timeout": 5})
    assert inspect.iscoroutinefunction(wrapped)
    assert asyncio.run(wrapped("1")) == {"number": "1", "items": False}


def test_the_framework_s_context_is_passed_on_and_hidden_from_the_runner() -> None:
    def with_context(ctx: dict[str, str], order_number: str) -> str:
        return f"{ctx['shop']}:{order_number}"

    wrapped = through_runner(with_context, deliver, context=True)
    assert wrapped({"shop": "tea"}, "7") == "tea:7"
    assert wrapped({"shop": "tea"}, order_number="8") == "tea:8"
    with pytest.raises(Delivered) as info:
        wrapped({"shop": "tea"}, ctx="x", order_number="8")  # the model cannot send it
    assert isinstance(info.value.result.exception, nucleo.InvalidInputException)


def test_the_runner_s_text_unless_the_framework_has_a_native_form() -> None:
    from pytest_nucleo.adapters._core import success_text, success_text_unless

    on_success = success_text_unless(lambda value: isinstance(value, bytes))
    assert through_runner(get_order, deliver, on_success=on_success)("1") == (
        '{"items": false, "number": "1"}'
    )
    assert through_runner(lambda: b"png", deliver, on_success=on_success)() == b"png"
    assert success_text({"b": 1, "a": 2}) == '{"a": 2, "b": 1}'
    assert success_text("x" * 100, text_limit=40).startswith("x" * 30 + "\n\n[")
