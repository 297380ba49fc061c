"""What an evaluation's figures mean: each mode's gain over the best baseline of the same run with a
paired bootstrap 95% interval (100 queries move R@2 by several points on noise alone), and the
figures per question type when the queries carry one (``metadata.type`` or ``metadata.hops``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

#: the baselines a mode's gain is measured against (the best of those evaluated, by R@5)
BASELINES = ("rrf", "dense", "bm25")
GAIN_METRICS = ("R@2", "R@5")


class Report(Protocol):
    """What these statistics read of a mode's evaluation (``evaluation.report.ModeReport``)."""

    mode: str
    metrics: dict[str, float]
    per_query: list[dict[str, Any]]


@dataclass(frozen=True)
class Gain:
    """A mode's gain over a baseline in points: the mean and a 95% bootstrap interval."""

    mode: str
    baseline: str
    metric: str
    mean: float
    low: float
    high: float


def paired_interval(a: Sequence[float], b: Sequence[float], samples: int = 2000, seed: int = 0
                    ) -> tuple[float, float, float]:
    """Mean of ``a - b`` (per query, in points) and its 95% percentile bootstrap interval, resampling
    queries (the same resample for both: the runs are paired). Deterministic for a seed."""
    diff = 100 * (np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64))
    if diff.size == 0:
        return 0.0, 0.0, 0.0
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, diff.size, size=(samples, diff.size))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(diff.mean()), float(low), float(high)


def best_baseline(reports: Sequence[Report], metric: str = "R@5") -> Report | None:
    """The best of the baselines evaluated in the run (None when none was)."""
    found = [r for r in reports if r.mode in BASELINES]
    return max(found, key=lambda r: r.metrics.get(metric, 0.0)) if found else None


def _column(report: Report, metric: str) -> dict[str, float]:
    return {q["id"]: float(q["metrics"][metric]) for q in report.per_query}


def gains(reports: Sequence[Report], metrics: Sequence[str] = GAIN_METRICS, samples: int = 2000) -> list[Gain]:
    """Every non-baseline mode's gain over the best baseline, per metric, with its interval."""
    base = best_baseline(reports)
    if base is None:
        return []
    out = []
    for r in reports:
        if r.mode in BASELINES:
            continue
        for metric in metrics:
            mine, theirs = _column(r, metric), _column(base, metric)
            ids = [q for q in mine if q in theirs]
            mean, low, high = paired_interval([mine[q] for q in ids], [theirs[q] for q in ids], samples)
            out.append(Gain(r.mode, base.mode, metric, round(mean, 1), round(low, 1), round(high, 1)))
    return out


def by_group(reports: Sequence[Report], groups: Mapping[str, str], metric: str = "R@5"
             ) -> dict[str, dict[str, float]]:
    """mode -> group -> the metric's mean over the group's queries (in points); {} without groups."""
    if not groups:
        return {}
    out: dict[str, dict[str, float]] = {}
    for r in reports:
        sums: dict[str, list[float]] = {}
        for q in r.per_query:
            if q["id"] in groups:
                sums.setdefault(groups[q["id"]], []).append(float(q["metrics"][metric]))
        out[r.mode] = {g: round(100 * sum(v) / len(v), 1) for g, v in sorted(sums.items())}
    return out


def group_of(metadata: Mapping[str, Any] | None) -> str | None:
    """A query's question type (``metadata.type``) or hop count (``metadata.hops``), if it has one."""
    if not metadata:
        return None
    if metadata.get("type"):
        return str(metadata["type"])
    if metadata.get("hops") is not None:
        hops = str(metadata["hops"])
        return f"{hops} hops" if hops.isdigit() else hops
    return None
