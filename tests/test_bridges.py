"""Bridges (retrieval.parts.bridges): the documents the best documents name by title follow them, in the
order a passage names them; a capitalized title written in lower case is a phrase, not a link."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hopgraph.app.platform import Platform
from hopgraph.retrieval.parts import bridges
from hopgraph.retrieval.parts.signals import titles_in_query
from tests.corpus import chunk_of

PASSAGES = {
    "song": ("Lanterns Over Quell", "Lanterns Over Quell is a song by Quilla Marrow and Dax Fenn, produced by "
             "Orla Vint."),
    "singer": ("Quilla Marrow", "Quilla Marrow is a singer and songwriter raised near the harbour of Tessaly Bay."),
    "rapper": ("Dax Fenn", "Dax Fenn is a rapper who grew up in the mill town of Lowmere."),
    "producer": ("Orla Vint", "Orla Vint is a record producer and engineer."),
    "concept": ("Place of birth", "The place of birth is where a person was born, as written in a passport."),
    "other": ("Harbour cranes", "Harbour cranes lift containers from ships onto the quay."),
}
QUERY = "What is the place of birth of the performer of Lanterns Over Quell?"


@pytest.fixture
def bridged(platform: Platform, tmp_path: Path) -> Platform:
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(json.dumps({"_id": k, "title": t, "text": x}) for k, (t, x) in PASSAGES.items()))
    platform.ingest([path])
    return platform


def test_a_passage_passes_its_score_to_the_first_titles_it_names(bridged: Platform) -> None:
    snap = bridged.retriever.snapshot()
    c = chunk_of(bridged)
    found = bridges.bridge(snap, {c["song"]: 2.0, c["other"]: 1.0}, sources=1, per_source=2, weight=0.8)
    assert found.scores == {c["singer"]: pytest.approx(1.6), c["rapper"]: pytest.approx(1.6)}  # not the producer
    assert [title for _, title, _ in found.hops] == ["quilla marrow", "dax fenn"]
    one = bridges.bridge(snap, {c["song"]: 2.0}, sources=1, per_source=1, weight=0.8)
    assert set(one.scores) == {c["singer"]}
    assert bridges.bridge(snap, {c["song"]: 2.0}, sources=1, per_source=2, weight=0.0).scores == {}
    # a bridged chunk is raised to its bridge score, never lowered, and never above its source
    fused = bridges.apply({c["song"]: 2.0, c["rapper"]: 1.9}, found)
    assert fused[c["rapper"]] == 1.9 and fused[c["singer"]] == pytest.approx(1.6) and fused[c["song"]] == 2.0


def test_a_capitalized_title_in_lower_case_is_not_named(bridged: Platform) -> None:
    snap = bridged.retriever.snapshot()
    c = chunk_of(bridged)
    named = {snap.chunk_ids[j] for j in titles_in_query(snap, QUERY)}
    assert named == {c["song"]}  # "place of birth" is a phrase here, not the page
    lower = {snap.chunk_ids[j] for j in titles_in_query(snap, QUERY.lower())}
    assert lower == {c["song"], c["concept"]}  # a query without capitals names any title
    j = snap.chunk_index[c["concept"]]
    assert snap.links[j].nnz == 0  # no passage writes "Place of birth" with a capital


def test_graph_mode_ranks_the_bridged_document_after_its_source(bridged: Platform) -> None:
    c = chunk_of(bridged)
    res = bridged.query(QUERY, mode="graph", top_k=6, explain=True)
    names = {v: k for k, v in c.items()}
    top = [names[r.citation.chunk_id] for r in res.results]
    # both performers follow the song, above the producer it names third and the unrelated passage
    assert top[0] == "song" and {"singer", "rapper"} <= set(top[:4]), top
    assert top.index("producer") > max(top.index("singer"), top.index("rapper")), top
    assert any("quilla marrow" in hop for hop in res.explain["bridges"]) and "bridge" in res.explain["signals"]
    off = bridged.settings.retrieval.merged({"modes": {"graph": {"bridge_weight": 0.0, "entity_bridge_weight": 0.0}}})
    plain = bridged.query(QUERY, mode="graph", top_k=3, explain=True, retrieval=off)
    assert "bridges" not in plain.explain and "bridge" not in plain.explain["signals"]


def test_a_title_that_many_passages_name_passes_less() -> None:
    from types import SimpleNamespace

    from hopgraph.core.text import normalize_name
    from hopgraph.retrieval.index import links

    titles = ["Caldermouth", "Quilla Marrow", "Dax Fenn", *(f"Note {i}" for i in range(30))]
    texts = ["Caldermouth is a port.", "Quilla Marrow sings.", "Dax Fenn raps with Quilla Marrow.",
             *(f"This note mentions Caldermouth{' and Dax Fenn' if i < 2 else ''}." for i in range(30))]
    by_title = links.title_index(titles)
    auto = links.automaton(by_title, links.cased_titles(titles))
    matrix, named_by = links.title_links(links.named_titles(texts, auto), by_title, [normalize_name(t) for t in titles])
    assert named_by == {"caldermouth": 30, "dax fenn": 2, "quilla marrow": 1}
    assert matrix[2, 1] == 1.0 and matrix[1, 2] == 1.0  # symmetric links
    limit = links.hub_limit(list(named_by.values()))
    assert limit == 20.0 and links.hub_limit([]) == float("inf")
    snap = SimpleNamespace(title_named_by=named_by, title_hub_limit=limit)
    assert bridges.hub_damping(snap, "caldermouth") == pytest.approx(20 / 30)  # type: ignore[arg-type]
    assert bridges.hub_damping(snap, "dax fenn") == 1.0  # type: ignore[arg-type]
    # the walk's links into the hub weigh limit / named-by too, both ways; other links keep weight 1
    damped = links.damp_hubs(matrix, by_title, named_by)
    assert damped[3, 0] == pytest.approx(20 / 30) and damped[0, 3] == pytest.approx(20 / 30)
    assert damped[2, 1] == 1.0 and damped[3, 2] == 1.0 and damped.nnz == matrix.nnz
