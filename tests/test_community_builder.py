"""The community builder (``ingest.communities`` and ``ingest.community_update``) on the in-memory
graph fake and an embedded qdrant-edge store: a full build, then an incremental update around a new
entity, keep the stored communities, their memberships and their vectors consistent (a fast test; the
same code on ArcadeDB is covered by test_sources_and_communities and test_incremental_ingest)."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

from hopgraph.core.records import Chunk, Document, Entity, Mention, Relation, relation_id
from hopgraph.core.summary_settings import CommunitySettings
from hopgraph.ingest.communities import CommunityBuilder
from hopgraph.testing import MemoryGraphStore
from hopgraph.vectors.edge import EdgeVectorStore
from hopgraph.vectors.store import CollectionSpec
from tests.hash_embedder import HashEmbedder


def _clique(graph: MemoryGraphStore, name: str, size: int) -> list[str]:
    """A document whose one chunk mentions ``size`` entities that all relate to each other."""
    ids = [f"{name}{i}" for i in range(size)]
    graph.upsert_documents([Document(id=f"doc_{name}", source=f"/{name}.txt", content_hash=name)], status="complete")
    graph.upsert_chunks([Chunk(id=f"c_{name}", document_id=f"doc_{name}", text=f"The {name} group.", ord=0)])
    graph.upsert_entities([Entity(id=e, name=e.upper(), type="PERSON") for e in ids])
    graph.upsert_mentions([Mention(chunk_id=f"c_{name}", entity_id=e) for e in ids])
    graph.upsert_relations([Relation(id=relation_id(a, "knows", b), source_id=a, target_id=b, type="knows",
                                     description=f"{a} knows {b}.", chunk_ids=[f"c_{name}"])
                            for a, b in combinations(ids, 2)])
    return ids


def _consistent(graph: MemoryGraphStore, vectors: EdgeVectorStore) -> None:
    """Every community has its vector and the members its size says; a child's members are its parent's."""
    ids = graph.community_ids()
    members = graph.community_members(list(ids))
    assert ids and set(vectors.vectors("communities", list(ids))) == set(ids) == set(members)
    for c in graph.community_texts(list(ids)):
        assert c.size == len(members[c.id]) and c.title and c.summary.startswith("Key entities:")
        if c.parent_id is not None:
            assert set(members[c.id]) <= set(members[c.parent_id]) and ids[c.parent_id] < c.level


def test_a_full_build_then_an_incremental_update_around_a_new_entity(tmp_path: Path) -> None:
    graph = MemoryGraphStore()
    groups = [_clique(graph, name, 6) for name in ("ada", "bob", "cyd", "dee")]
    vectors = EdgeVectorStore(tmp_path / "vectors")
    try:
        vectors.ensure_collections(CollectionSpec(dim=HashEmbedder.dim, model=HashEmbedder.name))
        builder = CommunityBuilder(graph, vectors, HashEmbedder(), CommunitySettings())
        first = builder.update()
        assert first.regrouped is None and first.written == first.communities > 0  # a full build
        assert graph.unclustered_entities() == []
        _consistent(graph, vectors)
        level0 = graph.level0_membership()
        assert all(len({level0[e] for e in g}) == 1 for g in groups)  # each clique is one community

        # a new chunk: a new entity meets three of the first clique (written again, as an ingest does);
        # 4 of 25 entities changed, so the update is incremental
        met = groups[0][:3]
        graph.upsert_chunks([Chunk(id="c_new", document_id="doc_ada", text="Newt met the ada group.", ord=1)])
        graph.upsert_entities([Entity(id=e, name=e.upper(), type="PERSON") for e in ["newt", *met]])
        graph.upsert_mentions([Mention(chunk_id="c_new", entity_id=e) for e in ["newt", *met]])
        graph.upsert_relations([Relation(id=relation_id("newt", "met", e), source_id="newt", target_id=e, type="met",
                                         chunk_ids=["c_new"]) for e in met])
        assert graph.unclustered_entities() == ["ada0", "ada1", "ada2", "newt"]
        second = builder.update()
        assert second.regrouped is not None and "newt" in second.regrouped
        assert graph.unclustered_entities() == []
        _consistent(graph, vectors)
        after = graph.level0_membership()
        assert after["newt"] == after["ada0"]  # it joins the clique it is tied to
        assert {e: c for e, c in after.items() if not e.startswith(("ada", "newt"))} == \
            {e: c for e, c in level0.items() if not e.startswith("ada")}  # the other cliques are untouched
    finally:
        vectors.close()
