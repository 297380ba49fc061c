"""Extraction and entity resolution on real text from ../shared/data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hopgraph.app.platform import Platform
from hopgraph.core.records import CO_OCCURS, Chunk
from hopgraph.core.settings import ExtractionSettings
from hopgraph.ingest.extraction import SpacyExtractor, worded
from hopgraph.ingest.relation_vectors import relation_vectors
from hopgraph.ingest.resolution import accepts, compatible_types, name_relation
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.paths import SHARED_DATA

from .conftest import ServerInfo, settings_for

DATA = SHARED_DATA
CAROL = DATA / "christmas-carol" / "a-christmas-carol.txt"


def _extract(text: str):  # type: ignore[no-untyped-def]
    x = SpacyExtractor(ExtractionSettings())
    out = x.extract([Chunk(id="c1", document_id="d1", text=text, ord=0)])
    names = {e.id: e.name for e in out.entities.values()}
    rels = {(names[r.source_id], r.type, names[r.target_id]) for r in out.relations}
    return out, names, rels


def test_entities_and_relations_of_hand_checked_sentences() -> None:
    # sentences from the hotpotqa-100 corpus ("Arthur's Magazine") and A Christmas Carol (line 97)
    out, names, rels = _extract(
        "Arthur's Magazine was an American literary periodical published in Philadelphia in the 19th century. "
        "It was edited by Timothy Shay Arthur. Bob Cratchit, clerk to Ebenezer Scrooge, lives in London.")
    types = {e.name: e.type for e in out.entities.values()}
    assert types["Timothy Shay Arthur"] == "PERSON" and types["Philadelphia"] == "GPE"
    assert types["Bob Cratchit"] == "PERSON" and types["Ebenezer Scrooge"] == "PERSON"
    assert "literary periodical" in types and types["literary periodical"] == "CONCEPT"
    assert ("literary periodical", "publish_in", "Philadelphia") in rels
    assert ("Bob Cratchit", "live_in", "London") in rels
    assert ("clerk", "to", "Ebenezer Scrooge") in rels
    assert any(t == CO_OCCURS and {a, b} == {"Bob Cratchit", "Ebenezer Scrooge"} for a, t, b in rels)
    assert all(r.chunk_ids == ["c1"] and r.description for r in out.relations)
    mentions = {names[m.entity_id] for m in out.mentions}
    assert {"Timothy Shay Arthur", "Philadelphia", "London"} <= mentions


def test_name_rules() -> None:
    assert name_relation("Scrooge", "Ebenezer Scrooge") == "contained"
    assert name_relation("Marley", "Jacob Marley's") == "contained"
    assert name_relation("John Smith", "John Smithson") is None
    assert name_relation("Cratchit", "Cratchit") is None
    assert compatible_types("ORG", "PERSON") and not compatible_types("GPE", "PERSON")
    assert not compatible_types("CONCEPT", "PERSON")
    # a contained name merges into a person's full name only: "France" is not Southern France
    assert name_relation("France", "Southern France") == "contained"
    assert not accepts("contained", "GPE", "GPE") and not accepts("contained", "NORP", "NORP")
    assert accepts("contained", "PERSON", "PERSON") and accepts("contained", "ORG", "PERSON")
    assert accepts("fuzzy", "GPE", "GPE")  # spelling variants of a place still merge
    # a chat handle is its person's name written together, whatever type the recognizer gave it
    assert name_relation("LiHua", "Li Hua") == "handle"
    assert name_relation("🌟 HaileyJohnson", "Hailey Johnson") == "handle"
    assert name_relation("ChaeSong-hwa", "Chae Song-hwa") == "handle"
    assert name_relation("LiHua", "Hua Li") is None and name_relation("WordPress", "WordPress") is None
    assert accepts("handle", "CONCEPT", "PERSON") and accepts("handle", "ORG", "PERSON")
    assert not accepts("handle", "CONCEPT", "ORG")  # "YouTube" is not the concept "you tube"


def test_names_lose_the_symbols_at_their_edges() -> None:
    _, names, _ = _extract('My fave is the "Blood and Wine" storyline, it is so rich with lore.')
    assert "Blood and Wine" in names.values()  # the recognizer's span takes the opening quote
    nlp = SpacyExtractor(ExtractionSettings()).nlp
    assert [t.text for t in worded(list(nlp("🌟 Hailey Johnson !")))] == ["Hailey", "Johnson"]
    assert worded(list(nlp("😊 !"))) == []


@pytest.mark.parametrize("mode", ["text", "composed"])
def test_resolution_merges_variants_not_distinct_names(arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder,
                                                       tmp_path: Path, mode: str) -> None:
    """(``mode``: how relationship vectors are made, ``extraction.relation_vectors``)"""
    cfg = settings_for(arcadedb, tmp_path / "data", extraction=ExtractionSettings(relation_vectors=mode))
    with Platform(cfg, embedder=embedder) as platform:  # type: ignore[arg-type]
        _merges_variants(platform, tmp_path)


def _merges_variants(platform: Platform, tmp_path: Path) -> None:
    text = CAROL.read_text(encoding="utf-8")
    (tmp_path / "carol.txt").write_text(text[:60_000], encoding="utf-8")
    report = platform.ingest([tmp_path / "carol.txt"])
    assert report.entities_merged >= 2
    g = platform._store
    by_name = {r["name"]: r for r in g.read("MATCH (e:Entity) RETURN e.name AS name, e.aliases AS aliases, e.id AS id")}
    assert "Scrooge" not in by_name and "Scrooge" in (by_name["Ebenezer Scrooge"]["aliases"] or [])
    assert "Marley" not in by_name and "Marley" in (by_name["Jacob Marley"]["aliases"] or [])
    assert "Bob Cratchit" in by_name and "Tim Cratchit" in by_name  # distinct people stay apart
    assert by_name["Bob Cratchit"]["id"] != by_name["Tim Cratchit"]["id"]
    # mentions moved to the canonical entity; no entity is left without a mention
    n = g.read("MATCH (:Chunk)-[m:MENTIONS]->(e:Entity {name: 'Ebenezer Scrooge'}) RETURN count(m) AS n")[0]["n"]
    assert n > 20
    assert g.read("MATCH (e:Entity) WHERE NOT (e)<-[:MENTIONS]-() RETURN count(e) AS n")[0]["n"] == 0
    assert platform.vectors.count("entities") == platform._store.counts()["Entity"]
    # the relations moved to a canonical entity were embedded again with both their (current) ends
    moved = [r for r in g.relations_of_entities([by_name["Ebenezer Scrooge"]["id"]]) if r.type != CO_OCCURS]
    assert len(moved) >= 3
    names = {i: name for i, name, _ in g.snapshot_entities(sorted({e for r in moved for e in (r.source_id,
                                                                                           r.target_id)}))}
    want = relation_vectors(moved, platform.embedder, platform.settings.extraction, names, platform.vectors.vectors)
    have = platform.vectors.vectors("relationships", [r.id for r in moved])
    assert all(float(np.dot(have[r.id], v)) > 0.999 for r, v in zip(moved, want, strict=True))
    # the merge is recorded: a later ingest maps the surface form straight to the canonical entity
    (tmp_path / "more.txt").write_text("Scrooge counted his money in the counting-house.")
    platform.ingest([tmp_path / "more.txt"])
    names = {r["n"] for r in g.read("MATCH (e:Entity) RETURN e.name AS n")}
    assert "Scrooge" not in names
