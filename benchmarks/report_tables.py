"""What every section of ``benchmarks/RESULTS.md`` is built from: the reports in ``benchmarks/reports/``, the
day each was committed, Markdown tables and the provenance line under them."""

from __future__ import annotations

import gzip
import json
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from benchmarks.figures import DEV_MACHINE

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
    """The day the report was committed (``unknown`` outside a git checkout)."""
    try:
        out = subprocess.run(["git", "log", "--follow", "--diff-filter=A", "--format=%ad", "--date=short", "--",
                              str(REPORTS / name)], capture_output=True, text=True, cwd=HERE, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    days = out.stdout.split()
    return days[-1] if days else "unknown"


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
