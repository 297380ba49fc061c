"""Graph mode with the walk's stopping tolerance at 1e-6 against larger ones, on an evaluated data set.

For each tolerance, every query of the set runs in ``--mode`` on the store ``hopgraph eval`` left in
``--data-dir`` (models loaded, question embeddings computed first); prints how many queries keep the
same top 10 as at 1e-6 and the median ``expansion`` stage time (the walk).

    python -m benchmarks.ppr_tolerance ../shared/data/2wiki-dev-500 --data-dir D [--tol 1e-4 1e-3]
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import hopgraph.retrieval.parts.ppr as ppr
from hopgraph.app.platform import Platform
from hopgraph.cli.gnn import eval_settings
from hopgraph.core.config import load_settings
from hopgraph.retrieval.parts.decompose import split_question


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", type=Path)
    ap.add_argument("--data-dir", type=Path, required=True, help="Where `hopgraph eval` ingested the set.")
    ap.add_argument("--mode", default="graph")
    ap.add_argument("--tol", type=float, nargs="+", default=[1e-4, 1e-3])
    args = ap.parse_args()
    queries = [json.loads(line)["text"] for line in (args.dataset / "queries.jsonl").open(encoding="utf-8")]
    base = load_settings().model_copy(update={"data_dir": args.data_dir})
    s = eval_settings(base, args.dataset, 4 * len(queries))
    s = s.model_copy(update={"retrieval": s.retrieval.model_copy(update={"stage_cap_ms": None})})
    walk = ppr.personalized_pagerank
    runs: dict[float, tuple[list[list[str]], float]] = {}
    with Platform(s) as p:
        p.embedder.embed(["warm"])  # as in eval, where the ingest loaded the model
        p.question_embedder.embed(queries + [part for q in queries for part in split_question(q)])
        for tol in (1e-6, *args.tol):
            ppr.personalized_pagerank = lambda *a, tol=tol, **k: walk(*a, **{**k, "tol": tol})
            ranks, took = [], []
            for q in queries:
                r = p.query(q, mode=args.mode)
                ranks.append([x.citation.chunk_id for x in r.results[:10]])
                took.append(r.timings_ms.get("expansion", 0.0))
            runs[tol] = (ranks, statistics.median(took))
    ppr.personalized_pagerank = walk
    exact, t0 = runs[1e-6]
    for tol in args.tol:
        ranks, t = runs[tol]
        same = sum(a == b for a, b in zip(exact, ranks, strict=True))
        print(f"{args.dataset.name} {args.mode}: tol {tol:g}: {same} of {len(exact)} top-10 rankings as at 1e-6; "
              f"expansion p50 {t0:.1f} -> {t:.1f} ms")


if __name__ == "__main__":
    main()
