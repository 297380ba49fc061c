"""Score fusion: reciprocal-rank fusion and weighted sums of per-signal normalized scores."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def rrf(rankings: Mapping[str, list[str]], k: int = 60, weights: Mapping[str, float] | None = None) -> dict[str, float]:
    """Reciprocal-rank fusion: sum over signals of ``weight / (k + rank)``."""
    out: dict[str, float] = {}
    for name, ranked in rankings.items():
        w = (weights or {}).get(name, 1.0)
        for r, item in enumerate(ranked, start=1):
            out[item] = out.get(item, 0.0) + w / (k + r)
    return out


def normalize(scores: Mapping[str, float], floor: float | None = None) -> dict[str, float]:
    """Min-max to [0, 1] (all equal -> 1); with ``floor``, (v - floor) / (max - floor) instead."""
    if not scores:
        return {}
    lo = min(scores.values()) if floor is None else floor
    hi = max(scores.values())
    if hi - lo < 1e-12:
        return dict.fromkeys(scores, 1.0)
    return {k: (v - lo) / (hi - lo) for k, v in scores.items()}


def weighted(signals: Mapping[str, Mapping[str, float]], weights: Mapping[str, float],
             floors: Mapping[str, float] | None = None) -> dict[str, float]:
    """Weighted sum of min-max normalized signals (normalized from ``floors[name]`` instead of the
    minimum where given); an item missing from a signal scores 0 there."""
    out: dict[str, float] = {}
    for name, scores in signals.items():
        w = weights.get(name, 0.0)
        if w == 0:
            continue
        for item, v in normalize(scores, (floors or {}).get(name)).items():
            out[item] = out.get(item, 0.0) + w * v
    return out


def ranked(scores: Mapping[str, float]) -> list[str]:
    """Items by descending score, ties broken by id (deterministic)."""
    return [k for k, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))]


def top(scores: Mapping[str, float], n: int) -> list[str]:
    """``ranked(scores)[:n]`` without sorting every item: those at or above the n-th largest score are
    found with numpy, then only they are sorted (the same order, ties broken by id)."""
    if n <= 0:
        return []
    if n >= len(scores):
        return ranked(scores)
    values = np.fromiter(scores.values(), dtype=np.float64, count=len(scores))
    cut = np.partition(values, len(values) - n)[len(values) - n]
    return ranked({k: v for k, v in scores.items() if v >= cut})[:n]
