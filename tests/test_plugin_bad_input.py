"""What a bad value of the user's (an option, an ini key, a route, a snapshot file, a missing
extra) is told: which value, where it came from, and how to fix it; never a traceback."""

from __future__ import annotations

import pytest

PASSING = "def test_passes():\n    assert True\n"


# -- --nucleo-report ------------------------------------------------------------------------


def test_a_report_path_that_cannot_be_written_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(PASSING)
    pytester.makefile(".txt", blocker="a file, not a folder")
    result = pytester.runpytest("--nucleo-report=blocker.txt/reports/nucleo")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: --nucleo-report=blocker.txt/reports/nucleo: the report cannot be written "
            "there (*blocker.txt is a file, not a folder, *): give a path in a folder *"
        ]
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_a_report_path_that_is_a_folder_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(PASSING)
    pytester.mkdir("out.json")
    result = pytester.runpytest("--nucleo-report=out")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --nucleo-report=out: *out.json is a folder*"])


def test_an_ini_report_path_is_named_as_the_ini_key(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(PASSING)
    pytester.makefile(".txt", blocker="a file")
    pytester.makeini("[pytest]\nnucleo_report = blocker.txt/nucleo\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: the ini key nucleo_report (*blocker.txt/nucleo): *"])


def test_a_writable_report_path_still_writes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(PASSING)
    result = pytester.runpytest("--nucleo-report=reports/deep/nucleo")
    assert result.ret == pytest.ExitCode.OK
    assert (pytester.path / "reports/deep/nucleo.json").is_file()


# -- ini keys ---------------------------------------------------------------------------------


def test_a_non_boolean_nucleo_strict_is_a_usage_error_before_the_tests(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(PASSING)
    pytester.makeini("[pytest]\nnucleo_strict = maybe\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: the ini key nucleo_strict is not a boolean (invalid truth value 'maybe'): "
            "set true or false, or give --nucleo-strict or --no-nucleo-strict"
        ]
    )
    assert "passed" not in result.stdout.str()


def test_a_bad_ini_host_is_reported_under_the_ini_key(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(PASSING)
    pytester.makeini("[pytest]\nnucleo_allow_hosts =\n    db.internal\n    bad host\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: ini key nucleo_allow_hosts: 'bad host' is neither *"])
    assert "--nucleo-allow-hosts" not in result.stderr.str()


def test_a_bad_command_line_host_is_reported_under_the_flag(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(PASSING)
    result = pytester.runpytest("--nucleo-allow-hosts=[::1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: --nucleo-allow-hosts: '[::1' has an unclosed bracket: write an IPv6 *"]
    )


@pytest.mark.parametrize("entry", ["*", "*.*", "0.0.0.0/0", "::/0"])
def test_a_host_entry_that_allows_everything_is_refused(
    pytester: pytest.Pytester, entry: str
) -> None:
    pytester.makepyfile(PASSING)
    result = pytester.runpytest(f"--nucleo-allow-hosts=db.internal,{entry}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"ERROR: --nucleo-allow-hosts: {entry!r} allows every host, * --nucleo-guard=off *"]
    )


def test_a_bracketed_address_and_a_pattern_are_still_accepted(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(PASSING)
    result = pytester.runpytest("--nucleo-allow-hosts=[::1],*.internal.example,10.0.0.0/8")
    assert result.ret == pytest.ExitCode.OK


# -- fake_upstream's routes -------------------------------------------------------------------


def test_headers_that_are_not_a_mapping_of_str_say_so() -> None:
    from pytest_nucleo.testing import FakeUpstream, respond

    with pytest.raises(TypeError) as not_a_mapping:
        respond(200, headers=5)  # type: ignore[arg-type]
    assert str(not_a_mapping.value) == (
        "respond(headers=...) takes a mapping of header names to str values, such as "
        "{'Retry-After': '30'}; got int 5"
    )
    route = FakeUpstream().get("https://api.example/a")
    with pytest.raises(TypeError) as an_int:
        route.respond(429, headers={"Retry-After": 30})  # type: ignore[dict-item]
    assert str(an_int.value) == (
        "respond(headers=...): the header 'Retry-After' has the value 30 (int); give header "
        "values as str, such as {'Retry-After': '30'}"
    )


def test_a_base_url_that_is_not_an_http_url_string_says_so() -> None:
    from pytest_nucleo.testing import FakeUpstream

    with pytest.raises(TypeError, match=r"^base_url takes an absolute http\(s\) URL string .*"):
        FakeUpstream(base_url=42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^base_url 'ftp://files.example' can never match"):
        FakeUpstream(base_url="ftp://files.example")


def test_a_marker_base_url_that_is_not_a_string_fails_the_test_naming_it(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.nucleo(base_url=42)
        def test_it(fake_upstream):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*@pytest.mark.nucleo(base_url=...) takes an absolute http(s) URL string such as "
            "'https://api.example/v1', got int 42*"
        ]
    )
    assert "AttributeError" not in result.stdout.str()


def test_a_marker_base_url_that_is_not_http_fails_the_test_naming_it(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.nucleo(base_url="ftp://files.example")
        def test_it(fake_upstream):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "@pytest.mark.nucleo(base_url=...): base_url 'ftp://files.example' can "
            "never match a request: give an absolute http(s) URL such as "
            "'https://api.example/v1'"
        ]
    )
    assert "Traceback" not in result.stdout.str()


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("https://api.example:99999/a", "its port 99999 is not one of 1 to 65535"),
        ("https://api.example:0/a", "its port 0 is not one of 1 to 65535"),
        ("https://my api.example/a", "its host 'my api.example' is not a host name *"),
        ("https://[::1/a", "(Invalid port: ':1'): give an absolute http(s) URL *"),
    ],
)
def test_a_route_that_can_never_match_is_refused(url: str, why: str) -> None:
    import fnmatch

    from pytest_nucleo.testing import FakeUpstream

    with pytest.raises(ValueError, match=r"^the route URL ") as refused:
        FakeUpstream().get(url)
    expected = f"the route URL {url!r} can never match a request*{why}"
    assert fnmatch.fnmatchcase(str(refused.value), expected.replace("[", "[[]")), refused.value


@pytest.mark.parametrize(
    "url", ["https://[::1]:8080/a", "https://bücher.example/a", "https://api.example./a"]
)
def test_routes_that_can_match_are_accepted(url: str) -> None:
    from pytest_nucleo.testing import FakeUpstream

    assert FakeUpstream().get(url).url == url


def test_a_fake_still_running_is_named_where_it_was_started(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        import pytest
        from pytest_nucleo.testing import FakeUpstream

        @pytest.fixture(scope="session")
        def shared_upstream():
            with FakeUpstream(assert_all_called=False) as upstream:
                yield upstream
        """
    )
    pytester.makepyfile(
        """
        def test_first(shared_upstream):
            pass

        def test_second(fake_upstream):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=1, errors=1)
    assert "RuntimeError" not in result.stdout.str()
    assert result.stdout.str().count("fake_upstream cannot start") == 1  # not chained twice
    result.stdout.fnmatch_lines(
        [
            "*fake_upstream cannot start: another respx router is already active * The "
            "FakeUpstream started at *conftest.py:6 in shared_upstream is still running and "
            "holds the clients' fakes (a fixture of session, module or class scope, *"
        ]
    )


# -- without the [pytest] extra -----------------------------------------------------------------

_BLOCKED_RUN = """
import json
import sys

BLOCKED = set(sys.argv[1].split(","))


class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Blocked())
import pytest_nucleo.testing as testing

failures = {}
for public in testing.__all__:
    try:
        getattr(testing, public)
    except ModuleNotFoundError as error:
        failures[public] = [str(error), error.name]
try:
    from pytest_nucleo.testing import LLMTextSnapshotExtension  # noqa: F401
except ModuleNotFoundError as error:
    failures["from-import"] = [str(error), error.name]
print(json.dumps(failures))
"""


def _blocked_failures(*modules: str) -> dict[str, list[str]]:
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _BLOCKED_RUN, ",".join(modules)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    failures: dict[str, list[str]] = json.loads(done.stdout)
    return failures


def test_a_name_that_needs_syrupy_names_the_extra_that_brings_it() -> None:
    failures = _blocked_failures("syrupy")
    assert set(failures) >= {"LLMTextSnapshotExtension", "ToolContract", "from-import"}
    assert failures["from-import"] == [
        "pytest_nucleo.testing.LLMTextSnapshotExtension needs syrupy, which is not installed: "
        "pip install 'pytest-nucleo[pytest]' brings the test stack (pytest, hypothesis, respx, "
        "syrupy; the plain install is the runtime core).",
        "syrupy",
    ]


def test_every_name_the_missing_stack_breaks_names_the_extra() -> None:
    failures = _blocked_failures("syrupy", "respx", "hypothesis")
    assert len(failures) > 10  # the fakes need respx, the contract syrupy
    for public, (message, module) in failures.items():
        assert message.endswith(
            f"needs {module}, which is not installed: pip install 'pytest-nucleo[pytest]' "
            "brings the test stack (pytest, hypothesis, respx, syrupy; the plain install is "
            "the runtime core)."
        ), (public, message)


# -- snapshot files ---------------------------------------------------------------------------

SNAPSHOT_TEST = """
def test_one(llm_snapshot):
    assert "hello\\nworld" == llm_snapshot
"""
GOOD_FILE = b"# serializer version: nucleo-text-1\n# name: test_one\n  hello\n  world\n# ---\n"


def _snapshot_run(pytester: pytest.Pytester, content: bytes | None, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_texts=SNAPSHOT_TEST)
    folder = pytester.path / "__snapshots__"
    folder.mkdir(exist_ok=True)
    if content is None:
        (folder / "test_texts.txt").mkdir(exist_ok=True)
    else:
        (folder / "test_texts.txt").write_bytes(content)
    return pytester.runpytest("-p", "no:randomly", "-vv", *args)


def test_a_snapshot_file_that_is_not_utf8_is_named(pytester: pytest.Pytester) -> None:
    result = _snapshot_run(pytester, GOOD_FILE.replace(b"world", b"w\xff\xferld"))
    result.assert_outcomes(failed=1)  # the run, not collected as a doctest, ends with a summary
    result.stdout.fnmatch_lines(
        [
            "*SnapshotFileError: the snapshot file *__snapshots__/test_texts.txt is not UTF-8 "
            "text: byte 0xff on line 4 is not UTF-8 *. Fix that line, or delete the file and "
            "run pytest --snapshot-update to write it again.",
        ]
    )
    result.stdout.fnmatch_lines(["*snapshot report summary*", "*1 snapshot failed*"])
    assert "UnicodeDecodeError" not in result.stdout.str()
    updated = _snapshot_run(
        pytester, GOOD_FILE.replace(b"world", b"w\xff\xferld"), "--snapshot-update"
    )
    updated.assert_outcomes(passed=1)
    assert (pytester.path / "__snapshots__/test_texts.txt").read_bytes() == GOOD_FILE


def test_a_snapshot_file_of_another_serializer_says_so(pytester: pytest.Pytester) -> None:
    result = _snapshot_run(pytester, GOOD_FILE.replace(b"nucleo-text-1", b"1"))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*SnapshotFileError: the snapshot file *test_texts.txt was not written by "
            "llm_snapshot, or not by this version: its first line is '# serializer version: 1',"
            " where llm_snapshot writes '# serializer version: nucleo-text-1' *. Run pytest "
            "--snapshot-update to write it again, and review the diff.",
        ]
    )
    assert "unused" not in result.stdout.str()
    updated = _snapshot_run(
        pytester, GOOD_FILE.replace(b"nucleo-text-1", b"1"), "--snapshot-update"
    )
    updated.assert_outcomes(passed=1)
    assert (pytester.path / "__snapshots__/test_texts.txt").read_bytes() == GOOD_FILE


def test_a_snapshot_path_that_is_a_folder_says_so(pytester: pytest.Pytester) -> None:
    for args in ((), ("--snapshot-update",)):
        result = _snapshot_run(pytester, None, *args)
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(
            [
                "*SnapshotFileError: the snapshot file *__snapshots__/test_texts.txt is a "
                "folder: llm_snapshot stores the texts of a test module in a file of that name. "
                "Move or rename the folder, then run pytest --snapshot-update to write the file.",
            ]
        )


# -- ToolContract -------------------------------------------------------------------------------


def test_a_not_applicable_scenario_is_skipped_at_the_contract_class(
    pytester: pytest.Pytester,
) -> None:
    from test_contract import CONTRACTS, FETCH, TOOLS

    pytester.makepyfile(tools=TOOLS)
    source = CONTRACTS.format(
        name="Good", tool="get_order", kind="fetch", endpoint=FETCH[0], call=repr(FETCH[1])
    )
    pytester.makepyfile(
        test_get_order=source + '    not_applicable = {"status-413": "no body is sent"}\n'
    )
    written = (pytester.path / "test_get_order.py").read_text().splitlines()
    line = written.index("class TestGood(ToolContract):") + 1
    result = pytester.runpytest("--snapshot-update", "-rs", "-p", "no:randomly")
    result.stdout.fnmatch_lines(
        [f"SKIPPED [[]1[]] test_get_order.py:{line}: not applicable: no body is sent"]
    )
    assert "_pytest" not in result.stdout.str()


def test_a_report_that_fails_to_be_written_at_the_end_is_said_in_the_summary(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        import pathlib

        def test_takes_the_report_path():
            pathlib.Path("out").mkdir()
            pathlib.Path("out/nucleo.json").mkdir()
        """
    )
    result = pytester.runpytest("--nucleo-report=out/nucleo")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        ["the report could not be written to *out/nucleo: *Is a directory*", "*1 passed*"]
    )
    assert "Traceback" not in result.stdout.str()
