"""Result diversity: MMR re-ranking (pure, and through a real query), the diversity ratio and
intra-list diversity that ``hopgraph eval`` reports."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hopgraph.app.platform import Platform
from hopgraph.core.settings import RetrievalSettings
from hopgraph.retrieval.parts.diversity import diversity_ratio, intra_list_diversity, mmr

VECS = {"a": np.array([1.0, 0.0]), "a2": np.array([0.99, 0.14]), "b": np.array([0.0, 1.0])}


def test_mmr_trades_relevance_for_novelty() -> None:
    scores = {"a": 1.0, "a2": 0.95, "b": 0.6}
    order = ["a", "a2", "b"]
    assert mmr(order, scores, VECS, 1.0, 2) == order  # relevance only
    assert mmr(order, scores, VECS, 0.5, 2) == ["a", "b", "a2"]  # the near-duplicate waits
    assert mmr(order, scores, {}, 0.5, 2) == order  # no vectors: nothing is alike
    assert mmr(["a"], scores, VECS, 0.0, 3) == ["a"]


def test_diversity_measures() -> None:
    assert diversity_ratio([["a", "b"], ["a", "c"]], 2) == pytest.approx(3 / 4)
    assert diversity_ratio([["a", "b", "x"], ["c", "d"]], 2) == 1.0 and diversity_ratio([], 5) == 0.0
    assert intra_list_diversity([VECS["a"], VECS["b"]]) == pytest.approx(1.0)
    assert intra_list_diversity([VECS["a"], VECS["a"] * 3]) == pytest.approx(0.0)
    assert intra_list_diversity([VECS["a"]]) == 0.0


def test_a_query_with_mmr_lambda_skips_near_duplicates(platform: Platform, tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    corpus.mkdir()
    base = "The Vexmoor Observatory telescope was built in 1893 by Zorblax Quintana on the northern hill"
    for i, tail in enumerate(("", ".", " above the town.")):  # three near-identical passages
        (corpus / f"dup{i}.txt").write_text(base + tail)
    (corpus / "other.txt").write_text("Zorblax Quintana later founded a school of astronomy in the valley, "
                                      "where students learned to grind telescope lenses.")
    platform.ingest([corpus])
    plain = platform.query("Who built the Vexmoor Observatory telescope?", mode="dense", top_k=2)
    assert all("dup" in r.citation.source for r in plain.results)
    cfg = RetrievalSettings(stage_cap_ms=None, mmr_lambda=0.3)
    diverse = platform.query("Who built the Vexmoor Observatory telescope?", mode="dense", top_k=2, retrieval=cfg)
    sources = [Path(r.citation.source).name for r in diverse.results]
    assert sources[0] == Path(plain.results[0].citation.source).name and sources[1] == "other.txt"
    assert "mmr" in diverse.timings_ms
