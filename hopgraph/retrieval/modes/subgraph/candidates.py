"""The pcst and gnn modes' bridge from the retrieval snapshot to gpu/: the candidate subgraph of a query (its
expansion candidates, exported to PyTorch Geometric), the GNN's per-entity features and training labels.

Candidates: the seeds plus the entities with the most PPR mass, at most the mode's ``candidates``
(``retrieval.modes.pcst``/``gnn``). Only the graph induced on them is exported, with the relation
embeddings of its typed edges and similarity edges among them: a query's memory follows ``candidates``,
never the size of the corpus.
Features (``gpu.gnn.FEATURES``): PPR mass (relative to the best candidate), seed weight, cosine to the
query, specificity of ``df + 1`` (``hopgraph.core.weights``) and ``log(1 + df)``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import scipy.sparse as sp

from hopgraph.core.budget import check_budget
from hopgraph.core.gpu_settings import GpuSettings
from hopgraph.core.subgraph_settings import SubgraphOptions
from hopgraph.core.weights import specificity
from hopgraph.retrieval.parts.signals import Seeds
from hopgraph.retrieval.snapshot import Snapshot
from hopgraph.vectors.store import VectorStore

if TYPE_CHECKING:  # torch (1 s) and PyTorch Geometric (2 s) are imported when a query needs them
    import torch
    from torch_geometric.data import HeteroData

    from hopgraph.gpu.export import EntityGraph
    from hopgraph.gpu.gnn import CheckpointMeta, GnnScorer

log = logging.getLogger(__name__)


class TypedEdge(NamedTuple):
    """One stored direction of a typed relation among the candidates (local indices)."""

    source: int
    target: int
    type: str
    relation_id: str
    weight: float  # the pair's adjacency weight


@dataclass
class Induced:
    """The edges of the entity graph among a query's candidates, in local indices: each stored direction
    of a typed relation and the other pairs (co-occurrences)."""

    nodes: np.ndarray
    upper: sp.coo_matrix
    typed: list[TypedEdge]
    co: np.ndarray  # over ``upper``'s entries: True where the pair has no typed relation


def induced(snap: Snapshot, nodes: np.ndarray) -> Induced:
    """The adjacency induced on ``nodes`` (its size follows the candidates, never the corpus)."""
    upper = sp.triu(snap.adjacency[nodes][:, nodes], k=1).tocoo()
    typed: list[TypedEdge] = []
    co = np.ones(upper.nnz, dtype=bool)
    for e, (a, b, w) in enumerate(zip(upper.row.tolist(), upper.col.tolist(), upper.data.tolist(), strict=True)):
        u, v = int(nodes[a]), int(nodes[b])
        for s, d, pair in ((a, b, (u, v)), (b, a, (v, u))):
            rid = snap.relation_ids.get(pair)
            if rid is not None:
                typed.append(TypedEdge(s, d, snap.edge_types[pair], rid, w))
                co[e] = False
    return Induced(nodes, upper, typed, co)


def subgraph_bytes(found: Induced, dim: int, similar_k: int) -> int:
    """About the bytes a pcst/gnn query's candidate subgraph takes: the candidates' similarity block,
    and for every edge in both directions its index, weight and ``dim``-wide attribute, counted three
    times (the export, the PCST fold's edge features and their normalized copy)."""
    n = len(found.nodes)
    edges = 2 * (len(found.typed) + int(found.co.sum()) + n * similar_k)
    return 4 * n * n + 3 * edges * (4 * dim + 20) + 3 * 4 * n * dim


def candidate_graph(snap: Snapshot, found: Induced, relation_vectors: Mapping[str, np.ndarray]) -> EntityGraph:
    """The entity graph induced on the candidates (local indices): typed relations with their
    embeddings (zero where none is stored) and co-occurrence pairs, weights from the adjacency."""
    from hopgraph.gpu.export import EntityGraph

    nodes, upper = found.nodes, found.upper
    typed = found.typed
    types = sorted({t.type for t in typed})
    type_index = {t: i for i, t in enumerate(types)}
    dim = snap.entity_vectors.shape[1]
    attr = np.zeros((len(typed), dim), dtype=np.float32)
    for r, t in enumerate(typed):
        v = relation_vectors.get(t.relation_id)
        if v is not None and v.shape[0] == dim:
            attr[r] = v
    return EntityGraph(
        version=snap.version, entity_ids=[snap.entity_ids[int(i)] for i in nodes],
        x=np.asarray(snap.entity_vectors[nodes], dtype=np.float32),
        typed_src=np.asarray([t.source for t in typed], dtype=np.int64),
        typed_dst=np.asarray([t.target for t in typed], dtype=np.int64),
        typed_type=np.asarray([type_index[t.type] for t in typed], dtype=np.int64), type_names=types,
        typed_weight=np.asarray([t.weight for t in typed], dtype=np.float32), typed_attr=attr,
        co_src=upper.row[found.co].astype(np.int64),
        co_dst=upper.col[found.co].astype(np.int64), co_weight=upper.data[found.co].astype(np.float32))


@dataclass
class Candidates:
    """One query's candidate subgraph and the GNN inputs of its entities."""

    nodes: torch.Tensor          # entity indices of the full graph
    sub: HeteroData              # local indices; ``sub["entity"].node_idx`` maps back to the graph
    scalars: torch.Tensor        # (len(nodes), len(FEATURES))
    relation_types: list[str]    # ``sub``'s related edges' ``edge_type`` indexes this list


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
        gold.update(int(e) for e in snap.chunk_entities(j))
    return torch.tensor([1.0 if int(e) in gold else 0.0 for e in nodes])


class GpuParts:
    """What the pcst and gnn modes keep between queries (built by their first query): the device and the
    GNN scorer."""

    def __init__(self, cfg: GpuSettings, vectors: VectorStore, embedder_name: str, checkpoint: Path | None
                 ) -> None:
        self.cfg = cfg
        self.vectors = vectors
        self.embedder_name = embedder_name
        self.checkpoint = checkpoint
        self._device: torch.device | None = None
        self._scorer: tuple[int, GnnScorer] | None = None

    @property
    def device(self) -> torch.device:
        """``gpu.device`` resolved (cuda when asked for or, with auto, present), on first use."""
        if self._device is None:
            from hopgraph.gpu.device import resolve

            self._device = resolve(self.cfg.device)
        return self._device

    def scorer(self, snap: Snapshot, allow_stale: bool = False) -> GnnScorer:
        """The GNN scorer of the checkpoint (loaded once per graph version; mismatches refused unless
        ``allow_stale``: ``retrieval.modes.gnn.allow_stale_checkpoint``)."""
        from hopgraph.gpu.gnn import CheckpointError, GnnScorer, load_checkpoint

        if self._scorer is None or self._scorer[0] != snap.version:
            if self.checkpoint is None:
                raise CheckpointError("no GNN checkpoint is configured (train one with `hopgraph train-gnn`)")
            model, meta = load_checkpoint(self.checkpoint, self.device, snap.version, self.embedder_name,
                                          allow_stale)
            self._scorer = (snap.version, GnnScorer(model, meta, self.device, self.cfg.mixed_precision))
        return self._scorer[1]

    def candidates(self, snap: Snapshot, entity_mass: np.ndarray, seeds: Seeds, sims: np.ndarray,
                   opts: SubgraphOptions, budget_mb: float | None = None) -> Candidates:
        """The query's candidate subgraph on the device, sized by ``opts`` (the mode's ``candidates``,
        ``similar_k``, ``similar_min``). ``budget_mb``: a subgraph whose working set would exceed it is
        refused (``QueryMemoryError``) before it is built."""
        import torch

        from hopgraph.gpu.export import ENTITY, export

        nodes = candidate_nodes(snap, entity_mass, seeds, opts.candidates)
        found = induced(snap, nodes)
        if budget_mb is not None:
            check_budget(subgraph_bytes(found, snap.entity_vectors.shape[1], opts.similar_k), budget_mb,
                         f"the {opts.MODE} subgraph of {len(nodes)} candidates "
                         f"(retrieval.modes.{opts.MODE}.candidates)")
        ids = [t.relation_id for t in found.typed]
        graph = candidate_graph(snap, found, self.vectors.vectors("relationships", ids) if ids else {})
        sub = export(graph, self.device, opts.similar_k, opts.similar_min).data
        sub[ENTITY].node_idx = torch.from_numpy(nodes).to(self.device)
        return Candidates(torch.from_numpy(nodes), sub, features(snap, nodes, entity_mass, seeds, sims),
                          graph.type_names)

    @property
    def checkpoint_meta(self) -> CheckpointMeta | None:
        return self._scorer[1].meta if self._scorer else None

    def gnn_weight(self, configured: float | None) -> float:
        """``configured`` (``retrieval.modes.gnn.weight``), else the weight chosen on the checkpoint's validation
        queries, else 1."""
        if configured is not None:
            return configured
        meta = self.checkpoint_meta
        return float(meta.metrics.get("gnn_weight", 1.0)) if meta else 1.0

    def forget_scorer(self) -> None:
        """Reload the checkpoint on next use (after training wrote a new one)."""
        self._scorer = None
