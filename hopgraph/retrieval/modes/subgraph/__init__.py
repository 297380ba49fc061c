"""Modes ``pcst`` and ``gnn``: signals computed on graph mode's expansion candidates.

Both score chunks (entities -> the chunks that mention them, damped by specificity) and answer the
verbalized triples of their subgraph as the cited context's relations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch
import torch_geometric  # noqa: F401 - loaded with the mode, so that no capped stage of its first query pays for it

from hopgraph.gpu import pcst, verbalize
from hopgraph.gpu.export import RELATED
from hopgraph.gpu.gnn import CheckpointError
from hopgraph.retrieval.modes.graph import GraphPass, graph_pass, on_candidates
from hopgraph.retrieval.modes.subgraph.candidates import GpuParts, gold_labels
from hopgraph.retrieval.parts import signals
from hopgraph.retrieval.registry import ModeOutput, QueryError
from hopgraph.retrieval.resources import Resources
from hopgraph.retrieval.run import Run

if TYPE_CHECKING:
    from hopgraph.gpu.train import Example

__all__ = ["GnnMode", "GpuParts", "PcstMode", "gpu_parts"]


def gpu_parts(res: Resources) -> GpuParts:
    """The pcst and gnn modes' device parts of these resources (the GNN scorer, the device), built on first use."""
    return res.kept("subgraph.gpu", lambda: GpuParts(res.gpu, res.vectors, res.embedder.name, res.gnn_checkpoint))


def pcst_signal(run: Run, gp: GraphPass, res: Resources) -> tuple[dict[str, float], list[str]]:
    """PCST over the candidate subgraph; the tree's entities score the chunks that mention them."""
    snap, parts, g = run.snap, gpu_parts(res), run.cfg.modes.pcst
    cand = parts.candidates(snap, gp.entity_mass, gp.seeds, gp.sims, g, run.cfg.query_memory_mb)
    tree = pcst.extract(cand.sub, cand.relation_types, run.qvec, g.topk, g.topk_edges, g.edge_cost)
    triples = [f"{snap.entity_names[t.source]} {t.relation.replace('_', ' ')} {snap.entity_names[t.target]}"
               for t in sorted(tree.triples, key=lambda t: -t.weight)]
    gp.trace.explain["pcst"] = {"candidates": int(cand.nodes.numel()),
                                "nodes": [snap.entity_names[e] for e in tree.nodes],
                                "triples": triples[:30], "ms": round(tree.seconds * 1000, 2)}
    return signals.specific_scores(snap, {e: 1.0 for e in tree.nodes}), triples


def gnn_signal(run: Run, gp: GraphPass, res: Resources) -> tuple[dict[str, float], list[str]]:
    """The GNN's relevance of each candidate entity scores the chunks that mention it; the triples it
    attended to most become the context's relations."""
    snap, parts = run.snap, gpu_parts(res)
    try:
        scorer = parts.scorer(snap, run.cfg.modes.gnn.allow_stale_checkpoint)
    except CheckpointError as exc:
        raise QueryError(str(exc)) from exc
    cand = parts.candidates(snap, gp.entity_mass, gp.seeds, gp.sims, run.cfg.modes.gnn, run.cfg.query_memory_mb)
    probs, attn = scorer.score(cand.sub, torch.from_numpy(np.asarray(run.qvec, dtype=np.float32)), cand.scalars,
                               attention=True)
    probs = probs.cpu()
    nodes = cand.nodes.numpy()
    weights = {int(nodes[i]): float(p) for i, p in enumerate(probs.tolist()) if p > 0.01}
    types = cand.sub[RELATED].edge_type.cpu().tolist()
    labels = {k: cand.relation_types[t] for k, t in enumerate(types)}
    attn_cpu = {et: [(ei.cpu(), a.cpu()) for ei, a in layers] for et, layers in attn.items()}
    triples = verbalize.ranked_triples(attn_cpu, probs, snap.entity_names, labels, run.cfg.token_budget // 3,
                                       node_idx=cand.nodes)
    top = np.argsort(-probs.numpy())[:15]
    gp.trace.explain["gnn"] = {"candidates": len(nodes), "entities": [
        {"entity": snap.entity_names[int(nodes[i])], "relevance": round(float(probs[i]), 4)} for i in top],
        "triples": triples[:20]}
    return signals.specific_scores(snap, weights), [t for t, _ in triples]


class PcstMode:
    """graph mode's candidates -> a PCST subgraph (G-Retriever) -> its triples and the chunks behind them."""

    def run(self, run: Run, res: Resources) -> ModeOutput:
        return on_candidates(run, res, "pcst", pcst_signal, lambda: run.cfg.modes.pcst.weight)


class GnnMode:
    """graph mode's expansion candidates rescored by the trained GNN."""

    def run(self, run: Run, res: Resources) -> ModeOutput:
        return on_candidates(run, res, "gnn", gnn_signal,
                             lambda: gpu_parts(res).gnn_weight(run.cfg.modes.gnn.weight))

    def example(self, run: Run, res: Resources, gold_chunk_ids: set[str], query_id: str) -> Example | None:
        """The GNN training example of a query: graph's candidates labelled by the gold chunks (None when
        no candidate entity is in one)."""
        snap = run.snap
        gp = graph_pass(run, res)
        cand = gpu_parts(res).candidates(snap, gp.entity_mass, gp.seeds, gp.sims, run.cfg.modes.gnn)
        gold = [snap.chunk_index[c] for c in gold_chunk_ids if c in snap.chunk_index]
        labels = gold_labels(snap, cand.nodes.numpy(), gold)
        if not bool(labels.any()):
            return None
        from hopgraph.gpu.train import Example  # PyTorch Geometric: imported for training only

        return Example(query_id, cand.sub, torch.from_numpy(run.qvec.astype(np.float32)), cand.scalars, labels)
