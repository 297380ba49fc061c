"""The "Peak memory per mode" section of ``benchmarks/RESULTS.md``, from ``reports/memory.json``
(``python -m benchmarks.memory --out``)."""

from __future__ import annotations

from benchmarks.report_tables import Section, load, table


def scale_label(scale: str) -> str:
    """``5000:110000:600000`` -> ``5k docs / 110k entities / 600k edges``."""
    docs, entities, edges = (int(x) for x in scale.split(":"))
    short = [f"{n / 1e6:g}M" if n >= 1_000_000 else f"{n / 1e3:g}k" for n in (docs, entities, edges)]
    return f"{short[0]} docs / {short[1]} entities / {short[2]} edges"


def memory() -> Section:
    name = "memory.json"
    r = load(name)
    ok = [row for row in r["rows"] if "error" not in row]
    rows = [[f"`{row['mode']}`", scale_label(row["scale"]), f"{row['state_rss_mb']:,}", f"{row['query_peak_rss_mb']:,}",
             f"{row['query_growth_mb']:+,}", f"{row['later_growth_mb']:+,}",
             f"{row['peak_vs_graph']:.2f}" if "peak_vs_graph" in row else "—", f"{row['p50_ms']:,.1f}",
             str(row.get("queries", "—"))] for row in ok]
    errors: dict[tuple[str, str], list[str]] = {}
    for row in r["rows"]:
        if "error" in row:
            errors.setdefault((row["scale"], row["error"].split("; choose one of")[0]), []).append(f"`{row['mode']}`")
    failed = [f"{', '.join(modes)} at {scale_label(scale)} ({why})" for (scale, why), modes in errors.items()]
    above = [f"`{row['mode']}` at {scale_label(row['scale'])}" for row in ok if row.get("peak_vs_graph", 0) > 2]
    queries = sorted({run["queries"] for run in r["runs"]})
    lines = ["Resident memory of the served index state and each mode's peak over its queries, on generated "
             "corpora (the synthetic tables of `benchmarks.freshness_scale` served by the real retriever: relation "
             "vectors in qdrant-edge, MiniLM for the queries, an untrained GNN checkpoint of the right shape); "
             f"1 + {' or '.join(map(str, queries))} queries a mode, each mode in a process of its own that builds "
             "the state. Growth is the peak over the queries less the state's RSS; freed memory stays resident "
             "(as served), so it is mostly the first query's, which also loads what a mode loads once; the next "
             "column is the growth of the later queries beyond the RSS after the first. The ratio is the peak "
             "against `graph`'s at the same scale. The machine was shared with other jobs: the p50 latencies "
             "(first query excluded) are orders of magnitude, not timings to compare with other tables. "
             "`pcst` and `gnn` build "
             "only the subgraph induced by `graph`'s expansion candidates, so their per-query memory is bounded by "
             "`retrieval.modes.pcst.candidates`/`gnn.candidates` "
             f"({r['gpu_candidates']} here), not by the corpus. "
             + ("No mode's peak is above 2x `graph`'s." if not above
                else f"Peaks above 2x `graph`'s: {', '.join(above)}.")
             + (f" Not measured: {'; '.join(failed)}." if failed else ""), "",
             *table(["mode", "scale", "state RSS MB", "query peak RSS MB", "growth MB", "later queries' growth MB",
                     "peak / `graph`'s", "p50 ms", "queries"], rows)]
    for run in r["runs"]:
        lines += [f"*Command*: `{run['command']}` · *date*: {run['date']} · *machine*: {run['machine']} · "
                  f"*reports*: `reports/{name}`", ""]
    return Section("Peak memory per mode", (name,), lines)
