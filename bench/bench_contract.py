"""Contract-suite costs, against baselines measured in the same run (TARGETS P4, P6).

    python bench/bench_contract.py [--rounds N]

P4  the whole ToolContract matrix for one tool, in ms beyond a one-test session's start;
    50 tools vs 10 tools (linear would be 5).
P6  ms per generated scenario in a @given test over fetch_scenarios(), beside the same test
    over st.integers() as the baseline (hypothesis' own per-example cost); health checks on.

Medians over interleaved rounds of whole pytest sessions in subprocesses.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_plugin import medians, session

HERE = Path(__file__).resolve().parent.parent
TOOLS = (HERE / "tests" / "sample_tools.py").read_text()

CONTRACT = """
class TestTool{n}(ToolContract):
    tool = tools.get_order
    kind = "fetch"
    service_name = "Shop"
    endpoint = "GET https://shop.example/orders/00000042"
    valid_call = {{"number": "00000042"}}
    valid_response = respond(200, json={{"number": "00000042"}})
    secrets = (tools.API_KEY,)
"""

HEADER = "from pytest_nucleo.testing import ToolContract, respond\nimport tools\n"


def contracts(root: Path, name: str, count: int) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "tools.py").write_text(TOOLS)
    (folder / "pytest.ini").write_text("[pytest]\naddopts = -q -p no:cacheprovider\n")
    body = HEADER + "".join(CONTRACT.format(n=n) for n in range(count)) if count else ""
    (folder / "test_contracts.py").write_text(body or "def test_one():\n    pass\n")
    session(folder, "--snapshot-update")
    return folder


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

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        folders = {n: contracts(root, f"tools{n}", n) for n in (0, 1, 10, 50)}
        times = medians(rounds, {str(n): (folder, ()) for n, folder in folders.items()})
        start, one = times["0"], times["1"]
        print(
            f"P4 one tool's matrix: {(one - start) * 1000:.0f} ms beyond a one-test session "
            f"({start:.2f} s) (target < 40 ms)"
        )
        ten, fifty = times["10"] - start, times["50"] - start
        print(
            f"P4 50 tools vs 10 tools (beyond session start): {fifty:.2f} s vs {ten:.2f} s, "
            f"ratio {fifty / ten:.2f} (target <= 5.5)"
        )

    examples = 300
    baseline = statistics.median(generation_ms("st.integers()", examples) for _ in range(rounds))
    scenario = statistics.median(
        generation_ms("nst.fetch_scenarios()", examples) for _ in range(rounds)
    )
    print(
        f"P6 per generated scenario: {scenario:.3f} ms vs {baseline:.3f} ms per st.integers() "
        f"example, ratio {scenario / baseline:.2f} (target <= 1.5 ms per scenario)"
    )


if __name__ == "__main__":
    main()
