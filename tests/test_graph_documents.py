"""Graph documents (JSONL ``{id, nodes, edges}``): read, verbalized, ingested into the real stores
with their own entities and relations, re-ingested and deleted like text; per-document PCST
retrieval; and the graph-QA benchmark on ExplaGraphs against a local fake LLM."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hopgraph.app.graphqa_bench import BenchConfig, GraphQaBench, exact, token_f1
from hopgraph.app.graphqa_data import read_graphqa, triples_record
from hopgraph.app.platform import Platform
from hopgraph.core.records import GRAPH_NODE, Chunk, document_id
from hopgraph.gpu.graph_classifier import ClassifierConfig
from hopgraph.ingest.graph_docs import graph_extraction, graph_text, node_entity_id, parse_graph
from hopgraph.ingest.source_text import SourceText
from hopgraph.ingest.sources import read_jsonl
from hopgraph.retrieval.parts import doc_graph
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.fake_llm import fake_llm_server
from tests.paths import SHARED_DATA

KITCHEN: dict[str, Any] = {
    "id": "scene1", "title": "kitchen video",
    "nodes": [{"id": 1, "label": "person"}, {"id": 2, "label": "person"}, {"id": 3, "label": "cup"},
              {"id": 4, "label": "table", "attrs": {"colour": "red"}}],
    "edges": [{"source": 2, "target": 3, "type": "holds", "attrs": {"frame": 2}},
              {"source": 1, "target": 3, "type": "holds", "attrs": {"frame": 1}},
              {"source": 3, "target": 4, "type": "on", "attrs": {"frame": 1}},
              {"source": 3, "target": 4, "type": "on", "attrs": {"frame": 2}}],
}
ARGUMENT = triples_record("arg1", [("cannabis", "synonym of", "marijuana"), ("legal", "causes", "more available"),
                                   ("marijuana", "capable of", "good thing"), ("good thing", "desires", "legal")])


def _write(path: Path, *records: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_graph_records_are_checked_and_verbalized_in_time_order(tmp_path: Path) -> None:
    bad = [{"id": "a", "nodes": []}, {"id": "b", "nodes": [{"id": 1, "label": "x"}, {"id": 1, "label": "y"}]},
           {"id": "c", "nodes": [{"id": 1, "label": "x"}], "edges": [{"source": 1, "target": 9, "type": "r"}]}]
    got = list(read_jsonl(_write(tmp_path / "g.jsonl", KITCHEN, *bad), 10**6))
    assert isinstance(got[0], SourceText) and got[0].document.kind == "graph" and got[0].graph is not None
    reasons = [getattr(g, "reason", "") for g in got[1:]]
    assert "nodes: List should have at least 1 item" in reasons[0]
    assert "node id '1' is used twice" in reasons[1] and "names no node '9'" in reasons[2]
    graph = parse_graph(KITCHEN)
    assert not isinstance(graph, str)
    assert graph_text(graph).splitlines() == [
        "person holds cup (frame 1).", "cup on table (frame 1).", "person holds cup (frame 2).",
        "cup on table (frame 2).", "table (colour=red)."]


def test_nodes_stay_distinct_and_each_frame_is_a_relation() -> None:
    graph = parse_graph(KITCHEN)
    assert not isinstance(graph, str)
    chunk = Chunk(id="chk_1", document_id="doc_k", text=graph_text(graph), ord=0)
    ex = graph_extraction("doc_k", graph, [chunk])
    people = [e for e in ex.entities.values() if e.name == "person"]
    assert len(people) == 2 and {e.type for e in ex.entities.values()} == {GRAPH_NODE}
    assert len(ex.relations) == 4 and {r.description for r in ex.relations} >= {"cup on table (frame 2)"}
    assert {m.entity_id for m in ex.mentions} == {node_entity_id("doc_k", str(i)) for i in (1, 2, 3, 4)}


def test_ingest_reingest_delete_like_any_document(platform: Platform, tmp_path: Path) -> None:
    other = {**KITCHEN, "id": "scene2", "nodes": [*KITCHEN["nodes"][:3], {"id": 4, "label": "a person"}],
             "edges": [{"source": 1, "target": 4, "type": "greets"}]}
    path = _write(tmp_path / "graphs.jsonl", KITCHEN, other, ARGUMENT)
    rep = platform.ingest([path])
    assert rep.documents_ingested == 3 and not rep.skipped and rep.entities_merged == 0  # never merged
    scene = document_id(f"{path.resolve()}#scene1")
    nodes, edges = platform.browser.document_graph(scene)
    assert [n["name"] for n in nodes].count("person") == 2 and len(edges) == 4
    assert platform.ingest([path]).documents_unchanged == 3  # idempotent
    changed = {**ARGUMENT, "edges": [*ARGUMENT["edges"], {"source": "legal", "target": "cannabis", "type": "has"}]}
    rep = platform.ingest([_write(path, KITCHEN, other, changed)])
    assert (rep.documents_ingested, rep.documents_unchanged) == (1, 2)
    arg = document_id(f"{path.resolve()}#arg1")
    assert len(platform.browser.document_graph(arg)[1]) == 5
    hits = platform.query("who holds the cup", mode="dense", top_k=3)
    assert hits.results[0].citation.document_id == scene
    assert platform.delete(scene)
    assert platform.browser.document_graph(scene) == ([], [])
    counts = platform._store.counts()
    assert counts["Entity"] == 4 + 5  # scene2's four nodes and the argument's five concepts remain


def _graph(embedder: SentenceTransformerEmbedder, n: int) -> doc_graph.DocGraph:
    """A path of n concepts."""
    words = ["cannabis", "marijuana", "legal", "market", "tax", "revenue", "schools", "teachers", "pay", "raise"]
    nodes = [{"id": str(i), "name": words[i % len(words)] + ("" if i < len(words) else f" {i}")} for i in range(n)]
    edges = [{"source": str(i), "target": str(i + 1), "type": "causes"} for i in range(n - 1)]
    return doc_graph.DocGraph.of("doc", nodes, edges, embedder.embed)


def test_pcst_subgraph_is_connected_and_within_budget(embedder: SentenceTransformerEmbedder) -> None:
    g = _graph(embedder, 30)
    q = embedder.embed(["is marijuana legal"])[0]
    sub = doc_graph.retrieve(g, q, budget=50)
    assert not sub.fallback and sub.connected(g) and 1 <= len(sub.nodes) <= 50
    assert g.labels[sub.seeds[0]] == "marijuana" and sub.seeds[0] in sub.nodes
    tight = doc_graph.retrieve(g, q, budget=2, topk=10, edge_cost=0.0)  # PCST keeps more than 2: BFS instead
    assert tight.fallback and len(tight.nodes) == 2 and tight.connected(g) and sub.seeds[0] in tight.nodes
    assert "marijuana" in tight.verbalize(g)
    lone = doc_graph.DocGraph.of("d", [{"id": "a", "name": "tea"}], [], embedder.embed)
    assert doc_graph.retrieve(lone, q).nodes == [0]


def test_answer_metrics() -> None:
    assert exact(" Support.", "support") and not exact("supports", "support")
    assert token_f1("it is support", "support") == pytest.approx(0.5)


@pytest.mark.parametrize("with_llm", [False, True])
def test_bench_graphqa_on_expla_graphs(platform: Platform, tmp_path: Path, with_llm: bool) -> None:
    questions = read_graphqa(SHARED_DATA / "expla-graphs")
    assert len(questions) == 2766 and {q.answer for q in questions} == {"support", "counter"}
    cfg = BenchConfig(llm_questions=8, classifier=ClassifierConfig(epochs=3))
    if with_llm:
        from hopgraph.core.settings import LlmSettings
        from hopgraph.ingest.llm_client import ChatClient

        with fake_llm_server() as (fake, url):
            chat = ChatClient(LlmSettings(base_url=url, api_key="k", model="fake"), tmp_path / "cache")
            report = GraphQaBench(platform, cfg, chat).run(questions[:60], tmp_path / "bench")
            # raw text, PCST subgraph, GNN triples per question (a subgraph that is the whole graph in
            # the same order is the same prompt: answered from the cache)
            assert len(fake.requests) + chat.cache_hits == 3 * 8 and len(fake.requests) > 8
        for column in ("llm_raw_text", "llm_pcst_subgraph", "llm_gnn_triples"):
            got = report.llm[column]
            assert isinstance(got, dict) and got["questions"] == 8 and 0 <= got["exact_match"] <= 1
        return
    report = GraphQaBench(platform, cfg, None).run(questions[:60], tmp_path / "bench")
    assert (report.train, report.test) == (48, 12)
    assert set(report.llm.values()) == {"no endpoint"}
    assert {"majority_class", "question_only", "gnn"} <= set(report.accuracy)
    assert all(isinstance(v, float) and 0 <= v <= 1 for v in report.accuracy.values())
    r = report.retrieval
    assert r["connected"] == 1.0 and r["within_budget"] == 1.0 and 0 <= r["pcst_fallback_rate"] <= 1
    assert r["document_hit@5"] >= r["document_hit@1"] > 0
    assert report.examples and report.examples[0]["gnn_triples"]
    assert np.isfinite(r["mean_nodes"])


def test_bench_reports_gold_hit_rate_and_attention_precision(platform: Platform, tmp_path: Path) -> None:
    lines = []
    for i in range(12):  # a generic graph-QA JSONL whose questions name the nodes they need
        food, place = ["bread", "rice", "soup"][i % 3], ["kitchen", "garden"][i % 2]
        lines.append({"id": f"q{i}", "question": f"Where is the {food}?", "answer": place, "gold_nodes": [food],
                      "nodes": [{"id": "a", "label": food}, {"id": "b", "label": place}, {"id": "c", "label": "cat"}],
                      "edges": [{"source": "a", "target": "b", "type": "at location"},
                                {"source": "c", "target": "b", "type": "not at location"}]})
    questions = read_graphqa(_write(tmp_path / "qa.jsonl", *lines))
    report = GraphQaBench(platform, BenchConfig(test_share=0.25, classifier=ClassifierConfig(epochs=2)),
                          None).run(questions, tmp_path / "bench")
    assert report.retrieval["gold_hit_rate"] == 1.0  # PCST keeps the node the question names
    precision = report.retrieval["attention_precision@5"]
    assert isinstance(precision, float) and 0 < precision <= 1
    assert report.accuracy["gnn"] is not None and report.test == 3
