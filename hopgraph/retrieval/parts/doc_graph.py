"""Per-document subgraph retrieval: inside ONE document's own graph (a graph document's nodes and
edges), k-NN seeds by the query, G-Retriever's PCST with a node budget, and a BFS fallback from the
best seed when PCST returns nothing usable (empty, over budget, or without that seed); the chosen
subgraph verbalized as triples.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from hopgraph.core.text import estimate_tokens
from hopgraph.gpu.pcst import g_retriever_pcst

Embed = Callable[[list[str]], np.ndarray]


@dataclass
class DocGraph:
    """A document's graph with its vectors: node labels and ``(source, type, target)`` edges
    (local node positions); ``x`` node vectors, ``edge_x`` vectors of the edges' texts."""

    document_id: str
    node_ids: list[str]
    labels: list[str]
    edges: list[tuple[int, str, int]]
    x: np.ndarray
    edge_x: np.ndarray

    @classmethod
    def of(cls, document_id: str, nodes: Sequence[dict[str, Any]], edges: Sequence[dict[str, Any]],
           embed: Embed) -> DocGraph:
        """From the rows of ``GraphBrowser.document_graph`` (edges to unknown nodes are dropped)."""
        at = {str(n["id"]): i for i, n in enumerate(nodes)}
        labels = [str(n["name"]) for n in nodes]
        local = [(at[str(e["source"])], str(e["type"]), at[str(e["target"])]) for e in edges
                 if str(e["source"]) in at and str(e["target"]) in at]
        texts = [f"{labels[s]} {t} {labels[d]}" for s, t, d in local]
        x = embed(labels) if labels else np.zeros((0, 1), dtype=np.float32)
        edge_x = embed(texts) if texts else np.zeros((0, x.shape[1]), dtype=np.float32)
        return cls(document_id, list(at), labels, local, x, edge_x)

    def triple(self, e: int) -> str:
        s, t, d = self.edges[e]
        return f"{self.labels[s]} {t} {self.labels[d]}"

    def triples(self, edge_ids: Sequence[int], budget: int | None = None) -> list[str]:
        """The triples of ``edge_ids`` in that order, cut before the first that would pass ``budget``
        tokens (all of them when ``budget`` is None)."""
        lines, used = [], 0
        for e in edge_ids:
            line = self.triple(int(e))
            used += estimate_tokens(line)
            if budget is not None and used > budget:
                break
            lines.append(line)
        return lines

    def adjacency(self, edge_ids: Sequence[int] | None = None) -> dict[int, set[int]]:
        """Undirected neighbours over ``edge_ids`` (default: every edge), every node present."""
        adj: dict[int, set[int]] = {i: set() for i in range(len(self.labels))}
        for e in range(len(self.edges)) if edge_ids is None else edge_ids:
            s, _, d = self.edges[e]
            adj[s].add(d)
            adj[d].add(s)
        return adj


@dataclass
class DocSubgraph:
    """What was retrieved from one document's graph."""

    document_id: str
    nodes: list[int]
    edges: list[int] = field(default_factory=list)  # positions in DocGraph.edges, best (query-nearest) first
    seeds: list[int] = field(default_factory=list)
    fallback: bool = False
    seconds: float = 0.0

    def connected(self, graph: DocGraph) -> bool:
        """Its nodes form one component over its own edges."""
        if len(self.nodes) <= 1:
            return True
        reached = _reach(graph.adjacency(self.edges), self.nodes[0], len(graph.labels))
        return set(self.nodes) <= set(reached)

    def verbalize(self, graph: DocGraph, budget: int | None = None) -> str:
        """The subgraph's triples, one per line (best first), under ``budget`` tokens when given, then
        its nodes that no edge of it touches."""
        touched = {end for e in self.edges for end in graph.edges[e][::2]}
        lines = graph.triples(self.edges, budget) + [graph.labels[n] for n in self.nodes if n not in touched]
        return "\n".join(lines)


def _reach(adj: dict[int, set[int]], start: int, limit: int) -> list[int]:
    seen, queue, order = {start}, deque([start]), [start]
    while queue and len(order) < limit:
        for nxt in sorted(adj[queue.popleft()]):
            if nxt not in seen and len(order) < limit:
                seen.add(nxt)
                order.append(nxt)
                queue.append(nxt)
    return order


def retrieve(graph: DocGraph, query: np.ndarray, budget: int = 50, seeds: int = 5, topk: int = 10,
             topk_edges: int = 10, edge_cost: float = 0.5) -> DocSubgraph:
    """The connected subgraph of ``graph`` for ``query`` within ``budget`` nodes (see module doc)."""
    t0 = time.perf_counter()
    n = len(graph.labels)
    if n == 0:
        return DocSubgraph(graph.document_id, [], seconds=time.perf_counter() - t0)
    q = torch.as_tensor(query, dtype=torch.float32)
    x = torch.as_tensor(graph.x, dtype=torch.float32)
    sims = torch.nn.functional.cosine_similarity(q[None, :], x, dim=-1)
    seed = torch.topk(sims, min(seeds, n)).indices.tolist()
    edge_sims = (torch.nn.functional.cosine_similarity(q[None, :], torch.as_tensor(graph.edge_x), dim=-1).tolist()
                 if graph.edges else [])

    def by_query(edge_ids: Sequence[int]) -> list[int]:
        return sorted(edge_ids, key=lambda e: (-edge_sims[e], e))

    if not graph.edges:
        return DocSubgraph(graph.document_id, seed[:1], [], seed, seconds=time.perf_counter() - t0)
    ei = torch.tensor([[s for s, _, _ in graph.edges], [d for _, _, d in graph.edges]], dtype=torch.long)
    nodes, chosen = g_retriever_pcst(x, ei, torch.as_tensor(graph.edge_x, dtype=torch.float32), q,
                                     topk, topk_edges, edge_cost)
    picked = [int(i) for i in nodes]
    if picked and len(picked) <= budget and seed[0] in picked:
        return DocSubgraph(graph.document_id, sorted(picked), by_query([int(e) for e in chosen]), seed,
                           seconds=time.perf_counter() - t0)
    keep = set(_reach(graph.adjacency(), seed[0], budget))  # BFS from the best seed, up to the budget
    inside = [e for e, (s, _, d) in enumerate(graph.edges) if s in keep and d in keep]
    return DocSubgraph(graph.document_id, sorted(keep), by_query(inside), seed, fallback=True,
                       seconds=time.perf_counter() - t0)
