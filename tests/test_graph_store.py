"""GraphStore contract on the real ArcadeDB server (and Neo4j 5 where Docker runs)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hopgraph.core.records import Chunk, Community, Document, Entity, Mention, Relation, relation_id
from hopgraph.graphdb.bolt.store import BoltGraphStore
from hopgraph.graphdb.readonly import ReadOnlyViolation
from hopgraph.graphdb.records import RelationRef
from hopgraph.ingest.graph_edits import plan_removal

from .graph_backends import neo4j_uri, open_store  # noqa: F401 - fixture


@pytest.fixture(params=["arcadedb", "neo4j"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BoltGraphStore]:
    s = open_store(request.param, request, tmp_path)
    yield s
    s.close()


def _doc(i: int) -> Document:
    return Document(id=f"doc_{i}", source=f"/src/{i}.txt", content_hash=f"h{i}")


def _load(store: BoltGraphStore) -> None:
    """Two documents. Entities: A (only doc 1), B (both), C (only doc 2).
    Relations: A-B supported by c1 only; B-C supported by c2 and c3 (doc 1 and doc 2)."""
    store.upsert_documents([_doc(1), _doc(2)], status="complete")
    store.upsert_chunks([
        Chunk(id="c1", document_id="doc_1", text="A knows B.", ord=0),
        Chunk(id="c2", document_id="doc_1", text="B works with C.", ord=1),
        Chunk(id="c3", document_id="doc_2", text="C met B.", ord=0),
    ])
    store.upsert_entities([Entity(id=x, name=x.upper(), type="PERSON") for x in ("a", "b", "c")])
    store.upsert_mentions([Mention(chunk_id="c1", entity_id="a"), Mention(chunk_id="c1", entity_id="b"),
                           Mention(chunk_id="c2", entity_id="b"), Mention(chunk_id="c2", entity_id="c"),
                           Mention(chunk_id="c3", entity_id="b"), Mention(chunk_id="c3", entity_id="c")])
    store.upsert_relations([
        Relation(id=relation_id("a", "knows", "b"), source_id="a", target_id="b", type="knows", chunk_ids=["c1"]),
        Relation(id=relation_id("b", "works", "c"), source_id="b", target_id="c", type="works", chunk_ids=["c2"]),
        Relation(id=relation_id("b", "works", "c"), source_id="b", target_id="c", type="works", chunk_ids=["c3"]),
    ])
    store.upsert_communities([
        Community(id="top", level=0, title="all", size=3, member_ids=["a", "b", "c"]),
        Community(id="ab", level=1, title="A and B", size=2, parent_id="top", member_ids=["a", "b"]),
        Community(id="onlya", level=1, title="A", size=1, parent_id="top", member_ids=["a"]),
    ])


def test_upserts_are_idempotent_and_only_commits_move_the_version(store: BoltGraphStore) -> None:
    v0 = store.version()
    _load(store)
    counts = store.counts()
    assert store.version() == v0
    _load(store)
    assert store.counts() == counts
    assert store.commit(documents=["d1"]) == v0 + 1 == store.version()
    assert counts["Document"] == 2 and counts["Chunk"] == 3 and counts["Entity"] == 3
    assert counts["MENTIONS"] == 6 and counts["RELATED"] == 2 and counts["IN_COMMUNITY"] == 6
    bc = store.read("MATCH ()-[r:RELATED {type: 'works'}]->() RETURN r.chunk_ids AS c, r.weight AS w")
    assert sorted(bc[0]["c"]) == ["c2", "c3"] and bc[0]["w"] == 2  # duplicate rows merged in Python
    # support accumulates across writes (another document adds a chunk) and re-writes are idempotent
    store.upsert_relations([Relation(id=relation_id("b", "works", "c"), source_id="b", target_id="c",
                                     type="works", chunk_ids=["c3"])])
    bc = store.read("MATCH ()-[r:RELATED {type: 'works'}]->() RETURN r.chunk_ids AS c, r.weight AS w")
    assert sorted(bc[0]["c"]) == ["c2", "c3"] and bc[0]["w"] == 2


def test_cascade_delete_leaves_no_orphans(store: BoltGraphStore) -> None:
    _load(store)
    plan = plan_removal(store.removal_facts({"doc_1": ()}))
    assert plan.chunk_ids == ["c1", "c2"]
    assert plan.entity_ids == ["a"]  # b and c are still mentioned by c3
    assert plan.relation_ids == [relation_id("a", "knows", "b")]
    assert plan.relations[0].source_id == "a" and plan.relations[0].target_id == "b"
    store.remove(plan, ["doc_1"])
    counts = store.counts()
    assert counts["Document"] == 1 and counts["Chunk"] == 1 and counts["Entity"] == 2
    assert counts["RELATED"] == 1
    rel = store.read("MATCH ()-[r:RELATED]->() RETURN r.chunk_ids AS c, r.weight AS w")
    assert rel[0]["c"] == ["c3"] and rel[0]["w"] == 1  # support of the surviving relation was pruned
    comms = {r["id"]: r["size"] for r in store.read("MATCH (c:Community) RETURN c.id AS id, c.size AS size")}
    assert comms == {"top": 2, "ab": 1}  # "onlya" lost its only member
    orphans = store.read("MATCH (e:Entity) WHERE NOT (e)<-[:MENTIONS]-() RETURN count(e) AS n")
    assert orphans[0]["n"] == 0


def test_provenance_neighbourhood_k_hop_topology(store: BoltGraphStore) -> None:
    _load(store)
    prov = store.chunks_of_relations([RelationRef(relation_id("b", "works", "c"), "b", "c")])
    assert sorted((p.chunk.chunk_id, p.chunk.document_id) for p in prov) == [("c2", "doc_1"), ("c3", "doc_2")]
    ents = store.chunks_of_entities(["a"])
    assert [(e.chunk.chunk_id, e.chunk.source) for e in ents] == [("c1", "/src/1.txt")]
    assert sorted(n["id"] for n in store.entity_neighbours("b")) == ["a", "c"]
    assert sorted(store.k_hop(["a"], hops=1)) == ["b"]
    assert sorted(store.k_hop(["a"], hops=2)) == ["b", "c"]
    assert sorted(store.k_hop(["a", "b"], hops=1)) == ["c"]  # seeds are not returned
    assert sorted(store.k_hop(["a"], hops=3)) == ["b", "c"] and store.k_hop(["zz"], hops=2) == []
    topo = store.topology()
    assert topo.entity_ids == ["a", "b", "c"]
    edges = sorted(zip([topo.entity_ids[i] for i in topo.sources], [topo.entity_ids[i] for i in topo.targets],
                       topo.edge_types, strict=True))
    assert edges == [("a", "b", "knows"), ("b", "c", "works")]
    assert topo.version == store.version()


def test_explore_is_read_only_limited_and_parameterized(store: BoltGraphStore) -> None:
    _load(store)
    res = store.explore("MATCH (e:Entity) RETURN e.name AS name ORDER BY name", row_limit=2)
    assert res.columns == ["name"] and res.rows == [["A"], ["B"]] and res.truncated
    evil = "x' }) DETACH DELETE (n) //"
    res = store.explore("MATCH (e:Entity {name: $name}) RETURN count(e) AS n", {"name": evil})
    assert res.rows == [[0]]
    for q in ("MATCH (n) DETACH DELETE n", "MATCH (n) CALL { WITH n SET n.x = 1 } RETURN n"):
        with pytest.raises(ReadOnlyViolation):
            store.explore(q)
    assert store.counts()["Entity"] == 3


def test_incremental_community_reads_and_edits(store: BoltGraphStore) -> None:
    _load(store)
    assert store.unclustered_entities() == ["a", "b", "c"]  # written by an ingest: their neighbourhood changed
    store.mark_clustered(["a"])
    assert store.unclustered_entities() == ["b", "c"]
    store.mark_clustered()
    assert store.untyped_entities() == ["a", "b", "c"]  # the vote's mark is its own
    store.mark_typed(["a", "b", "c"])
    store.mark_unclustered(["c"])
    assert store.unclustered_entities() == ["c"] and store.untyped_entities() == ["c"]  # a merge re-votes
    chains = {(x.entity_id, x.community_id): x for x in store.community_chains(["a", "c"])}
    assert set(chains) == {("a", "top"), ("a", "ab"), ("a", "onlya"), ("c", "top")}
    assert chains[("a", "top")].has_children and chains[("a", "top")].parent_id is None
    assert chains[("a", "ab")].parent_id == "top" and not chains[("a", "ab")].has_children
    assert chains[("a", "ab")].level == 1
    assert store.community_members(["ab", "top"]) == {"ab": ["a", "b"], "top": ["a", "b", "c"]}
    store.edit_memberships(add=[("c", "ab")], remove=[("a", "ab"), ("a", "onlya")])
    store.refresh_communities(["ab", "onlya"])  # sizes recounted; the emptied childless one goes
    texts = {c.id: c for c in store.community_texts(["ab", "onlya", "top"])}
    assert set(texts) == {"ab", "top"} and texts["ab"].size == 2 and texts["ab"].parent_id == "top"
    assert store.community_members(["ab"]) == {"ab": ["b", "c"]}


def test_descriptions_come_from_the_smallest_supporting_chunk_whatever_the_order(store: BoltGraphStore) -> None:
    _load(store)
    late = Entity(id="b", name="B", type="PERSON", description="from c3", description_chunk="c3")
    early = Entity(id="b", name="B", type="PERSON", description="from c2", description_chunk="c2")
    store.upsert_entities([late])
    store.upsert_entities([early])
    store.upsert_entities([late])  # a larger chunk does not replace it; the same chunk written again does
    assert store.read("MATCH (e:Entity {id: 'b'}) RETURN e.description AS d")[0]["d"] == "from c2"
    store.upsert_entities([early.model_copy(update={"description": "c2 edited"})])
    assert store.read("MATCH (e:Entity {id: 'b'}) RETURN e.description AS d")[0]["d"] == "c2 edited"
    rid = relation_id("b", "works", "c")
    for chunk in ("c3", "c2", "c3"):
        store.upsert_relations([Relation(id=rid, source_id="b", target_id="c", type="works", chunk_ids=[chunk],
                                         description=f"said in {chunk}", description_chunk=chunk)])
    assert store.read("MATCH ()-[r:RELATED {type: 'works'}]->() RETURN r.description AS d")[0]["d"] == "said in c2"
