"""Plugin costs, as ratios against baselines measured in the same run.

    python bench/bench_plugin.py [--rounds N]

Plugin import: importing the pytest11 module after pytest and httpx, in milliseconds
    (median).
Installed but unused: a one-test session with the plugin, vs the same session with
    ``-p no:nucleo``.
Per-test cost: 500 tests each doing one faked failing call + fails_with + a text snapshot,
    vs the same 500 tests written by hand with respx + pytest.raises + syrupy.
Snapshots: 500 llm_snapshot assertions vs 100 (per-module layout), beside syrupy's
    one-file-per-snapshot text layout for comparison.

Every figure is a median over interleaved rounds of whole pytest sessions in subprocesses.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
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


def project(root: Path, name: str, test: str, count: int) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "tool.py").write_text(TOOL)
    (folder / "test_it.py").write_text(test.format(count=count))
    (folder / "pytest.ini").write_text("[pytest]\naddopts = -q -p no:cacheprovider\n")
    subprocess.run(
        [sys.executable, "-m", "pytest", "--snapshot-update"], cwd=folder, capture_output=True
    )
    return folder


def session(folder: Path, *args: str) -> float:
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *args], cwd=folder, capture_output=True, text=True
    )
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"benchmark session failed in {folder}:\n{result.stdout}{result.stderr}")
    return elapsed


def medians(rounds: int, runs: dict[str, tuple[Path, tuple[str, ...]]]) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):  # interleaved, so drift on a noisy machine hits every case alike
        for name, (folder, args) in runs.items():
            times[name].append(session(folder, *args))
    return {name: statistics.median(values) for name, values in times.items()}


def plugin_import_ms(rounds: int) -> float:
    code = (
        "import time, pytest, httpx\n"
        "t = time.perf_counter()\n"
        "import pytest_nucleo.plugin\n"
        "print(time.perf_counter() - t)\n"
    )
    samples = [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout)
        for _ in range(rounds * 3)
    ]
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds

    print(
        f"plugin import after pytest and httpx: {plugin_import_ms(rounds):.1f} ms (target <= 15 ms)"
    )

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        one = project(root, "one", "def test_one():\n    assert True\n", 1)
        p2 = medians(rounds, {"with": (one, ()), "without": (one, ("-p", "no:nucleo"))})
        print(
            f"one-test session, plugin installed but unused: {p2['with']:.3f} s vs "
            f"{p2['without']:.3f} s without it, ratio {p2['with'] / p2['without']:.2f} "
            "(target <= 1.10)"
        )

        toolkit = project(root, "toolkit", WITH_TOOLKIT, 500)
        by_hand = project(root, "by_hand", BY_HAND, 500)
        p3 = medians(rounds, {"toolkit": (toolkit, ()), "by_hand": (by_hand, ())})
        print(
            f"500 tests with the toolkit: {p3['toolkit']:.2f} s vs by hand {p3['by_hand']:.2f} s,"
            f" ratio {p3['toolkit'] / p3['by_hand']:.2f} (target <= 1.25)"
        )

        sizes = {
            f"{layout}{count}": project(root, f"{layout}{count}", source, count)
            for layout, source in (("per_module", PER_MODULE), ("single_file", SINGLE_FILE))
            for count in (100, 500)
        }
        p5 = medians(rounds, {name: (folder, ()) for name, folder in sizes.items()})
        for layout in ("per_module", "single_file"):
            small, large = p5[f"{layout}100"], p5[f"{layout}500"]
            print(
                f"snapshots, {layout}: 500 snapshots {large:.2f} s vs 100 snapshots {small:.2f} s, "
                f"ratio {large / small:.2f}" + (" (target <= 6)" if layout == "per_module" else "")
            )


if __name__ == "__main__":
    main()
