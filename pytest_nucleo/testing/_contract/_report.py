"""The failure matrix seen in a run: collected per worker, merged, rendered, and gated on.

Each ToolContract scenario records one observation (tool x scenario -> class, correctability,
snapshot state, the text the model read, verdict). Under pytest-xdist every worker ships its
observations to the controller through ``workeroutput``, which merges them before rendering.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # importing _scenarios at run time would pull respx into every session's hooks
    from ._scenarios import Observation

REPORT = pytest.StashKey[list[dict[str, Any]]]()
SKIP_WHERE = pytest.StashKey[tuple[str, int]]()
"""Where a not-applicable scenario's skip is reported: the contract class's file and line."""
WORKER_KEY = "nucleo_observations"


VERDICTS = ("ok", "broken", "changed", "new", "unclean", "leaked", "not applicable")
"""Every verdict a row can have; all but ``ok`` and ``not applicable`` are problems."""
_FINE = ("ok", "not applicable")


def record(config: pytest.Config, observation: Observation) -> None:
    """Add one observation to this process's report."""
    entry = observation.as_dict()
    entry["verdict"] = verdict(entry)
    config.stash.setdefault(REPORT, []).append(entry)


def record_runner_failure(
    config: pytest.Config,
    tool: str,
    where: str,
    failure: BaseException,
    *,
    expect_leaks: bool = False,
) -> None:
    """Add what ``run_tool`` logged for a failure, correctable or not, when it leaked or is
    unclean.

    Only problems are kept: the matrix shows contract scenarios, and ``--nucleo-strict`` needs
    to see a leak even in a test that passed. In a test marked
    ``@pytest.mark.nucleo(expect_leaks=True)`` a leak is deliberate and not kept; an unclean
    text still is.
    """
    from pytest_nucleo import LLMReadableException, SystemException
    from pytest_nucleo.testing._failure import fake_problem

    from ._hygiene import text_problems
    from ._scenarios import quote_read
    from ._wording import enforced_wait

    # A failure from the fake upstream's own problem is the test's, not a leak of the tool:
    # the plugin fails the test with it.
    if not isinstance(failure, LLMReadableException) or fake_problem(failure) is not None:
        return
    cause = failure.__cause__
    leaked = (
        not expect_leaks
        and isinstance(failure, SystemException)
        and not (cause is None or isinstance(cause, LLMReadableException))
    )
    text = failure.explain_to_llm()
    unclean = text_problems(text, retry_after=enforced_wait(failure))
    if not (leaked or unclean):
        return
    entry = {
        "tool": tool,
        "scenario": where,
        "expected": "(run_tool)",
        "failed": True,
        "class": type(cause).__name__ if leaked else type(failure).__name__,
        "correctable": failure.is_correctable,
        "leaked": leaked,
        "unclean": list[str](unclean),
        "rules": list(dict.fromkeys(p.rule for p in unclean)),
        "violation": None,
        "snapshot": "none",
        "not_applicable": None,
        "text": quote_read(text),
        "differs": None,
    }
    entry["verdict"] = verdict(entry)
    config.stash.setdefault(REPORT, []).append(entry)


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
    """One of :data:`VERDICTS` for a row."""
    if entry["not_applicable"]:
        return "not applicable"
    if entry["violation"]:
        return "broken"
    if entry["leaked"] or entry["unclean"]:
        return "leaked" if entry["leaked"] else "unclean"
    if entry["snapshot"] == "differs":
        return "changed"  # the contract holds, but the model now reads another text
    if entry["snapshot"] == "missing":
        return "new"  # the contract holds; no snapshot stores the text yet
    return "ok"


def _verdict(entry: dict[str, Any]) -> str:
    # Rows shipped by a worker of an older run may lack it; compute it then.
    return str(entry.get("verdict") or verdict(entry))


def _got(entry: dict[str, Any]) -> str:
    if entry["not_applicable"]:
        return f"n/a: {entry['not_applicable']}"
    if not entry["failed"]:
        return "result"
    kind = "correctable" if entry["correctable"] else "uncorrectable"
    got = f"{entry['class']} ({kind})" + (" LEAKED" if entry["leaked"] else "")
    differs = entry.get("differs")  # rows shipped by a worker of an older run lack it
    return f"{got}, but {differs}" if differs else got


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


_COLUMNS = ("tool", "scenario", "expected", "got", "snapshot", "verdict")


def _cells(entry: dict[str, Any]) -> tuple[str, ...]:
    return (
        entry["tool"],
        entry["scenario"],
        entry["expected"],
        _got(entry),
        entry["snapshot"],
        _verdict_cell(entry),
    )


def _verdict_cell(entry: dict[str, Any]) -> str:
    """The verdict, with the rules of the text style the row's text broke: "broken (says
    twice)" tells a reviewer where to look before reading the text."""
    shown = _verdict(entry)
    rules = entry.get("rules") or []  # rows shipped by a worker of an older run lack it
    return f"{shown} ({', '.join(rules)})" if rules else shown


def problem_rows(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows that need a look: every verdict but ``ok`` and ``not applicable``."""
    return [entry for entry in entries if _verdict(entry) not in _FINE]


def terminal_lines(entries: list[dict[str, Any]], width: int | None = None) -> list[str]:
    """The rows as a table; when the table is wider than ``width``, each row as a heading line
    and its details wrapped below it, so no line is longer than ``width``."""
    rows = [_COLUMNS, *(_cells(e) for e in entries)]
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(_COLUMNS))]
    if width is None or sum(widths) + 2 * (len(widths) - 1) <= width:
        lines = [_row(rows[0], widths), "  ".join("-" * w for w in widths)]
        return [line.rstrip() for line in (*lines, *(_row(row, widths) for row in rows[1:]))]
    import textwrap

    stacked = []
    for tool, scenario, expected, got, snapshot, verdict_ in rows[1:]:
        stacked += textwrap.wrap(
            f"{tool} [{scenario}]: {verdict_}", width, subsequent_indent="    "
        )
        details = f"expected {expected}, got {got}, snapshot {snapshot}"
        stacked += textwrap.wrap(details, width, initial_indent="  ", subsequent_indent="    ")
    return stacked


def _row(cells: tuple[str, ...], widths: list[int]) -> str:
    return "  ".join(str(cell).ljust(w) for cell, w in zip(cells, widths, strict=True))


def markdown(entries: list[dict[str, Any]]) -> str:
    lines = [
        "## pytest-nucleo failure matrix",
        "",
        summary(entries),
        "",
        "| " + " | ".join(_COLUMNS) + " |",
        "|---|---|---|---|---|---|",
    ]
    for e in entries:
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in _cells(e)) + " |")
    return "\n".join(lines) + "\n"


def summary(entries: list[dict[str, Any]]) -> str:
    counts = dict.fromkeys(VERDICTS, 0)
    for entry in entries:
        counts[_verdict(entry)] += 1
    tools = len({e["tool"] for e in entries})
    text = (
        f"{tools} tool(s), {len(entries)} scenario(s): {counts['ok']} ok, "
        f"{counts['broken']} broken, {counts['not applicable']} not applicable"
    )
    if counts["changed"]:
        text += f", {counts['changed']} with a changed text"
    if counts["new"]:
        text += f", {counts['new']} new (no snapshot yet)"
    seen_by_runner = counts["leaked"] + counts["unclean"]
    return text + (f", {seen_by_runner} leaked or unclean in run_tool" if seen_by_runner else "")


def new_snapshots_hint(entries: list[dict[str, Any]]) -> str | None:
    """One sentence for the rows whose text no snapshot stores yet, or None."""
    new = sum(1 for entry in entries if _verdict(entry) == "new")
    if not new:
        return None
    return (
        f"{new} scenario text(s) have no snapshot yet (verdict new): read them in the failures "
        "above, then run pytest --snapshot-update to store them, and commit the snapshot files"
    )


def report_paths(path: str) -> tuple[Path, Path]:
    """``<path>.json`` and ``<path>.md``; a ``.json`` or ``.md`` suffix on ``path`` is dropped."""
    stem = Path(path)
    if stem.suffix in (".json", ".md"):
        stem = stem.with_suffix("")
    return stem.with_name(stem.name + ".json"), stem.with_name(stem.name + ".md")


def unwritable(path: str) -> str | None:
    """Why the report files of ``path`` (see :func:`report_paths`) cannot be written, or None.
    Checked when the run starts, so that a bad path is said at once, not after the tests."""
    import os

    for target in report_paths(path):
        if target.is_dir():
            return f"{target} is a folder"
        if target.exists():
            if not os.access(target, os.W_OK):
                return f"{target} exists and cannot be written (no permission)"
            continue
        folder = target.parent
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent  # the nearest existing folder, where the others are made
        if not folder.is_dir():
            return f"{folder} is a file, not a folder, so {target} cannot be made"
        if not os.access(folder, os.W_OK | os.X_OK):
            return f"the folder {folder} cannot be written (no permission)"
    return None


def published(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``entries`` as a report file or a CI summary shows them: every text with its
    secret-looking tokens masked. Such files are shared (a GitHub step summary, an artifact),
    so a credential a broken tool put in its text stops at the test's own output, which
    quotes what the model read."""
    from pytest_nucleo._text._secrets import redact

    def masked(value: Any) -> Any:
        if isinstance(value, str):
            return redact(value)
        if isinstance(value, list):
            return [masked(item) for item in value]
        return value

    return [{key: masked(value) for key, value in entry.items()} for entry in entries]


def write_reports(path: str, entries: list[dict[str, Any]]) -> tuple[Path, Path]:
    """Write the matrix as JSON and Markdown (see :func:`report_paths`), published."""
    entries = published(entries)
    json_path, md_path = report_paths(path)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"summary": summary(entries), "observations": entries}
    json_path.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    md_path.write_text(markdown(entries), encoding="utf-8")
    return json_path, md_path
