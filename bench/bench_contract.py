"""Contract-suite costs, against baselines measured in the same run.

    python bench/bench_contract.py [--rounds N]

One tool's matrix: the time the whole ToolContract matrix of one tool takes beyond session
    start, that is from its first test's setup to its last test's teardown (every phase of
    every test, summed), in wall time and in CPU time; beside it, as many bare tests in the same
    session that each assert one syrupy snapshot (pytest's and syrupy's own per-test cost, the
    floor of any matrix made of separate tests). The fakes of the clients imported by then are
    loaded while the contract is collected, which is session start: what that adds to
    collection is printed too, against the same session without the contract. Then the same
    matrix for the same tool written as an async function that opens its httpx client per
    call (``async with httpx.AsyncClient()``), in a session of its own.
50 tools vs 10 tools: collection (where the matrices are generated) plus every test (linear
    would be 5). Both are summed inside the sessions, because whole sessions here vary by more
    than these differences.
Generated scenarios: ms per example in a @given test over fetch_scenarios(), beside the same
    test over st.integers() as the baseline (hypothesis' own per-example cost); health checks on.

Medians over rounds of pytest sessions in subprocesses. The machine's load average is printed
before and after: on a shared machine, read the CPU times and the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_plugin import Case, session

from pytest_nucleo.testing import contract_matrix, respond

HERE = Path(__file__).resolve().parent.parent
TOOLS = (HERE / "tests" / "sample_tools.py").read_text()

CONTRACT = """
class TestTool{n}(ToolContract):
    tool = tools.{tool}
    kind = "fetch"
    service_name = "Shop"
    endpoint = "GET https://shop.example/orders/00000042"
    valid_call = {{"number": "00000042"}}
    valid_response = respond(200, json={{"number": "00000042"}})
    secrets = (tools.API_KEY,)
"""

HEADER = "from pytest_nucleo.testing import ToolContract, respond\nimport tools\n"

BARE = """
import pytest

@pytest.mark.parametrize("n", range({count}))
def test_bare(n, snapshot):
    assert f"text {{n}}" == snapshot
"""

# Sums the time of each test module's tests (every phase, wall and CPU), and collection's,
# into durations.json.
TIMING_CONFTEST = """
import collections, json, time
import pytest

spent = collections.Counter()

@pytest.hookimpl(wrapper=True)
def pytest_collection(session):
    start, cpu = time.perf_counter(), time.process_time()
    try:
        return (yield)
    finally:
        spent["collection"] += time.perf_counter() - start
        spent["collection cpu"] += time.process_time() - cpu

@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    cpu = time.process_time()
    try:
        return (yield)
    finally:
        spent[item.nodeid.split("::")[0] + " cpu"] += time.process_time() - cpu

def pytest_runtest_logreport(report):
    spent[report.nodeid.split("::")[0]] += report.duration

def pytest_sessionfinish(session):
    with open("durations.json", "w") as file:
        json.dump(spent, file)
"""


def load() -> str:
    return "load average " + " ".join(f"{value:.2f}" for value in os.getloadavg())


def project(root: Path, name: str, modules: dict[str, str]) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "tools.py").write_text(TOOLS)
    (folder / "pytest.ini").write_text("[pytest]\naddopts = -q -p no:cacheprovider\n")
    for module, source in {"conftest": TIMING_CONFTEST, **modules}.items():
        (folder / f"{module}.py").write_text(source)
    session(Case(folder, ("--snapshot-update",)))
    return folder


def contracts(root: Path, name: str, count: int) -> Path:
    body = HEADER + "".join(CONTRACT.format(n=n, tool="get_order") for n in range(count))
    return project(root, name, {"test_contracts": body})


def module_ms(folder: Path, rounds: int) -> dict[str, float]:
    """Median time of each test module's tests (and of collection), in ms, over ``rounds``
    sessions: wall time, and CPU time under the name plus `` cpu``."""
    samples: dict[str, list[float]] = {}
    for _ in range(rounds):
        session(Case(folder))
        spent = json.loads((folder / "durations.json").read_text())
        for module, seconds in spent.items():
            samples.setdefault(module, []).append(seconds * 1000)
    return {module: statistics.median(values) for module, values in samples.items()}


def generation_ms(strategy_source: str, examples: int) -> float:
    code = f"""
import time
from hypothesis import given, settings, strategies as st
from pytest_nucleo import strategies as nst

@settings(max_examples={examples}, database=None, deadline=None)
@given({strategy_source})
def run(value):
    pass

start = time.perf_counter()
run()
print((time.perf_counter() - start) / {examples} * 1000)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds

    print(f"before: {load()}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        scenarios = len(contract_matrix("fetch", valid_response=respond(200)))
        modules = {
            # Runs first (modules run in name order), so syrupy's first-use cost is
            # counted against neither module compared.
            "test_0_warmup": BARE.format(count=1),
            "test_bare": BARE.format(count=scenarios),
        }
        timed = project(
            root,
            "timed",
            {**modules, "test_contracts": HEADER + CONTRACT.format(n=0, tool="get_order")},
        )
        # The same tool as an async function opening its client per call, as asyncio tools
        # often do: each scenario builds an httpx client.
        per_call = project(
            root,
            "per_call",
            {**modules, "test_contracts": HEADER + CONTRACT.format(n=0, tool="aget_order")},
        )
        without = project(root, "without", modules)
        spent: dict[str, list[float]] = {}
        alone: dict[str, list[float]] = {}
        opening: dict[str, list[float]] = {}
        for _ in range(rounds):  # interleaved, so drift on a noisy machine hits them alike
            for folder, samples in ((timed, spent), (without, alone), (per_call, opening)):
                for name, value in module_ms(folder, 3).items():
                    samples.setdefault(name, []).append(value)
        median = {name: statistics.median(values) for name, values in spent.items()}
        one, bare = median["test_contracts.py"], median["test_bare.py"]
        one_cpu, bare_cpu = median["test_contracts.py cpu"], median["test_bare.py cpu"]
        print(
            f"one tool's contract matrix ({scenarios} tests), beyond session start: "
            f"{one:.0f} ms wall, {one_cpu:.0f} ms CPU (target <= 40 ms); "
            f"{scenarios} bare snapshot tests: {bare:.0f} ms wall, {bare_cpu:.0f} ms CPU; "
            f"ratio {one / bare:.2f} wall, {one_cpu / bare_cpu:.2f} CPU"
        )
        per_call_wall, per_call_cpu = (
            statistics.median(opening[f"test_contracts.py{cpu}"]) for cpu in ("", " cpu")
        )
        print(
            f"  the same matrix for an async tool opening an httpx client per call: "
            f"{per_call_wall:.0f} ms wall, {per_call_cpu:.0f} ms CPU"
        )
        added, added_cpu = (
            median[key] - statistics.median(alone[key]) for key in ("collection", "collection cpu")
        )
        print(
            f"  its collection (the matrix generated, the fakes of the imported clients "
            f"loaded) adds {added:.0f} ms wall, {added_cpu:.0f} ms CPU to session start"
        )
        fleets = {n: contracts(root, f"tools{n}", n) for n in (10, 50)}
        wall: dict[int, list[float]] = {10: [], 50: []}
        cpu: dict[int, list[float]] = {10: [], 50: []}
        for _ in range(3 * rounds):  # interleaved, so drift on a noisy machine hits both alike
            for n, folder in fleets.items():
                sums = module_ms(folder, 1)
                wall[n].append(sum(v for k, v in sums.items() if not k.endswith(" cpu")) / 1000)
                cpu[n].append(sum(v for k, v in sums.items() if k.endswith(" cpu")) / 1000)
        ten, fifty = (statistics.median(wall[n]) for n in (10, 50))
        ten_cpu, fifty_cpu = (statistics.median(cpu[n]) for n in (10, 50))
        print(
            f"50 tools vs 10 tools (collection and tests): {fifty:.2f} s vs {ten:.2f} s wall, "
            f"ratio {fifty / ten:.2f}; {fifty_cpu:.2f} s vs {ten_cpu:.2f} s CPU, "
            f"ratio {fifty_cpu / ten_cpu:.2f} (target <= 5.5)"
        )

    examples = 300
    baseline = statistics.median(generation_ms("st.integers()", examples) for _ in range(rounds))
    scenario = statistics.median(
        generation_ms("nst.fetch_scenarios()", examples) for _ in range(rounds)
    )
    print(
        f"per generated scenario: {scenario:.3f} ms vs {baseline:.3f} ms per st.integers() "
        f"example, ratio {scenario / baseline:.2f} (target <= 1.5 ms per scenario)"
    )
    print(f"after: {load()}")


if __name__ == "__main__":
    main()
