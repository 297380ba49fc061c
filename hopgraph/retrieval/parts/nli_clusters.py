"""NLI clustering of a query's top results (``retrieval.nli``).

Every pair of the top ``top_m`` passages is scored by an NLI cross-encoder in both directions; a pair
is linked when entailment is strong and clearly above contradiction:

    P_e >= e_min,  P_e - P_c >= margin,  w = max(0, alpha * P_e - beta * P_c) >= tau

(P_e, P_c: the larger of the two directions). Clusters come from that graph, either as maximal cliques
(networkx ``find_cliques``), a clique larger than ``max_size`` cut to its best ``max_size``-member
sub-clique, the best one taken and the cliques of the passages left found again; or grown
breadth-first from the best-scored passage left over the edges. A cluster ranks by ``blend`` x mean
normalized retrieval score + (1 - blend) x mean edge weight; every passage is in exactly one cluster
(one linked to nothing is a singleton).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from hopgraph.core.result_settings import NliSettings
from hopgraph.vectors.embedders import pick_device
from hopgraph.vectors.packaged_models import EmbedderError


@dataclass(frozen=True)
class Cluster:
    """Indices of grouped passages (best first), the cluster's rank score and its mean edge weight."""

    members: tuple[int, ...]
    score: float
    cohesion: float


def edges(p_entail: np.ndarray, p_contra: np.ndarray, cfg: NliSettings) -> tuple[np.ndarray, np.ndarray]:
    """(adjacency, weights): symmetric, from directed entailment/contradiction probabilities; a weight
    is 0 where there is no edge (an edge may weigh 0 when ``tau`` is 0)."""
    pe = np.maximum(p_entail, p_entail.T)
    pc = np.maximum(p_contra, p_contra.T)
    w = np.maximum(0.0, cfg.alpha * pe - cfg.beta * pc)
    keep = (pe >= cfg.e_min) & (pe - pc >= cfg.margin) & (w >= cfg.tau)
    np.fill_diagonal(keep, False)
    return keep, np.where(keep, w, 0.0)


def _rank(members: Sequence[int], norm: np.ndarray, w: np.ndarray, blend: float) -> Cluster:
    pairs = list(combinations(members, 2))
    cohesion = float(np.mean([w[a, b] for a, b in pairs])) if pairs else 0.0
    ordered = tuple(sorted(members, key=lambda i: (-norm[i], i)))
    return Cluster(ordered, blend * float(np.mean(norm[list(members)])) + (1 - blend) * cohesion, cohesion)


def _best_subclique(clique: Sequence[int], norm: np.ndarray, w: np.ndarray, cfg: NliSettings) -> Cluster:
    if len(clique) <= cfg.max_size:
        return _rank(clique, norm, w, cfg.blend)
    return max((_rank(sub, norm, w, cfg.blend) for sub in combinations(sorted(clique), cfg.max_size)),
               key=lambda c: (c.score, [-i for i in c.members]))


def cliques(adj: np.ndarray, w: np.ndarray, norm: np.ndarray, cfg: NliSettings) -> list[Cluster]:
    """Clusters peeled off the edge graph: the best maximal clique (cut to its best sub-clique of
    ``max_size``), then the same among the passages left, until none is left."""
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(range(len(w)))
    g.add_edges_from((int(a), int(b)) for a, b in zip(*np.nonzero(np.triu(adj)), strict=True))
    out: list[Cluster] = []
    while g.number_of_nodes():
        best = max((_best_subclique(sorted(c), norm, w, cfg) for c in nx.find_cliques(g)),
                   key=lambda c: (c.score, [-i for i in c.members]))
        out.append(best)
        g.remove_nodes_from(best.members)
    return out


def bfs(adj: np.ndarray, w: np.ndarray, norm: np.ndarray, cfg: NliSettings) -> list[Cluster]:
    """Clusters grown breadth-first from the best-scored passage not yet placed, over the edges."""
    left = set(range(len(w)))
    out: list[Cluster] = []
    while left:
        start = min(left, key=lambda i: (-norm[i], i))
        members, frontier = [start], [start]
        while frontier and len(members) < cfg.max_size:
            node = frontier.pop(0)
            for nb in sorted((int(j) for j in np.nonzero(adj[node])[0] if int(j) in left and int(j) not in members),
                             key=lambda j: (-w[node, j], j)):
                if len(members) < cfg.max_size:
                    members.append(nb)
                    frontier.append(nb)
        left -= set(members)
        out.append(_rank(members, norm, w, cfg.blend))
    return out


def cluster(scores: Sequence[float], p_entail: np.ndarray, p_contra: np.ndarray, cfg: NliSettings) -> list[Cluster]:
    """Disjoint clusters of the passages (every one placed), best first."""
    s = np.asarray(scores, dtype=np.float64)
    span = float(s.max() - s.min()) if len(s) else 0.0
    norm = (s - s.min()) / span if span > 0 else np.ones_like(s)
    adj, w = edges(np.asarray(p_entail), np.asarray(p_contra), cfg)
    found = cliques(adj, w, norm, cfg) if cfg.strategy == "clique" else bfs(adj, w, norm, cfg)
    return sorted(found, key=lambda c: (-c.score, c.members))


class NliScorer:
    """An NLI cross-encoder (sentence-transformers) by hub name or local path: directed entailment and
    contradiction probabilities of every ordered pair of passages, in batches."""

    def __init__(self, cfg: NliSettings) -> None:
        from sentence_transformers import CrossEncoder

        if not cfg.model:
            raise EmbedderError("nli.model is not set")
        try:
            self._model = CrossEncoder(cfg.model, device=pick_device(cfg.device))
        except (OSError, ValueError) as exc:
            raise EmbedderError(f"cannot load NLI cross-encoder {cfg.model!r}: {exc}") from exc
        if int(self._model.num_labels) != 3:
            raise EmbedderError(f"{cfg.model!r} has {self._model.num_labels} output labels; an NLI model has 3 "
                                "(entailment, contradiction, neutral)")
        self.cfg = cfg

    def probabilities(self, passages: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(P_entail, P_contradict): n x n, row i -> column j = "passage i entails passage j"."""
        n = len(passages)
        pe, pc = np.zeros((n, n)), np.zeros((n, n))
        pairs = [(i, j) for i in range(n) for j in range(n) if i != j]
        if not pairs:
            return pe, pc
        import torch

        logits = np.asarray(self._model.predict([(passages[i], passages[j]) for i, j in pairs],
                                                batch_size=self.cfg.batch_size, show_progress_bar=False,
                                                activation_fn=torch.nn.Identity()), dtype=np.float64)
        probs = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
        e, c = self.cfg.labels.index("entailment"), self.cfg.labels.index("contradiction")
        for (i, j), row in zip(pairs, probs, strict=True):
            pe[i, j], pc[i, j] = row[e], row[c]
        return pe, pc
