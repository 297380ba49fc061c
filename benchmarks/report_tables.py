"""What every section of ``benchmarks/RESULTS.md`` is built from: the reports in ``benchmarks/reports/``, the
day each was committed, Markdown tables and the provenance line under them."""

from __future__ import annotations

import gzip
import json
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from benchmarks.figures import DEV_MACHINE
from benchmarks.paths import SHARED_DATA

HERE = Path(__file__).resolve().parent
REPORTS = HERE / "reports"


@cache
def load(name: str) -> dict[str, Any]:
    """A report of ``benchmarks/reports/`` (``.json.gz`` or ``.json``)."""
    path = REPORTS / name
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


@cache
def added_on(name: str) -> str:
    """The day the report was last committed (``unknown`` outside a git checkout): a report measured
    again is dated by its new run."""
    try:
        out = subprocess.run(["git", "log", "--follow", "--diff-filter=AM", "--format=%ad", "--date=short", "--",
                              str(REPORTS / name)], capture_output=True, text=True, cwd=HERE, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    days = out.stdout.split()
    return days[0] if days else "unknown"


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(r) + " |" for r in rows), ""]


def provenance(names: Sequence[str], command: str, machine: str = DEV_MACHINE) -> list[str]:
    days = sorted({added_on(n) for n in names})
    files = ", ".join(f"`reports/{n}`" for n in names)
    return [f"*Command*: `{command}` · *date*: {', '.join(days)} · *machine*: {machine} · *reports*: {files}", ""]


@dataclass(frozen=True)
class Section:
    title: str
    reports: tuple[str, ...]
    lines: list[str]


def question_types(dataset: str) -> dict[str, str]:
    """Query id -> ``metadata.type`` of a shared data set's queries ({} where they carry none)."""
    path = SHARED_DATA / dataset / "queries.jsonl"
    if not path.is_file():
        return {}
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {q["_id"]: q["metadata"]["type"] for q in rows if (q.get("metadata") or {}).get("type")}


def by_type(every: Sequence[str], groups: Mapping[str, str], least: int = 0) -> list[tuple[str, list[str]]]:
    """("all", ``every``), then each question type's ids in type order; a type with fewer than ``least``
    queries is left out (a handful of queries says nothing)."""
    types = sorted(set(groups.values()))
    parts = [("all", list(every))] + [(g, [q for q in every if groups.get(q) == g]) for g in types]
    return [(label, ids) for label, ids in parts if len(ids) >= least]


def paired_gain(report: dict[str, Any], mode: str, base: str, name: str, ids: Sequence[str],
                base_report: dict[str, Any] | None = None) -> str:
    """The paired bootstrap gain of ``mode`` over ``base`` (of ``base_report``, else of the same report) on
    the queries ``ids`` (from per-query metrics)."""
    from hopgraph.evaluation.stats import paired_interval

    mine = {q["id"]: q["metrics"][name] for q in report["queries"][mode]}
    theirs = {q["id"]: q["metrics"][name] for q in (base_report or report)["queries"][base]}
    mean, low, high = paired_interval([mine[q] for q in ids], [theirs[q] for q in ids])
    return f"{mean:+.1f} [{low:+.1f}, {high:+.1f}]"


def mean_of(report: dict[str, Any], mode: str, name: str, ids: Sequence[str]) -> float:
    got = {q["id"]: q["metrics"][name] for q in report["queries"][mode]}
    return 100 * sum(got[q] for q in ids) / max(len(ids), 1)
