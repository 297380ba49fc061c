"""Gains over the best baseline with paired bootstrap intervals, and figures per question type."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from hopgraph.evaluation.stats import best_baseline, by_group, gains, group_of, paired_interval


@dataclass
class Rep:
    mode: str
    values: list[float]
    metrics: dict[str, float] = field(default_factory=dict)
    per_query: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.per_query = [{"id": f"q{i}", "metrics": {"R@2": v, "R@5": v}} for i, v in enumerate(self.values)]
        mean = 100 * sum(self.values) / len(self.values)
        self.metrics = {"R@2": mean, "R@5": mean}


def test_identical_runs_gain_nothing_and_a_clear_win_excludes_zero() -> None:
    a = [1.0, 0.0, 0.5, 1.0] * 25
    assert paired_interval(a, a) == (0.0, 0.0, 0.0)
    better = [min(1.0, v + 0.5) for v in a]
    mean, low, high = paired_interval(better, a)
    assert mean == pytest.approx(25.0) and 0 < low <= mean <= high
    assert paired_interval(better, a, seed=3) == paired_interval(better, a, seed=3)  # deterministic


def test_noise_gives_an_interval_around_zero() -> None:
    a = [1.0, 0.0] * 50
    b = [0.0, 1.0] * 25 + [1.0, 0.0] * 25  # as good on average, different per query
    mean, low, high = paired_interval(a, b)
    assert mean == 0.0 and low < 0 < high


def test_gains_are_measured_against_the_best_baseline() -> None:
    reps = [Rep("dense", [0.5] * 10), Rep("bm25", [0.0] * 10), Rep("graph", [1.0] * 10)]
    assert best_baseline(reps).mode == "dense"  # type: ignore[union-attr]
    found = {g.metric: g for g in gains(reps)}
    assert set(found) == {"R@2", "R@5"} and found["R@5"].baseline == "dense"
    assert (found["R@5"].mean, found["R@5"].low, found["R@5"].high) == (50.0, 50.0, 50.0)
    assert gains([Rep("graph", [1.0])]) == []  # no baseline evaluated: no gain to report


def test_figures_per_question_type() -> None:
    groups = {"q0": "bridge", "q1": "comparison", "q2": "bridge"}
    assert by_group([Rep("graph", [1.0, 0.0, 0.5])], groups) == {"graph": {"bridge": 75.0, "comparison": 0.0}}
    assert by_group([Rep("graph", [1.0])], {}) == {}
    assert group_of({"type": "compositional"}) == "compositional" and group_of({"hops": 3}) == "3 hops"
    assert group_of({"hops": "4hop1"}) == "4hop1"
    assert group_of({"answer": "x"}) is None and group_of(None) is None
