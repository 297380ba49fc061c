"""gpu/ speed on synthetic entity graphs (default 100k and 1M entities with 10x edges).

Per size and device (cpu always; cuda when torch sees one) it prints: export time (full, and the
incremental refresh after 1% of the entities change), PPR for a batch of 32 queries (exact power
iteration and forward push, batched) against the baseline of this run - scipy power iteration one
query at a time, as retrieval runs it - with push's top-20 agreement with the exact ranking; PCST
time on a 2k-node candidate subgraph; GNN inference per query on that subgraph. Similarity edges
are left out of the synthetic export (their exact kNN is quadratic; the real export computes them
for the new entities only: measured apart, at ``--similar-size`` entities). Medians of ``--repeats`` runs.

    python -m benchmarks.gpu [--sizes 100000,1000000] [--dim 64] [--batch 32] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch

from hopgraph.gpu.export import ENTITY, EntityGraph, export
from hopgraph.gpu.gnn import CheckpointMeta, GnnConfig, GnnScorer, RelevanceGNN
from hopgraph.gpu.pcst import extract
from hopgraph.gpu.ppr import TorchPPR
from hopgraph.retrieval.parts.ppr import personalized_pagerank


def synthetic(n: int, edges_per_node: int, dim: int, seed: int = 0, typed_share: float = 0.1) -> EntityGraph:
    """A graph with hubs (targets drawn with a power-law skew); ``typed_share`` of the pairs typed."""
    rng = np.random.default_rng(seed)
    m = n * edges_per_node
    src = rng.integers(0, n, m)
    dst = (n * rng.random(m) ** 2).astype(np.int64)  # skewed: low ids are hubs
    keep = src != dst
    src, dst = src[keep], dst[keep]
    typed = rng.random(src.size) < typed_share
    x = rng.normal(size=(n, dim)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return EntityGraph(
        version=1, entity_ids=[f"e{i}" for i in range(n)], x=x,
        typed_src=src[typed], typed_dst=dst[typed], typed_type=rng.integers(0, 8, int(typed.sum())),
        type_names=[f"rel{i}" for i in range(8)], typed_weight=np.ones(int(typed.sum()), np.float32),
        typed_attr=None, co_src=src[~typed], co_dst=dst[~typed],
        co_weight=rng.random(int((~typed).sum())).astype(np.float32) + 0.1)


def transition(g: EntityGraph) -> sp.csr_matrix:
    """Column-stochastic transition of the symmetric weighted entity graph (retrieval.parts.ppr's walk)."""
    s = np.concatenate([g.typed_src, g.co_src])
    t = np.concatenate([g.typed_dst, g.co_dst])
    w = np.concatenate([g.typed_weight, g.co_weight]).astype(np.float64)
    a = sp.csr_matrix((np.r_[w, w], (np.r_[s, t], np.r_[t, s])), shape=(g.n, g.n))
    out = np.asarray(a.sum(axis=1)).ravel()
    inv = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
    return sp.csr_matrix(sp.diags(inv) @ a).T.tocsr()


def median_s(fn: Any, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def run_size(n: int, args: argparse.Namespace, devices: list[torch.device]) -> dict[str, dict[str, float]]:
    t = time.perf_counter()
    g = synthetic(n, args.edges_per_node, args.dim)
    P = transition(g)
    print(f"\n== {n:,} entities, {g.typed_src.size + g.co_src.size:,} edges (dim {args.dim}); "
          f"generated in {time.perf_counter() - t:.1f}s")
    rng = np.random.default_rng(1)
    pers = np.zeros((n, args.batch), dtype=np.float32)
    for b in range(args.batch):
        pers[rng.integers(0, n, 5), b] = 1.0
    base_q = min(args.batch, args.baseline_queries)
    t = time.perf_counter()
    exact_cols = [personalized_pagerank(P, pers[:, b].astype(np.float64), damping=0.5) for b in range(base_q)]
    scipy_ms = (time.perf_counter() - t) * 1000 / base_q
    print(f"baseline: scipy power iteration, one query at a time: {scipy_ms:.1f} ms/query ({base_q} queries)")
    out: dict[str, dict[str, float]] = {}
    for dev in devices:
        r: dict[str, float] = {}
        ex = None

        def do_export(dev: torch.device = dev) -> None:
            nonlocal ex
            ex = export(g, dev, similar_k=0)
        r["export_s"] = median_s(do_export, 1)
        assert ex is not None
        changed = EntityGraph(**{**g.__dict__, "version": 2,
                                 "entity_ids": [f"new{i}" if i % 100 == 0 else e for i, e in enumerate(g.entity_ids)]})
        r["refresh_s"] = median_s(lambda dev=dev, ex=ex, changed=changed: export(changed, dev, similar_k=0,
                                                                              previous=ex), 1)
        engine = TorchPPR(P, dev)
        # the batch's personalization is on the device already (sending a dense (n, B) one from the host,
        # 128 MB at 1M nodes x 32 queries, is measured apart: it took longer than the walk itself)
        pers_dev = torch.from_numpy(pers).to(dev)
        r["pers_h2d_ms"] = median_s(lambda dev=dev: torch.from_numpy(pers).to(dev), args.repeats) * 1000
        r["ppr_power_batch_ms"] = median_s(lambda e=engine, p=pers_dev: e.run(p, damping=0.5), args.repeats) * 1000
        r["ppr_push_batch_ms"] = median_s(lambda e=engine, p=pers_dev: e.push(p, damping=0.5, eps=args.eps),
                                          args.repeats) * 1000
        pushed = engine.push(pers_dev, damping=0.5, eps=args.eps).cpu().numpy()
        r["push_top20_agreement"] = float(np.mean([len(set(np.argsort(-pushed[:, b])[:20]) & set(
            np.argsort(-exact_cols[b])[:20])) / 20 for b in range(base_q)]))
        nodes = np.argsort(-pushed[:, 0])[: args.subgraph]
        sub = ex.subgraph(torch.from_numpy(np.sort(nodes)))
        q = g.x[int(nodes[0])]
        r["pcst_ms"] = median_s(lambda sub=sub, q=q, ex=ex: extract(sub, ex.relation_types, q), args.repeats) * 1000
        gcfg = GnnConfig(dim=args.dim, relation_dim=args.dim)
        model = RelevanceGNN(gcfg).to(dev).eval()
        qt = torch.from_numpy(q).to(dev)
        scal = torch.rand((sub[ENTITY].num_nodes, 5), device=dev)

        @torch.no_grad()
        def gnn(model: RelevanceGNN = model, sub: Any = sub, qt: torch.Tensor = qt, scal: torch.Tensor = scal) -> None:
            model(sub, qt, scal, attention=True)
        gnn()
        r["gnn_ms"] = median_s(gnn, max(args.repeats, 5)) * 1000
        # what mode gnn runs: GnnScorer (bf16 autocast on cuda for subgraphs of MIXED_PRECISION_MIN_EDGES edges)
        scorer = GnnScorer(model, CheckpointMeta(1, "synthetic", vars(gcfg).copy()), dev, mixed_precision=True)
        scorer.score(sub, qt, scal, attention=True)
        r["gnn_scorer_ms"] = median_s(
            lambda s=scorer, sub=sub, qt=qt, scal=scal: s.score(sub, qt, scal, attention=True), max(args.repeats, 5)
        ) * 1000
        r["scipy_ms_per_query"] = scipy_ms
        out[dev.type] = r
        b = args.batch
        print(f"[{dev.type}] export {r['export_s']:.2f}s, incremental refresh (1% new) {r['refresh_s']:.2f}s "
              f"({r['export_s'] / max(r['refresh_s'], 1e-9):.1f}x faster)")
        print(f"[{dev.type}] PPR batch of {b}: power iteration {r['ppr_power_batch_ms']:.0f} ms "
              f"({r['ppr_power_batch_ms'] / b:.1f} ms/query, {scipy_ms * b / r['ppr_power_batch_ms']:.1f}x scipy); "
              f"push {r['ppr_push_batch_ms']:.0f} ms ({r['ppr_push_batch_ms'] / b:.1f} ms/query, "
              f"{scipy_ms * b / r['ppr_push_batch_ms']:.1f}x scipy; top-20 agreement "
              f"{r['push_top20_agreement']:.3f})"
              + (f"; sending the dense personalization from the host: {r['pers_h2d_ms']:.1f} ms"
                 if dev.type != "cpu" else ""))
        print(f"[{dev.type}] PCST on a {sub[ENTITY].num_nodes}-node subgraph: {r['pcst_ms']:.1f} ms; "
              f"GNN inference per query: {r['gnn_ms']:.1f} ms fp32, "
              f"{r['gnn_scorer_ms']:.1f} ms through GnnScorer (mode gnn's path)")
    if "cuda" in out:
        c, g_ = out["cpu"], out["cuda"]
        print("CPU/GPU ratios: " + ", ".join(f"{k} {c[k] / max(g_[k], 1e-9):.1f}x" for k in (
            "export_s", "ppr_power_batch_ms", "ppr_push_batch_ms", "pcst_ms", "gnn_ms", "gnn_scorer_ms")))
    return out


def similarity_refresh(n: int, dim: int, device: torch.device) -> None:
    """Export with similarity edges (exact kNN on the device), full vs after 1% new entities."""
    g = synthetic(n, 10, dim)
    t = time.perf_counter()
    full = export(g, device, similar_k=5, similar_min=0.1)
    full_s = time.perf_counter() - t
    changed = EntityGraph(**{**g.__dict__, "version": 2,
                             "entity_ids": [f"new{i}" if i % 100 == 0 else e for i, e in enumerate(g.entity_ids)]})
    t = time.perf_counter()
    export(changed, device, similar_k=5, similar_min=0.1, previous=full)
    inc_s = time.perf_counter() - t
    print(f"[{device.type}] export with similarity edges, {n:,} entities x {dim}-d: full {full_s:.2f}s, "
          f"incremental after 1% new {inc_s:.2f}s ({full_s / max(inc_s, 1e-9):.1f}x faster)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--edges-per-node", type=int, default=10)
    ap.add_argument("--dim", type=int, default=64, help="Entity feature size (64 keeps 1M nodes in memory).")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--eps", type=float, default=1e-6, help="Forward-push tolerance.")
    ap.add_argument("--subgraph", type=int, default=2000, help="Nodes of the PCST/GNN candidate subgraph.")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--baseline-queries", type=int, default=8, help="Queries the scipy baseline runs.")
    ap.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    ap.add_argument("--similar-size", type=int, default=20000,
                    help="Entities of the similarity-edge refresh measurement (384-d, like MiniLM).")
    args = ap.parse_args()
    devices = [torch.device("cpu")]
    if args.device != "cpu" and torch.cuda.is_available():
        devices.append(torch.device("cuda"))
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, devices {[d.type for d in devices]}")
    for dev in devices:
        similarity_refresh(args.similar_size, 384, dev)
    for n in (int(s) for s in args.sizes.split(",")):
        run_size(n, args, devices)


if __name__ == "__main__":
    main()
