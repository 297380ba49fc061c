"""Confidence by score entropy: a result list's top scores, scaled to [0, 1] (so that any mode's scores
compare), as a softmax distribution; its entropy, normalized by ``log(m)``, is near 0 when one result
stands out and 1 when all look alike. Used to give results a probability, to abstain on unsure
queries, to keep the top-p of a sure ranking, and (``hopgraph eval``) to draw the selective-retrieval
curve: how precise the answers are when only the surest share of queries is answered."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def distribution(scores: Sequence[float], temperature: float) -> np.ndarray:
    """Softmax of the min-max scaled scores (equal scores: uniform)."""
    s = np.asarray(scores, dtype=np.float64)
    if s.size == 0:
        return s
    span = float(s.max() - s.min())
    scaled = (s - s.min()) / span if span > 0 else np.zeros_like(s)
    z = np.exp((scaled - scaled.max()) / temperature)
    return z / z.sum()


def entropy(probs: np.ndarray) -> float:
    """Shannon entropy normalized to [0, 1] by ``log(len)`` (0 for fewer than two results)."""
    if probs.size < 2:
        return 0.0
    p = probs[probs > 0]
    return float(-(p * np.log(p)).sum() / math.log(probs.size))


def top_p(probs: np.ndarray, p: float) -> int:
    """How many of the (descending) results it takes for their probabilities to add up to ``p``."""
    return min(len(probs), int(np.searchsorted(np.cumsum(probs), p - 1e-12)) + 1)


def selective_curve(entropies: Sequence[float], correct: Sequence[bool],
                    coverages: Sequence[float] = (0.1, 0.25, 0.5, 0.75, 1.0)) -> list[dict[str, float]]:
    """Answer only the surest share of queries (lowest entropy first): the precision of the answered
    ones at each coverage, and the entropy threshold that gives it."""
    order = np.argsort(np.asarray(entropies, dtype=np.float64), kind="stable")
    ok = np.asarray(correct, dtype=np.float64)[order]
    ent = np.asarray(entropies, dtype=np.float64)[order]
    out = []
    for c in coverages:
        n = max(1, round(c * len(order))) if len(order) else 0
        if n:
            out.append({"coverage": round(n / len(order), 3), "precision": round(100 * float(ok[:n].mean()), 1),
                        "max_entropy": round(float(ent[n - 1]), 4)})
    return out
