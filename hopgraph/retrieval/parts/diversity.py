"""Result diversity: maximal-marginal-relevance re-ranking over chunk vectors, and the two measures
``hopgraph eval`` reports (the diversity ratio over a query set, intra-list diversity of one list)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from hopgraph.core.linalg import unit


def mmr(order: Sequence[str], scores: Mapping[str, float], vectors: Mapping[str, np.ndarray], lam: float,
        k: int) -> list[str]:
    """The first ``k`` of ``order`` re-ranked by MMR: each pick maximizes ``lam * relevance - (1 - lam) *
    (highest cosine to a pick so far)``, relevance being the score over the best score of ``order``.
    Items without a vector keep their relevance and count as unlike every pick; ``lam = 1`` keeps
    the order. The rest of ``order`` follows unchanged."""
    pool = list(order)
    if lam >= 1.0 or len(pool) <= 1:
        return pool
    vals = np.clip(np.array([scores.get(c, 0.0) for c in pool], dtype=np.float64), 0.0, None)
    top = float(vals.max())
    rel = vals / top if top > 0 else np.ones_like(vals)
    dim = next((len(v) for v in vectors.values()), 0)
    rows = np.stack([unit(vectors[c], dtype=np.float64) if c in vectors else np.zeros(dim)
                     for c in pool]) if dim else np.zeros((len(pool), 0))
    picked: list[int] = []
    closest = np.zeros(len(pool))  # highest cosine of each candidate to the picks so far
    left = set(range(len(pool)))
    for _ in range(min(k, len(pool))):
        best = max(left, key=lambda i: (lam * rel[i] - (1 - lam) * closest[i], -i))
        picked.append(best)
        left.discard(best)
        if rows.shape[1]:
            closest = np.maximum(closest, rows @ rows[best])
    chosen = {pool[i] for i in picked}
    return [pool[i] for i in picked] + [c for c in pool if c not in chosen]


def diversity_ratio(lists: Sequence[Sequence[str]], k: int) -> float:
    """Distinct items in the top ``k`` of all lists over all top-``k`` slots (1.0: no item repeats)."""
    slots = sum(min(len(items), k) for items in lists)
    distinct = {item for items in lists for item in items[:k]}
    return len(distinct) / slots if slots else 0.0


def intra_list_diversity(vectors: Sequence[np.ndarray]) -> float:
    """Mean pairwise cosine distance of one list's items (0 for fewer than two)."""
    if len(vectors) < 2:
        return 0.0
    rows = np.stack([unit(v, dtype=np.float64) for v in vectors])
    sims = rows @ rows.T
    n = len(vectors)
    return float((n * n - sims.sum()) / (n * (n - 1)))  # the diagonal adds n * 1
