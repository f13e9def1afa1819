"""ToolContract and the report, through pytester: a tool that behaves passes the whole matrix;
tools that break the contract one way each fail with a message naming the broken rule."""

from __future__ import annotations

import importlib.metadata
import json
import logging
from pathlib import Path

import pytest

from tests._doc_blocks import ALL
from tests._nested_runs import UNUSED_PLUGINS

TOOLS = (Path(__file__).parent / "sample_tools.py").read_text()

CONTRACTS = """
from pytest_nucleo.testing import ToolContract, respond
import tools

ORDER = respond(200, json={{"number": "00000042", "status": "shipped"}})


class Test{name}(ToolContract):
    tool = tools.{tool}
    kind = "{kind}"
    service_name = "Shop"
    endpoint = "{endpoint}"
    valid_call = {call}
    valid_response = ORDER
    secrets = (tools.API_KEY,)
"""

FETCH = ("GET https://shop.example/orders/00000042", {"number": "00000042"})
SEARCH = ("GET https://shop.example/orders", {"query": "shoes"})


def contract(pytester: pytest.Pytester, name: str, tool: str, kind: str) -> None:
    endpoint, call = FETCH if kind == "fetch" else SEARCH
    pytester.makepyfile(tools=TOOLS)
    pytester.makepyfile(
        **{
            f"test_{tool}": CONTRACTS.format(
                name=name, tool=tool, kind=kind, endpoint=endpoint, call=repr(call)
            )
        }
    )


FETCH_SCENARIOS = 21
SEARCH_SCENARIOS = 22


@pytest.mark.parametrize(
    ("tool", "kind", "count"),
    [
        ("get_order", "fetch", FETCH_SCENARIOS),
        ("aget_order", "fetch", FETCH_SCENARIOS),
        ("search_orders", "search", SEARCH_SCENARIOS),
    ],
)
def test_a_tool_that_behaves_passes_the_whole_matrix(
    pytester: pytest.Pytester, tool: str, kind: str, count: int
) -> None:
    contract(pytester, "Good", tool, kind)
    first = pytester.runpytest("--snapshot-update", "-v")
    first.assert_outcomes(passed=count)
    first.stdout.fnmatch_lines(
        [
            "*TestGood::test_contract?status-404? PASSED*",
            "*TestGood::test_contract?read-timeout? PASSED*",
            "*nucleo failure matrix*",
            f"*1 tool(s), {count} scenario(s): {count} ok, 0 broken, 0 not applicable*",
        ]
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=count)
    snapshots = (pytester.path / "__snapshots__" / f"test_{tool}.txt").read_text()
    assert "# name: TestGood.test_contract[status-503]" in snapshots
    assert "test-key-4711" not in snapshots


@pytest.mark.parametrize(
    ("tool", "kind", "scenario", "rule"),
    [
        ("leaks_key_error", "fetch", "status-500", "the tool leaked KeyError: 'order'"),
        (
            "outage_for_bad_id",
            "fetch",
            "status-404",
            "ExternalServiceException is uncorrectable, but the contract expects"
            " ResourceNotFoundException (correctable): a fetch by an id that names nothing"
            " (404) is a ResourceNotFoundException, correctable, or the InvalidInputException"
            " about that parameter that wrap_with_context makes. The model read:",
        ),
        (
            "search_404_is_error",
            "search",
            "status-404",
            "the tool failed with ResourceNotFoundException where the contract expects an empty"
            " result: a search that found nothing returns an empty result, not a failure (404"
            " here means no results). The model read:",
        ),
        ("key_in_text", "fetch", "status-500", "it holds 1 planted secret(s) (test...)"),
        ("html_in_text", "fetch", "html-error-page", "it holds markup ('<!doctype')"),
        (
            "no_service_in_text",
            "fetch",
            "status-500",
            "the model text does not name the service 'Shop': the text of every upstream"
            " failure names the service",
        ),
        (
            "throttle_as_outage",
            "fetch",
            "throttle-429",
            "the tool failed with ExternalServiceException, where the contract expects"
            " UpstreamThrottleException (uncorrectable): a service that is limiting requests",
        ),
        (
            "throttle_without_wait",
            "fetch",
            "throttle-429-retry-after",
            "the server asked to wait 30 seconds (Retry-After), but the"
            " UpstreamThrottleException carries no retry_after",
        ),
        (
            "swallows_timeout",
            "search",
            "read-timeout",
            "the tool returned [] where the contract expects ExternalServiceException"
            " (uncorrectable): a service that failed or could not be reached is an"
            " ExternalServiceException, uncorrectable",
        ),
    ],
)
def test_each_broken_rule_is_named(
    pytester: pytest.Pytester, tool: str, kind: str, scenario: str, rule: str
) -> None:
    contract(pytester, "Broken", tool, kind)
    result = pytester.runpytest("--snapshot-update", "-p", "no:randomly")
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) >= 1
    result.stdout.fnmatch_lines(
        [
            f"*TestBroken.test_contract[[]{scenario}[]]*",
            f"*broke the failure contract in scenario*{scenario}*",
            f"*{rule}*",
        ]
    )


def test_not_applicable_needs_a_reason_and_is_reported(pytester: pytest.Pytester) -> None:
    contract(pytester, "Good", "get_order", "fetch")
    pytester.makepyfile(
        test_get_order=CONTRACTS.format(
            name="Good", tool="get_order", kind="fetch", endpoint=FETCH[0], call=repr(FETCH[1])
        )
        + '    not_applicable = {"status-413": "the tool sends no request body"}\n'
    )
    result = pytester.runpytest("--snapshot-update", "--nucleo-report=out/nucleo", "-rs")
    result.assert_outcomes(passed=FETCH_SCENARIOS - 1, skipped=1)
    result.stdout.fnmatch_lines(["*not applicable: the tool sends no request body*"])
    report = json.loads((pytester.path / "out" / "nucleo.json").read_text())
    na = [o for o in report["observations"] if o["not_applicable"]]
    assert na == [
        {
            "tool": "TestGood.get_order",
            "scenario": "status-413",
            "expected": "InvalidInputException (correctable)",
            "failed": False,
            "class": None,
            "correctable": None,
            "leaked": False,
            "unclean": [],
            "rules": [],
            "violation": None,
            "snapshot": "none",
            "not_applicable": "the tool sends no request body",
            "text": None,
            "differs": None,
            "verdict": "not applicable",
        }
    ]
    markdown = (pytester.path / "out" / "nucleo.md").read_text()
    assert "| TestGood.get_order | status-413 | InvalidInputException (correctable) |" in markdown
    assert "n/a: the tool sends no request body" in markdown


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('    not_applicable = {"status-413": ""}\n', "needs a reason"),
        (
            '    not_applicable = {"status-999": "x"}\n',
            "names 'status-999', which is not a scenario",
        ),
        (
            "    def test_contract(self):\n        pass\n",
            "overrides the generated test_contract without saying why",
        ),
        ("    test_contract = None\n", "overrides the generated test_contract without saying why"),
        (
            "\n\nclass Weak:\n    def test_contract(self):\n        pass\n\n\n"
            "class TestMixed(Weak, TestGood):\n    pass\n",
            "overrides the generated test_contract (in Weak) without saying why",
        ),
    ],
)
def test_weakening_the_contract_is_refused(
    pytester: pytest.Pytester, extra: str, message: str
) -> None:
    contract(pytester, "Good", "get_order", "fetch")
    pytester.makepyfile(
        test_get_order=CONTRACTS.format(
            name="Good", tool="get_order", kind="fetch", endpoint=FETCH[0], call=repr(FETCH[1])
        )
        + extra
    )
    result = pytester.runpytest()
    result.stdout.fnmatch_lines([f"*TypeError: Test*{message}*"])
    assert result.ret != 0


def test_an_override_with_a_reason_is_allowed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(tools=TOOLS)
    pytester.makepyfile(
        """
        from pytest_nucleo.testing import ToolContract, overrides_contract
        import tools

        class TestReplaced(ToolContract):
            tool = tools.get_order
            kind = "fetch"
            service_name = "Shop"
            endpoint = "GET https://shop.example/orders/1"
            valid_call = {"number": "1"}

            @overrides_contract("this tool is checked by an end-to-end suite instead")
            def test_contract(self):
                pass
        """
    )
    pytester.runpytest().assert_outcomes(passed=1)


def test_a_contract_without_its_tool_is_an_abstract_base(pytester: pytest.Pytester) -> None:
    # A shared base, as langchain-tests' are: nothing to check until a subclass names a tool.
    pytester.makepyfile(
        """
        from pytest_nucleo.testing import ToolContract

        class TestNothing(ToolContract):
            kind = "fetch"
        """
    )
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.no_fnmatch_line("*is missing*")


def test_strict_mode_and_step_summary(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = pytester.path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    contract(pytester, "Broken", "leaks_key_error", "fetch")
    result = pytester.runpytest("--snapshot-update", "--nucleo-strict")
    result.stdout.fnmatch_lines(
        [
            "*--nucleo-strict failed the run:*",
            "*TestBroken.leaks_key_error [[]status-500[]]: leaked KeyError*",
        ]
    )
    assert result.ret == 1
    assert "## pytest-nucleo failure matrix" in summary.read_text()


def test_strict_mode_fails_a_run_whose_tests_passed(pytester: pytest.Pytester) -> None:
    # The test passes (the result is an error, as it asserts), but the tool leaked a KeyError.
    pytester.makepyfile(
        """
        from pytest_nucleo import run_tool, InvalidInputException

        def get_order(number):
            return {}[number]

        def validate(number):
            raise InvalidInputException("number", number, "must be 8 digits")

        def test_leak_through_the_runner():
            assert run_tool(get_order, {"number": "1"}).is_error

        def test_a_clean_failure_is_fine():
            assert run_tool(validate, {"number": "1"}).is_error
        """
    )
    assert pytester.runpytest().ret == 0
    strict = pytester.runpytest("--nucleo-strict")
    strict.assert_outcomes(passed=2)
    strict.stdout.fnmatch_lines(
        [
            "*--nucleo-strict failed the run:*",
            "*get_order [[]test_strict_mode_fails_a_run_whose_tests_passed.py::"
            "test_leak_through_the_runner[]]: leaked KeyError*",
        ]
    )
    assert "test_a_clean_failure_is_fine" not in strict.stdout.str()
    assert strict.ret == 1


def test_expected_leaks_are_left_out_but_unclean_texts_are_not(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        import pytest_nucleo as nucleo
        from pytest_nucleo import run_tool

        def get_order(number):
            return {}[number]

        def sloppy_order(number):
            failure = nucleo.ExternalServiceException("Shop", "down")
            failure.llm_message = "Shop failed: <Client object at 0x7f3a2b1c4d50>"
            raise failure

        @pytest.mark.nucleo(expect_leaks=True)
        def test_the_runner_turns_a_bug_into_a_system_error():
            assert run_tool(get_order, {"number": "1"}).is_error

        @pytest.mark.nucleo(expect_leaks=True)
        def test_an_unclean_text_is_still_seen():
            assert run_tool(sloppy_order, {"number": "1"}).is_error
        """
    )
    only_the_leak = pytester.runpytest("--nucleo-strict", "-k", "bug")
    only_the_leak.assert_outcomes(passed=1)
    assert "nucleo failure matrix" not in only_the_leak.stdout.str()
    assert only_the_leak.ret == 0

    both = pytester.runpytest("--nucleo-strict", "--nucleo-report=report")
    both.assert_outcomes(passed=2)
    report = json.loads((pytester.path / "report.json").read_text())
    seen = [(o["tool"], o["leaked"], o["unclean"]) for o in report["observations"]]
    assert seen == [
        (
            "sloppy_order",
            False,
            ["it holds an object repr or memory address ('<Client object at 0x7f3a2b1c4d50>')"],
        )
    ]
    both.stdout.fnmatch_lines(["*sloppy_order [[]*test_an_unclean_text_is_still_seen[]]: unclean*"])
    assert both.ret == 1


def test_nucleo_marks_merge_the_closest_winning_per_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        from pytest_nucleo import run_tool

        def get_order(number):
            return {}[number]

        @pytest.mark.nucleo(expect_leaks=True)
        class TestOrders:
            @pytest.mark.nucleo(assert_all_called=False)
            def test_class_mark_still_applies(self, fake_upstream):
                fake_upstream.get("https://shop.example/never").respond(200)
                assert run_tool(get_order, {"number": "1"}).is_error

        @pytest.mark.parametrize(
            "number",
            [pytest.param("2", marks=pytest.mark.nucleo(expect_leaks=False)), "3"],
        )
        @pytest.mark.nucleo(expect_leaks=True)
        def test_parameter_mark_wins(number):
            assert run_tool(get_order, {"number": number}).is_error
        """
    )
    result = pytester.runpytest("--nucleo-strict", "--nucleo-report=report")
    result.assert_outcomes(passed=3)
    report = json.loads((pytester.path / "report.json").read_text())
    assert [o["scenario"] for o in report["observations"]] == [
        "test_nucleo_marks_merge_the_closest_winning_per_option.py::test_parameter_mark_wins[2]"
    ]


def test_a_session_configured_inside_a_test_hides_nothing(pytester: pytest.Pytester) -> None:
    # pytester.parseconfigure() leaves an inner session configured, not running, until the
    # test ends: the running test's leaks are still the outer session's to report.
    pytester.makepyfile(
        test_outer="""
        from pytest_nucleo import run_tool

        pytest_plugins = ["pytester"]

        def test_leaks_after_configuring_a_session(pytester):
            pytester.parseconfigure()
            assert run_tool(lambda: {}["x"], {}).is_error
        """
    )
    result = pytester.runpytest("--nucleo-strict")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*test_leaks_after_configuring_a_session[]]: leaked KeyError*"])
    assert result.ret == 1


def test_a_session_inside_a_test_reports_its_own_leaks_only(pytester: pytest.Pytester) -> None:
    # Only the innermost running session records what the runner logs: a plugin's own tests
    # that run leaking tools in pytester sessions do not fail their own strict run.
    pytester.makepyfile(
        test_outer="""
        pytest_plugins = ["pytester"]

        def test_runs_a_session(pytester):
            pytester.makepyfile(
                "from pytest_nucleo import run_tool\\n"
                "def test_leak():\\n"
                "    assert run_tool(lambda: {}['x'], {}).is_error\\n"
            )
            inner = pytester.runpytest("--nucleo-strict")
            inner.assert_outcomes(passed=1)
            assert inner.ret == 1
        """
    )
    result = pytester.runpytest("--nucleo-strict")
    result.assert_outcomes(passed=1)
    assert "nucleo failure matrix" not in result.stdout.str()
    assert result.ret == 0


def test_strict_mode_fails_when_it_cannot_see_the_runner(
    pytester: pytest.Pytester, request: pytest.FixtureRequest
) -> None:
    # The runs below share this process's loggers: restore the level the conftest sets
    # (with setLevel, which also clears the loggers' cached answers).
    package_logger = logging.getLogger("pytest_nucleo")
    request.addfinalizer(lambda level=package_logger.level: package_logger.setLevel(level))
    pytester.makeconftest(
        """
        import logging

        logging.getLogger("pytest_nucleo").setLevel(logging.CRITICAL)  # an app's quiet setting
        """
    )
    pytester.makepyfile(
        """
        from pytest_nucleo import run_tool

        def test_leak():
            assert run_tool(lambda: {}["x"], {}).is_error
        """
    )
    assert pytester.runpytest().ret == 0
    strict = pytester.runpytest("--nucleo-strict")
    strict.assert_outcomes(passed=1)
    strict.stdout.fnmatch_lines(
        [
            "*--nucleo-strict failed the run:*",
            "*the logger 'pytest_nucleo.runner' emits no WARNING records (level CRITICAL, or "
            "disabled), so the failures of run_tool*cannot be seen*",
        ]
    )
    assert strict.ret == 1


def test_strict_mode_never_hides_an_interrupted_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        from pytest_nucleo import run_tool

        def test_leak_then_stop():
            assert run_tool(lambda: {}["x"], {}).is_error
            pytest.exit("stopping the run", returncode=3)
        """
    )
    assert pytester.runpytest("--nucleo-strict").ret == 3


def test_the_matrix_shows_each_row_and_a_changed_text(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # wide enough for whole cells
    contract(pytester, "Good", "get_order", "fetch")
    written = pytester.runpytest("--snapshot-update", "--nucleo-matrix=all")
    written.stdout.fnmatch_lines(
        [
            "*TestGood.get_order*status-404*ResourceNotFoundException (correctable)"
            "*ResourceNotFoundException (correctable)*written*ok*"
        ]
    )
    snapshots = pytester.path / "__snapshots__" / "test_get_order.txt"
    text = snapshots.read_text()
    old = "No order was found"
    assert old in text
    snapshots.write_text(text.replace(old, "No order exists", 1))
    changed = pytester.runpytest()
    changed.assert_outcomes(passed=FETCH_SCENARIOS - 1, failed=1)
    changed.stdout.fnmatch_lines(
        [
            "*TestGood.get_order*status-404*ResourceNotFoundException (correctable)"
            "*ResourceNotFoundException (correctable)*differs*changed*",
            f"*1 tool(s), {FETCH_SCENARIOS} scenario(s): {FETCH_SCENARIOS - 1} ok, 0 broken, "
            "0 not applicable, 1 with a changed text*",
        ]
    )
    assert "matches" not in changed.stdout.str()  # by default, only the rows that need a look


@pytest.mark.slow
def test_report_merges_xdist_workers(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    contract(pytester, "Good", "get_order", "fetch")
    pytester.makepyfile(
        test_leak="""
        from pytest_nucleo import run_tool

        def test_leak_through_the_runner():
            assert run_tool(lambda: {}["x"], {}).is_error
        """
    )
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=FETCH_SCENARIOS + 1)
    summary = pytester.path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    # Each worker is a new process.
    result = pytester.runpytest(
        "-n", "2", *UNUSED_PLUGINS, "--nucleo-report=report", "--nucleo-strict"
    )
    result.assert_outcomes(passed=FETCH_SCENARIOS + 1)
    result.stdout.fnmatch_lines(
        [
            f"*2 tool(s), {FETCH_SCENARIOS + 1} scenario(s)*",
            "*--nucleo-strict failed the run:*",
            "*test_leak.py::test_leak_through_the_runner[]]: leaked KeyError*",
        ]
    )
    assert result.ret == 1  # the leak was seen by a worker, and gated on by the controller
    report = json.loads((pytester.path / "report.json").read_text())
    assert len(report["observations"]) == FETCH_SCENARIOS + 1
    assert {o["snapshot"] for o in report["observations"]} == {"matches", "none"}
    assert summary.read_text().count("## pytest-nucleo failure matrix") == 1


def test_no_summary_without_contracts(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    assert True\n")
    result = pytester.runpytest()
    assert "nucleo failure matrix" not in result.stdout.str()


def test_alongside_syrupys_unused_snapshot_detection(pytester: pytest.Pytester) -> None:
    contract(pytester, "Good", "get_order", "fetch")
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=FETCH_SCENARIOS)
    source = CONTRACTS.format(
        name="Good", tool="get_order", kind="fetch", endpoint=FETCH[0], call=repr(FETCH[1])
    )
    # A scenario declared not applicable is skipped: syrupy keeps its snapshot, the run passes.
    pytester.makepyfile(
        test_get_order=source + '    not_applicable = {"status-413": "no body is sent"}\n'
    )
    skipped = pytester.runpytest()
    skipped.assert_outcomes(passed=FETCH_SCENARIOS - 1, skipped=1)
    assert skipped.ret == 0
    # A contract removed altogether leaves its snapshots unused: syrupy fails the run, as usual.
    if int(importlib.metadata.version("syrupy").split(".")[0]) < 7:
        pytest.skip("syrupy before 7 does not look at a file that no longer uses snapshots")
    pytester.makepyfile(test_get_order="def test_nothing_here():\n    pass\n")
    removed = pytester.runpytest()
    removed.stdout.fnmatch_lines(["*snapshot* unused*"])
    assert removed.ret == 1


def test_a_renamed_service_shows_up(pytester: pytest.Pytester) -> None:
    contract(pytester, "Renamed", "get_order", "fetch")
    test_file = pytester.path / "test_get_order.py"
    test_file.write_text(test_file.read_text().replace('"Shop"', '"Store"'))
    result = pytester.runpytest("--snapshot-update")
    result.stdout.fnmatch_lines(
        [
            "*the model text does not name the service 'Store': the text of every upstream"
            " failure names the service, so the model knows which one*",
            '(every rule: pytest-nucleo\'s docs, "The rules a scenario checks" '
            "(https://pytest-nucleo.github.io/pytest-nucleo/explanation/failure-contract/#the-rules-a-scenario-checks))",
        ]
    )
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] >= 10  # every uncorrectable scenario
    assert "status-404" not in "".join(
        line for line in result.outlines if line.startswith("FAILED")
    )


def test_no_message_cites_a_numbered_rule() -> None:
    import re

    package = Path(__file__).parent.parent / "pytest_nucleo"
    cited = [
        f"{path.name}: {match.group(0)}"
        for path in package.rglob("*.py")
        for match in re.finditer(r"CONTRACT\s*(?:section\s*)?\d", path.read_text())
    ]
    assert cited == []


def test_a_request_off_the_endpoint_says_to_fix_the_endpoint() -> None:
    import httpx

    from pytest_nucleo.testing import contract_matrix, respond

    def get_order(number: str) -> object:
        return httpx.get(f"https://shop.example/v2/orders/{number}").json()

    scenario = contract_matrix("fetch", valid_response=respond(200, json={}))[0]
    seen = scenario.observe(
        get_order, {"number": "1"}, endpoint="GET https://shop.example/orders/1"
    )
    # No fake_upstream line to add: a scenario's routes are the contract's, what to fix.
    assert seen.violation == (
        "no fake route for GET https://shop.example/v2/orders/1: the tool requested something "
        "other than the contract's endpoint GET https://shop.example/orders/1; set endpoint to "
        "the method and URL the valid call requests, and route the other requests it makes in "
        "extra_routes"
    )


def test_the_scenarios_of_one_endpoint_share_no_calls_and_no_problems() -> None:
    # The scenarios of an endpoint reuse one fake upstream, cleared before each: an unmatched
    # request, or the call another scenario's tool made, is never the next scenario's.
    import httpx

    from pytest_nucleo.testing import contract_matrix, respond

    matrix = {s.name: s for s in contract_matrix("fetch", valid_response=respond(200, json={}))}
    endpoint, call = FETCH

    def elsewhere(number: str) -> object:
        return httpx.get(f"https://shop.example/other/{number}").json()

    def fetch(number: str) -> object:
        return httpx.get(f"https://shop.example/orders/{number}").json()

    def idle(number: str) -> object:
        return {"number": number}

    seen = [
        matrix["valid-call"].observe(tool, call, endpoint=endpoint)
        for tool in (elsewhere, fetch, fetch, idle)
    ]
    assert [s.violation is None for s in seen] == [False, True, True, False]
    assert seen[0].violation is not None
    assert seen[0].violation.startswith("no fake route for GET https://shop.example/other/")
    assert seen[3].violation is not None
    assert seen[3].violation.startswith("the tool never called GET https://shop.example/orders/")


# The urllib example of docs/how-to/http-clients.md ("Test a tool on urllib"), as the page
# shows it: json.loads' error on a 2xx login page reached the model as a system error until
# the example said what it means, and the example failed its contract's not-json-2xx row.
URLLIB_EXAMPLE = next(
    block.code
    for block in ALL
    if block.page == "docs/how-to/http-clients.md" and "urllib.request.urlopen(f" in block.code
)
URLLIB_PARSE = """\
        body = response.read()
    # urllib has no .json() the mapping could read: a 2xx that is not JSON (a login page) is
    # the service's failure, said here.
    try:
        return json.loads(body)
    except ValueError:
        raise nucleo.ExternalServiceException(
            "Shop", "its answer was not the JSON expected"
        ) from None
"""

URLLIB_CONTRACT = """

from pytest_nucleo.testing import ToolContract, respond


class TestGetOrderOnUrllib(ToolContract):
    tool = get_order
    kind = "fetch"
    service_name = "Shop"
    endpoint = f"GET {SHOP}/orders/42"
    valid_call = {"number": "42"}
    valid_response = respond(200, json={"number": "42", "status": "shipped"})
"""


def test_the_docs_urllib_example_passes_its_whole_contract(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_urllib_example=URLLIB_EXAMPLE + URLLIB_CONTRACT)
    first = pytester.runpytest("--snapshot-update", "-p", "no:randomly")
    first.assert_outcomes(passed=FETCH_SCENARIOS + 3)
    again = pytester.runpytest("-p", "no:randomly")
    again.assert_outcomes(passed=FETCH_SCENARIOS + 3)
    snapshots = (pytester.path / "__snapshots__" / "test_urllib_example.txt").read_text()
    assert "TestGetOrderOnUrllib.test_contract[not-json-2xx]" in snapshots


def test_the_example_as_it_was_fails_only_the_not_json_row(pytester: pytest.Pytester) -> None:
    before = URLLIB_EXAMPLE.replace(URLLIB_PARSE, "        return json.loads(response.read())\n")
    assert before != URLLIB_EXAMPLE
    pytester.makepyfile(test_urllib_example=before + URLLIB_CONTRACT)
    result = pytester.runpytest("--snapshot-update", "-p", "no:randomly")
    result.assert_outcomes(passed=FETCH_SCENARIOS + 1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "FAILED test_urllib_example.py::test_a_page_that_is_not_json_is_the_services_failure*",
            "FAILED test_urllib_example.py::TestGetOrderOnUrllib::test_contract?not-json-2xx?",
        ]
    )
