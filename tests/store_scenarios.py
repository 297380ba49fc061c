"""One scenario per role of the graph store (``graphdb.protocols``): each drives a store through the
role's methods, asserts what must hold on any backend, and returns the observable state (sorted where
the order is unspecified). ``tests/test_store_contract.py`` runs each on the in-memory fake (a fast
unit test) and on ArcadeDB (and Neo4j where Docker runs), and compares the two states."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from hopgraph.core.records import (
    ChatContext,
    Chunk,
    Community,
    Document,
    Entity,
    Mention,
    Relation,
    Section,
    SummaryNode,
)
from hopgraph.core.records import relation_id as rid
from hopgraph.graphdb.protocols import GraphBrowser, GraphStore
from hopgraph.graphdb.records import IngestRun, RelationRef
from hopgraph.ingest.entity_types import voted_types
from hopgraph.ingest.graph_edits import merge_edits, plan_removal


def load(store: GraphStore) -> None:
    """Documents 1 and 2. Entities A (doc 1), B (both), C (doc 2), Bee (an alias of B, doc 2); the
    communities "top" (everyone) and "onlya" under it."""
    store.upsert_documents([Document(id=f"doc_{i}", source=f"/src/{i}.txt", content_hash=f"h{i}") for i in (1, 2)],
                           status="pending")
    store.set_document_status([("doc_1", "complete", "h1"), ("doc_2", "complete", "h2")])
    store.upsert_chunks([Chunk(id="c1", document_id="doc_1", text="A knows B.", ord=0),
                         Chunk(id="c2", document_id="doc_1", text="B works with C.", ord=1),
                         Chunk(id="c3", document_id="doc_2", text="C met Bee.", ord=0)])
    store.upsert_entities([Entity(id=x, name=x.upper(), type="PERSON") for x in ("a", "b", "c", "bee")])
    store.upsert_mentions([Mention(chunk_id="c1", entity_id="a"), Mention(chunk_id="c1", entity_id="b", count=2),
                           Mention(chunk_id="c2", entity_id="b"), Mention(chunk_id="c2", entity_id="c"),
                           Mention(chunk_id="c3", entity_id="bee"), Mention(chunk_id="c3", entity_id="c")])
    store.upsert_relations([
        Relation(id=rid("a", "knows", "b"), source_id="a", target_id="b", type="knows", chunk_ids=["c1"]),
        Relation(id=rid("b", "works", "c"), source_id="b", target_id="c", type="works", chunk_ids=["c2"]),
        Relation(id=rid("c", "met", "bee"), source_id="c", target_id="bee", type="met", chunk_ids=["c3"]),
        Relation(id=rid("b", "is", "bee"), source_id="b", target_id="bee", type="is", chunk_ids=["c3"]),
    ])
    store.upsert_communities([Community(id="top", level=0, size=4, member_ids=["a", "b", "c", "bee"]),
                              Community(id="onlya", level=1, size=1, parent_id="top", member_ids=["a"])])


def ingest_writer(store: GraphStore) -> dict[str, Any]:
    """Documents and their states, a re-ingest that drops a chunk, a deletion."""
    load(store)
    store.upsert_documents([Document(id="doc_3", source="/src/sub/3.txt", content_hash="h3")], status="pending")
    assert [d.id for d in store.unfinished_documents()] == ["doc_3"]
    assert sorted(d.id for d in store.documents_under("/src/sub/")) == ["doc_3"]
    store.remove(plan_removal(store.removal_facts({"doc_1": ["c2"]})))
    store.remove(plan_removal(store.removal_facts({"doc_3": ()})), ["doc_3"])
    states = store.document_states(["doc_1", "doc_2", "doc_3"])
    assert set(states) == {"doc_1", "doc_2"} and states["doc_1"].content_hash == "h1"
    return {"states": sorted(states.values(), key=lambda d: d.id), "under": sorted(store.documents_under("/src/"),
            key=lambda d: d.id), "counts": store.counts(), "edges": sorted(e.id for e in store.snapshot_edges())}


def entity_editor(store: GraphStore) -> dict[str, Any]:
    """Labelled mentions and their vote, the typing and clustering marks, a merge, stale descriptions."""
    load(store)
    store.upsert_mentions([Mention(chunk_id="c2", entity_id="c", label="ORG"),
                           Mention(chunk_id="c3", entity_id="c", label="ORG"),
                           Mention(chunk_id="c1", entity_id="a", label="PERSON")])
    assert store.untyped_entities() == ["a", "b", "bee", "c"]
    votes = voted_types(store.label_votes(store.untyped_entities()))
    assert votes == {"c": "ORG"}  # a's majority is the type it has
    store.commit(entities=list(votes), types=votes)
    store.mark_typed(["a", "b", "bee", "c"])
    assert store.untyped_entities() == [] and store.unresolved_entities()
    store.mark_resolved(["a", "b", "c", "bee"])
    # doc 2 read by hr and eng: the access groups of the documents mentioning each entity
    store.upsert_documents([Document(id="doc_2", source="/src/2.txt", content_hash="h2",
                                     metadata={"groups": ["hr", "eng"]})],
                           status="complete")
    assert store.mention_groups(["a", "b", "c", "bee", "zz"]) == {"a": {""}, "b": {""}, "c": {"", "eng,hr"},
                                                                  "bee": {"eng,hr"}}
    store.record_aliases([("y", "Y", "bee"), ("x", "X", "c")], {"x": "eng,hr"})
    edits = merge_edits({"bee": "b"}, store.mentions_of_entities(["bee"]), store.relations_of_entities(["bee"]))
    store.add_mentions(edits.mentions)
    store.upsert_relations(edits.relations)
    store.delete_entities(["bee"])
    store.record_aliases([("bee", "BEE", "b")])  # y follows bee to b, public as this merge
    assert store.aliases() == {"bee": "b", "y": "b"}  # x is a merge of a group's documents
    store.record_aliases([("b", "B", "a")], {"b": "hr"})  # as a group's merge: y and bee follow, as hr's
    assert store.aliases() == {}
    store.mark_unclustered(["b"])
    assert store.untyped_entities() == ["b"] and store.unresolved_entities() == []
    store.remove(plan_removal(store.removal_facts({"doc_1": ["c2"]})))  # b loses "A knows B."
    entities, relations = store.stale_descriptions()
    assert {e.id for e in entities} == {"b"} and relations == []
    store.set_descriptions({"b": "B works with C."}, {})
    return {"entities": sorted(store.snapshot_entities()), "aliases": store.aliases(),
            "mentions": sorted((m.chunk_id, m.entity_id, m.count, m.label) for m in store.mentions_of_entities(
                ["a", "b", "c"])), "votes": sorted(store.label_votes(["a", "b", "c"]), key=repr),
            "untyped": store.untyped_entities(), "stale": store.stale_descriptions(),
            "relations": [(r.id, sorted(r.chunk_ids)) for r in store.relations_of_entities(["b"])]}


def index_source(store: GraphStore) -> dict[str, Any]:
    """Commits and the change log, the whole exports and their slices (versions relative to the first)."""
    load(store)
    v = store.version()
    store.commit(documents=["doc_2", "doc_1"], statuses=[("doc_1", "complete", "h9")])
    store.remove(plan_removal(store.removal_facts({"doc_2": ()})), ["doc_2"])  # a deletion commits itself
    store.commit(entities=["b"], communities=True, regrouped=["b"])
    changes = store.changes_since(v)
    assert changes is not None and [c.version - v for c in changes] == [1, 2, 3]
    return {"version": store.version() - v, "changes": [(c.documents, c.entities, c.communities, c.regrouped)
                                                        for c in changes],
            "chunks": sorted((r["id"], r["document_id"], r["source"], r["text"]) for r in store.snapshot_chunks()),
            "of_doc": sorted(r["id"] for r in store.snapshot_chunks(["doc_1", "doc_2"])),
            "mentions": sorted(store.snapshot_mentions()), "some": sorted(store.snapshot_mentions(["c1"], ["c"])),
            "entities": sorted(store.snapshot_entities()), "of": sorted(store.snapshot_entities(["b", "zz"])),
            "edges": sorted(store.snapshot_edges(), key=lambda e: e.id),
            "within": sorted(e.id for e in store.snapshot_edges(["a", "b"], within=True)),
            "memberships": sorted(store.snapshot_memberships()), "of_a": sorted(store.snapshot_memberships(["a"]))}


def community_store(store: GraphStore) -> dict[str, Any]:
    """Communities written, marked stale by a removal, edited around what changed, refreshed, deleted."""
    load(store)
    store.upsert_communities([Community(id="ab", level=1, size=2, parent_id="top", member_ids=["a", "b"]),
                              Community(id="hub", level=0, size=5), Community(id="kid", level=1, size=1,
                                                                             parent_id="hub", member_ids=["c"])])
    assert store.unclustered_entities() == ["a", "b", "bee", "c"]  # written by an ingest
    store.mark_clustered(["a"])
    assert store.unclustered_entities() == ["b", "bee", "c"]
    store.mark_clustered()
    assert store.communities_stale()
    store.mark_communities_built(["a"])
    assert not store.communities_stale() and store.changes_since(store.version() - 1) is not None
    chains = {(x.entity_id, x.community_id): x for x in store.community_chains(["a", "c", "a"])}
    assert set(chains) == {("a", "top"), ("a", "ab"), ("a", "onlya"), ("c", "top"), ("c", "kid")}
    assert chains[("a", "top")].has_children and chains[("a", "ab")].parent_id == "top"
    store.remove(plan_removal(store.removal_facts({"doc_1": ["c2"]})))  # a goes: its communities are stale
    assert store.stale_summaries() == {"top", "ab"} and store.unclustered_entities() == ["b"]
    store.edit_memberships(add=[("c", "ab")], remove=[("b", "ab")])
    store.refresh_communities(["ab", "onlya", "gone", "hub"])  # hub: empty, but with a child
    store.clear_stale_summaries(["ab"])
    texts = {c.id: c for c in store.community_texts(["ab", "onlya", "top", "hub"])}
    assert set(texts) == {"ab", "top", "hub"} and texts["ab"].size == 1 and texts["hub"].size == 0
    chains_before = sorted(store.community_chains(["c"]), key=repr)
    store.delete_communities(["top"])  # its children lose their parent
    return {"ids": store.community_ids(), "level0": store.level0_membership(), "chains": chains_before,
            "after": sorted(store.community_chains(["b", "c"]), key=repr),
            "members": store.community_members(["ab", "top", "onlya"]), "stale": store.stale_summaries(),
            "texts": sorted(store.community_texts(["ab", "top", "hub", "kid"]), key=lambda c: c.id),
            "descriptions": store.relation_descriptions([RelationRef(rid("b", "works", "c"), "b", "c")]),
            "memberships": sorted(store.snapshot_memberships()), "counts": store.counts()}


def _node(level: int, children: list[str], root: bool = False, branch: str = "br1", **kw: Any) -> SummaryNode:
    return SummaryNode(id=f"{branch}_s{level}_{children[0]}", branch=branch, level=level, text=f"L{level}",
                       children=children, size=len(children), root=root, **kw)


def tree_store(store: GraphStore) -> dict[str, Any]:
    """Two branches written (one never completed), a chunk deleted under one, a branch dropped."""
    load(store)
    low = [_node(1, ["c1", "c2"], central=["c2"]), _node(1, ["c3", "missing"])]
    root = _node(2, [n.id for n in low], root=True, leaves=["c1", "c2", "c3"], centroid=[0.5, 0.25])
    store.write_branch([root, *low])  # the root is written last whatever the order given
    store.write_branch([_node(1, ["c1"], branch="br2")])  # no root: incomplete, not listed
    assert [b.id for b in store.tree_branches()] == ["br1"]
    assert sorted(store.chunk_ids()) == ["c1", "c2", "c3"]
    assert store.chunk_texts(["c3", "nope"]) == {"c3": "C met Bee."}
    store.remove(plan_removal(store.removal_facts({"doc_2": ()})), ["doc_2"])  # c3 goes
    nodes = store.summary_nodes([root.id, *(n.id for n in low), "nope"])
    counted = store.counts()["Summary"]
    store.drop_branches(["br2", "br9"])
    return {"branches": store.tree_branches(), "nodes": sorted(nodes, key=lambda n: n.id), "summaries": counted,
            "left": store.counts()["Summary"]}


def section_store(store: GraphStore) -> dict[str, Any]:
    """Sections written, replaced, left with a deleted chunk; no migration marks (nothing to backfill)."""
    load(store)

    def section(doc: str, ord: int, chunks: list[str], title: str = "T") -> Section:
        return Section(id=f"{doc}_s{ord}", document_id=doc, title=title, path=title, level=1, ord=ord,
                       chunk_ids=chunks)

    store.replace_sections(["doc_1"], [section("doc_1", 1, ["c2"]), section("doc_1", 0, ["c2", "c1"]),
                                       section("doc_9", 0, ["c1"])])  # a document that does not exist: none
    store.replace_sections(["doc_2"], [section("doc_2", 0, ["c3", "nope"])])
    first = store.sections_of(["doc_2", "doc_1", "doc_9"])
    assert [(s.id, s.chunk_ids) for s in first] == [("doc_1_s0", ["c1", "c2"]), ("doc_1_s1", ["c2"]),
                                                    ("doc_2_s0", ["c3"])]
    store.replace_sections(["doc_1"], [section("doc_1", 0, ["c1"], title="New")])
    store.remove(plan_removal(store.removal_facts({"doc_1": ()})))  # doc 1's chunks go, the document stays
    assert store.unembedded_sections() == [] and store.uncaptioned_images() == {}
    store.mark_sections_embedded(["doc_2_s0"])
    store.mark_captions_embedded(["doc_2"])
    return {"sections": store.sections_of(["doc_1", "doc_2"]), "chunk_sections": store.chunk_sections(),
            "has_chunk": store.counts()["HAS_CHUNK"]}


def chat_date_store(store: GraphStore) -> dict[str, Any]:
    """Chat contexts written over a chunk's (a missing chunk ignored); no migration marks (nothing to
    re-date), and clearing a mark that is not set changes nothing."""
    load(store)
    assert store.undated_chats() == {}
    chat = ChatContext(session="2023-08-17T19:00", speakers=["John"], dates=[("2023-08-15", "2023-08-15")])
    store.write_chat_contexts({"c1": chat.model_dump_json(), "nope": chat.model_dump_json()})
    store.mark_chats_dated(["doc_1", "doc_9"])
    assert store.undated_chats() == {}
    return {"chats": sorted((r["id"], r["chat"] or "") for r in store.snapshot_chunks(["doc_1", "doc_2"]))}


def run_log(store: GraphStore) -> dict[str, Any]:
    """Runs recorded, updated, pruned to the newest and deleted."""
    for i in range(4):
        store.record_ingest_run(IngestRun(f"r{i}", "notes", "running", started_at=100.0 + i))
    store.record_ingest_run(IngestRun("r3", "notes", "done", 103.0, finished_at=104.5, duration_s=1.5,
                                      report={"documents": 2}))
    store.record_ingest_run(IngestRun("x", "other", "failed", 50.0, error="boom"))
    store.prune_ingest_runs("notes", keep=3)
    store.delete_ingest_run("r2")
    runs = store.ingest_runs(source="notes")
    assert [r.id for r in runs] == ["r3", "r1"] and runs[0].report == {"documents": 2}
    return {"notes": runs, "all": store.ingest_runs(limit=2)}


def graph_admin(store: GraphStore) -> dict[str, Any]:
    """Health: counts, the checks ``hopgraph doctor`` reads, migrations, the version."""
    load(store)
    store.upsert_entities([Entity(id="lonely", name="Lonely", type="PERSON")])  # mentioned nowhere: an orphan
    store.commit(documents=["doc_1"])
    assert store.pending_migrations() == [] and store.version() >= 1
    return {"counts": store.counts(), "health": store.health_counts(),
            "unfinished": store.unfinished_documents()}


class Browsable(GraphStore, GraphBrowser, Protocol):
    """The roles and the browser (what the fake and the Bolt adapter both have)."""


def graph_browser(store: Browsable) -> dict[str, Any]:
    """Look-ups, provenance, neighbourhoods and exports over the loaded graph, a section and a summary."""
    load(store)
    store.replace_sections(["doc_1"], [Section(id="s1", document_id="doc_1", title="T", path="T", level=1, ord=0,
                                               chunk_ids=["c1", "c2"])])
    store.write_branch([SummaryNode(id="sum", branch="br", level=1, text="S", children=["c1", "c3"], size=2,
                                    root=True, leaves=["c1", "c3"], centroid=[1.0])])
    store.upsert_documents([Document(id="doc_0", source="/src/0.txt", content_hash="h0",
                                     metadata={"groups": ["hr", "eng"]})], status="pending")
    listed = {d.id: d.groups for d in store.list_documents(limit=100)}
    assert listed["doc_0"] == ("eng", "hr") and listed["doc_1"] == ()  # a listing reads the access groups
    assert store.entity("nobody") is None and store.community("nothing") is None
    ab, bc = RelationRef(rid("a", "knows", "b"), "a", "b"), RelationRef(rid("b", "works", "c"), "b", "c")
    return {
        "documents": store.list_documents(skip=1, limit=2), "states": store.document_states(["doc_0", "zz"]),
        "entity": store.entity("b"), "neighbours": store.entity_neighbours("b", limit=10),
        "first": store.entity_neighbours("b", skip=1, limit=2), "graph": store.document_graph("doc_1"),
        "communities": store.communities(), "level1": store.communities(level=1),
        "community": store.community("top", member_limit=3),
        "of_entities": sorted(store.chunks_of_entities(["a", "c"]), key=repr),
        "of_relations": sorted(store.chunks_of_relations([ab, bc, RelationRef(ab.id, "b", "a")]), key=repr),
        "hop1": sorted(store.k_hop(["a"], hops=1)), "hop2": sorted(store.k_hop(["a"], hops=2)),
        "hop3": sorted(store.k_hop(["a", "c"], hops=3)),
        "nodes": {label: store.export_nodes(label) for label in
                  ("Document", "Chunk", "Entity", "Community", "Section", "Summary")},
        "edges": {t: sorted(store.export_edges(t), key=lambda r: (r["source"], r["target"])) for t in
                  ("HAS_CHUNK", "HAS_SECTION", "SUMMARIZES", "MENTIONS", "RELATED", "IN_COMMUNITY", "PARENT")}}


#: the role -> its scenario
SCENARIOS: dict[str, Callable[[Browsable], dict[str, Any]]] = {
    "IngestWriter": ingest_writer, "EntityEditor": entity_editor, "IndexSource": index_source,
    "CommunityStore": community_store, "TreeStore": tree_store, "SectionStore": section_store,
    "ChatDateStore": chat_date_store, "RunLog": run_log, "GraphAdmin": graph_admin, "GraphBrowser": graph_browser,
}
