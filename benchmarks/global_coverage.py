"""Global sense-making without gold answers: for questions about a whole corpus, how much of it each
mode's top 10 covers: distinct source groups (episodes, books: a document's title with a trailing
``-partN`` removed) and distinct communities of the entities those passages mention; and which
mode ``auto`` routed each question to.

Each mode's per-question counts are kept, with the paired bootstrap 95% interval of its mean difference
from ``--baseline`` (``dense``).

    python -m benchmarks.global_coverage ../shared/data/podcasts --data-dir /tmp/podcasts \\
        [--modes global,raptor,auto,graph,dense] [--baseline dense] [--out coverage.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

_PART = re.compile(r"[-_ ]part\s*\d+$", re.IGNORECASE)


def main() -> None:
    from hopgraph.app.platform import Platform
    from hopgraph.core.settings import Settings

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", type=Path, help="A folder with corpus.jsonl and queries.jsonl.")
    ap.add_argument("--data-dir", type=Path, required=True, help="Where the corpus is (or gets) ingested.")
    ap.add_argument("--modes", default="global,raptor,auto,graph,dense")
    ap.add_argument("--baseline", default="dense", help="The mode every other mode is compared with.")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    base = Settings()
    s = base.model_copy(update={"data_dir": args.data_dir,
                                "retrieval": base.retrieval.model_copy(update={"stage_cap_ms": None})})
    questions = [json.loads(line)["text"] for line in (args.dataset / "queries.jsonl").read_text().splitlines()
                 if line.strip()]
    report: dict[str, Any] = {}
    with Platform(s) as p:
        t = time.perf_counter()
        ingested = p.ingest([args.dataset / "corpus.jsonl"])
        print(f"corpus: {ingested.documents_ingested} ingested, {ingested.documents_unchanged} unchanged "
              f"({time.perf_counter() - t:.0f}s); {len(questions)} questions", flush=True)
        if "raptor" in args.modes.split(",") or "auto" in args.modes.split(","):
            tree = p.update_tree()
            print(f"RAPTOR tree: {tree.branches} branch(es), {tree.built} built ({tree.seconds:.0f}s)", flush=True)
        snap = p.retriever.snapshot()
        group = {r["id"]: _PART.sub("", r["title"] or r["id"])
                 for r in p.browser.export_nodes("Document")}
        member_of: dict[int, set[str]] = {}
        for cid, members in snap.community_members.items():
            for e in members:
                member_of.setdefault(int(e), set()).add(cid)
        for mode in args.modes.split(","):
            groups: list[int] = []
            communities: list[int] = []
            latency: list[float] = []
            routed: dict[str, int] = {}
            examples: list[dict[str, str]] = []
            for q in questions:
                t = time.perf_counter()
                res = p.query(q, mode=mode, top_k=10, explain=mode == "auto")
                latency.append((time.perf_counter() - t) * 1000)
                groups.append(len({group.get(r.citation.document_id, "") for r in res.results}))
                found: set[str] = set()
                for r in res.results:
                    j = snap.chunk_index.get(r.citation.chunk_id)
                    for e in (snap.incidence[j].indices if j is not None else ()):
                        found |= member_of.get(int(e), set())
                communities.append(len(found))
                if mode == "auto":
                    chosen = res.explain["auto"]["mode"]
                    routed[chosen] = routed.get(chosen, 0) + 1
                if len(examples) < 3:
                    examples.append({"question": q, "context": res.context[:2000]})
            report[mode] = {"groups@10": round(statistics.mean(groups), 2),
                            "communities@10": round(statistics.mean(communities), 1),
                            "p50_ms": round(statistics.median(latency), 1), "routed": routed, "examples": examples,
                            "per_question": {"groups@10": groups, "communities@10": communities}}
            print(mode, {k: v for k, v in report[mode].items() if k not in ("examples", "per_question")}, flush=True)
    report = {"dataset": args.dataset.name, "questions": len(questions), "baseline": args.baseline,
              "modes": report, "gains": _gains(report, args.baseline)}
    for g in report["gains"]:
        print(f"{g['mode']:>8} - {g['baseline']}: {g['metric']} {g['mean']:+.2f} [{g['low']:+.2f}, {g['high']:+.2f}]")
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))


def _gains(report: dict[str, Any], baseline: str) -> list[dict[str, Any]]:
    """Each mode's mean difference from ``baseline`` per metric, with its paired bootstrap 95% interval."""
    from hopgraph.evaluation.stats import paired_interval

    if baseline not in report:
        return []
    out = []
    for mode, row in report.items():
        for metric, values in row["per_question"].items():
            if mode == baseline:
                continue
            # paired_interval gives points (x100); these are counts
            mean, low, high = (v / 100 for v in paired_interval(values, report[baseline]["per_question"][metric]))
            out.append({"mode": mode, "baseline": baseline, "metric": metric, "mean": round(mean, 2),
                        "low": round(low, 2), "high": round(high, 2)})
    return out


if __name__ == "__main__":
    main()
