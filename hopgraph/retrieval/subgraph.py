"""The bridge from the retrieval snapshot to gpu/: the entity graph export, the candidate subgraph of
a query (its expansion candidates), the GNN's per-entity features and training labels.

Candidates: the seeds plus the entities with the most PPR mass, at most ``gpu.candidates``.
Features (``gpu.gnn.FEATURES``): PPR mass (relative to the best candidate), seed weight, cosine to the
query, specificity of ``df + 1`` (``hopgraph.core.weights``) and ``log(1 + df)``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from hopgraph.core.gpu_settings import GpuSettings
from hopgraph.core.weights import specificity
from hopgraph.retrieval.ppr import JointWalk
from hopgraph.retrieval.signals import Seeds
from hopgraph.retrieval.snapshot import Snapshot
from hopgraph.vectors.store import VectorStore

if TYPE_CHECKING:  # torch (1 s) and PyTorch Geometric (2 s) are imported when a query needs them
    import torch
    from torch_geometric.data import HeteroData

    from hopgraph.gpu.export import EntityGraph, ExportCache, GraphExport
    from hopgraph.gpu.gnn import CheckpointMeta, GnnScorer
    from hopgraph.gpu.ppr import TorchPPR

log = logging.getLogger(__name__)


def entity_graph(snap: Snapshot, relation_vectors: dict[str, np.ndarray]) -> EntityGraph:
    """The snapshot's entity graph as arrays: typed relations (with their embeddings) and
    co-occurrence pairs (the remaining adjacency), weights from the snapshot's adjacency."""
    from hopgraph.gpu.export import EntityGraph

    adj = snap.adjacency
    pairs = list(snap.relation_ids)
    types = sorted({snap.edge_types[p] for p in pairs})
    type_index = {t: i for i, t in enumerate(types)}
    ts = np.asarray([p[0] for p in pairs], dtype=np.int64)
    td = np.asarray([p[1] for p in pairs], dtype=np.int64)
    dim = snap.entity_vectors.shape[1]
    attr = np.zeros((len(pairs), dim), dtype=np.float32)
    for k, p in enumerate(pairs):
        v = relation_vectors.get(snap.relation_ids[p])
        if v is not None and v.shape[0] == dim:
            attr[k] = v
    tw = np.asarray(adj[ts, td]).ravel() if pairs else np.zeros(0)
    upper = sp.triu(adj, k=1).tocoo()
    n = max(snap.n_entities, 1)
    typed_keys = np.minimum(ts, td) * n + np.maximum(ts, td)
    co = ~np.isin(upper.row.astype(np.int64) * n + upper.col, typed_keys)
    return EntityGraph(
        version=snap.version, entity_ids=snap.entity_ids, x=np.asarray(snap.entity_vectors, dtype=np.float32),
        typed_src=ts, typed_dst=td, typed_type=np.asarray([type_index[snap.edge_types[p]] for p in pairs],
                                                          dtype=np.int64),
        type_names=types, typed_weight=tw.astype(np.float32), typed_attr=attr,
        co_src=upper.row[co].astype(np.int64), co_dst=upper.col[co].astype(np.int64),
        co_weight=upper.data[co].astype(np.float32))


@dataclass
class Candidates:
    """One query's candidate subgraph and the GNN inputs of its entities."""

    nodes: torch.Tensor          # entity indices of the full graph
    sub: HeteroData
    scalars: torch.Tensor        # (len(nodes), len(FEATURES))


def candidate_nodes(snap: Snapshot, entity_mass: np.ndarray, seeds: Seeds, limit: int) -> np.ndarray:
    """Seeds first, then the entities with the most PPR mass, ``limit`` in all."""
    chosen = sorted(seeds.weights, key=lambda e: -seeds.weights[e])[:limit]
    taken = set(chosen)
    if entity_mass.size:
        for e in np.argsort(-entity_mass)[: limit * 2]:
            if len(chosen) >= limit or entity_mass[e] <= 0:
                break
            if int(e) not in taken:
                chosen.append(int(e))
                taken.add(int(e))
    return np.asarray(sorted(chosen), dtype=np.int64)


def features(snap: Snapshot, nodes: np.ndarray, entity_mass: np.ndarray, seeds: Seeds, sims: np.ndarray
             ) -> torch.Tensor:
    """The scalar features of ``gpu.gnn.FEATURES`` for ``nodes``."""
    import torch

    mass = entity_mass[nodes] if entity_mass.size else np.zeros(len(nodes))
    top = float(mass.max()) if mass.size and mass.max() > 0 else 1.0
    df = snap.entity_df[nodes]
    cols = [mass / top, np.asarray([seeds.weights.get(int(e), 0.0) for e in nodes]),
            sims[nodes] if sims.size else np.zeros(len(nodes)), specificity(np.maximum(df, 1.0) + 1.0),
            np.log1p(df) / 10.0]
    return torch.from_numpy(np.stack(cols, axis=1).astype(np.float32))


def gold_labels(snap: Snapshot, nodes: np.ndarray, gold_chunks: list[int]) -> torch.Tensor:
    """1 for candidate entities mentioned in a gold chunk, else 0."""
    import torch

    gold: set[int] = set()
    for j in gold_chunks:
        gold.update(int(e) for e in snap.incidence.getrow(j).indices)
    return torch.tensor([1.0 if int(e) in gold else 0.0 for e in nodes])


class GpuParts:
    """What the pcst and gnn modes (and torch PPR) keep between queries: the export cache, the PPR
    engine of the current snapshot and the GNN scorer, all on the configured device."""

    def __init__(self, cfg: GpuSettings, vectors: VectorStore, embedder_name: str, checkpoint: Path | None
                 ) -> None:
        self.cfg = cfg
        self.vectors = vectors
        self.embedder_name = embedder_name
        self.checkpoint = checkpoint
        self._device: torch.device | None = None
        self._exports: ExportCache | None = None
        self._ppr: tuple[JointWalk, TorchPPR] | None = None
        self._scorer: tuple[int, GnnScorer] | None = None

    @property
    def device(self) -> torch.device:
        """``gpu.device`` resolved (cuda when asked for or, with auto, present), on first use."""
        if self._device is None:
            from hopgraph.gpu.device import resolve

            self._device = resolve(self.cfg.device)
        return self._device

    @property
    def exports(self) -> ExportCache:
        """The export cache (created on first use)."""
        if self._exports is None:
            from hopgraph.gpu.export import ExportCache

            self._exports = ExportCache(self.device, self.cfg.similar_k, self.cfg.similar_min)
        return self._exports

    def export(self, snap: Snapshot) -> GraphExport:
        def build() -> EntityGraph:
            ids, mat = self.vectors.export("relationships")
            return entity_graph(snap, dict(zip(ids, mat, strict=True)))
        return self.exports.get(snap.version, build)

    def ppr_engine(self, walk: JointWalk) -> TorchPPR | None:
        """The torch PPR engine when ``gpu.ppr_backend`` asks for it (auto: on cuda)."""
        backend = self.cfg.ppr_backend
        if backend == "scipy" or (backend == "auto" and self.device.type != "cuda"):
            return None
        if self._ppr is None or self._ppr[0] is not walk:
            # keyed by the walk (one per graph version and link weight, a per-query setting)
            from hopgraph.gpu.ppr import TorchPPR

            self._ppr = (walk, TorchPPR(walk.matrix(), self.device))
        return self._ppr[1]

    def scorer(self, snap: Snapshot) -> GnnScorer:
        """The GNN scorer of the checkpoint (loaded once per graph version; mismatches refused)."""
        from hopgraph.gpu.gnn import CheckpointError, GnnScorer, load_checkpoint

        if self._scorer is None or self._scorer[0] != snap.version:
            if self.checkpoint is None:
                raise CheckpointError("no GNN checkpoint is configured (train one with `hopgraph train-gnn`)")
            model, meta = load_checkpoint(self.checkpoint, self.device, snap.version, self.embedder_name,
                                          self.cfg.allow_stale_checkpoint)
            self._scorer = (snap.version, GnnScorer(model, meta, self.device, self.cfg.mixed_precision))
        return self._scorer[1]

    def candidates(self, snap: Snapshot, entity_mass: np.ndarray, seeds: Seeds, sims: np.ndarray) -> Candidates:
        import torch

        nodes = candidate_nodes(snap, entity_mass, seeds, self.cfg.candidates)
        export = self.export(snap)
        sub = export.subgraph(torch.from_numpy(nodes))
        return Candidates(torch.from_numpy(nodes), sub, features(snap, nodes, entity_mass, seeds, sims))

    @property
    def checkpoint_meta(self) -> CheckpointMeta | None:
        return self._scorer[1].meta if self._scorer else None

    def gnn_weight(self) -> float:
        """``gpu.gnn_weight``, else the weight chosen on the checkpoint's validation queries, else 1."""
        if self.cfg.gnn_weight is not None:
            return self.cfg.gnn_weight
        meta = self.checkpoint_meta
        return float(meta.metrics.get("gnn_weight", 1.0)) if meta else 1.0

    def forget_scorer(self) -> None:
        """Reload the checkpoint on next use (after training wrote a new one)."""
        self._scorer = None
