"""NLI clustering of the top results: the edge rule, clique and BFS strategies (pure, on given
probabilities), settings validation, and the whole path with a tiny 3-label cross-encoder the test
builds and saves (no NLI weights exist offline), through the real loading code and a real query."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from hopgraph.app.platform import Platform
from hopgraph.core.result_settings import NliSettings
from hopgraph.retrieval.parts.nli_clusters import NliScorer, cluster, edges
from hopgraph.vectors.packaged_models import EmbedderError, resolve_model_path

CFG = NliSettings(e_min=0.5, margin=0.1, tau=0.3, max_size=3)


def _probs(n: int, links: dict[tuple[int, int], float], contra: dict[tuple[int, int], float] | None = None
           ) -> tuple[np.ndarray, np.ndarray]:
    pe, pc = np.full((n, n), 0.1), np.full((n, n), 0.1)
    for (a, b), p in links.items():
        pe[a, b] = p  # one direction only: the rule takes the larger of the two
    for (a, b), p in (contra or {}).items():
        pc[a, b] = pc[b, a] = p
    return pe, pc


def test_edge_rule_needs_entailment_margin_and_weight() -> None:
    pe, pc = _probs(5, {(0, 1): 0.9, (1, 2): 0.45, (2, 3): 0.7, (3, 4): 0.6},
                    contra={(2, 3): 0.65, (3, 4): 0.35})
    adj, w = edges(pe, pc, CFG)
    assert adj[0, 1] and adj[1, 0] and w[0, 1] == w[1, 0] == pytest.approx(0.8)  # an edge, both ways
    assert w[1, 2] == 0                                    # below e_min
    assert w[2, 3] == 0                                    # entailment barely above contradiction: margin
    assert w[3, 4] == 0                                    # weight 0.6 - 0.35 = 0.25 < tau
    assert adj.sum() == 2 and not np.diag(adj).any()


def _connected(members: tuple[int, ...], adj: np.ndarray) -> bool:
    seen, todo = {members[0]}, [members[0]]
    while todo:
        node = todo.pop()
        for other in members:
            if other not in seen and adj[node, other]:
                seen.add(other)
                todo.append(other)
    return seen == set(members)


def test_cliques_are_complete_respect_the_size_and_cover_every_passage() -> None:
    # 0-1-2-3 all entail each other (a 4-clique), 4-5 a pair, 6 alone
    links = {pair: 0.9 for pair in combinations(range(4), 2)} | {(4, 5): 0.8}
    pe, pc = _probs(7, links)
    scores = [1.0, 0.2, 0.9, 0.8, 0.7, 0.6, 0.95]
    found = cluster(scores, pe, pc, CFG)
    _, w = edges(pe, pc, CFG)
    assert sorted(i for c in found for i in c.members) == list(range(7))  # each passage once
    groups = {c.members for c in found}
    assert (0, 2, 3) in groups  # the 4-clique cut to its best 3 by retrieval score; 1 left alone
    assert (4, 5) in groups and (1,) in groups and (6,) in groups
    for c in found:
        assert len(c.members) <= 3 and all(w[a, b] >= CFG.tau for a, b in combinations(c.members, 2))
    assert [c.score for c in found] == sorted((c.score for c in found), reverse=True)


def test_bfs_grows_connected_clusters_from_the_best_scored_passage() -> None:
    # a chain 0-1-2-3 (not a clique), 4 alone
    pe, pc = _probs(5, {(0, 1): 0.9, (1, 2): 0.9, (2, 3): 0.9})
    cfg = CFG.model_copy(update={"strategy": "bfs"})
    found = cluster([0.5, 1.0, 0.4, 0.3, 0.9], pe, pc, cfg)
    adj, _ = edges(pe, pc, cfg)
    groups = [c.members for c in found]
    assert (1, 0, 2) in groups  # from 1 (best-scored), its neighbours, up to max_size
    assert (3,) in groups and (4,) in groups
    assert all(_connected(c.members, adj) for c in found)
    assert sorted(i for g in groups for i in g) == list(range(5))


def test_settings_are_validated() -> None:
    with pytest.raises(ValidationError, match="entailment, contradiction and neutral"):
        NliSettings(labels=("entailment", "entailment", "neutral"))
    with pytest.raises(ValidationError, match=r"needs nli\.model"):
        NliSettings(enabled=True)
    with pytest.raises(ValidationError):
        NliSettings(strategy="kmeans")  # type: ignore[arg-type]


def _tiny_model(path: Path, labels: int = 3) -> Path:
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    tok = BertTokenizerFast.from_pretrained(resolve_model_path("all-MiniLM-L6-v2"))
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, num_labels=labels)
    BertForSequenceClassification(cfg).save_pretrained(path)
    tok.save_pretrained(path)
    return path


def test_nli_clusters_of_a_real_query_with_a_tiny_model(platform: Platform, tmp_path: Path) -> None:
    model = _tiny_model(tmp_path / "tiny-nli")
    texts = ["The Vexmoor Observatory was founded in 1893.", "Vexmoor Observatory opened in 1893.",
             "Zorblax Quintana founded the observatory.", "Kelderwick has salt mines.",
             "The observatory stands above Kelderwick."]
    scorer = NliScorer(NliSettings(model=str(model), device="cpu"))
    pe, pc = scorer.probabilities(texts)
    assert pe.shape == pc.shape == (5, 5) and not np.diag(pe).any()
    assert ((pe + pc) <= 1 + 1e-9).all() and (pe[~np.eye(5, dtype=bool)] > 0).all()
    again, _ = NliScorer(NliSettings(model=str(model), device="cpu")).probabilities(texts)
    assert np.allclose(pe, again)

    for i, t in enumerate(texts):
        (tmp_path / f"d{i}.txt").write_text(t)
    platform.ingest([tmp_path / f"d{i}.txt" for i in range(len(texts))])
    for strategy in ("clique", "bfs"):
        # thresholds at 0: every pair is an edge, so clusters are as large as max_size allows
        nli = NliSettings(enabled=True, model=str(model), device="cpu", strategy=strategy, e_min=0.0, margin=-1.0,
                          tau=0.0, max_size=2, top_m=4)
        cfg = platform.settings.retrieval.model_copy(update={"nli": nli})
        res = platform.query("When was the observatory founded?", mode="dense", top_k=5, explain=True,
                             retrieval=cfg)
        clusters = res.explain["nli"]["clusters"]
        top = [r.citation.chunk_id for r in res.results[:4]]
        assert sorted(c for cl in clusters for c in cl["chunks"]) == sorted(top)  # the top 4, each once
        assert all(len(cl["chunks"]) <= 2 for cl in clusters) and len(clusters) == 2
        assert [r.cluster for r in res.results[:4]].count(0) == 2 and res.results[4].cluster is None
        assert "nli" in res.timings_ms

    with pytest.raises(EmbedderError, match="3"):
        NliScorer(NliSettings(model=str(_tiny_model(tmp_path / "two-labels", labels=2)), device="cpu"))
