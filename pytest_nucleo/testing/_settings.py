"""The plugin's settings: its command-line options and ini keys, how each is read (the option
winning over the key), and the checks that fail a run at configure time on a bad value or a
report path that cannot be written, each with the usage error naming it; and the names of the
``nucleo`` marker's options.

The plugin (``pytest_nucleo/plugin.py``) declares them in ``pytest_addoption`` and reads them
here; like the plugin, this module pulls in neither respx, syrupy nor hypothesis, nor the
network guard's modules, which a run that never uses the guard does not load.
"""

from __future__ import annotations

from typing import Any

import pytest

GUARD_SCOPES = ("plugin-tests", "all", "off")
UPSTREAM_OPTIONS = ("assert_all_called", "base_url")
"""The ``nucleo`` marker's options that configure the ``fake_upstream`` fixture."""
MARKER_OPTIONS = (*UPSTREAM_OPTIONS, "expect_leaks", "allow_network", "allow_hosts", "real_waits")
"""Every option the ``nucleo`` marker takes."""
MARKER_FLAGS = ("assert_all_called", "expect_leaks", "allow_network", "real_waits")
"""The marker's options that take True or False."""
ADDRESS_CHOICES = ("public", "shared")
"""``_fake._names.ADDRESS_CHOICES``, the default first: spelt here too, so that declaring the
option does not import the fake's address books (tests/test_plugin_lazy.py keeps them equal)."""


def add_options(parser: pytest.Parser) -> None:
    # Every option is also an ini key (pyproject.toml's [tool.pytest.ini_options]), the option
    # winning over the key: the options default to None, so that "not given" can be told.
    group = parser.getgroup("nucleo", "pytest-nucleo failure contract")
    group.addoption(
        "--nucleo-report",
        metavar="PATH",
        default=None,
        help="write the failure matrix seen in the run to PATH.json and PATH.md "
        "(ini: nucleo_report)",
    )
    parser.addini(
        "nucleo_report",
        "write the failure matrix to this path's .json and .md (relative to the ini file)",
        default="",
    )
    group.addoption(
        "--nucleo-matrix",
        choices=("problems", "all"),
        default=None,
        help="what the failure matrix in the terminal shows: the rows that need a look and a "
        "summary (problems, the default), or every row (all; also with -v) (ini: nucleo_matrix)",
    )
    parser.addini("nucleo_matrix", "what the terminal's failure matrix shows: problems or all")
    group.addoption(
        "--nucleo-strict",
        action="store_true",
        default=None,
        help="fail the run when a tool leaked a foreign exception or produced an unclean text "
        "(ini: nucleo_strict)",
    )
    group.addoption(
        "--no-nucleo-strict",
        action="store_false",
        dest="nucleo_strict",
        default=None,
        help="do not fail the run for those, whatever the ini file says",
    )
    parser.addini(
        "nucleo_strict", "fail the run on a leaked exception or an unclean text", type="bool"
    )
    group.addoption(
        "--nucleo-guard",
        choices=GUARD_SCOPES,
        default=None,
        help="which tests the network guard refuses non-loopback addresses to: the tests that "
        "use the plugin's fixtures or marker (plugin-tests, the default), every test (all), or "
        "none (off) (ini: nucleo_guard)",
    )
    parser.addini("nucleo_guard", "the network guard's scope: plugin-tests, all or off")
    group.addoption(
        "--nucleo-allow-hosts",
        metavar="HOSTS",
        default=None,
        help="comma-separated hosts guarded tests may still reach: names, name patterns "
        "(*.internal), addresses or networks (10.0.0.0/8) (ini: nucleo_allow_hosts)",
    )
    parser.addini(
        "nucleo_allow_hosts",
        "hosts guarded tests may still reach (names, *.patterns, addresses, networks)",
        type="linelist",
    )
    group.addoption(
        "--nucleo-fake-addresses",
        choices=ADDRESS_CHOICES,
        default=None,
        help="where the hosts a fake upstream routes resolve: addresses a tool's check against "
        "private networks accepts (public, the default: 192.31.196.0/24, AS112's), or the "
        "shared address space (shared: 100.64.0.0/10), which it refuses; only the fake answers "
        "either (ini: nucleo_fake_addresses)",
    )
    parser.addini(
        "nucleo_fake_addresses",
        "where routed hosts resolve while a fake upstream runs: public or shared",
    )


def setting(config: pytest.Config, name: str) -> Any:
    """The plugin's setting ``name`` (``nucleo_strict``, ...): the command-line option when
    given, else the ini key, else the default. A bad ini value is a usage error naming it."""
    given = config.getoption(name, default=None)
    if given is not None:
        return _allow_hosts(given) if name == "nucleo_allow_hosts" else given
    if name == "nucleo_strict":
        try:
            return bool(config.getini(name))
        except (ValueError, pytest.UsageError) as error:  # (pytest 9 raises the latter)
            raise pytest.UsageError(
                f"the ini key nucleo_strict is not a boolean ({error}): set true or false, "
                "or give --nucleo-strict or --no-nucleo-strict"
            ) from None
    ini = config.getini(name)
    if name == "nucleo_allow_hosts":
        return _allow_hosts(",".join(ini))
    if name == "nucleo_report":
        if not ini:
            return None
        base = config.inipath.parent if config.inipath else config.rootpath
        return str(base / ini)
    choices = {
        "nucleo_matrix": ("problems", "all"),
        "nucleo_guard": GUARD_SCOPES,
        "nucleo_fake_addresses": ADDRESS_CHOICES,
    }[name]
    if not ini:
        return choices[0]
    if ini not in choices:
        raise pytest.UsageError(
            f"the ini key {name} = {ini!r} is not one of {', '.join(choices)}: set one of them, "
            f"or give --{name.replace('_', '-')}"
        )
    return ini


def _allow_hosts(text: str) -> list[str]:
    return [entry.strip() for entry in text.split(",") if entry.strip()]


def checked(config: pytest.Config) -> tuple[str, str, list[str]]:
    """Every setting read once when the run starts, so a bad value fails it at once: the guard's
    scope, where fake hosts resolve and the hosts guarded tests may reach, in that order."""
    setting(config, "nucleo_matrix")
    scope = setting(config, "nucleo_guard")
    addresses = setting(config, "nucleo_fake_addresses")
    setting(config, "nucleo_strict")
    _check_report_path(config)
    hosts = setting(config, "nucleo_allow_hosts")
    if hosts:  # (an empty list allows no host: nothing to check)
        from pytest_nucleo.testing._fake._hosts import AllowList

        given = config.getoption("nucleo_allow_hosts", default=None) is not None
        try:  # checked first, to name where the list came from
            AllowList(hosts, "--nucleo-allow-hosts" if given else "ini key nucleo_allow_hosts")
        except ValueError as error:
            raise pytest.UsageError(str(error)) from None
    return scope, addresses, hosts


def _check_report_path(config: pytest.Config) -> None:
    """A report path whose files cannot be written is a usage error when the run starts, not a
    traceback after the tests (an xdist worker writes no report)."""
    if hasattr(config, "workerinput"):
        return
    path = setting(config, "nucleo_report")
    if not path:
        return
    from pytest_nucleo.testing._contract._report import unwritable

    problem = unwritable(path)
    if problem is not None:
        given = config.getoption("nucleo_report", default=None) is not None
        where = f"--nucleo-report={path}" if given else f"the ini key nucleo_report ({path})"
        raise pytest.UsageError(
            f"{where}: the report cannot be written there ({problem}): give a path in a "
            "folder the run may write to; PATH.json and PATH.md are written"
        )
