"""Compare two ``hopgraph eval --out`` reports of the same set (before and after a change) query by query.

For every mode in either report: how many queries have the same top 10 (ids and order), which differ and
where, and whether a mode that failed failed the same way in both (the same exception type). Exit code 0
when every mode is in both reports with the same rankings or the same failure, else 1.

    python -m benchmarks.same_rankings BEFORE.json AFTER.json [--show 3]
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TOP = 10


@dataclass
class ModeComparison:
    """One mode's outcome in both reports."""

    mode: str
    queries: int = 0
    identical: int = 0
    differing: list[str] = field(default_factory=list)
    outcome: str = ""  # "" ran in both; else why it counts apart (only in one report, failed)
    same: bool = True


def _load(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or "modes" not in data or "queries" not in data:
        raise SystemExit(f"{path}: not a report of `hopgraph eval --out` (no 'modes' and 'queries')")
    return data


def _error(report: dict[str, Any], mode: str) -> str | None:
    """The mode's error, "" when it ran, None when the report lacks it."""
    entry = report["modes"].get(mode)
    return None if entry is None else (entry.get("error") or "")


def compare_mode(before: dict[str, Any], after: dict[str, Any], mode: str) -> ModeComparison:
    """Compare one mode's per-query top ``TOP`` of two reports."""
    out = ModeComparison(mode)
    eb, ea = _error(before, mode), _error(after, mode)
    if eb is None or ea is None:
        out.outcome, out.same = f"only in {'after' if eb is None else 'before'}", False
        return out
    if eb or ea:  # the same exception type is the same outcome (messages may name the data dir)
        out.outcome = f"failed: {eb or 'ran'} | {ea or 'ran'}"
        out.same = bool(eb and ea) and eb.split(":", 1)[0] == ea.split(":", 1)[0]
        return out
    qb = {q["id"]: q["ranked"][:TOP] for q in before["queries"].get(mode, [])}
    qa = {q["id"]: q["ranked"][:TOP] for q in after["queries"].get(mode, [])}
    out.queries = len(qb.keys() | qa.keys())
    out.differing = sorted(q for q in qb.keys() | qa.keys() if qb.get(q) != qa.get(q))
    out.identical = out.queries - len(out.differing)
    out.same = not out.differing
    return out


def compare(before: dict[str, Any], after: dict[str, Any]) -> list[ModeComparison]:
    """Every mode of either report, in the order the reports list them."""
    modes = list(before["modes"]) + [m for m in after["modes"] if m not in before["modes"]]
    return [compare_mode(before, after, m) for m in modes]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--show", type=int, default=3, help="Differing queries listed per mode (default 3).")
    args = ap.parse_args(argv)
    rows = compare(_load(args.before), _load(args.after))
    for r in rows:
        told = r.outcome or f"{r.identical}/{r.queries} identical"
        print(f"{r.mode:<14} {told}{'' if r.same else '  [DIFFERENT]'}")
        for q in r.differing[: args.show]:
            print(f"    query {q}")
    same = all(r.same for r in rows)
    print("all identical" if same else "differences found")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
