"""One store per conversation, the results pooled: every BEIR subfolder of a folder (one conversation
each, e.g. ``../shared/data/locomo-dev-conv/conv-26``) is evaluated by ``hopgraph eval`` on its own data
dir and its own embedded ArcadeDB (own ports, stopped after its run), one after the other; the per-query
records of all the folders are pooled and reported per question type (``metadata.type``) and for all:
R@1, R@5, MRR@10 per mode, the best baseline of the same run (by R@5), ``graph``'s gain over it and the
walk (``graph`` - ``graph-0-hops``), each with a paired bootstrap 95% interval.

    python -m benchmarks.conversations_pooled ../shared/data/locomo-dev-conv \\
        --modes graph,graph-0-hops,bm25,dense,rrf,mix,auto --work /tmp/locomo-conv \\
        --out locomo-conv-pooled.json --md locomo-conv-pooled.md

Reruns reuse each folder's store (ingest skips unchanged documents) and, with ``--resume``, its report.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import statistics
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.common import commit, free_port
from benchmarks.report_tables import table
from hopgraph.core.settings import GraphSettings
from hopgraph.evaluation.evaluate import load_dataset
from hopgraph.evaluation.stats import BASELINES, paired_interval
from hopgraph.graphdb.bolt.arcadedb_server import EmbeddedArcadeDB

METRICS = ("R@1", "R@5", "MRR@10")
WALK = ("graph", "graph-0-hops")  # the walk's worth: the first minus the second


def conversation_sets(root: Path) -> list[Path]:
    """The BEIR subfolders of ``root`` (those with a ``queries.jsonl``), by name."""
    found = sorted(p for p in root.iterdir() if (p / "queries.jsonl").is_file())
    if not found:
        raise SystemExit(f"{root} has no BEIR subfolder (a folder with queries.jsonl)")
    return found


def run_set(folder: Path, work: Path, modes: str, resume: bool) -> dict[str, Any]:
    """``hopgraph eval`` of one folder on its own data dir and embedded ArcadeDB (stopped afterwards);
    returns its report (a run with failed modes still returns the report: they carry their error)."""
    data_dir = work / folder.name
    graph = GraphSettings(bolt_port=free_port(), http_port=free_port())
    env = {**os.environ, "HOPGRAPH_DATA_DIR": str(data_dir), "HOPGRAPH_GRAPH__BOLT_PORT": str(graph.bolt_port),
           "HOPGRAPH_GRAPH__HTTP_PORT": str(graph.http_port)}
    out = data_dir / "report.json"
    cmd = [sys.executable, "-m", "hopgraph.cli", "eval", str(folder), "--modes", modes, "--out", str(out)]
    try:
        done = subprocess.run(cmd + (["--resume"] if resume else []), env=env, check=False)
    finally:
        EmbeddedArcadeDB(data_dir / "arcadedb", graph).stop()
    if not out.is_file():
        raise SystemExit(f"hopgraph eval {folder} wrote no report (exit code {done.returncode})")
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return report


def pool(reports: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The per-query records of several reports (set name -> ``hopgraph eval`` report) as one report:
    each record's id becomes ``<set>/<id>``; a mode is pooled only when every report has it without
    error (the others are listed under ``incomplete``); ``metrics`` are the pooled means (points)."""
    names = list(reports)
    every = [dict.fromkeys(r["modes"]) for r in reports.values()]
    modes = [m for m in every[0] if all(m in r["queries"] for r in reports.values())] if every else []
    seen = {m for r in every for m in r}
    queries: dict[str, list[dict[str, Any]]] = {
        m: [{**q, "id": f"{name}/{q['id']}", "set": name} for name in names for q in reports[name]["queries"][m]]
        for m in modes}
    out: dict[str, Any] = {"sets": names, "modes": {}, "queries": queries,
                           "incomplete": sorted(seen - set(modes))}
    for m, recs in queries.items():
        keys = dict.fromkeys(k for q in recs for k in q["metrics"])
        lat = [float(q["latency_ms"]) for q in recs if "latency_ms" in q]
        out["modes"][m] = {
            "metrics": {k: round(100 * sum(q["metrics"].get(k, 0.0) for q in recs) / len(recs), 1) for k in keys},
            "latency_ms": {"p50": round(statistics.median(lat), 1)} if lat else {},
            "queries": len(recs)}
    return out


def pooled_groups(groups: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """Set name -> (query id -> type), as the pooled ids ``<set>/<id>`` -> type."""
    return {f"{name}/{q}": g for name, per in groups.items() for q, g in per.items()}


def _mean(col: Mapping[str, float], ids: Sequence[str]) -> float:
    return round(100 * sum(col[q] for q in ids) / max(len(ids), 1), 1)


def _interval(a: Mapping[str, float], b: Mapping[str, float], ids: Sequence[str]) -> list[float]:
    return [round(x, 1) for x in paired_interval([a[q] for q in ids], [b[q] for q in ids])]


def type_rows(pooled: Mapping[str, Any], groups: Mapping[str, str], metrics: Sequence[str] = METRICS
              ) -> list[dict[str, Any]]:
    """Per question type ("all" first, then the types by number of queries): the queries, each mode's
    means, the best baseline by R@5 on those queries, ``graph``'s gain over it and the walk per metric
    (``[mean, low, high]`` in points; absent where a mode was not run)."""
    runs = pooled["queries"]
    if not runs:
        return []
    cols = {m: {k: {q["id"]: float(q["metrics"].get(k, 0.0)) for q in recs} for k in metrics}
            for m, recs in runs.items()}
    every = [q["id"] for q in next(iter(runs.values()))]
    counts: dict[str, int] = {}
    for q in every:
        if q in groups:
            counts[groups[q]] = counts.get(groups[q], 0) + 1
    parts = [("all", every)] + [(g, [q for q in every if groups.get(q) == g])
                                for g in sorted(counts, key=lambda g: (-counts[g], g))]
    rows = []
    for label, ids in parts:
        row: dict[str, Any] = {"type": label, "queries": len(ids),
                               "means": {m: {k: _mean(cols[m][k], ids) for k in metrics} for m in cols}}
        present = [b for b in BASELINES if b in cols]
        if present:
            best = max(present, key=lambda b: row["means"][b]["R@5"] if "R@5" in metrics else 0.0)
            row["best_baseline"] = best
            if "graph" in cols:
                row["gain"] = {k: _interval(cols["graph"][k], cols[best][k], ids) for k in metrics}
        if all(m in cols for m in WALK):
            row["walk"] = {k: _interval(cols[WALK[0]][k], cols[WALK[1]][k], ids) for k in metrics}
        rows.append(row)
    return rows


def _fmt(g: Sequence[float]) -> str:
    return f"{g[0]:+.1f} [{g[1]:+.1f}, {g[2]:+.1f}]"


def _best(row: Mapping[str, Any]) -> str:
    best = row.get("best_baseline")
    return f"{best} {row['means'][best]['R@5']:.1f}" if best else "—"


def markdown(rows: Sequence[Mapping[str, Any]], latency: Mapping[str, Mapping[str, float]]) -> list[str]:
    """The summary table (R@5 per type), then one table per type (R@1, R@5, MRR@10 per mode, the gain and
    the walk per metric), then the per-set latencies."""
    lines = [*table(["type (queries)", "best baseline R@5", "`graph` R@5", "gain R@5 [95%]",
                     "walk R@5 [95%]", "gain R@1 [95%]", "gain MRR@10 [95%]"],
                    [[f"{r['type']} ({r['queries']})",
                      _best(r),
                      f"{r['means']['graph']['R@5']:.1f}" if "graph" in r["means"] else "—",
                      _fmt(r["gain"]["R@5"]) if "gain" in r else "—", _fmt(r["walk"]["R@5"]) if "walk" in r else "—",
                      _fmt(r["gain"]["R@1"]) if "gain" in r else "—",
                      _fmt(r["gain"]["MRR@10"]) if "gain" in r else "—"] for r in rows])]
    for r in rows:
        ks = list(next(iter(r["means"].values())))
        lines += [f"**{r['type']}** ({r['queries']} queries; best baseline `{r.get('best_baseline', '—')}`)", "",
                  *table(["mode", *ks], [[f"`{m}`", *(f"{v[k]:.1f}" for k in ks)] for m, v in r["means"].items()])]
        for name in ("gain", "walk"):
            if name in r:
                what = (f"`graph` - `{r['best_baseline']}`" if name == "gain" else "walk (`graph` - `graph-0-hops`)")
                lines += [f"{what}: " + ", ".join(f"{k} {_fmt(r[name][k])}" for k in ks), ""]
    if latency:
        lines += ["Latency p50 ms per set (query embedding excluded):", "",
                  *table(["set", *(f"`{m}`" for m in next(iter(latency.values())))],
                         [[s, *(f"{v:.1f}" for v in per.values())] for s, per in latency.items()])]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path, help="A folder of BEIR subfolders, one conversation each.")
    ap.add_argument("--modes", default="graph,graph-0-hops,bm25,dense,rrf,mix,auto")
    ap.add_argument("--work", type=Path, required=True, help="Holds one data dir per subfolder (reused on reruns).")
    ap.add_argument("--out", type=Path, required=True, help="The pooled report (JSON).")
    ap.add_argument("--md", type=Path, help="Also write the tables as Markdown here.")
    ap.add_argument("--resume", action="store_true", help="Pass --resume to each `hopgraph eval`.")
    args = ap.parse_args()
    sets = conversation_sets(args.root)
    reports = {f.name: run_set(f, args.work.resolve(), args.modes, args.resume) for f in sets}
    groups = pooled_groups({f.name: load_dataset(f).groups for f in sets})
    pooled = pool(reports)
    rows = type_rows(pooled, groups)
    latency = {name: {m: r["modes"][m]["latency_ms"]["p50"] for m in pooled["modes"]}
               for name, r in reports.items()}
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    command = "python -m benchmarks.conversations_pooled " + shlex.join(sys.argv[1:])
    data = {"dataset": str(args.root), "command": command, "commit": commit(), "date": when,
            "failed": {n: {m: v["error"] for m, v in r["modes"].items() if "error" in v} for n, r in reports.items()},
            "types": rows, "latency_p50_ms": latency, **pooled}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=1), encoding="utf-8")
    lines = [f"# Pooled: {args.root.name} ({', '.join(r.name for r in sets)}), one store each", "",
             f"*Command*: `{command}` · *commit*: {data['commit']} · *date*: {when}", "", *markdown(rows, latency)]
    if pooled["incomplete"]:
        lines += [f"Not pooled (failed or missing in some set): {', '.join(pooled['incomplete'])}", ""]
    text = "\n".join(lines)
    print(text)
    if args.md:
        args.md.write_text(text, encoding="utf-8")
    if pooled["incomplete"]:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
