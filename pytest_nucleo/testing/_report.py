"""The failure matrix seen in a run: collected per worker, merged, rendered, and gated on.

Each ToolContract scenario records one observation (tool x scenario -> class, correctability,
snapshot state, verdict). Under pytest-xdist every worker ships its observations to the
controller through ``workeroutput``, which merges them before rendering.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # importing _scenarios at run time would pull respx into every session's hooks
    from ._scenarios import Observation

REPORT = pytest.StashKey[list[dict[str, Any]]]()
WORKER_KEY = "nucleo_observations"


def record(config: pytest.Config, observation: Observation) -> None:
    """Add one observation to this process's report."""
    config.stash.setdefault(REPORT, []).append(observation.as_dict())


def record_runner_failure(
    config: pytest.Config,
    tool: str,
    where: str,
    failure: BaseException,
    *,
    expect_leaks: bool = False,
) -> None:
    """Add what ``run_tool`` logged for an uncorrectable failure, when it leaked or is unclean.

    Only problems are kept: the matrix shows contract scenarios, and ``--nucleo-strict`` needs
    to see a leak even in a test that passed. In a test marked
    ``@pytest.mark.nucleo(expect_leaks=True)`` a leak is deliberate and not kept; an unclean
    text still is.
    """
    from pytest_nucleo import LLMReadableException, SystemException

    from ._hygiene import text_problems

    if not isinstance(failure, LLMReadableException):
        return
    cause = failure.__cause__
    leaked = (
        not expect_leaks
        and isinstance(failure, SystemException)
        and not (cause is None or isinstance(cause, LLMReadableException))
    )
    unclean = text_problems(failure.explain_to_llm())
    if not (leaked or unclean):
        return
    config.stash.setdefault(REPORT, []).append(
        {
            "tool": tool,
            "scenario": where,
            "expected": "(run_tool)",
            "failed": True,
            "class": type(cause).__name__ if leaked else type(failure).__name__,
            "correctable": failure.is_correctable,
            "leaked": leaked,
            "unclean": unclean,
            "violation": None,
            "snapshot": "none",
            "not_applicable": None,
        }
    )


def observations(config: pytest.Config) -> list[dict[str, Any]]:
    """Every distinct observation of the run, sorted by tool then scenario name."""
    entries: list[dict[str, Any]] = config.stash.get(REPORT, [])
    # One call seen by several frameworks' harnesses is one row, not five identical ones.
    unique = {json.dumps(entry, sort_keys=True): entry for entry in entries}
    return sorted(unique.values(), key=lambda o: (o["tool"], o["scenario"]))


def merge_worker(config: pytest.Config, workeroutput: dict[str, Any]) -> None:
    """On the xdist controller: take a finished worker's observations."""
    shipped = workeroutput.get(WORKER_KEY)
    if shipped:
        config.stash.setdefault(REPORT, []).extend(json.loads(shipped))


def ship_from_worker(config: pytest.Config) -> None:
    """On an xdist worker: hand this worker's observations to the controller."""
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput[WORKER_KEY] = json.dumps(config.stash.get(REPORT, None) or [])


def verdict(entry: dict[str, Any]) -> str:
    if entry["not_applicable"]:
        return "n/a"
    if entry["violation"]:
        return "broken"
    if entry["leaked"] or entry["unclean"]:
        return "leaked" if entry["leaked"] else "unclean"
    if entry["snapshot"] == "differs":
        return "changed"  # the contract holds, but the model now reads another text
    return "ok"


def _got(entry: dict[str, Any]) -> str:
    if entry["not_applicable"]:
        return f"n/a: {entry['not_applicable']}"
    if not entry["failed"]:
        return "result"
    kind = "correctable" if entry["correctable"] else "uncorrectable"
    return f"{entry['class']} ({kind})" + (" LEAKED" if entry["leaked"] else "")


def strict_problems(entries: list[dict[str, Any]]) -> list[str]:
    """What ``--nucleo-strict`` fails the run for: leaked exceptions and unclean texts."""
    problems = []
    for entry in entries:
        where = f"{entry['tool']} [{entry['scenario']}]"
        if entry["leaked"]:
            problems.append(
                f"{where}: leaked {entry['class']} (reached the model as a system error)"
            )
        if entry["unclean"]:
            problems.append(f"{where}: unclean text ({'; '.join(entry['unclean'])})")
    return problems


def terminal_lines(entries: list[dict[str, Any]]) -> list[str]:
    header = ("tool", "scenario", "expected", "got", "snapshot", "verdict")
    rows = [
        (e["tool"], e["scenario"], e["expected"], _got(e), e["snapshot"], verdict(e))
        for e in entries
    ]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return [fmt.format(*header), fmt.format(*("-" * w for w in widths))] + [
        fmt.format(*row) for row in rows
    ]


def markdown(entries: list[dict[str, Any]]) -> str:
    lines = [
        "## pytest-nucleo failure matrix",
        "",
        summary(entries),
        "",
        "| tool | scenario | expected | got | snapshot | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for e in entries:
        cells = (e["tool"], e["scenario"], e["expected"], _got(e), e["snapshot"], verdict(e))
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def summary(entries: list[dict[str, Any]]) -> str:
    counts = {"ok": 0, "broken": 0, "n/a": 0, "leaked": 0, "unclean": 0, "changed": 0}
    for entry in entries:
        counts[verdict(entry)] += 1
    tools = len({e["tool"] for e in entries})
    text = (
        f"{tools} tool(s), {len(entries)} scenario(s): {counts['ok']} ok, "
        f"{counts['broken']} broken, {counts['n/a']} not applicable"
    )
    if counts["changed"]:
        text += f", {counts['changed']} with a changed text"
    seen_by_runner = counts["leaked"] + counts["unclean"]
    return text + (f", {seen_by_runner} leaked or unclean in run_tool" if seen_by_runner else "")


def report_paths(path: str) -> tuple[Path, Path]:
    """``<path>.json`` and ``<path>.md``; a ``.json`` or ``.md`` suffix on ``path`` is dropped."""
    stem = Path(path)
    if stem.suffix in (".json", ".md"):
        stem = stem.with_suffix("")
    return stem.with_name(stem.name + ".json"), stem.with_name(stem.name + ".md")


def write_reports(path: str, entries: list[dict[str, Any]]) -> tuple[Path, Path]:
    """Write the matrix as JSON and Markdown (see :func:`report_paths`)."""
    json_path, md_path = report_paths(path)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"summary": summary(entries), "observations": entries}
    json_path.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    md_path.write_text(markdown(entries), encoding="utf-8")
    return json_path, md_path
