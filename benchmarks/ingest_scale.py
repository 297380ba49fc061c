"""Ingestion scale-out: the same corpus ingested locally and on Ray with 1 and 2 worker processes, in one run.

Each configuration ingests the first ``--docs`` records of the 2wiki corpus into a fresh database of one
embedded ArcadeDB server and a fresh qdrant-edge shard; models are loaded before the clock starts (the
local extraction workers, and on Ray one worker process per worker CPU). Ray runs on a private
instance at 127.0.0.2 with ``num_cpus`` = the worker count. It prints, per configuration, documents/s,
the share of the wall time per stage (on Ray, the workers' stages are CPU-seconds summed over the
workers; ``ray_wait`` is the writer waiting for the cluster), and the writer's utilisation: the share
of the wall time the single ordered writer was busy. From the local run's stages it derives the serial
share ``s`` (what stays on the writer: graph and vector writes, resolution, types, communities) and
Amdahl's bound ``1 / (s + (1 - s) / N)``; from the Ray runs, the writer-bound ceiling (documents per
writer-second) and the per-document worker cost. ``--repeat R`` runs the configurations R times in turn
and keeps each one's fastest run (on a shared machine the load changes between them); the load average
is printed with the table.

    python -m benchmarks.ingest_scale [--docs 300] [--batch 16] [--workers 2 4] [--repeat 1]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

from benchmarks.common import throwaway_arcadedb
from benchmarks.paths import SHARED_DATA
from hopgraph.app.platform import Platform
from hopgraph.core.records import IngestReport
from hopgraph.core.settings import GraphSettings, IngestSettings, Settings

CORPUS = SHARED_DATA / "2wiki-corpus" / "corpus.jsonl"
#: stages the ordered writer runs whatever the engine (the serial part)
WRITER = ("graph_write", "vector_write", "resolve", "forget", "types", "communities", "tree")
#: stages a Ray worker runs (the local run does them in the ingest process and its extraction workers)
WORKER = ("chunk", "extract", "embed")


def _ingest(graph: GraphSettings, tmp: Path, name: str, corpus: Path, batch: int, workers: int) -> dict[str, Any]:
    """One configuration: ``workers`` = 0 is the local engine."""
    import ray

    engine = "ray" if workers else "local"
    settings = Settings(data_dir=tmp / name, graph=graph.model_copy(update={"database": name}),
                        ingest=IngestSettings(doc_batch=batch, engine=engine))
    if workers:
        os.environ.setdefault("RAY_DISABLE_USAGE_STATS", "1")
        ray.init(address="local", _node_ip_address="127.0.0.2", num_cpus=workers, include_dashboard=False,
                 object_store_memory=256 * 2**20, log_to_driver=False)
    try:
        with Platform(settings) as p:
            _ = p.embedder.embed(["warm"])  # model loading is not ingestion
            p.extractor_warmup()
            ingestor = p._ingestor()
            if ingestor._ray is not None:
                ingestor._ray.warm_up()
            t = time.perf_counter()
            report = p.ingest([corpus])
            wall = time.perf_counter() - t
            nodes = ingestor._ray.nodes if ingestor._ray is not None else []
    finally:
        if workers:
            ray.shutdown()
    return {"name": name, "workers": workers, "wall": wall, "report": report, "nodes": nodes}


def _shares(report: IngestReport, wall: float) -> str:
    st = dict(sorted(report.stage_seconds.items(), key=lambda kv: -kv[1]))
    return ", ".join(f"{k} {100 * v / wall:.0f}%" for k, v in st.items() if v / wall >= 0.01)


def _writer_busy(run: dict[str, Any]) -> float:
    """Seconds the ordered writer was busy: the wall time less its waits for the cluster (local: the
    writer stages alone; chunking, parsing and embedding are the parallel part there)."""
    st = run["report"].stage_seconds
    if run["workers"]:
        return float(run["wall"] - st.get("ray_wait", 0.0))
    return float(sum(st.get(k, 0.0) for k in WRITER))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=300, help="Records of the 2wiki corpus ingested (default 300).")
    ap.add_argument("--batch", type=int, default=16, help="ingest.doc_batch (documents per write batch).")
    ap.add_argument("--workers", type=int, nargs="+", default=[2, 4],
                    help="CPUs of the Ray instance per run (at least 2: one parse and one embed actor).")
    ap.add_argument("--repeat", type=int, default=1, help="Runs of each configuration, in turn; the fastest kept.")
    args = ap.parse_args()
    if min(args.workers) < 2:
        ap.error("--workers: the Ray engine needs at least 2 CPUs (one parse actor and one embed actor)")
    best: dict[str, dict[str, Any]] = {}
    with throwaway_arcadedb() as (_info, graph, tmp):
        corpus = tmp / "corpus.jsonl"
        lines = CORPUS.read_text(encoding="utf-8").splitlines()[: args.docs]
        corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
        for k in range(args.repeat):
            for n in [0, *args.workers]:
                name = f"ray{n}" if n else "local"
                got = _ingest(graph, tmp, f"{name}_{k}", corpus, args.batch, n)
                print(f"  run {k + 1}: {name} {got['wall']:.1f} s", flush=True)
                if name not in best or got["wall"] < best[name]["wall"]:
                    best[name] = {**got, "name": name}
    runs = list(best.values())
    base = runs[0]
    n_docs = base["report"].documents_ingested
    print(f"ingest scale-out: {n_docs} documents of 2wiki-corpus, doc_batch {args.batch}, "
          f"{os.cpu_count()} cores on this machine (load average now {os.getloadavg()[0]:.1f}), fastest of "
          f"{args.repeat} run(s) each; Ray nodes: {sorted({n for r in runs for n in r['nodes']})}")
    print(f"{'engine':<8} {'docs/s':>7} {'wall s':>7} {'x local':>8} {'writer busy':>12}  stage shares of wall time")
    for r in runs:
        rate = r["report"].documents_ingested / r["wall"]
        busy = _writer_busy(r)
        print(f"{r['name']:<8} {rate:7.2f} {r['wall']:7.1f} {base['wall'] / r['wall']:8.2f} "
              f"{100 * busy / r['wall']:11.0f}%  {_shares(r['report'], r['wall'])}")
    st = base["report"].stage_seconds
    serial = sum(st.get(k, 0.0) for k in WRITER) / base["wall"]
    print(f"local: serial share s = {serial:.2f} (writer stages / wall); Amdahl bound 1/(s+(1-s)/N): " +
          ", ".join(f"N={n}: {1 / (serial + (1 - serial) / n):.1f}x" for n in (2, 4, 8, 16, 64)) +
          f"; limit 1/s = {1 / serial:.1f}x")
    for r in runs[1:]:
        st = r["report"].stage_seconds
        docs = r["report"].documents_ingested
        work = sum(st.get(f"ray_{k}", 0.0) for k in WORKER) / docs
        busy = _writer_busy(r) / docs
        print(f"{r['name']}: worker {1000 * work:.0f} ms/doc (chunk {1000 * st.get('ray_chunk', 0) / docs:.0f}, "
              f"extract {1000 * st.get('ray_extract', 0) / docs:.0f}, embed {1000 * st.get('ray_embed', 0) / docs:.0f})"
              f"; writer {1000 * busy:.0f} ms/doc -> writer-bound ceiling {1 / busy:.1f} docs/s "
              f"= {busy and work / busy:.1f} workers' worth")


if __name__ == "__main__":
    main()
