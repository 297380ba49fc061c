"""The index state patched by deltas equals one built from scratch, after any sequence of document
inserts, updates, deletes, entity merges and community rebuilds (a property test over the in-memory
store; ``test_index_freshness.py`` checks the same on ArcadeDB + qdrant-edge with real ingests)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hopgraph.core.records import CO_OCCURS, Chunk, Community, Document, Entity, Mention, Relation, relation_id
from hopgraph.ingest.graph_edits import merge_edits, plan_removal
from hopgraph.retrieval.index import links
from hopgraph.retrieval.index.delta import merge_sorted
from hopgraph.retrieval.index.keeper import IndexKeeper
from hopgraph.retrieval.index.lookups import NameIndex
from hopgraph.retrieval.index.state import IndexRecipe, IndexState
from hopgraph.retrieval.index.tables import Tables, edge_rows, fetch_all, strings
from hopgraph.retrieval.parts.signals import Seeds, ppr_scores
from hopgraph.testing import MemoryGraphStore

NAMES = ["Ada Lovelace", "Charles Babbage", "London", "Analytical Engine", "Royal Society", "Byron", "Paris",
         "Mary Somerville"]
DIM = 8


class EntityVectors:
    """The two reads the index state makes of a vector store, over a dict (entities only)."""

    def __init__(self) -> None:
        self.rows: dict[str, np.ndarray] = {}

    def export(self, collection: str, batch: int = 2048) -> tuple[list[str], np.ndarray]:
        ids = sorted(self.rows)
        return ids, np.stack([self.rows[i] for i in ids]) if ids else np.zeros((0, DIM), dtype=np.float32)

    def vectors(self, collection: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        return {i: self.rows[i] for i in ids if i in self.rows}


def _eid(name: str) -> str:
    return name.lower().replace(" ", "_")


#: a document's access groups, and its mentions' labels, as ``put`` picks them
GROUPS = [[], ["hr"], ["eng"], ["eng", "hr"]]
LABELS = ["PERSON", "ORG", ""]


def put(graph: MemoryGraphStore, vecs: EntityVectors, doc: int, title: int, chunks: list[list[int]]) -> None:
    """Write one document the way the ingest pipeline does: pending, removal of what it no longer
    says, the new chunks, entities, mentions and relations, then the commit."""
    did = f"doc{doc}"
    # (odd documents' chunk ids start with what they say, as the ingest's hashes of the text do: an
    # edit moves their rows among other documents'; even documents' chunks keep their block of rows)
    cids = [f"{did}-c{k}-{'-'.join(map(str, names))}" if doc % 2 == 0 else f"{'-'.join(map(str, names))}-{did}-c{k}"
            for k, names in enumerate(chunks)]
    groups = GROUPS[(doc + title) % len(GROUPS)]  # (written again with another title: its groups change)
    graph.upsert_documents([Document(id=did, source=f"/{did}.txt", title=NAMES[title], content_hash=str(chunks),
                                     metadata={"groups": groups} if groups else {})], status="pending")
    ents = {_eid(NAMES[n]): Entity(id=_eid(NAMES[n]), name=NAMES[n], type="PERSON") for c in chunks for n in c}
    rels: dict[str, Relation] = {}
    for cid, names in zip(cids, chunks, strict=True):
        for a, b in combinations(sorted(set(names)), 2):
            typ = CO_OCCURS if (a + b) % 3 else "knows"
            rid = relation_id(_eid(NAMES[a]), typ, _eid(NAMES[b]))
            old = rels.get(rid)
            rels[rid] = Relation(id=rid, source_id=_eid(NAMES[a]), target_id=_eid(NAMES[b]), type=typ,
                                 chunk_ids=sorted({*(old.chunk_ids if old else []), cid}))
    plan = plan_removal(graph.removal_facts({did: cids}), keep_entities=ents, keep_relations=set(rels))
    if plan:
        graph.remove(plan)
    graph.upsert_chunks([Chunk(id=c, document_id=did, text=" and ".join(NAMES[n] for n in names) + ".", ord=k)
                         for k, (c, names) in enumerate(zip(cids, chunks, strict=True))])
    graph.upsert_entities(list(ents.values()))
    graph.upsert_mentions([Mention(chunk_id=c, entity_id=_eid(NAMES[n]), count=names.count(n),
                                   label=LABELS[(n + k) % len(LABELS)])
                           for k, (c, names) in enumerate(zip(cids, chunks, strict=True)) for n in set(names)])
    graph.upsert_relations(list(rels.values()))
    rng = np.random.default_rng(abs(hash(did)) % 1000)
    for e in ents:
        vecs.rows.setdefault(e, rng.normal(size=DIM).astype(np.float32))
    graph.commit(documents=[did], statuses=[(did, "complete", str(chunks))])


def delete(graph: MemoryGraphStore, doc: int) -> None:
    did = f"doc{doc}"
    if did in graph.docs:
        graph.remove(plan_removal(graph.removal_facts({did: ()})), [did])


def merge(graph: MemoryGraphStore, alias: int, canonical: int) -> None:
    """Fold one entity into another, as entity resolution does."""
    a, c = _eid(NAMES[alias]), _eid(NAMES[canonical])
    if a == c or a not in graph.entities or c not in graph.entities:
        return
    edits = merge_edits({a: c}, graph.mentions_of_entities([a]), graph.relations_of_entities([a]))
    graph.add_mentions(edits.mentions)
    graph.upsert_relations(edits.relations)
    graph.delete_entities([a])
    graph.commit(entities=[a, c])


def communities(graph: MemoryGraphStore, split: int) -> None:
    ids = sorted(graph.entities)
    graph.delete_communities(list(graph.stored_communities))
    graph.members.clear()
    graph.upsert_communities([Community(id=f"k{split}-{i}", level=0, size=len(ids[i::2]), member_ids=ids[i::2])
                              for i in range(2)])
    graph.mark_communities_built()


def regroup(graph: MemoryGraphStore, entity: int, split: int) -> None:
    """Move one entity to another community, as an incremental community update does, naming it."""
    e = _eid(NAMES[entity])
    if e not in graph.entities:
        return
    target = f"r{split}"
    if target not in graph.stored_communities:
        graph.upsert_communities([Community(id=target, level=0, size=0)])
    graph.members = {(x, c) for (x, c) in graph.members if x != e} | {(e, target)}
    graph.mark_communities_built(regrouped=[e])


def assert_same(patched: IndexState, fresh: IndexState) -> None:
    """Same tables, bit-equal matrices, the same PPR scores for the same seeds."""
    a, b = patched.tables, fresh.tables
    assert a.version == b.version
    for name in Tables.__dataclass_fields__:
        if name in ("version", "chunks"):
            continue
        x, y = getattr(a, name), getattr(b, name)
        if name.startswith(("mention_", "edge_", "member_", "support_")):  # row order is free: compare as sets
            continue
        assert np.array_equal(x, y), name
    for col in a.chunks:
        assert np.array_equal(a.chunks[col], b.chunks[col]), col
    def key(t: Tables, p: str) -> list[tuple]:  # type: ignore[type-arg]
        if p == "support":  # (each edge's support per set of groups, the edge by its ends and type)
            ends = list(zip(t.edge_source.tolist(), t.edge_target.tolist(), edge_rows(t)[0], strict=True))
            return sorted(zip([ends[e] for e in t.support_edge.tolist()], t.support_groups.tolist(),
                              t.support_count.tolist(), strict=True))
        if p == "edge":  # (types coded, ids of typed edges only: read out row by row)
            return sorted(zip(t.edge_source.tolist(), t.edge_target.tolist(), *edge_rows(t),
                              t.edge_weight.tolist(), strict=True))
        return sorted(zip(*[getattr(t, f"{p}_{c}").tolist() for c in
                            {"mention": ("chunk", "entity", "count", "label"), "member": ("entity", "community")}[p]],
                          strict=True))
    for part in ("mention", "edge", "member", "support"):
        assert key(a, part) == key(b, part), part
    sa, sb = patched.snapshot, fresh.snapshot
    for m in ("incidence", "adjacency", "links"):
        ma, mb = getattr(sa, m), getattr(sb, m)
        assert (np.array_equal(ma.indptr, mb.indptr) and np.array_equal(ma.indices, mb.indices)
                and np.array_equal(ma.data, mb.data)), m
    assert sa.edge_types == sb.edge_types and sa.relation_ids == sb.relation_ids
    assert sa.chunk_titles == sb.chunk_titles and sa.title_named_by == sb.title_named_by
    assert sa.title_index == sb.title_index and sa.title_cased == sb.title_cased and sa.title_keys == sb.title_keys
    assert dict(sa.name_index) == dict(sb.name_index) and np.array_equal(sa.chunk_about, sb.chunk_about)
    for query in ("Ada Lovelace London", "Analytical Engine", "the"):  # BM25 (built, or loaded from disk)
        ka, kb = patched.keyword.search(query, 5), fresh.keyword.search(query, 5)
        assert ka[0].tolist() == kb[0].tolist() and ka[1].tolist() == kb[1].tolist(), query
    assert {k: v.tolist() for k, v in sa.community_members.items()} == {
        k: v.tolist() for k, v in sb.community_members.items()}
    ta, tb = patched.walk(1.0), fresh.walk(1.0)  # the PPR walks: their out-weights and out-degrees
    assert np.array_equal(ta.inv, tb.inv) and np.array_equal(ta.degree, tb.degree), "walk"
    if sa.n_entities:
        seeds = Seeds({0: 1.0, sa.n_entities - 1: 0.5})
        assert ppr_scores(sa, ta, seeds, {}, 1.0, 0.5)[0] == ppr_scores(sb, tb, seeds, {}, 1.0, 0.5)[0]


OP = st.one_of(
    st.tuples(st.just("put"), st.integers(0, 5), st.integers(0, len(NAMES) - 1),
              st.lists(st.lists(st.integers(0, len(NAMES) - 1), min_size=1, max_size=4), min_size=1, max_size=3)),
    st.tuples(st.just("delete"), st.integers(0, 5)),
    st.tuples(st.just("merge"), st.integers(0, len(NAMES) - 1), st.integers(0, len(NAMES) - 1)),
    st.tuples(st.just("communities"), st.integers(0, 3)),
    st.tuples(st.just("regroup"), st.integers(0, len(NAMES) - 1), st.integers(0, 2)),
)


@settings(max_examples=int(os.environ.get("HOPGRAPH_PROPERTY_EXAMPLES", "300")), deadline=None,
          derandomize="HOPGRAPH_PROPERTY_EXAMPLES" not in os.environ, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(OP, min_size=1, max_size=12), st.integers(1, 4))
def test_deltas_equal_a_fresh_build(ops: list[tuple], refresh_every: int) -> None:  # type: ignore[type-arg]
    default = NameIndex.MERGE_AT
    NameIndex.MERGE_AT = 100.0 if refresh_every % 2 else default  # (names layered over the base, or merged)
    try:
        deltas_equal_a_fresh_build(ops, refresh_every)
    finally:
        NameIndex.MERGE_AT = default


def deltas_equal_a_fresh_build(ops: list[tuple], refresh_every: int) -> None:  # type: ignore[type-arg]
    graph, vecs = MemoryGraphStore(), EntityVectors()
    recipe = IndexRecipe()
    keeper = IndexKeeper(graph, vecs, recipe, DIM)  # type: ignore[arg-type]
    keeper.refresh()
    for i, op in enumerate(ops):
        if op[0] == "put":
            put(graph, vecs, op[1], op[2], op[3])
        elif op[0] == "delete":
            delete(graph, op[1])
        elif op[0] == "merge":
            merge(graph, op[1], op[2])
        elif op[0] == "regroup":
            regroup(graph, op[1], op[2])
        else:
            communities(graph, op[1])
        if i % refresh_every == 0:
            keeper.refresh()
    patched = keeper.refresh()
    assert keeper.freshness().last_refresh_kind in ("delta", "none") or patched.version == 0
    assert_same(patched, IndexState.of(fetch_all(graph, vecs, DIM), recipe))  # type: ignore[arg-type]


def test_an_edit_that_moves_chunk_rows_carries_the_titles_over(monkeypatch: pytest.MonkeyPatch) -> None:
    """A document written again with new chunk ids (its rows now after another document's) and its
    title: the title index is the previous one, moved, and equals a fresh build's."""
    moved = []
    real = links.moved_title_index

    def moving(*args: Any) -> dict[str, list[int]]:
        moved.append(args[1])
        return real(*args)

    monkeypatch.setattr(links, "moved_title_index", moving)
    deltas_equal_a_fresh_build([("put", 1, 1, [[0, 1], [2]]), ("put", 3, 2, [[3]]), ("put", 1, 1, [[4, 5], [6]])], 1)
    assert len(moved) == 1 and moved[0].tolist() == [-1, -1, 0]  # (doc1's two rows went; doc3's moved up)


def test_typed_relations_are_looked_up_by_their_pair_built_and_patched() -> None:
    graph, vecs = MemoryGraphStore(), EntityVectors()
    keeper = IndexKeeper(graph, vecs, IndexRecipe(), DIM)  # type: ignore[arg-type]
    put(graph, vecs, 1, 0, [[0, 1, 2, 3]])
    keeper.refresh()
    put(graph, vecs, 2, 1, [[3, 5, 6]])
    patched = keeper.refresh()
    assert keeper.freshness().last_refresh_kind == "delta"
    for state in (patched, IndexState.of(fetch_all(graph, vecs, DIM), IndexRecipe())):  # type: ignore[arg-type]
        snap = state.snapshot
        typed = {(snap.entity_index[r.source_id], snap.entity_index[r.target_id]): r
                 for r in graph.relations.values() if r.type != CO_OCCURS}
        assert len(typed) == 3 and dict(snap.edge_types) == {pair: r.type for pair, r in typed.items()}
        assert dict(snap.relation_ids) == {pair: r.id for pair, r in typed.items()}


def test_a_document_written_again_with_its_chunks_and_title_carries_the_title_derivations() -> None:
    graph, vecs = MemoryGraphStore(), EntityVectors()
    keeper = IndexKeeper(graph, vecs, IndexRecipe(), DIM)  # type: ignore[arg-type]
    put(graph, vecs, 1, 0, [[0, 1], [1, 2]])
    put(graph, vecs, 2, 2, [[2, 3, 0]])  # names doc1's title: a title link
    before = keeper.refresh()
    put(graph, vecs, 1, 0, [[0, 1], [1, 2]])  # the same chunks (rows) and title
    same = keeper.refresh()
    assert keeper.freshness().last_refresh_kind == "delta"
    assert same.snapshot.title_index is before.snapshot.title_index and same.snapshot.links.nnz > 0
    assert_same(same, IndexState.of(fetch_all(graph, vecs, DIM), IndexRecipe()))  # type: ignore[arg-type]
    put(graph, vecs, 1, 3, [[0, 1], [1, 2]])  # another title: derived again
    renamed = keeper.refresh()
    assert renamed.snapshot.title_index is not same.snapshot.title_index
    assert_same(renamed, IndexState.of(fetch_all(graph, vecs, DIM), IndexRecipe()))  # type: ignore[arg-type]


def test_merge_sorted_keeps_order_and_maps_old_rows() -> None:
    ids = strings(["b", "d", "f", "h"])
    m = merge_sorted(ids, np.array([True, False, True, True]), ["a", "e", "i", "g"])
    assert m.ids.tolist() == ["a", "b", "e", "f", "g", "h", "i"]
    assert m.old_to_new.tolist() == [1, -1, 3, 5]
    assert m.ids[m.new_rows].tolist() == ["a", "e", "g", "i"]


@pytest.mark.parametrize("text, found", [
    ("We met the Beatles's drummer.", ["beatles"]),
    ("(Paris, France) is far", ["paris, france"]),
    ("beatlesque music", []),
    ("NEW  YORK\\tCITY!", ["new york city"]),
    ("From New York City to Paris, France, then the Beatles and Paris, France again",
     ["new york city", "paris, france", "beatles"]),  # in the order first named, once each
    ("his place of birth was Paris, France", ["paris, france"]),  # a capitalized title in lower case: a phrase
    ("Place of birth: see the salt mines", ["place of birth", "salt mines"]),  # a lower-case title: anywhere
])
def test_titles_are_found_as_whole_words(text: str, found: list[str]) -> None:
    from hopgraph.core.text import normalize_name
    from hopgraph.retrieval.index.links import automaton, cased_titles, titles_in

    titles = ["Beatles", "Paris, France", "New York City", "Place of birth", "salt mines"]
    auto = automaton([normalize_name(t) for t in titles], cased_titles(titles))
    assert titles_in(auto, text.replace("\\t", "\t")) == found
