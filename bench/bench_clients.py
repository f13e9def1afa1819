"""fake_upstream's per-test cost through requests and httpx2, each against the same test written
on the client's own mock, as ratios measured in the same run, side by side.

    python bench/bench_clients.py [--rounds N]

requests  500 tests each doing one faked failing call + fails_with + a text snapshot through a
          tool on requests, vs the same 500 tests on bare ``responses`` + pytest.raises + syrupy.
httpx2    the same through a tool on httpx2, vs pytest-httpx2's ``httpx2_mock`` + pytest.raises
          + syrupy (install the ``bench`` extra for pytest-httpx2).

Every figure is a median over interleaved rounds of whole pytest sessions in subprocesses.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# The same test as bench_plugin's, through fake_upstream: only the tool's client differs.
from bench_plugin import WITH_TOOLKIT, Case, load_average, measure

TOOLS = {
    "requests": """
import requests
import pytest_nucleo as nucleo

SESSION = requests.Session()


def get_order(number):
    response = SESSION.get(f"https://shop.example/orders/{number}", timeout=10)
    if response.status_code == 404:
        raise nucleo.ResourceNotFoundException("order", number)
    return response.json()
""",
    "httpx2": """
import httpx2
import pytest_nucleo as nucleo

CLIENT = httpx2.Client()


def get_order(number):
    response = CLIENT.get(f"https://shop.example/orders/{number}")
    if response.status_code == 404:
        raise nucleo.ResourceNotFoundException("order", number)
    return response.json()
""",
}


BY_HAND = {
    "requests": """
import pytest
import responses
from pytest_nucleo import ResourceNotFoundException
from tool import get_order


@pytest.mark.parametrize("n", range({count}))
def test_unknown_order(snapshot, n):
    with responses.RequestsMock(assert_all_requests_are_fired=True) as mock:
        mock.get(f"https://shop.example/orders/{{n}}", status=404, body="no such order")
        with pytest.raises(ResourceNotFoundException) as info:
            get_order(str(n))
    assert info.value.is_correctable
    assert info.value.explain_to_llm() == snapshot
""",
    "httpx2": """
import pytest
from pytest_nucleo import ResourceNotFoundException
from tool import get_order


@pytest.mark.httpx2(assert_all_called=True)
@pytest.mark.parametrize("n", range({count}))
def test_unknown_order(httpx2_mock, snapshot, n):
    httpx2_mock.get(f"https://shop.example/orders/{{n}}").respond(404, text="no such order")
    with pytest.raises(ResourceNotFoundException) as info:
        get_order(str(n))
    assert info.value.is_correctable
    assert info.value.explain_to_llm() == snapshot
""",
}


def project(root: Path, name: str, tool: str, test: str, count: int) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "tool.py").write_text(tool)
    (folder / "test_it.py").write_text(test.format(count=count))
    (folder / "pytest.ini").write_text("[pytest]\naddopts = -q -p no:cacheprovider\n")
    subprocess.run(
        [sys.executable, "-m", "pytest", "--snapshot-update"], cwd=folder, capture_output=True
    )
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--count", type=int, default=500)
    options = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cases = {}
        for client, tool in TOOLS.items():
            cases[f"{client} toolkit"] = Case(
                project(root, f"{client}_toolkit", tool, WITH_TOOLKIT, options.count)
            )
            cases[f"{client} by hand"] = Case(
                project(root, f"{client}_by_hand", tool, BY_HAND[client], options.count)
            )
        print(f"load average {load_average()}")
        times = measure(options.rounds, cases)

    print(f"{options.count} tests, one faked failing call + its check + a text snapshot each:")
    for client, baseline in (("requests", "responses"), ("httpx2", "pytest-httpx2")):
        ours, theirs = times[f"{client} toolkit"], times[f"{client} by hand"]
        cpu = statistics.median(a / b for a, b in zip(ours.cpu, theirs.cpu, strict=True))
        wall = statistics.median(a / b for a, b in zip(ours.wall, theirs.wall, strict=True))
        print(
            f"  {client:<9} fake_upstream {statistics.median(ours.cpu):.2f} s of CPU vs "
            f"{baseline} by hand {statistics.median(theirs.cpu):.2f} s, ratio {cpu:.2f} "
            f"(wall {wall:.2f}; target <= 1.25)"
        )
    print(f"load average {load_average()}")


if __name__ == "__main__":
    main()
