"""Prize-collecting Steiner tree subgraphs (G-Retriever), on PyG's ``retrieval_via_pcst``.

The candidate subgraph's three edge types are folded into one undirected edge list for PCST; a
typed relation's edge features are its relation embedding, a co-occurrence's or similarity's the
normalized mean of its two entities' embeddings (so an edge between query-relevant entities can win
a prize too). Prizes follow G-Retriever: the ``topk`` entities and ``topk_edges`` edges most similar
to the query get decreasing prizes, every edge costs ``edge_cost`` (edges worth more than that
become virtual nodes), and ``pcst_fast`` returns one connected tree.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch
from torch_geometric.data import Data, HeteroData
from torch_geometric.llm.utils.backend_utils import retrieval_via_pcst

from gpu.export import CO_OCCURS, ENTITY, RELATED, SIMILAR


@dataclass
class Triple:
    """One verbalizable edge: entity indices of the full graph, the relation label and a weight."""

    source: int
    relation: str
    target: int
    weight: float = 0.0


@dataclass
class PcstResult:
    """The connected subgraph PCST chose (entity indices of the full graph) and its triples."""

    nodes: list[int]
    triples: list[Triple] = field(default_factory=list)
    seconds: float = 0.0


def fold(sub: HeteroData, relation_types: list[str]) -> tuple[Data, list[tuple[int, str, int]]]:
    """One undirected ``Data`` of a HeteroData subgraph (local indices) and a label per edge."""
    x = sub[ENTITY].x.float().cpu()
    n = x.shape[0]
    unit = torch.nn.functional.normalize(x, dim=-1)
    keys, attrs, labels = [], [], []
    for etype in (RELATED, SIMILAR, CO_OCCURS):  # a typed relation wins over weaker kinds of the same pair
        if etype not in sub.edge_types:
            continue
        store = sub[etype]
        ei = store.edge_index.cpu()
        keep = torch.nonzero(ei[0] < ei[1]).ravel()
        s, t = ei[0, keep], ei[1, keep]
        mean = unit[s] + unit[t]
        if etype == RELATED:
            attr = store.edge_attr.float().cpu()[keep]
            attr = torch.where(attr.abs().sum(1, keepdim=True) > 0, attr, mean)
            labels += [relation_types[int(k)] for k in store.edge_type.cpu()[keep].tolist()]
        else:
            attr = mean
            labels += [etype[1]] * int(keep.numel())
        keys.append((s * n + t).numpy())
        attrs.append(attr)
    all_keys = np.concatenate(keys) if keys else np.zeros(0, dtype=np.int64)
    _, first = np.unique(all_keys, return_index=True)  # first occurrence = the strongest kind
    first = np.sort(first)
    src, dst = all_keys[first] // max(n, 1), all_keys[first] % max(n, 1)
    if first.size:
        edge_attr = torch.nn.functional.normalize(torch.cat(attrs)[torch.from_numpy(first)], dim=-1)
    else:
        edge_attr = torch.zeros((0, x.shape[1]))
    data = Data(x=x, edge_index=torch.from_numpy(np.stack([src, dst])).long(), edge_attr=edge_attr,
                node_idx=np.arange(n), edge_idx=np.arange(first.size))
    return data, [(int(a), labels[int(k)], int(b)) for a, b, k in zip(src, dst, first, strict=True)]


def extract(sub: HeteroData, relation_types: list[str], query: np.ndarray, names: list[str], topk: int = 10,
            topk_edges: int = 10, edge_cost: float = 0.5) -> PcstResult:
    """Run PCST on a candidate subgraph (``sub[ENTITY].node_idx`` maps back to the full graph)."""
    t0 = time.perf_counter()
    node_idx = sub[ENTITY].node_idx.cpu().numpy()
    data, labels = fold(sub, relation_types)
    if data.num_nodes == 0:
        return PcstResult([], [], time.perf_counter() - t0)
    q = torch.as_tensor(query, dtype=torch.float32)
    if data.edge_index.shape[1] == 0:  # nothing to connect: the best single entity
        best = int(torch.argmax(torch.nn.functional.cosine_similarity(q[None, :], data.x)))
        return PcstResult([int(node_idx[best])], [], time.perf_counter() - t0)
    textual_nodes = pd.DataFrame({"node_id": np.arange(data.num_nodes),
                                  "node_attr": [names[int(i)] for i in node_idx]})
    textual_edges = pd.DataFrame({"src": [s for s, _, _ in labels], "edge_attr": [r for _, r, _ in labels],
                                  "dst": [t for _, _, t in labels]})
    chosen, _ = retrieval_via_pcst(data, q, textual_nodes, textual_edges, topk=topk, topk_e=topk_edges,
                                   cost_e=edge_cost)
    local_nodes = np.asarray(chosen.node_idx, dtype=np.int64)
    triples = []
    for e in np.asarray(chosen.edge_idx, dtype=np.int64).tolist():
        s, r, t = labels[e]
        triples.append(Triple(int(node_idx[s]), r, int(node_idx[t]), float(data.edge_attr[e] @ q)))
    return PcstResult([int(node_idx[i]) for i in local_nodes], triples, time.perf_counter() - t0)
