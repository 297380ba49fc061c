"""``auto``: the routing rules as pure logic, and a real query that says which mode answered and why."""

from __future__ import annotations

from pathlib import Path

import pytest

from hopgraph.app.platform import Platform
from hopgraph.retrieval.modes.auto import route


@pytest.mark.parametrize(("text", "mode"), [
    ('"connection refused" nginx', "rrf"),                          # an exact phrase, searched
    ("ERR-1234 after upgrade", "rrf"),                               # an identifier
    ('Which album includes the song "Wonderland by Night"?', "graph"),  # quotes in a question: a title
    ("Are the bands M3 and Cam-Pact from the same country?", "graph"),  # a question, not a search
    ("How are privacy and innovation related in these talks?", "mix"),
    ("How are the Vexmoor Observatory and Kelderwick connected?", "graph"),  # named: the walk finds the chain
    ("What are the recurring themes in these interviews?", "global"),
    ("What is the main theme of the group's discussion on 20260901_13:00?", "graph"),  # names a moment
    ("What topics does Marie Curie write about?", "graph"),           # thematic, but about a named person
    ("Who founded the Vexmoor Observatory?", "graph"),
])
def test_routing_rules(text: str, mode: str) -> None:
    got = route(text, titles_named=0)
    assert got.mode == mode, got
    assert got.rule and {"quoted", "identifiers", "connection", "thematic", "names"} <= set(got.features)


@pytest.mark.parametrize(("text", "with_tree", "without"), [
    ("Give me an overview of what these talks cover.", "raptor", "global"),
    ("What is this collection about?", "raptor", "graph"),
    ("Summarize the main points of the interviews.", "raptor", "global"),
    ("Give an overview of Marie Curie's work.", "graph", "graph"),   # names someone: the walk
])
def test_overviews_go_to_the_tree_when_there_is_one(text: str, with_tree: str, without: str) -> None:
    assert route(text, titles_named=0, tree=True).mode == with_tree
    assert route(text, titles_named=0, tree=False).mode == without


def test_a_named_title_keeps_a_thematic_question_on_the_graph() -> None:
    assert route("What are the main themes of it?", titles_named=0).mode == "global"
    assert route("What are the main themes of it?", titles_named=1).mode == "graph"


def test_auto_query_names_the_mode_and_its_features(platform: Platform, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("The Vexmoor Observatory was founded in 1893 by Zorblax Quintana.")
    (tmp_path / "b.txt").write_text("Zorblax Quintana was born in Kelderwick, a town of salt mines.")
    platform.ingest([tmp_path])
    res = platform.query("Who founded the Vexmoor Observatory?", mode="auto", top_k=2, explain=True)
    assert res.mode == "auto" and res.explain["auto"]["mode"] == "graph" and not res.degraded
    assert any(n.startswith("auto chose graph") for n in res.notes)
    assert "Vexmoor Observatory" in res.results[0].text
    searched = platform.query('"salt mines"', mode="auto", top_k=1, explain=True)
    assert searched.explain["auto"]["mode"] == "rrf" and "salt mines" in searched.results[0].text
