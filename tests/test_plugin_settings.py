"""The plugin's settings: each command-line option is also an ini key (the option winning), and
the network guard's scope and allow-list, through pytester.

A test here that lets a lookup or connection through puts a stand-in below the guard, so
nothing leaves the machine: what passed the guard is recorded and gets an OSError.
"""

from __future__ import annotations

import json

import pytest

from pytest_nucleo.testing._fake import _guard as _network
from pytest_nucleo.testing._fake import _names

OTHER_TESTS = """
import socket

import pytest
from pytest_nucleo.testing import FakeUpstream


def test_a_database_that_is_down():
    # A project's own test, not using the plugin, that expects the socket call to fail.
    with pytest.raises(OSError, match="stand-in"):
        socket.create_connection(("db.internal.example", 5432), timeout=1)


def test_a_tool_test(fake_upstream):
    try:
        socket.create_connection(("db.internal.example", 5432), timeout=1)
    except OSError:
        pass


@pytest.mark.nucleo(real_waits=False)
def test_a_marked_test():
    try:
        socket.getaddrinfo("db.internal.example", 5432)
    except OSError:
        pass


def test_a_fake_opened_by_hand():
    with FakeUpstream(assert_all_called=False):
        try:
            socket.getaddrinfo("db.internal.example", 5432)
        except OSError:
            pass
"""


def test_by_default_only_the_tests_that_use_the_plugin_are_guarded(
    pytester: pytest.Pytester, below_guard: list[str]
) -> None:
    pytester.makepyfile(test_other=OTHER_TESTS)
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=3)
    for test in ("test_a_tool_test", "test_a_marked_test", "test_a_fake_opened_by_hand"):
        result.stdout.fnmatch_lines([f"FAILED test_other.py::{test}*"])  # pytest 9 adds " - why"
    result.stdout.fnmatch_lines(["*blocked a DNS lookup of db.internal.example:5432*"])
    assert below_guard == ["getaddrinfo db.internal.example"]  # the plain test's, only


@pytest.mark.parametrize(
    ("ini", "options", "guarded"),
    [
        ("all", (), True),
        (None, ("--nucleo-guard=all",), True),
        ("all", ("--nucleo-guard=plugin-tests",), False),  # the option wins
        ("off", (), False),
        ("off", ("--nucleo-guard=all",), True),
    ],
)
def test_the_guard_s_scope_is_an_option_and_an_ini_key(
    pytester: pytest.Pytester,
    below_guard: list[str],
    ini: str | None,
    options: tuple[str, ...],
    guarded: bool,
) -> None:
    if ini is not None:
        pytester.makeini(f"[pytest]\nnucleo_guard = {ini}\n")
    pytester.makepyfile(test_other=OTHER_TESTS)
    result = pytester.runpytest("-p", "no:randomly", *options)
    outcomes = result.parseoutcomes()
    plain_failed = "FAILED test_other.py::test_a_database_that_is_down" in result.stdout.str()
    assert plain_failed == guarded, result.stdout.str()
    if ini == "off" and not options:
        # Off: nothing is guarded, not even a test with fake_upstream.
        assert outcomes == {"passed": 4}
        assert len(below_guard) == 4


def test_a_bad_scope_in_the_ini_file_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nnucleo_guard = everything\n")
    pytester.makepyfile(test_it="def test_it(fake_upstream):\n    pass\n")
    result = pytester.runpytest()
    result.stderr.fnmatch_lines(
        [
            "ERROR: the ini key nucleo_guard = 'everything' is not one of plugin-tests, all, "
            "off: set one of them, or give --nucleo-guard"
        ]
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR


ALLOWED = """
import socket


def test_allowed(fake_upstream):
    for host in ("db.internal.example", "cache.internal.example", "10.1.2.3", "192.0.2.7"):
        try:
            socket.getaddrinfo(host, 5432)
        except OSError:
            pass
"""


def test_allowed_hosts_pass_a_guarded_test(
    pytester: pytest.Pytester, below_guard: list[str]
) -> None:
    pytester.makepyfile(test_allowed=ALLOWED)
    result = pytester.runpytest("--nucleo-allow-hosts=*.internal.example, 10.0.0.0/8,192.0.2.7")
    result.assert_outcomes(passed=1)
    assert below_guard == [
        "getaddrinfo db.internal.example",
        "getaddrinfo cache.internal.example",
        "getaddrinfo 10.1.2.3",
        "getaddrinfo 192.0.2.7",
    ]


def test_allowed_hosts_are_an_ini_key_the_option_replaces(
    pytester: pytest.Pytester, below_guard: list[str]
) -> None:
    pytester.makepyprojecttoml(
        """
        [tool.pytest.ini_options]
        nucleo_allow_hosts = ["db.internal.example", "10.0.0.0/8", "192.0.2.7"]
        """
    )
    pytester.makepyfile(test_allowed=ALLOWED)
    from_ini = pytester.runpytest()
    from_ini.stdout.fnmatch_lines(["*blocked a DNS lookup of cache.internal.example:5432*"])
    assert below_guard == [
        "getaddrinfo db.internal.example",
        "getaddrinfo 10.1.2.3",
        "getaddrinfo 192.0.2.7",
    ]
    below_guard.clear()
    from_option = pytester.runpytest("--nucleo-allow-hosts=cache.internal.example")
    from_option.stdout.fnmatch_lines(["*blocked a DNS lookup of db.internal.example:5432*"])
    assert below_guard == ["getaddrinfo cache.internal.example"]


def test_the_marker_allows_hosts_for_one_test(
    pytester: pytest.Pytester, below_guard: list[str]
) -> None:
    pytester.makepyfile(
        test_marked="""
        import socket
        import pytest

        def lookup(host):
            try:
                socket.getaddrinfo(host, 5432)
            except OSError:
                pass

        @pytest.mark.nucleo(allow_hosts=["*.internal.example"])
        def test_marked():
            lookup("db.internal.example")

        @pytest.mark.nucleo(real_waits=False)
        def test_not_marked():
            lookup("db.internal.example")

        @pytest.mark.nucleo(allow_hosts="db.internal.example")
        def test_a_string():
            pass

        @pytest.mark.nucleo(allow_hosts=["db internal"])
        def test_a_bad_entry():
            pass
        """
    )
    result = pytester.runpytest("-p", "no:randomly", "--nucleo-allow-hosts=10.0.0.0/8")
    result.assert_outcomes(passed=1, failed=1, errors=2)
    result.stdout.fnmatch_lines(
        [
            "*@pytest.mark.nucleo(allow_hosts=...) takes a list of host names, patterns, "
            "addresses or networks, such as [[]'db.internal.example', '10.0.0.0/8'[]]; got "
            "'db.internal.example'*",
            "*@pytest.mark.nucleo(allow_hosts=...): 'db internal' is neither a host name*",
        ],
        consecutive=False,
    )
    result.stdout.fnmatch_lines(["FAILED test_marked.py::test_not_marked*"])
    assert below_guard == ["getaddrinfo db.internal.example"]


def test_an_allowed_name_s_addresses_are_allowed_too() -> None:
    allowed = _network.AllowList(["db.internal.example"])
    allowed.note("db.internal.example", ["10.9.8.7"])
    allowed.note("other.example", ["10.9.8.6"])
    assert allowed.allows("10.9.8.7")
    assert not allowed.allows("10.9.8.6")


def test_a_bad_allowed_host_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it="def test_it():\n    pass\n")
    result = pytester.runpytest("--nucleo-allow-hosts=db.internal/5432")
    result.stderr.fnmatch_lines(
        [
            "ERROR: --nucleo-allow-hosts: 'db.internal/5432' is neither a host name, a name "
            "pattern such as '*.internal', an address nor a network such as '10.0.0.0/8'"
        ]
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR


LEAK = """
import pytest_nucleo as nucleo


def test_a_leak_the_test_does_not_see():
    assert nucleo.run_tool(lambda: {}["x"], {}).is_error
"""


def test_strict_is_an_ini_key_the_option_turns_off(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nnucleo_strict = true\n")
    pytester.makepyfile(test_books=LEAK)
    strict = pytester.runpytest()
    assert strict.ret == 1
    strict.stdout.fnmatch_lines(["*--nucleo-strict failed the run:*"])
    lenient = pytester.runpytest("--no-nucleo-strict")
    assert lenient.ret == 0
    assert "--nucleo-strict failed the run" not in lenient.stdout.str()


def test_the_report_path_is_an_ini_key_relative_to_the_ini_file(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini("[pytest]\nnucleo_report = reports/nucleo\n")
    pytester.makepyfile(test_books=LEAK)
    (pytester.path / "reports").mkdir()
    sub = pytester.path / "sub"
    sub.mkdir()
    monkeypatch.chdir(sub)  # run from a subfolder: the path is the ini file's, not the cwd's
    from_ini = pytester.runpytest(str(pytester.path))
    assert from_ini.ret == 0
    assert (pytester.path / "reports" / "nucleo.json").exists(), from_ini.stdout.str()
    assert not (sub / "reports").exists()
    by_option = pytester.runpytest(str(pytester.path), "--nucleo-report=elsewhere")
    assert by_option.ret == 0
    rows = json.loads((sub / "elsewhere.json").read_text())  # an option's path is the cwd's
    assert rows == json.loads((pytester.path / "reports" / "nucleo.json").read_text())
    assert rows["observations"][0]["leaked"]


def test_the_matrix_setting_is_an_ini_key_the_option_wins_over(pytester: pytest.Pytester) -> None:
    from test_contract import FETCH_SCENARIOS, contract

    contract(pytester, "Good", "get_order", "fetch")
    pytester.makeini("[pytest]\nnucleo_matrix = all\n")
    pytester.runpytest("--snapshot-update").assert_outcomes(passed=FETCH_SCENARIOS)
    every = pytester.runpytest()
    every.stdout.fnmatch_lines(["*TestGood.get_order*status-404*ok*"])
    problems = pytester.runpytest("--nucleo-matrix=problems")
    assert "status-404" not in problems.stdout.str()
    problems.stdout.fnmatch_lines(["*(every row: -v or*"])


def test_a_bad_matrix_setting_in_the_ini_file_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nnucleo_matrix = some\n")
    result = pytester.runpytest()
    result.stderr.fnmatch_lines(["ERROR: the ini key nucleo_matrix = 'some' is not one of *"])


@pytest.mark.parametrize("how", ["ini", "option"])
def test_the_shared_address_space_is_a_setting(
    pytester: pytest.Pytester, below_guard: list[str], how: str
) -> None:
    pytester.makepyfile(
        test_shared="""
        import ipaddress
        import socket

        import httpx

        def test_the_address_is_shared_and_refused(fake_upstream):
            fake_upstream.get("https://docs.example/page").respond(200, text="hello")
            address = socket.gethostbyname("docs.example")
            assert ipaddress.ip_address(address) in ipaddress.ip_network("100.64.0.0/10")
            assert not ipaddress.ip_address(address).is_global  # a public-only check refuses it
            assert httpx.get("https://docs.example/page").text == "hello"
            try:
                socket.create_connection((address, 443), timeout=1)
            except ConnectionRefusedError:
                pass

        def test_the_public_block_is_nobody_s_concern_then(fake_upstream):
            fake_upstream.get("https://docs.example/page").respond(200)
            httpx.get("https://docs.example/page")
            try:
                socket.create_connection(("192.31.196.7", 443), timeout=1)
            except OSError:
                pass
        """
    )
    if how == "ini":
        pytester.makeini("[pytest]\nnucleo_fake_addresses = shared\n")
        result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider")
    else:
        pytester.makeini("[pytest]\nnucleo_fake_addresses = public\n")  # the option wins
        result = pytester.runpytest(
            "-p", "no:randomly", "-p", "no:cacheprovider", "--nucleo-fake-addresses=shared"
        )
    # The first test's connection is refused as the fake's; the second one's is an ordinary
    # address of a guarded test, refused by the guard, not as the fake's.
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*blocked a connection to 100.*:443 by the code under test*The fake upstream gave "
            "this address to docs.example*",
            "*blocked a connection to 192.31.196.7:443 by the code under test*",
        ]
    )
    assert "gave this address to a host of a fake upstream" not in result.stdout.str()
    assert below_guard == []
    assert _names.fake_network() == _names.PUBLIC_NETWORK  # the inner run put its choice back


def test_a_bad_setting_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nnucleo_fake_addresses = private\n")
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest("-p", "no:randomly")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: the ini key nucleo_fake_addresses = 'private' is not one of public, shared: "
            "set one of them, or give --nucleo-fake-addresses"
        ]
    )
    with pytest.raises(ValueError, match="one of public, shared; got 'private'"):
        _names.use_addresses("private")
