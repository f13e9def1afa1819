"""Plugin costs, as ratios against baselines measured in the same run.

    python bench/bench_plugin.py [--rounds N] [--unused] [--compare TREE] [--instructions]

Plugin import: importing the pytest11 module after pytest and httpx, in milliseconds of the
    child's CPU (median).
Installed but unused, the two targets: a one-test session with the plugin vs the same session
    with ``-p no:nucleo`` (the difference, in ms of CPU), and a foreign suite of 2,000 trivial
    tests (20 modules of 100; no fixture, marker or option of ours) with and without it (the
    ratio of CPU). Each is given again on bare pytest (plugin autoload off, the plugin loaded
    with ``-p pytest_nucleo.plugin`` on one side), where the other installed plugins' start
    (hypothesis' above all) does not dilute ours.
Per-test cost: 500 tests each doing one faked failing call + fails_with + a text snapshot,
    vs the same 500 tests written by hand with respx + pytest.raises + syrupy.
Snapshots: 500 llm_snapshot assertions vs 100 (per-module layout), beside syrupy's
    one-file-per-snapshot text layout for comparison.

``--instructions`` counts the two unused-plugin sessions' CPU instructions instead (valgrind's
callgrind, whose count the load does not move), with and without the plugin, every other
installed pytest plugin left out on both sides so that a run takes minutes rather than an hour.

Every session is a whole pytest run in a subprocess, timed by its wall clock and by its CPU
(user + system, from ``getrusage(RUSAGE_CHILDREN)`` around it), the cases interleaved round
by round (their order alternating), so a drift of the shared machine hits every case alike;
each case runs once unmeasured first, and every session reads bytecode as an installed
package does (see ``child_env``).
A ratio or difference is taken within each round, then given as min / median / max over the
rounds. ``--unused`` runs the two unused-plugin targets alone. ``--compare TREE`` adds the
same unused-plugin cases with TREE's ``pytest_nucleo`` first on ``PYTHONPATH`` (a copy of the
package before a change, say), in the same rounds: before and after in one run.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

TOOL = """
import httpx
import pytest_nucleo as nucleo

CLIENT = httpx.Client()


def get_order(number):
    response = CLIENT.get(f"https://shop.example/orders/{number}")
    if response.status_code == 404:
        raise nucleo.ResourceNotFoundException("order", number)
    return response.json()
"""

WITH_TOOLKIT = """
import pytest
from pytest_nucleo import ResourceNotFoundException
from pytest_nucleo.testing import fails_with
from tool import get_order


@pytest.mark.parametrize("n", range({count}))
def test_unknown_order(fake_upstream, llm_snapshot, n):
    fake_upstream.get(f"https://shop.example/orders/{{n}}").respond(404, text="no such order")
    with fails_with(ResourceNotFoundException, correctable=True) as failure:
        get_order(str(n))
    assert failure.explanation == llm_snapshot
"""

BY_HAND = """
import pytest
import respx
from pytest_nucleo import ResourceNotFoundException
from tool import get_order


@pytest.mark.parametrize("n", range({count}))
def test_unknown_order(snapshot, n):
    with respx.mock(assert_all_called=True) as router:
        router.get(f"https://shop.example/orders/{{n}}").respond(404, text="no such order")
        with pytest.raises(ResourceNotFoundException) as info:
            get_order(str(n))
    assert info.value.is_correctable
    assert info.value.explain_to_llm() == snapshot
"""

SINGLE_FILE = """
import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode


class Text(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT
    file_extension = "txt"


@pytest.mark.parametrize("n", range({count}))
def test_text(snapshot, n):
    assert f"text number {{n}}\\n[hint]" == snapshot.use_extension(Text)
"""

PER_MODULE = """
import pytest


@pytest.mark.parametrize("n", range({count}))
def test_text(llm_snapshot, n):
    assert f"text number {{n}}\\n[hint]" == llm_snapshot
"""

INI = "[pytest]\naddopts = -q -p no:cacheprovider\n"

# Bare pytest: no plugin from an entry point; the plugin loaded by name on the side that has
# it. syrupy is blocked on both sides, or the plugin's `pytest_plugins = ["syrupy"]` would
# load it on one side only.
BARE = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
BARE_WITH = ("-p", "pytest_nucleo.plugin", "-p", "no:syrupy")
BARE_WITHOUT = ("-p", "no:syrupy")


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown (no /proc/loadavg)"


def project(root: Path, name: str, test: str, count: int) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "tool.py").write_text(TOOL)
    (folder / "test_it.py").write_text(test.format(count=count))
    (folder / "pytest.ini").write_text(INI)
    subprocess.run(
        [sys.executable, "-m", "pytest", "--snapshot-update"], cwd=folder, capture_output=True
    )
    return folder


def foreign_suite(root: Path, modules: int = 20, tests: int = 100) -> Path:
    """``modules`` x ``tests`` trivial tests that use nothing of the plugin's."""
    folder = root / "foreign"
    folder.mkdir()
    (folder / "pytest.ini").write_text(INI)
    for m in range(modules):
        body = "".join(f"def test_{t}():\n    assert {t} == {t}\n\n\n" for t in range(tests))
        (folder / f"test_m{m:02}.py").write_text(body)
    return folder


@dataclass(frozen=True)
class Case:
    folder: Path
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()


@dataclass
class Times:
    wall: list[float]
    cpu: list[float]


def child_env(case: Case) -> dict[str, str]:
    """A session's environment: this one's with the case's, bytecode written and read. A
    package pip installed is byte-compiled, as pytest's and the other plugins' modules are
    here; with ``PYTHONDONTWRITEBYTECODE`` set (as on the project's CI machines) an editable
    install's modules would be compiled from source in every session, a cost no user pays.
    Each case runs once before it is measured (see :func:`warm_up`)."""
    env = {**os.environ, **dict(case.env)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def warm_up(cases: dict[str, Case]) -> None:
    """One unmeasured session per case, which writes the bytecode the measured ones read."""
    for case in cases.values():
        session(case)


def session(case: Case) -> tuple[float, float]:
    """One pytest session's wall time and CPU time (user + system, its whole process tree
    as reaped), in seconds."""
    env = child_env(case)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *case.args],
        cwd=case.folder,
        capture_output=True,
        text=True,
        env=env,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if result.returncode != 0:
        raise SystemExit(
            f"benchmark session failed in {case.folder}:\n{result.stdout}{result.stderr}"
        )
    return wall, cpu


def measure(rounds: int, cases: dict[str, Case]) -> dict[str, Times]:
    times = {name: Times([], []) for name in cases}
    names = list(cases)
    warm_up(cases)
    for index in range(rounds):  # interleaved, each round in the other order than the last
        for name in names if index % 2 == 0 else names[::-1]:
            wall, cpu = session(cases[name])
            times[name].wall.append(wall)
            times[name].cpu.append(cpu)
    return times


def spread(values: Sequence[float], form: Callable[[float], str]) -> str:
    return (
        f"{form(min(values))} / {form(statistics.median(values))} / {form(max(values))}"
        " (min / median / max)"
    )


def ms(seconds: float) -> str:
    return f"{seconds * 1000:+.0f} ms"


def ratio(value: float) -> str:
    return f"{value:.3f}x"


def compare(label: str, times: dict[str, Times], mine: str, base: str, how: str) -> None:
    """Print ``mine`` against ``base``: CPU and wall medians, and the per-round difference
    (``how="difference"``) or ratio (``how="ratio"``) of CPU and of wall."""
    a, b = times[mine], times[base]
    cpu_med = f"{statistics.median(a.cpu):.3f} s vs {statistics.median(b.cpu):.3f} s"
    wall_med = f"{statistics.median(a.wall):.3f} s vs {statistics.median(b.wall):.3f} s"
    if how == "difference":
        cpu = spread([x - y for x, y in zip(a.cpu, b.cpu, strict=True)], ms)
        wall = spread([x - y for x, y in zip(a.wall, b.wall, strict=True)], ms)
    else:
        cpu = spread([x / y for x, y in zip(a.cpu, b.cpu, strict=True)], ratio)
        wall = spread([x / y for x, y in zip(a.wall, b.wall, strict=True)], ratio)
    print(f"  {label}")
    print(f"    CPU  {cpu_med} (medians); {how} per round {cpu}")
    print(f"    wall {wall_med} (medians); {how} per round {wall}")


def plugin_import_ms(rounds: int) -> tuple[float, float]:
    """The import's CPU and wall time in a child process, median, in milliseconds."""
    code = (
        "import time, pytest, httpx\n"
        "c, t = time.process_time(), time.perf_counter()\n"
        "import pytest_nucleo.plugin\n"
        "print(time.process_time() - c, time.perf_counter() - t)\n"
    )
    samples = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.split()
        for _ in range(rounds * 3)
    ]
    cpu = statistics.median(float(s[0]) for s in samples) * 1000
    wall = statistics.median(float(s[1]) for s in samples) * 1000
    return cpu, wall


def unused(root: Path, rounds: int, tree: Path | None) -> None:
    one = root / "one"
    one.mkdir()
    (one / "test_it.py").write_text("def test_one():\n    assert True\n")
    (one / "pytest.ini").write_text(INI)
    foreign = foreign_suite(root)
    bare = tuple(BARE.items())
    before: tuple[tuple[str, str], ...] = ()
    if tree is not None:
        path = os.pathsep.join(filter(None, [str(tree), os.environ.get("PYTHONPATH", "")]))
        before = (("PYTHONPATH", path),)
    for title, folder, how, target in (
        ("one-test session", one, "difference", "target <= +30 ms of CPU"),
        ("foreign suite of 2,000 trivial tests", foreign, "ratio", "target <= 1.02x CPU"),
    ):
        cases = {
            "with": Case(folder),
            "without": Case(folder, ("-p", "no:nucleo")),
            "bare with": Case(folder, BARE_WITH, bare),
            "bare without": Case(folder, BARE_WITHOUT, bare),
        }
        if tree is not None:
            cases["compared with"] = Case(folder, (), before)
            cases["compared bare with"] = Case(folder, BARE_WITH, (*bare, *before))
        print(f"{title}, plugin installed but unused ({target}), {rounds} rounds:", flush=True)
        times = measure(rounds, cases)
        compare("installed vs -p no:nucleo", times, "with", "without", how)
        compare(
            "bare pytest, -p pytest_nucleo.plugin vs not", times, "bare with", "bare without", how
        )
        if tree is not None:
            compare(f"{tree}: installed vs -p no:nucleo", times, "compared with", "without", how)
            compare(
                f"{tree}: bare pytest, -p pytest_nucleo.plugin vs not",
                times,
                "compared bare with",
                "bare without",
                how,
            )
        print(f"load average {load_average()}", flush=True)


def instructions(root: Path, tree: Path | None) -> None:
    """The instructions of the two unused-plugin sessions with the plugin and with
    ``-p no:nucleo``, every other installed pytest plugin left out on both sides."""
    import re
    from importlib.metadata import entry_points

    one = root / "one"
    one.mkdir()
    (one / "test_it.py").write_text("def test_one():\n    assert True\n")
    (one / "pytest.ini").write_text(INI)
    names = [ep.name for ep in entry_points(group="pytest11") if ep.name != "nucleo"]
    blocked = tuple(arg for name in names for arg in ("-p", f"no:{name}"))
    valgrind = ("valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null")
    for title, folder in (
        ("one-test session", one),
        ("foreign suite of 2,000 trivial tests", foreign_suite(root)),
    ):
        cases = {
            "with": Case(folder, blocked),
            "without": Case(folder, (*blocked, "-p", "no:nucleo")),
        }
        if tree is not None:
            cases[f"{tree}"] = Case(folder, blocked, (("PYTHONPATH", str(tree)),))
        counts: dict[str, int] = {}
        warm_up(cases)
        for name, case in cases.items():
            result = subprocess.run(
                [*valgrind, sys.executable, "-m", "pytest", *case.args],
                cwd=case.folder,
                capture_output=True,
                text=True,
                env={**child_env(case), "PYTHONHASHSEED": "0"},
            )
            found = re.search(r"Collected : (\d+)", result.stderr)
            if result.returncode != 0 or found is None:
                raise SystemExit(f"valgrind session failed:\n{result.stdout}{result.stderr}")
            counts[name] = int(found[1])
        # No time is derived from them: compiling our modules runs several instructions a
        # nanosecond, a session's imports and page faults one every nanosecond or so.
        base = counts["without"]
        print(f"{title}, CPU instructions (callgrind), the other installed plugins left out:")
        for name, count in counts.items():
            extra = f"  {count - base:+,} ({count / base:.3f}x)" if name != "without" else ""
            print(f"  {name:<14} {count:>15,}{extra}", flush=True)


def toolkit_and_snapshots(root: Path, rounds: int) -> None:
    toolkit = project(root, "toolkit", WITH_TOOLKIT, 500)
    by_hand = project(root, "by_hand", BY_HAND, 500)
    print(f"500 tests with the toolkit vs by hand (target <= 1.25x), {rounds} rounds:", flush=True)
    times = measure(rounds, {"toolkit": Case(toolkit), "by hand": Case(by_hand)})
    compare("toolkit vs by hand", times, "toolkit", "by hand", "ratio")

    sizes = {
        f"{layout}{count}": project(root, f"{layout}{count}", source, count)
        for layout, source in (("per_module", PER_MODULE), ("single_file", SINGLE_FILE))
        for count in (100, 500)
    }
    print(f"500 snapshots vs 100 (target <= 6x for per_module), {rounds} rounds:", flush=True)
    times = measure(rounds, {name: Case(folder) for name, folder in sizes.items()})
    for layout in ("per_module", "single_file"):
        compare(layout, times, f"{layout}500", f"{layout}100", "ratio")
    print(f"load average {load_average()}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--unused", action="store_true", help="only the two installed-but-unused targets"
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count the unused-plugin sessions' instructions with valgrind instead",
    )
    parser.add_argument(
        "--compare",
        type=Path,
        metavar="TREE",
        help="a folder holding another pytest_nucleo package, measured beside the installed one",
    )
    options = parser.parse_args()
    rounds = options.rounds
    if options.compare is not None and not (options.compare / "pytest_nucleo").is_dir():
        parser.error(f"{options.compare} holds no pytest_nucleo package")

    print(f"load average {load_average()}")
    print(
        f"python {sys.version.split()[0]}; the sessions read bytecode, as for an installed "
        "package (PYTHONDONTWRITEBYTECODE dropped for them, a warm-up session per case)"
    )
    if options.instructions:
        with tempfile.TemporaryDirectory() as tmp:
            instructions(Path(tmp), options.compare)
        return
    if not options.unused:
        cpu, wall = plugin_import_ms(rounds)
        print(
            f"plugin import after pytest and httpx: {cpu:.1f} ms CPU, {wall:.1f} ms wall "
            "(target <= 15 ms)",
            flush=True,
        )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        unused(root, rounds, options.compare)
        if not options.unused:
            toolkit_and_snapshots(root, rounds)


if __name__ == "__main__":
    main()
