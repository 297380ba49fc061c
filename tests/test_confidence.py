"""Confidence by score entropy: the distribution, its entropy, the top-p cut and the selective-retrieval
curve (pure), and a real query that gives each result its probability, keeps the top-p of a sure
ranking, and abstains when the scores are too alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hopgraph.app.platform import Platform
from hopgraph.core.records import QueryResult
from hopgraph.core.result_settings import ConfidenceSettings
from hopgraph.retrieval.parts.confidence import distribution, entropy, selective_curve, top_p


def test_a_standout_result_is_sure_and_alike_scores_are_not() -> None:
    sure = distribution([0.9, 0.2, 0.19, 0.18, 0.1], temperature=0.2)
    alike = distribution([0.5, 0.5, 0.5, 0.5], temperature=0.2)
    assert sure.sum() == pytest.approx(1) and sure[0] > 0.9 and np.all(np.diff(sure) <= 0)
    assert entropy(sure) < 0.3 and entropy(alike) == pytest.approx(1.0)
    assert entropy(distribution([3.0], 0.2)) == 0.0 and distribution([], 0.2).size == 0
    # scale-free: a mode's scores and ten times them give the same distribution
    assert np.allclose(distribution([0.03, 0.02, 0.01], 0.2), distribution([0.3, 0.2, 0.1], 0.2))
    assert top_p(sure, 0.9) == 1 and top_p(alike, 0.9) == 4 and top_p(alike, 0.5) == 2


def test_selective_curve_answers_the_surest_first() -> None:
    curve = selective_curve([0.1, 0.9, 0.2, 0.8], [True, False, True, True], coverages=(0.5, 1.0))
    assert curve == [{"coverage": 0.5, "precision": 100.0, "max_entropy": 0.2},
                     {"coverage": 1.0, "precision": 75.0, "max_entropy": 0.9}]
    assert selective_curve([], []) == []


def test_query_confidence_top_p_and_abstention(platform: Platform, tmp_path: Path) -> None:
    texts = ["The Vexmoor Observatory was founded in 1893 by Zorblax Quintana.", "Kelderwick has salt mines.",
             "Bread is baked in Kelderwick every morning.", "The town council of Kelderwick meets on Mondays."]
    for i, t in enumerate(texts):
        (tmp_path / f"d{i}.txt").write_text(t)
    platform.ingest([tmp_path / f"d{i}.txt" for i in range(len(texts))])
    base = platform.settings.retrieval

    def ask(**cfg: Any) -> QueryResult:
        conf = ConfidenceSettings(enabled=True, **cfg)
        return platform.query("When was the Vexmoor Observatory founded?", mode="dense", top_k=4, explain=True,
                              retrieval=base.model_copy(update={"confidence": conf}))

    res = ask()
    probs = [r.confidence for r in res.results]
    assert len(probs) == 4 and all(p is not None for p in probs) and probs == sorted(probs, reverse=True)
    assert res.confidence is not None and 0 <= res.confidence <= 1
    assert res.explain["confidence"]["entropy"] == pytest.approx(1 - res.confidence, abs=1e-3)
    assert "Vexmoor" in res.results[0].text
    sure = ask(top_p=0.5)
    assert 1 <= len(sure.results) < 4
    none = ask(max_entropy=0.0)
    assert none.results == [] and any(n.startswith("abstained") for n in none.notes)
    assert platform.query("observatory", mode="dense").confidence is None  # off by default
