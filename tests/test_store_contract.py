"""The graph store's contract, run on the in-memory store (``hopgraph.testing``, the fake, opened as
the backend ``memory``) and on the real ArcadeDB (and Neo4j where Docker runs): every role's scenario
(``tests/store_scenarios.py``) must leave the fake and the backend in the same observable state, and
the scenarios below (removal planned by ``ingest.graph_edits``, an entity merge, the change log) hold
on both. The fake is what fast unit tests of ingest logic run against."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hopgraph.core.records import relation_id
from hopgraph.graphdb.factory import open_graph_store
from hopgraph.graphdb.protocols import GraphStore
from hopgraph.graphdb.records import GraphChange
from hopgraph.ingest.graph_edits import merge_edits, plan_removal
from hopgraph.testing import MemoryGraphStore, memory_settings
from tests.store_scenarios import SCENARIOS
from tests.store_scenarios import load as _load

from .graph_backends import neo4j_uri  # noqa: F401 - fixture


@pytest.fixture(params=["memory", pytest.param("arcadedb", marks=pytest.mark.integration)])
def narrow(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GraphStore]:
    if request.param == "memory":
        yield open_graph_store(memory_settings(tmp_path))  # the registered backend ``memory``
        return
    from tests.graph_backends import open_store

    store = open_store("arcadedb", request, tmp_path)
    yield store
    store.close()


@pytest.mark.parametrize("role", SCENARIOS)
def test_every_role_holds_on_the_fake(role: str) -> None:
    """Each role's scenario on the fake alone (its assertions are in the scenario)."""
    assert SCENARIOS[role](MemoryGraphStore())


@pytest.mark.integration
@pytest.mark.parametrize("backend", ["arcadedb", "neo4j"])
@pytest.mark.parametrize("role", SCENARIOS)
def test_every_role_leaves_the_fake_and_the_backend_alike(role: str, backend: str, request: pytest.FixtureRequest,
                                                           tmp_path: Path) -> None:
    from tests.graph_backends import open_store

    expected = SCENARIOS[role](MemoryGraphStore())
    real = open_store(backend, request, tmp_path)
    try:
        assert SCENARIOS[role](real) == expected
    finally:
        real.close()


def _state(store: GraphStore) -> dict[str, Any]:
    topo = store.topology()
    edges = sorted((topo.entity_ids[s], topo.entity_ids[t], typ, w) for s, t, typ, w in
                   zip(topo.sources, topo.targets, topo.edge_types, topo.weights, strict=True))
    return {"counts": store.counts(), "entities": topo.entity_ids, "edges": edges,
            "chunks": sorted(r["id"] for r in store.snapshot_chunks()),
            "mentions": sorted(store.snapshot_mentions()), "communities": store.community_ids(),
            "aliases": store.aliases(), "unfinished": store.unfinished_documents()}


def test_removal_planned_in_ingest_leaves_the_same_graph(narrow: GraphStore) -> None:
    _load(narrow)
    v = narrow.version()
    # doc 1 changes: c2 survives, c1 goes; a new version writes entity "a" again (kept)
    facts = narrow.removal_facts({"doc_1": ["c2"]})
    assert facts.chunk_ids == ["c1"] and facts.orphaned_entity_ids == {"a"}
    assert set(facts.unsupported) == {relation_id("a", "knows", "b")}
    assert plan_removal(facts, keep_entities={"a"}).entity_ids == []
    narrow.remove(plan_removal(facts))
    st = _state(narrow)
    assert narrow.version() == v  # writes before the commit do not move the version
    assert st["entities"] == ["b", "bee", "c"] and st["chunks"] == ["c2", "c3"]
    assert ("a", "b", "knows", 1.0) not in st["edges"] and st["communities"] == {"top": 0}
    assert st["counts"]["Chunk"] == 2 and st["counts"]["MENTIONS"] == 4


def test_merge_edits_fold_an_alias(narrow: GraphStore) -> None:
    _load(narrow)
    ids = ["bee"]
    edits = merge_edits({"bee": "b"}, narrow.mentions_of_entities(ids), narrow.relations_of_entities(ids))
    narrow.add_mentions(edits.mentions)
    narrow.upsert_relations(edits.relations)
    narrow.delete_entities(ids)
    narrow.record_aliases([("bee", "BEE", "b")])
    st = _state(narrow)
    assert st["entities"] == ["a", "b", "c"] and st["aliases"] == {"bee": "b"}
    assert ("c", "b", "met", 1.0) in st["edges"] and not any(e[2] == "is" for e in st["edges"])  # b-is-bee vanished
    assert ("c3", "b", 1, "") in st["mentions"] and ("c1", "b", 2, "") in st["mentions"]
    assert sorted(edits.removed_relation_ids) == sorted([relation_id("c", "met", "bee"), relation_id("b", "is", "bee")])


@pytest.mark.integration
def test_memory_fake_equals_arcadedb(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Both scenarios, side by side: the fake's observable state is the real store's."""
    from tests.graph_backends import open_store

    real = open_store("arcadedb", request, tmp_path)
    try:
        states = []
        for store in (MemoryGraphStore(), real):
            _load(store)
            store.remove(plan_removal(store.removal_facts({"doc_2": ()})), ["doc_2"])
            states.append({k: v for k, v in _state(store).items() if k != "unfinished"})
        assert states[0] == states[1]
    finally:
        real.close()


def test_removal_marks_what_may_quote_removed_text(narrow: GraphStore) -> None:
    _load(narrow)
    narrow.remove(plan_removal(narrow.removal_facts({"doc_1": ["c2"]})))  # c1 goes: b loses "A knows B."
    entities, relations = narrow.stale_descriptions()
    by_id = {e.id: e for e in entities}
    assert set(by_id) == {"b"} and by_id["b"].names == ("B",) and by_id["b"].texts == ["B works with C."]
    assert relations == []  # a-knows-b died with c1; b-works-c and b-is-bee lost no support
    assert narrow.stale_summaries() == {"top"}
    narrow.set_descriptions({"b": "B works with C."}, {})
    assert narrow.stale_descriptions() == ([], [])


def test_refreshed_descriptions_keep_what_still_stands() -> None:
    from hopgraph.ingest.graph_edits import refreshed_description, sentence_with

    texts = ["Charles Babbage designed the Difference Engine. Babbage lived in London."]
    assert refreshed_description("Charles Babbage designed the Difference Engine.", ["Charles Babbage"], texts) is None
    assert refreshed_description("Ada Lovelace worked with Charles Babbage.", ["Charles Babbage"], texts) == \
        "Charles Babbage designed the Difference Engine."
    assert sentence_with(texts[0], ["Babbage", "London"]) == "Babbage lived in London."
    assert refreshed_description("gone", ["Nobody"], []) == ""


def test_commits_bump_the_version_once_and_log_what_changed(narrow: GraphStore) -> None:
    _load(narrow)
    v = narrow.version()
    assert narrow.changes_since(v) == []
    assert narrow.commit(documents=["doc_2", "doc_1", "doc_2"], statuses=[("doc_1", "complete", "h9")]) == v + 1
    assert narrow.document_states(["doc_1"])["doc_1"].content_hash == "h9"
    narrow.remove(plan_removal(narrow.removal_facts({"doc_2": ()})), ["doc_2"])  # a deletion commits itself
    narrow.commit(entities=["b", "bee"])
    assert narrow.communities_stale()
    narrow.mark_communities_built()
    assert not narrow.communities_stale() and narrow.version() == v + 4
    assert narrow.changes_since(v) == [GraphChange(v + 1, ("doc_1", "doc_2")), GraphChange(v + 2, ("doc_2",)),
                                       GraphChange(v + 3, (), ("b", "bee")), GraphChange(v + 4, communities=True)]
    assert narrow.changes_since(v + 3) == [GraphChange(v + 4, communities=True)]
    if v > 0:  # versions before the log existed (none in a fresh store) cannot be replayed
        assert narrow.changes_since(v - 1) is None


def test_exports_of_what_changed_are_slices_of_the_whole(narrow: GraphStore) -> None:
    _load(narrow)
    narrow.commit(documents=["doc_1", "doc_2"])
    assert sorted(r["id"] for r in narrow.snapshot_chunks(["doc_2"])) == ["c3"]
    assert sorted(narrow.snapshot_mentions(chunk_ids=["c3"])) == [("c3", "bee", 1, ""), ("c3", "c", 1, "")]
    assert sorted(narrow.snapshot_mentions(entity_ids=["a"])) == [("c1", "a", 1, "")]
    assert sorted(narrow.snapshot_entities(["b", "zz"])) == [("b", "B", "PERSON")]
    assert sorted(e.id for e in narrow.snapshot_edges(["a"])) == [relation_id("a", "knows", "b")]
    whole = {e.id for e in narrow.snapshot_edges()}
    assert {e.id for e in narrow.snapshot_edges(["b", "bee"])} == whole  # every edge touches b or bee
    assert len(whole) == 4 and len(narrow.snapshot_entities()) == 4
    assert all(e.chunk_ids and len(e.chunk_ids) == e.weight for e in narrow.snapshot_edges())  # their support
    assert sorted(narrow.snapshot_memberships(["a", "zz"])) == [("a", "onlya"), ("a", "top")]
    assert len(narrow.snapshot_memberships()) == 5
