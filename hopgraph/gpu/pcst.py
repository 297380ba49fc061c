"""Prize-collecting Steiner tree subgraphs (G-Retriever), with PyG's ``retrieval_via_pcst`` scheme.

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
from typing import TYPE_CHECKING

import numpy as np
import torch

from hopgraph.gpu.export import CO_OCCURS, ENTITY, RELATED, SIMILAR

if TYPE_CHECKING:  # PyTorch Geometric (seconds to import) is imported where a graph is built
    from torch_geometric.data import Data, HeteroData


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
    from torch_geometric.data import Data

    data = Data(x=x, edge_index=torch.from_numpy(np.stack([src, dst])).long(), edge_attr=edge_attr,
                node_idx=np.arange(n), edge_idx=np.arange(first.size))
    return data, [(int(a), labels[int(k)], int(b)) for a, b, k in zip(src, dst, first, strict=True)]


def g_retriever_pcst(x: torch.Tensor, edge_index: torch.Tensor, edge_attr: torch.Tensor, query: torch.Tensor,
                     topk: int, topk_edges: int, edge_cost: float) -> tuple[np.ndarray, np.ndarray]:
    """G-Retriever's prize/cost scheme and PCST, as ``retrieval_via_pcst`` of ``torch_geometric.llm``
    computes it, vectorized (that function walks the edges in a Python loop and sums tensors with
    the builtin ``sum``: most of its time on subgraphs of thousands of edges). Returns the chosen
    node and edge positions."""
    from pcst_fast import pcst_fast

    c = 0.01
    n, m = x.shape[0], edge_index.shape[1]
    node_prize = torch.nn.functional.cosine_similarity(query[None, :], x, dim=-1)
    prizes = torch.zeros(n, dtype=torch.float64)
    if topk > 0:
        k = min(topk, n)
        prizes[torch.topk(node_prize, k).indices] = torch.arange(k, 0, -1, dtype=torch.float64)
    e_prize = torch.zeros(m, dtype=torch.float64)
    if topk_edges > 0 and m:
        sims = torch.nn.functional.cosine_similarity(query[None, :], edge_attr, dim=-1).double()
        uniq = sims.unique()
        k = min(topk_edges, uniq.numel())
        values = torch.topk(uniq, k).values
        sims[sims < values[-1]] = 0.0
        last = float(k)
        for i in range(k):  # tied edges share the prize of their rank
            hit = sims == values[i]
            value = min((k - i) / int(hit.sum()), last - c)
            sims[hit] = value
            last = value * (1 - c)
        e_prize = sims
        edge_cost = min(edge_cost, float(e_prize.max()) * (1 - c / 2))
    real = torch.nonzero(e_prize <= edge_cost).ravel()
    virtual = torch.nonzero(e_prize > edge_cost).ravel()  # worth more than they cost: a virtual node each
    vid = n + torch.arange(virtual.numel())
    ei = edge_index.cpu()
    halves = torch.stack([torch.stack([ei[0, virtual], vid], 1), torch.stack([vid, ei[1, virtual]], 1)], 1)
    edges = torch.cat([ei[:, real].T, halves.reshape(-1, 2)])  # (s, v), (v, t) interleaved, as PyG does
    costs = torch.cat([edge_cost - e_prize[real], torch.zeros(2 * virtual.numel(), dtype=torch.float64)])
    all_prizes = torch.cat([prizes, e_prize[virtual] - edge_cost])
    vertices, chosen = pcst_fast(edges.numpy().astype(np.int64), all_prizes.numpy(), costs.numpy(), -1, 1, "gw", 0)
    chosen_edges = np.concatenate([real.numpy()[chosen[chosen < real.numel()]],
                                   virtual.numpy()[vertices[vertices >= n] - n]]).astype(np.int64)
    nodes = np.unique(np.concatenate([vertices[vertices < n], ei[:, chosen_edges].numpy().ravel()])).astype(np.int64)
    return nodes, chosen_edges


def extract(sub: HeteroData, relation_types: list[str], query: np.ndarray, topk: int = 10,
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
    nodes, edges = g_retriever_pcst(data.x, data.edge_index, data.edge_attr, q, topk, topk_edges, edge_cost)
    triples = []
    for e in edges.tolist():
        s, r, t = labels[e]
        triples.append(Triple(int(node_idx[s]), r, int(node_idx[t]), float(data.edge_attr[e] @ q)))
    return PcstResult([int(node_idx[i]) for i in nodes], triples, time.perf_counter() - t0)
