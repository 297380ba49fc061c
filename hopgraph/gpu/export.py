"""The entity graph as a PyTorch Geometric ``HeteroData`` on the configured device.

One node type, ``entity`` (features: the entity embeddings), and three edge types, each stored in
both directions with ``edge_weight`` and ``edge_attr``:

- ``related``: typed relations; ``edge_attr`` = the relation embedding, ``edge_type`` = index into
  ``GraphExport.relation_types``;
- ``co_occurs``: sentence co-occurrences; ``edge_attr`` = ``log1p(weight)``;
- ``similar``: each entity's nearest entities by embedding (cosine >= ``similar_min``); ``edge_attr`` = cosine.

Retrieval exports the graph induced on one query's candidates; a whole graph can be exported too, and
refreshed incrementally from its previous export (``previous``): feature rows of entities that survive a
write are reused on the device (only new rows cross from the host), and similarity edges are computed only
for new entities (kept entities keep theirs). Similarity is an exact kNN: quadratic in the entities.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import torch

from hopgraph.core import records

if TYPE_CHECKING:  # PyTorch Geometric (seconds to import) is imported where a graph is built
    from torch_geometric.data import HeteroData

log = logging.getLogger(__name__)

ENTITY = "entity"
RELATED = (ENTITY, "related", ENTITY)
CO_OCCURS = (ENTITY, records.CO_OCCURS, ENTITY)
SIMILAR = (ENTITY, "similar", ENTITY)
EDGE_TYPES = (RELATED, CO_OCCURS, SIMILAR)


@dataclass
class EntityGraph:
    """What the export needs, as arrays (built by retrieval from its snapshot, or synthetic).

    ``typed_*`` are the typed relations (one row per relation, either direction), ``co_*`` the
    co-occurrence pairs; ``typed_attr`` holds one relation embedding per typed row (or None).
    """

    version: int
    entity_ids: list[str]
    x: np.ndarray
    typed_src: np.ndarray
    typed_dst: np.ndarray
    typed_type: np.ndarray
    type_names: list[str]
    typed_weight: np.ndarray
    co_src: np.ndarray
    co_dst: np.ndarray
    co_weight: np.ndarray
    typed_attr: np.ndarray | None = None

    @property
    def n(self) -> int:
        return len(self.entity_ids)


@dataclass
class GraphExport:
    """One graph version on one device."""

    version: int
    data: HeteroData
    entity_ids: list[str]
    relation_types: list[str]
    seconds: float = 0.0
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def device(self) -> torch.device:
        return self.data[ENTITY].x.device

    def subgraph(self, nodes: torch.Tensor) -> HeteroData:
        """The induced subgraph on ``nodes`` (entity indices); ``node_idx`` maps back to the graph."""
        nodes = nodes.to(self.device)
        sub = self.data.subgraph({ENTITY: nodes})
        sub[ENTITY].node_idx = nodes
        return sub


def _both_ways(src: np.ndarray, dst: np.ndarray, *cols: np.ndarray) -> list[np.ndarray]:
    return [np.concatenate([src, dst]), np.concatenate([dst, src]), *(np.concatenate([c, c]) for c in cols)]


def _put_edges(data: HeteroData, etype: tuple[str, str, str], src: np.ndarray, dst: np.ndarray,
               weight: np.ndarray, attr: np.ndarray, device: torch.device) -> None:
    store = data[etype]
    store.edge_index = torch.from_numpy(np.stack([src, dst]).astype(np.int64)).to(device)
    store.edge_weight = torch.from_numpy(weight.astype(np.float32)).to(device)
    store.edge_attr = torch.from_numpy(np.ascontiguousarray(attr, dtype=np.float32)).to(device)


def similarity_edges(x: torch.Tensor, rows: torch.Tensor, k: int, min_sim: float,
                     block: int = 4096) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Each entity in ``rows`` to its ``k`` nearest entities (unit-row cosine >= ``min_sim``),
    computed in blocks on x's device. Returns (src, dst, cosine)."""
    if k <= 0 or rows.numel() == 0 or x.shape[0] < 2:
        empty = torch.zeros(0, dtype=torch.long, device=x.device)
        return empty, empty, torch.zeros(0, device=x.device)
    kk = min(k + 1, x.shape[0])
    srcs, dsts, sims = [], [], []
    for start in range(0, rows.numel(), block):
        r = rows[start : start + block]
        s = x[r] @ x.T
        s[torch.arange(r.numel(), device=x.device), r] = -2.0  # never its own neighbour
        val, idx = torch.topk(s, kk, dim=1)
        keep = val >= min_sim
        keep[:, k:] = False
        srcs.append(r[:, None].expand_as(idx)[keep])
        dsts.append(idx[keep])
        sims.append(val[keep])
    return torch.cat(srcs), torch.cat(dsts), torch.cat(sims)


def export(graph: EntityGraph, device: torch.device, similar_k: int = 5, similar_min: float = 0.75,
           previous: GraphExport | None = None) -> GraphExport:
    """Build the HeteroData of ``graph`` on ``device`` (reusing ``previous`` where entities survive)."""
    t0 = time.perf_counter()
    n = graph.n
    x_host = np.ascontiguousarray(graph.x, dtype=np.float32)
    stats = {"entities": n, "reused_rows": 0, "new_rows": n}
    new_rows = torch.arange(n, device=device)
    kept_sim: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None
    if previous is not None and previous.data[ENTITY].x.shape[1] == x_host.shape[1]:
        old_of = pd.Index(previous.entity_ids).get_indexer(graph.entity_ids).astype(np.int64)  # -1: new
        kept = np.flatnonzero(old_of >= 0)
        x = torch.empty((n, x_host.shape[1]), dtype=torch.float32, device=device)
        if kept.size:
            prev_x = previous.data[ENTITY].x.to(device)
            x[torch.from_numpy(kept).to(device)] = prev_x[torch.from_numpy(old_of[kept]).to(device)]
        fresh = np.flatnonzero(old_of < 0)
        if fresh.size:
            x[torch.from_numpy(fresh).to(device)] = torch.from_numpy(x_host[fresh]).to(device)
        stats.update(reused_rows=int(kept.size), new_rows=int(fresh.size))
        new_rows = torch.from_numpy(fresh).to(device)
        # similarity edges between surviving entities carry over, re-indexed
        remap = torch.full((len(previous.entity_ids),), -1, dtype=torch.long, device=device)
        remap[torch.from_numpy(old_of[kept]).to(device)] = torch.from_numpy(kept).to(device)
        ps = previous.data[SIMILAR]
        s, d = remap[ps.edge_index[0].to(device)], remap[ps.edge_index[1].to(device)]
        ok = (s >= 0) & (d >= 0) & (s < d)
        kept_sim = (s[ok], d[ok], ps.edge_weight.to(device)[ok])
    else:
        x = torch.from_numpy(x_host if x_host.flags.writeable else np.array(x_host)).to(device)  # mapped: copy
    from torch_geometric.data import HeteroData

    data = HeteroData()
    data[ENTITY].x = x
    data[ENTITY].num_nodes = n

    ts, td, tt, tw = _both_ways(graph.typed_src, graph.typed_dst, graph.typed_type, graph.typed_weight)
    if graph.typed_attr is not None and len(graph.typed_attr):
        tattr = np.concatenate([graph.typed_attr, graph.typed_attr])
    else:
        tattr = np.zeros((len(ts), x_host.shape[1]), dtype=np.float32)
    _put_edges(data, RELATED, ts, td, tw, tattr, device)
    data[RELATED].edge_type = torch.from_numpy(tt.astype(np.int64)).to(device)
    cs, cd, cw = _both_ways(graph.co_src, graph.co_dst, graph.co_weight)
    _put_edges(data, CO_OCCURS, cs, cd, cw, np.log1p(np.maximum(cw, 0))[:, None], device)

    s, d, w = similarity_edges(x, new_rows, similar_k, similar_min)
    if kept_sim is not None:  # kept pairs once (s < d) plus the new entities' nearest
        s, d, w = torch.cat([kept_sim[0], s]), torch.cat([kept_sim[1], d]), torch.cat([kept_sim[2], w])
    lo, hi = torch.minimum(s, d), torch.maximum(s, d)  # undirected pairs, each once
    key = lo * max(n, 1) + hi
    order = torch.argsort(key)
    key, lo, hi, w = key[order], lo[order], hi[order], w[order].float()
    first = torch.ones_like(key, dtype=torch.bool)
    first[1:] = key[1:] != key[:-1]
    lo, hi, w = lo[first], hi[first], w[first]
    sim_src = torch.cat([lo, hi]).cpu().numpy()
    sim_dst = torch.cat([hi, lo]).cpu().numpy()
    sim_w = torch.cat([w, w]).cpu().numpy()
    _put_edges(data, SIMILAR, sim_src, sim_dst, sim_w, sim_w[:, None], device)
    stats["similar_rows_computed"] = int(new_rows.numel())
    for et in EDGE_TYPES:
        stats[f"edges_{et[1]}"] = int(data[et].edge_index.shape[1])
    out = GraphExport(graph.version, data, list(graph.entity_ids), list(graph.type_names),
                      time.perf_counter() - t0, stats)
    log.info("PyG export v%d on %s: %s in %.2fs", graph.version, device, stats, out.seconds)
    return out
