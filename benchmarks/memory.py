"""Peak memory of the index state and of each mode's query, on a generated corpus served by the real
retriever (the synthetic tables of ``benchmarks.freshness_scale``; relation embeddings in qdrant-edge;
MiniLM embeds the queries; an untrained GNN checkpoint of the right shape for ``gnn``).

Each mode runs in its own process, which prints the RSS of the served state and the peak RSS over its
queries (the kernel's high-water mark, reset after the state is built), so modes never inherit each
other's peaks; the baseline is ``graph``'s peak in the same run.

    python -m benchmarks.memory [--scales 5000:50000:250000,60000:600000:3000000] [--queries 20]
        [--modes bm25,dense,rrf,graph,pcst,gnn,...] [--out benchmarks/reports/memory.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import rss_mb
from benchmarks.freshness_scale import SyntheticGraph, generate
from hopgraph.core.gpu_settings import GpuSettings
from hopgraph.core.linalg import unit
from hopgraph.core.memory import keep_freed_memory
from hopgraph.core.settings import EmbedderSettings, RetrievalSettings
from hopgraph.graphdb.protocols import IndexSource
from hopgraph.retrieval.index.keeper import IndexKeeper
from hopgraph.retrieval.index.state import IndexRecipe, IndexState
from hopgraph.retrieval.index.tables import typed_rows
from hopgraph.retrieval.retriever import Retriever
from hopgraph.vectors.edge import EdgeVectorStore
from hopgraph.vectors.embedders import make_embedder
from hopgraph.vectors.store import CollectionSpec, VectorPoint

DEFAULT_MODES = ("bm25", "dense", "rrf", "graph", "graph-0-hops", "lightrag", "pcst", "gnn")


def peak_mb() -> float:
    """The process's resident high-water mark (MB) since the last ``reset_peak``."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return rss_mb()


def reset_peak() -> None:
    """Start a new high-water mark at the current RSS (Linux: ``clear_refs`` 5)."""
    Path("/proc/self/clear_refs").write_text("5")


def tiny_checkpoint(path: Path, dim: int, graph_version: int, embedder: str) -> Path:
    """An untrained GNN scorer of the right shapes (its scores are noise; its memory is the real one's)."""
    from hopgraph.gpu.gnn import CheckpointMeta, GnnConfig, RelevanceGNN, save_checkpoint

    cfg = GnnConfig(dim=dim, relation_dim=dim, hidden=16, heads=1, layers=1)
    save_checkpoint(path, RelevanceGNN(cfg), CheckpointMeta(graph_version, embedder, vars(cfg).copy()))
    return path


def synthetic_retriever(folder: Path, n_docs: int, n_entities: int, n_edges: int,
                        cfg: RetrievalSettings | None = None) -> tuple[Retriever, IndexState]:
    """The real retriever over a generated corpus: its index state built from the generated tables, the
    typed relations' embeddings in a qdrant-edge store under ``folder``, a GNN checkpoint beside it. The
    graph behind it is ``SyntheticGraph`` over the same tables (a served state never reads it)."""
    embedder = make_embedder(EmbedderSettings())
    tables = generate(n_docs, n_entities, n_edges)
    state = IndexState.of(tables, IndexRecipe())
    vectors = EdgeVectorStore(folder / "vectors")
    vectors.ensure_collections(CollectionSpec(embedder.dim, embedder.name))
    rng = np.random.default_rng(3)
    typed = typed_rows(tables)
    for start in range(0, len(typed), 4096):
        rows = typed[start:start + 4096]
        vecs = unit(rng.standard_normal((len(rows), embedder.dim)).astype(np.float32))
        vectors.upsert("relationships", [VectorPoint(str(tables.edge_id[k]), v) for k, v in
                                         zip(range(start, start + len(rows)), vecs, strict=True)])
    vectors.optimize()
    checkpoint = tiny_checkpoint(folder / "gnn.pt", embedder.dim, state.version, embedder.name)
    graph: IndexSource = SyntheticGraph(tables, [])
    keeper = IndexKeeper.serving(state, graph, vectors, embedder.dim)
    retriever = Retriever(graph, vectors, embedder, cfg or RetrievalSettings(stage_cap_ms=None), keeper=keeper,
                          gpu=GpuSettings(device="cpu"), gnn_checkpoint=checkpoint)
    return retriever, state


QUESTIONS = [f"what links entity {i} and entity {i * 7 + 3} in w{i} w{i + 11}?" for i in range(200)]


def measure_mode(mode: str, n_docs: int, n_entities: int, n_edges: int, queries: int) -> dict[str, Any]:
    """One mode's figures at one scale (run in a process of its own)."""
    keep_freed_memory()  # as the platform does
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        retriever, state = synthetic_retriever(Path(tmp), n_docs, n_entities, n_edges)
        build_s = time.perf_counter() - t
        retriever.embedder.embed(QUESTIONS[:queries])
        state_mb = rss_mb()
        reset_peak()
        lat = []
        for q in QUESTIONS[:queries]:
            t = time.perf_counter()
            retriever.query(q, mode=mode)
            lat.append((time.perf_counter() - t) * 1000)
        return {"mode": mode, "state_rss_mb": round(state_mb), "query_peak_rss_mb": round(peak_mb()),
                "query_growth_mb": round(peak_mb() - state_mb), "state_arrays_mb": round(state.nbytes() / 2**20),
                "build_s": round(build_s, 1), "p50_ms": round(float(np.median(lat)), 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scales", default="5000:50000:250000,60000:600000:3000000",
                    help="DOCS:ENTITIES:EDGES, comma-separated")
    ap.add_argument("--modes", default=",".join(DEFAULT_MODES))
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--out", type=Path, help="also write the figures as JSON")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # MODE:DOCS:ENTITIES:EDGES, in a child process
    args = ap.parse_args()
    if args.one:
        mode, docs, entities, edges = args.one.split(":")
        print(json.dumps(measure_mode(mode, int(docs), int(entities), int(edges), args.queries)))
        return
    rows = []
    for scale in args.scales.split(","):
        for mode in args.modes.split(","):
            out = subprocess.run([sys.executable, "-m", "benchmarks.memory", "--one", f"{mode}:{scale}",
                                  "--queries", str(args.queries)], capture_output=True, text=True)
            if out.returncode:
                row = {"mode": mode, "error": (out.stderr.strip().splitlines() or ["killed"])[-1]}
            else:
                row = json.loads(out.stdout.strip().splitlines()[-1])
            row["scale"] = scale
            rows.append(row)
            print(json.dumps(row), flush=True)
    for scale in args.scales.split(","):
        base = next((r for r in rows if r["scale"] == scale and r["mode"] == "graph" and "error" not in r), None)
        for r in rows:
            if r["scale"] == scale and base and "error" not in r:
                r["peak_vs_graph"] = round(r["query_peak_rss_mb"] / base["query_peak_rss_mb"], 2)
    if args.out:
        args.out.write_text(json.dumps({"date": time.strftime("%Y-%m-%d"), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
