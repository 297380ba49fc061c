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
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import rss_mb, status_mb
from benchmarks.freshness_scale import SyntheticGraph, generate
from hopgraph.core.gpu_settings import GpuSettings
from hopgraph.core.linalg import unit
from hopgraph.core.memory import keep_freed_memory
from hopgraph.core.settings import EmbedderSettings, RetrievalSettings
from hopgraph.core.subgraph_settings import PcstModeSettings
from hopgraph.graphdb.protocols import IndexSource
from hopgraph.retrieval.index.keeper import IndexKeeper
from hopgraph.retrieval.index.state import IndexRecipe, IndexState
from hopgraph.retrieval.index.tables import typed_rows
from hopgraph.retrieval.registry import REGISTRY
from hopgraph.retrieval.retriever import Retriever
from hopgraph.vectors.edge import EdgeVectorStore
from hopgraph.vectors.embedders import make_embedder
from hopgraph.vectors.store import CollectionSpec, VectorPoint

PREPARE = "prepare"  # --one PREPARE:SCALE builds the scale's vector store and measures nothing
DEFAULT_MODES = ("bm25", "dense", "rrf", "graph", "graph-0-hops", "mix", "pcst", "gnn")  # modes or ablations


def peak_mb() -> float:
    """The process's resident high-water mark (MB) since the last ``reset_peak``."""
    found = status_mb("VmHWM")
    return found if found is not None else rss_mb()


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
                        cfg: RetrievalSettings | None = None,
                        store: Path | None = None, index_relations: bool = True) -> tuple[Retriever, IndexState]:
    """The real retriever over a generated corpus: its index state built from the generated tables, the
    typed relations' embeddings in a qdrant-edge store (at ``store`` when given and reused when a previous
    process completed it there, else under ``folder``), a GNN checkpoint in ``folder``. The graph behind it is
    ``SyntheticGraph`` over the same tables (a served state never reads it). ``index_relations=False`` leaves
    the relation vectors without their HNSW index (pcst and gnn read them by id; a mode that searches them
    then searches exhaustively)."""
    embedder = make_embedder(EmbedderSettings())
    tables = generate(n_docs, n_entities, n_edges)
    state = IndexState.of(tables, IndexRecipe())
    store = store or folder / "vectors"
    ready = store / "complete"  # the same seeds give the same points: a completed store is reused as it is
    vectors = EdgeVectorStore(store)
    vectors.ensure_collections(CollectionSpec(embedder.dim, embedder.name))
    if not ready.is_file():
        rng = np.random.default_rng(3)
        typed = typed_rows(tables)
        for start in range(0, len(typed), 4096):
            rows = typed[start:start + 4096]
            vecs = unit(rng.standard_normal((len(rows), embedder.dim)).astype(np.float32))
            vectors.upsert("relationships", [VectorPoint(str(tables.edge_id[k]), v) for k, v in
                                             zip(range(start, start + len(rows)), vecs, strict=True)])
        if index_relations:
            vectors.optimize()
        vectors.flush()
        ready.touch()
    checkpoint = tiny_checkpoint(folder / "gnn.pt", embedder.dim, state.version, embedder.name)
    graph: IndexSource = SyntheticGraph(tables, [])
    keeper = IndexKeeper.serving(state, graph, vectors, embedder.dim)
    retriever = Retriever(graph, vectors, embedder, cfg or RetrievalSettings(stage_cap_ms=None), keeper=keeper,
                          gpu=GpuSettings(device="cpu"), gnn_checkpoint=checkpoint)
    return retriever, state


QUESTIONS = [f"what links entity {i} and entity {i * 7 + 3} in w{i} w{i + 11}?" for i in range(300)]


def measure_mode(mode: str, n_docs: int, n_entities: int, n_edges: int, queries: int,
                 store: Path | None = None, index_relations: bool = True) -> dict[str, Any]:
    """One mode's figures at one scale (run in a process of its own; ``store``: the scale's relation
    vectors, built by the first mode's process and reopened by the others)."""
    keep_freed_memory()  # as the platform does
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        retriever, state = synthetic_retriever(Path(tmp), n_docs, n_entities, n_edges, store=store,
                                               index_relations=index_relations)
        build_s = time.perf_counter() - t
        retriever.embedder.embed(QUESTIONS[:queries])
        real, cfg = REGISTRY.settings_for(mode, RetrievalSettings(stage_cap_ms=None))  # an ablation's mode
        state_mb = rss_mb()
        reset_peak()
        # the first query also loads what a mode loads once (the GNN checkpoint, torch's kernels); freed memory
        # stays resident (keep_freed_memory), so the later queries show only what exceeds its working set
        retriever.query(QUESTIONS[-1], mode=real, cfg=cfg)
        first_peak, warm_mb = peak_mb(), rss_mb()
        reset_peak()
        lat = []
        for q in QUESTIONS[:queries]:
            t = time.perf_counter()
            retriever.query(q, mode=real, cfg=cfg)
            lat.append((time.perf_counter() - t) * 1000)
        peak = max(first_peak, peak_mb())
        return {"mode": mode, "state_rss_mb": round(state_mb), "query_peak_rss_mb": round(peak),
                "query_growth_mb": round(peak - state_mb), "first_query_growth_mb": round(first_peak - state_mb),
                "later_growth_mb": round(peak_mb() - warm_mb), "state_arrays_mb": round(state.nbytes() / 2**20),
                "build_s": round(build_s, 1), "p50_ms": round(float(np.median(lat)), 1)}


def run_one(mode: str, scale: str, queries: int, store: Path, index_relations: bool = True) -> dict[str, Any]:
    """One mode at one scale in a child process: its figures, or the error it ended with."""
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "benchmarks.memory", "--one", f"{mode}:{scale}",
                          "--queries", str(queries), "--store", str(store),
                          *([] if index_relations else ["--no-relation-index"])], capture_output=True, text=True)
    if out.returncode:
        row: dict[str, Any] = {"mode": mode, "error": (out.stderr.strip().splitlines() or ["killed"])[-1]}
    else:
        row = json.loads(out.stdout.strip().splitlines()[-1])
    row["scale"] = scale
    row["wall_s"] = round(time.perf_counter() - t, 1)
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scales", default="5000:50000:250000,60000:600000:3000000",
                    help="DOCS:ENTITIES:EDGES, comma-separated")
    ap.add_argument("--modes", default=",".join(DEFAULT_MODES))
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--out", type=Path, help="also write the figures as JSON")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # MODE:DOCS:ENTITIES:EDGES, in a child process
    ap.add_argument("--store", type=Path, help=argparse.SUPPRESS)  # the scale's vector store, in a child
    ap.add_argument("--no-relation-index", action="store_true",
                    help="leave the relation vectors without their HNSW index (its build outlasts the run at "
                         "300k relations; pcst and gnn read them by id, modes that search them search exhaustively)")
    args = ap.parse_args()
    if args.one:
        mode, docs, entities, edges = args.one.split(":")
        if mode == PREPARE:
            with tempfile.TemporaryDirectory() as tmp:
                synthetic_retriever(Path(tmp), int(docs), int(entities), int(edges), store=args.store,
                                    index_relations=not args.no_relation_index)
            print(json.dumps({"mode": mode}))
        else:
            print(json.dumps(measure_mode(mode, int(docs), int(entities), int(edges), args.queries, args.store,
                                          not args.no_relation_index)))
        return
    modes = args.modes.split(",")
    for mode in modes:  # before building anything
        REGISTRY.check(mode, ablations=True)
    rows, prepare_s = [], {}
    with tempfile.TemporaryDirectory() as stores:
        for scale in args.scales.split(","):
            # the scale's relation vectors, built once (so that no measured process pays for building them)
            store = Path(stores) / scale.replace(":", "-")
            prepared = run_one(PREPARE, scale, args.queries, store, not args.no_relation_index)
            prepare_s[scale] = prepared["wall_s"]
            if "error" in prepared:
                rows.append(prepared)
                continue
            for mode in modes:
                rows.append({**run_one(mode, scale, args.queries, store, not args.no_relation_index),
                             "queries": args.queries})
    peak_vs_graph(rows)
    if args.out:
        write_report(args.out, rows, {"command": " ".join(["python -m benchmarks.memory", *sys.argv[1:]]),
                                      "date": time.strftime("%Y-%m-%d"), "machine": machine(),
                                      "queries": args.queries, "store_build_s": prepare_s})


def write_report(path: Path, rows: list[dict[str, Any]], run: dict[str, Any]) -> None:
    """Write ``rows`` to the report at ``path``, keeping the rows of other modes or scales it holds (and the
    other commands' runs), so that modes and scales measured by separate commands make one report."""
    old = json.loads(path.read_text()) if path.is_file() else {"runs": [], "rows": []}
    done = {(r["scale"], r["mode"]) for r in rows}
    scales = {r["scale"] for r in rows}  # a scale measured again drops its old failures
    merged = [r for r in old["rows"] if (r["scale"], r["mode"]) not in done
              and not ("error" in r and r["scale"] in scales)] + rows
    peak_vs_graph(merged)
    runs = [r for r in old["runs"] if r["command"] != run["command"]] + [run]
    report = {"gpu_candidates": PcstModeSettings().candidates, "runs": runs, "rows": merged}
    path.write_text(json.dumps(report, indent=1) + "\n")


def peak_vs_graph(rows: list[dict[str, Any]]) -> None:
    """Set each measured row's query peak as a ratio of ``graph``'s at the same scale (a process each)."""
    base = {r["scale"]: r["query_peak_rss_mb"] for r in rows if r["mode"] == "graph" and "error" not in r}
    for r in rows:
        if r["scale"] in base and "error" not in r:
            r["peak_vs_graph"] = round(r["query_peak_rss_mb"] / base[r["scale"]], 2)


def machine() -> str:
    """``N-core MODEL, X GB RAM``: where the figures were measured."""
    info = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").is_file() else ""
    model = next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")), "?")
    total = int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30)
    return f"{os.cpu_count()}-core {model}, {total} GB RAM, CPU only (gpu.device = cpu)"


if __name__ == "__main__":
    main()
