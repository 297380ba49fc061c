"""Local ingest against its hardware bound: end-to-end ingest throughput over chunk-embedding-only
throughput, in one run.

The bound: the first ``--docs`` records of the 2wiki corpus chunked as an ingest chunks them, and the
chunks embedded by the same model with nothing else running (documents per second of embedding). The
ingest: the same records into a fresh database of one embedded ArcadeDB server and a fresh qdrant-edge
shard, every post-step included, models loaded before the clock starts. The two alternate ``--repeat``
times and each keeps its fastest run. Prints the ratio, the ingest's stage seconds and each stage's
busy share of the wall time (stages overlap, so shares can sum past 100%), and writes a JSON report
(commit, machine, cores, load average at start and end, per-run figures) to ``--out``.

    python -m benchmarks.ingest_bound [--docs 500] [--repeat 2] [--out benchmarks/reports/ingest-bound.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

from benchmarks.common import commit, throwaway_arcadedb
from benchmarks.paths import SHARED_DATA
from hopgraph.app.platform import Platform
from hopgraph.core.settings import GraphSettings, IngestSettings, Settings
from hopgraph.ingest.chunking import Chunker
from hopgraph.vectors.embedders import make_embedder

CORPUS = SHARED_DATA / "2wiki-corpus" / "corpus.jsonl"


def _texts(corpus: Path) -> list[str]:
    return [str(json.loads(line).get("title", "")) + "\n" + str(json.loads(line)["text"])
            for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]


def embed_only(corpus: Path, settings: Settings) -> dict[str, Any]:
    """Seconds to embed the corpus's chunks with a loaded model and an empty cache."""
    embedder = make_embedder(settings.embedder)
    embedder.embed(["warm"])
    c = settings.chunking
    chunker = Chunker(embedder.count_tokens, c.max_tokens, c.overlap_tokens, c.sections)
    chunks = [ch.text for i, text in enumerate(_texts(corpus)) for ch in chunker.chunk_document(f"d{i}", text)[1]]
    t = time.perf_counter()
    embedder.embed(chunks)
    return {"seconds": time.perf_counter() - t, "chunks": len(chunks)}


def ingest(corpus: Path, settings: Settings) -> dict[str, Any]:
    """Seconds of one end-to-end ingest (models loaded first), with its report's stage seconds."""
    with Platform(settings) as p:
        p.embedder.embed(["warm"])
        p.extractor_warmup()
        t = time.perf_counter()
        report = p.ingest([corpus])
        wall = time.perf_counter() - t
    return {"seconds": wall, "documents": report.documents_ingested, "chunks": report.chunks,
            "stage_seconds": {k: round(v, 2) for k, v in sorted(report.stage_seconds.items(), key=lambda kv: -kv[1])},
            "stage_threads": report.stage_threads}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=500, help="Records of the 2wiki corpus (default 500).")
    ap.add_argument("--repeat", type=int, default=2, help="Runs of each, alternating; the fastest kept.")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/reports/ingest-bound.json"))
    ap.add_argument("--embed-threads", type=int, default=0, help="ingest.embed_threads (0: the default).")
    args = ap.parse_args()
    load_start = os.getloadavg()
    runs: dict[str, list[dict[str, Any]]] = {"embed_only": [], "ingest": []}
    with throwaway_arcadedb() as (_info, graph, tmp):
        corpus = tmp / "corpus.jsonl"
        corpus.write_text("\n".join(CORPUS.read_text(encoding="utf-8").splitlines()[: args.docs]) + "\n",
                          encoding="utf-8")
        for k in range(args.repeat):
            name = f"run{k}"
            settings = Settings(data_dir=tmp / name, graph=GraphSettings.model_validate(
                {**graph.model_dump(), "database": name}), ingest=IngestSettings(embed_threads=args.embed_threads))
            runs["embed_only"].append(embed_only(corpus, settings))
            print(f"  run {k + 1}: embedding only {runs['embed_only'][-1]['seconds']:.1f} s", flush=True)
            runs["ingest"].append(ingest(corpus, settings))
            print(f"  run {k + 1}: ingest {runs['ingest'][-1]['seconds']:.1f} s", flush=True)
    bound = min(runs["embed_only"], key=lambda r: r["seconds"])
    best = min(runs["ingest"], key=lambda r: r["seconds"])
    docs = best["documents"]
    ratio = bound["seconds"] / best["seconds"]
    shares = {k: round(v / best["seconds"], 3) for k, v in best["stage_seconds"].items()}
    report = {"commit": commit(), "embed_threads": args.embed_threads, "machine": platform.machine(),
              "cores": os.cpu_count(),
              "date": time.strftime("%Y-%m-%d"), "docs": docs, "load_average_start": load_start[0],
              "load_average_end": os.getloadavg()[0], "ratio": round(ratio, 3), "embed_only": runs["embed_only"],
              "ingest": runs["ingest"], "busy_share": shares}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"{docs} documents of 2wiki-corpus, {os.cpu_count()} cores, load average {load_start[0]:.1f} -> "
          f"{report['load_average_end']:.1f}; fastest of {args.repeat} each")
    print(f"embedding only: {bound['chunks']} chunks in {bound['seconds']:.1f} s = "
          f"{docs / bound['seconds']:.2f} docs/s")
    print(f"ingest end to end: {best['seconds']:.1f} s = {docs / best['seconds']:.2f} docs/s; "
          f"ratio to embedding only {ratio:.2f}")
    print("stage busy share of the ingest's wall time: " +
          ", ".join(f"{k} {100 * v:.0f}%" for k, v in shares.items() if v >= 0.01))
    print(f"report: {args.out}")


if __name__ == "__main__":
    main()
