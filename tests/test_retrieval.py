"""Retrieval modes on the real stores: planted facts, determinism, degradation, context, evaluation."""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

from hopgraph.app.platform import Platform
from hopgraph.core.weights import WALK_TOLERANCE
from hopgraph.evaluation.evaluate import evaluate, load_dataset, metrics
from hopgraph.retrieval.parts import signals
from hopgraph.retrieval.parts.fusion import rrf, weighted
from hopgraph.retrieval.parts.ppr import PUSH_EPS, JointWalk, pagerank, personalized_pagerank, push_pagerank
from hopgraph.retrieval.parts.rerank import CrossEncoderReranker, MaxSimReranker
from hopgraph.retrieval.registry import REGISTRY
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from hopgraph.vectors.packaged_models import resolve_model_path

PASSAGES = {
    "p1": ("Vexmoor Observatory", "The Vexmoor Observatory was founded in 1893 by the astronomer Zorblax Quintana."),
    "p2": ("Zorblax Quintana", "Zorblax Quintana was born in Kelderwick, a town famous for its salt mines."),
    "p3": ("Kelderwick", "Kelderwick is a town on the northern ridge; its salt mine closed in 1950."),
    "p4": ("Alan Turing", "Alan Turing designed the Bombe at Bletchley Park to break the Enigma cipher."),
    "p5": ("Marie Curie", "Marie Curie won the Nobel Prize in Physics and the Nobel Prize in Chemistry."),
    "p6": ("Ada Lovelace", "Ada Lovelace wrote the first published algorithm for the Analytical Engine."),
}
QUERIES = {"q1": "In which town was the founder of the Vexmoor Observatory born?",
           "q2": "Who broke the Enigma cipher?"}
QRELS = {"q1": ["p1", "p2"], "q2": ["p4"]}


def _beir(root: Path) -> Path:
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("\n".join(json.dumps({"_id": k, "title": t, "text": x})
                                                 for k, (t, x) in PASSAGES.items()))
    (root / "queries.jsonl").write_text("\n".join(json.dumps({"_id": k, "text": t}) for k, t in QUERIES.items()))
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{q}\t{d}\t1\n" for q, ds in QRELS.items() for d in ds))
    return root


@pytest.fixture
def loaded(platform: Platform, tmp_path: Path) -> Platform:
    platform.ingest([_beir(tmp_path / "beir") / "corpus.jsonl"])
    return platform


def test_every_mode_answers_with_citations(loaded: Platform) -> None:
    # image, gnn: test_image_retrieval, test_gpu_modes; raptor reads the tree, built on demand
    loaded.update_tree()
    for mode in (m for m in REGISTRY.names if m not in ("image", "gnn")):
        res = loaded.query("Who broke the Enigma cipher?", mode=mode, top_k=3)
        assert res.results, mode
        assert all(r.citation.chunk_id.startswith("chk_") and r.citation.document_id for r in res.results)
        assert res.timings_ms["total"] > 0
    top = loaded.query("Who broke the Enigma cipher?", mode="graph", top_k=3)
    assert "Bombe" in top.results[0].text
    assert "[doc_" in top.context and "## Passages" in top.context
    assert "embed" in top.timings_ms and "embed" not in loaded.query("Enigma", mode="bm25").timings_ms  # no vector


def test_graph_mode_follows_the_bridge_entity(loaded: Platform) -> None:
    res = loaded.query(QUERIES["q1"], mode="graph", top_k=2, explain=True)
    ids = loaded.corpus_ids()
    got = {ids[r.citation.chunk_id] for r in res.results}
    assert got == {"p1", "p2"}
    assert any(s["entity"] == "Vexmoor Observatory" for s in res.explain["seeds"])
    assert {"dense", "bm25", "graph"} <= set(res.explain["signals"]) <= {"dense", "bm25", "graph", "bridge",
                                                                         "entity_bridge", "facts"}
    paths = {ids[p["chunk"]]: p for p in res.explain["paths"]}  # how the walk reached each result
    assert set(paths) == {"p1", "p2"} and all(p["path"].endswith("=> passage") for p in paths.values())
    assert paths["p1"]["path"] == "Vexmoor Observatory => passage" and paths["p1"]["hops"] == 0  # named in the query
    assert paths["p2"]["path"].startswith("Vexmoor Observatory -[") and "]-> Zorblax Quintana" in paths["p2"]["path"]


def test_link_weight_of_the_query_settings_is_used(loaded: Platform) -> None:
    """The PPR graph is cached per graph version and link weight: a query's own link weight counts."""
    p2 = next(c for c, d in loaded.corpus_ids().items() if d == "p2")  # p1 names p2's title

    def graph_score(link_weight: float) -> float:
        cfg = loaded.settings.retrieval.model_copy(update={"link_weight": link_weight})
        res = loaded.query(QUERIES["q1"], mode="graph", top_k=6, explain=True, retrieval=cfg)
        return float(res.explain["signals"]["graph"].get(p2, 0.0))

    no_links, links, again = graph_score(0.0), graph_score(100.0), graph_score(0.0)
    assert links > no_links and again == no_links


def test_titles_named_in_the_query_seed_their_passages(loaded: Platform) -> None:
    from hopgraph.retrieval.parts.signals import titles_in_query

    snap = loaded.retriever.snapshot()
    ids = loaded.corpus_ids()
    named = {ids[snap.chunk_ids[j]] for j in titles_in_query(snap, "Was Kelderwick older than Ada Lovelace?")}
    assert named == {"p3", "p6"}
    assert titles_in_query(snap, "Who wrote about salt mines?") == []
    q = "What closed in Kelderwick?"

    def graph_signal(title_weight: float) -> tuple[dict[str, float], dict[str, object]]:
        cfg = loaded.settings.retrieval.merged({"modes": {"graph": {"title_weight": title_weight}}})
        res = loaded.query(q, mode="graph", top_k=6, explain=True, retrieval=cfg)
        return {ids[c]: v for c, v in res.explain["signals"]["graph"].items()}, res.explain

    with_titles, explain = graph_signal(10.0)
    without, explain_off = graph_signal(0.0)
    assert len(explain["titles_in_query"]) == 1 and "titles_in_query" not in explain_off
    assert max(with_titles, key=with_titles.__getitem__) == "p3"
    assert with_titles["p3"] - with_titles.get("p2", 0.0) > without["p3"] - without.get("p2", 0.0)


def test_same_query_same_ranking(loaded: Platform) -> None:
    runs = [[(r.citation.chunk_id, r.score) for r in loaded.query(QUERIES["q1"], mode="graph", top_k=6).results]
            for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]


def test_stage_over_its_cap_degrades_and_says_so(loaded: Platform, monkeypatch: pytest.MonkeyPatch) -> None:
    """An injected slow expansion (60 ms against a 20 ms cap) degrades graph mode to rrf, whatever the machine."""
    real = signals.ppr_scores

    def slow(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.06)
        return real(*args, **kwargs)

    monkeypatch.setattr(signals, "ppr_scores", slow)
    cfg = loaded.settings.retrieval.model_copy(update={"stage_cap_ms": 20.0})
    res = loaded.query(QUERIES["q1"], mode="graph", retrieval=cfg, explain=True)
    assert res.results and any(n.startswith("degraded: expansion took") and "answered as rrf" in n for n in res.notes)
    assert set(res.explain["signals"]) == {"dense", "bm25"}  # what the answer fused, not what was dropped
    rrf = loaded.query(QUERIES["q1"], mode="rrf", top_k=res.results[-1].rank)
    assert [r.citation.chunk_id for r in res.results] == [r.citation.chunk_id for r in rrf.results]
    uncapped = loaded.query(QUERIES["q1"], mode="graph")  # the fixture's settings: no cap, never degraded
    assert uncapped.notes == []


def test_context_respects_the_token_budget(loaded: Platform) -> None:
    cfg = loaded.settings.retrieval.model_copy(update={"token_budget": 60})
    res = loaded.query(QUERIES["q1"], mode="graph", top_k=6, retrieval=cfg)
    assert len(res.context.split()) * 1.3 <= 60 + 5


def test_evaluation_harness_on_any_beir_folder(loaded: Platform, tmp_path: Path) -> None:
    ds = load_dataset(tmp_path / "beir")
    reps = evaluate(lambda q, m, c: loaded.query(q, mode=m, retrieval=c), loaded.corpus_ids(), ds,
                    ["bm25", "dense", "graph", "graph-0-hops"], loaded.settings.retrieval,
                    vectors=lambda ids: loaded.vectors.vectors("chunks", ids))
    by = {r.mode: r for r in reps}
    assert by["graph"].metrics["R@2"] == 100.0
    assert 0 < by["graph"].diversity["ratio@5"] <= 1 and 0 < by["dense"].diversity["ild@5"] <= 2
    assert set(by["graph"].metrics) >= {"R@2", "R@5", "R@10", "nDCG@10", "MRR@10"}
    assert by["dense"].latency_ms["p50"] > 0 and len(by["bm25"].per_query) == 2


def test_metrics_and_fusion_by_hand() -> None:
    m = metrics(["a", "x", "b"], {"a": 1, "b": 1})
    assert m["R@2"] == 0.5 and m["R@5"] == 1.0 and m["MRR@10"] == 1.0
    assert 0 < m["nDCG@10"] < 1
    assert rrf({"s1": ["a", "b"], "s2": ["b", "a"]}, k=60)["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert weighted({"s1": {"a": 2.0, "b": 1.0}}, {"s1": 0.5}) == {"a": 0.5, "b": 0.0}


def test_ppr_matches_dense_reference() -> None:
    rng = np.random.default_rng(3)
    a = (rng.random((30, 30)) < 0.15).astype(float)
    a = np.maximum(a, a.T)
    np.fill_diagonal(a, 0)
    a[0, 1] = a[1, 0] = 1  # no isolated start
    deg = a.sum(axis=1)
    deg[deg == 0] = 1
    transition = (a / deg[:, None]).T
    p = np.zeros(30)
    p[[0, 5]] = [0.7, 0.3]
    got = personalized_pagerank(sp.csr_matrix(transition), p, damping=0.5, iterations=200, tol=1e-12)
    dangling = a.sum(axis=1) == 0
    m = transition + np.outer(p, dangling.astype(float))  # dangling mass returns to the seeds
    exact = np.linalg.solve(np.eye(30) - 0.5 * m, 0.5 * p)
    assert np.allclose(got, exact, atol=1e-8)
    for matrix in (sp.csr_matrix(transition), sp.csc_matrix(transition)):
        pushed = push_pagerank(matrix, p, damping=0.5, eps=1e-12)
        assert np.allclose(pushed, exact, atol=1e-9)  # every entry within eps * out-degree
    coarse = push_pagerank(sp.csc_matrix(transition), p, damping=0.5, eps=1e-3)
    assert np.all(coarse <= exact + 1e-12) and np.abs(coarse - exact).max() < 1e-3 * 30
    assert np.argmax(coarse) == np.argmax(exact)


def _blocks(seed: int, n_e: int = 60, n_c: int = 25) -> SimpleNamespace:
    """A snapshot's four blocks, random: symmetric relations and links, some nodes without edges."""
    adjacency = sp.random(n_e, n_e, density=0.05, random_state=seed, format="csr")
    adjacency = sp.csr_matrix(sp.triu(adjacency, 1) + sp.triu(adjacency, 1).T)
    incidence = sp.random(n_c, n_e, density=0.08, random_state=seed + 1, format="csr")
    links = sp.random(n_c, n_c, density=0.1, random_state=seed + 2, format="csr")
    links = sp.csr_matrix(sp.triu(links, 1) + sp.triu(links, 1).T)
    for m in (adjacency, incidence, links):
        m.sort_indices()
    return SimpleNamespace(n_entities=n_e, n_chunks=n_c, adjacency=adjacency, incidence=incidence,
                           mentioned_in=incidence.T.tocsr(), links=links)


@pytest.mark.parametrize(("mention", "link"), [(1.0, 1.0), (0.5, 2.0), (1.0, 0.0)])
def test_joint_walk_is_the_joint_transition(mention: float, link: float) -> None:
    """The walk over the snapshot's blocks moves mass as the materialized transition does, its
    out-edges are the transition's columns, and both PPR solvers give the same scores over either."""
    snap = _blocks(int(mention * 10 + link))
    walk = JointWalk(snap, mention_weight=mention, link_weight=link)  # type: ignore[arg-type]
    inc = snap.incidence * mention
    joint = sp.bmat([[snap.adjacency, inc.T], [inc, snap.links * link]], format="csr")  # the graph, whole
    out = np.asarray(joint.sum(axis=1)).ravel()
    matrix = sp.csr_matrix(sp.diags(np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)) @ joint).T
    forward = sp.csr_matrix(matrix.T)
    forward.eliminate_zeros()
    forward.sort_indices()
    x = np.random.default_rng(1).random(walk.shape[0])
    assert walk.shape == matrix.shape and np.allclose(walk @ x, matrix @ x, rtol=1e-12, atol=0)
    assert np.array_equal(walk.degree, np.diff(forward.indptr)) and walk.nnz == forward.nnz
    nodes = np.array([0, 3, 17, snap.n_entities, snap.n_entities + 4, walk.shape[0] - 1])
    deg = walk.spread(nodes, np.ones(len(nodes)))[0]
    assert np.array_equal(deg, np.diff(forward.indptr)[nodes])
    for node in nodes.tolist():  # one node's mass goes along its out-edges, by their probabilities
        _, targets, amounts = walk.spread(np.array([node]), np.array([2.0]))
        got = sorted(zip(targets.tolist(), amounts.tolist(), strict=True))
        row = forward[node]
        assert [t for t, _ in got] == row.indices.tolist() and np.allclose([a for _, a in got], 2 * row.data)
    assert np.allclose(walk.matrix().toarray(), matrix.toarray(), rtol=1e-12, atol=0)
    into, order = walk.numbered  # power iteration's numbering: the nodes with the most out-edges first
    assert sorted(order.tolist()) == list(range(walk.shape[0])) and np.all(np.diff(walk.degree[order]) <= 0)
    assert np.allclose(into.toarray(), matrix.toarray()[np.ix_(order, order)], rtol=1e-12, atol=0)
    p = np.zeros(walk.shape[0])
    p[[2, snap.n_entities + 1]] = [1.0, 0.5]
    exact = personalized_pagerank(matrix, p, iterations=200, tol=1e-14)
    assert np.allclose(personalized_pagerank(walk, p, iterations=200, tol=1e-14), exact, rtol=0, atol=1e-12)
    assert np.abs(pagerank(walk, p, solver="power") - exact).sum() < WALK_TOLERANCE  # the default stop
    bound = PUSH_EPS * walk.degree.max()  # (push stops a node below eps * out-degree: within that)
    assert np.abs(pagerank(walk, p, solver="push") - exact).max() < bound


def test_pagerank_solvers() -> None:
    rng = np.random.default_rng(5)
    a = sp.random(400, 400, density=0.02, random_state=5, format="csr")
    a = sp.csr_matrix(a + a.T)
    out = np.asarray(a.sum(axis=1)).ravel()
    transition = sp.csr_matrix(sp.diags(np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)) @ a).T
    p = np.zeros(400)
    p[rng.choice(400, 5, replace=False)] = 1.0
    power = pagerank(transition, p, solver="power")
    pushed = pagerank(transition, p, solver="push")
    assert np.array_equal(pagerank(transition, p), power)  # auto: a small graph takes power iteration
    assert np.abs(power - pushed).sum() < 1e-3
    assert list(np.argsort(-power)[:10]) == list(np.argsort(-pushed)[:10])
    assert not pagerank(transition, np.zeros(400), solver="push").any()
    with pytest.raises(ValueError, match="unknown PPR solver"):
        pagerank(transition, p, solver="exact")


def test_rerankers(embedder: SentenceTransformerEmbedder, tmp_path: Path) -> None:
    passages = ["The cat sat on the mat. Enigma was broken at Bletchley Park.", "Bananas are yellow."]
    scores = MaxSimReranker(embedder).score("Where was Enigma broken?", passages)
    assert scores[0] > scores[1]
    # a tiny cross-encoder, built and saved by the test, loaded through the real loading code
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    tok = BertTokenizerFast.from_pretrained(resolve_model_path("all-MiniLM-L6-v2"))
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, num_labels=1)
    model_dir = tmp_path / "tiny-cross-encoder"
    BertForSequenceClassification(cfg).save_pretrained(model_dir)
    tok.save_pretrained(model_dir)
    first = CrossEncoderReranker(str(model_dir), device="cpu").score("Where was Enigma broken?", passages)
    again = CrossEncoderReranker(str(model_dir), device="cpu").score("Where was Enigma broken?", passages)
    assert len(first) == 2 and np.allclose(first, again)


def test_top_is_the_head_of_the_full_ranking() -> None:
    from hopgraph.retrieval.parts.fusion import ranked, top

    rng = np.random.default_rng(7)
    for size in (0, 1, 5, 300):
        scores = {f"c{i}": float(rng.integers(0, 20)) / 4 for i in range(size)}  # many ties
        for n in (0, 1, 3, 10, 299, 300, 400):
            assert top(scores, n) == ranked(scores)[:n]
