"""Vectors stored before they carried access groups get them from the next ingest (``ingest.access_tags``):
on qdrant-edge, with the in-memory graph store's marks; and a fresh ingest writes them at once."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hopgraph.core.access import PUBLIC, VECTOR_FIELD, vector_filter
from hopgraph.core.records import Document
from hopgraph.graphdb.records import COMPLETE
from hopgraph.ingest.access_tags import tag_stored
from hopgraph.ingest.embedding import with_groups
from hopgraph.testing import MemoryGraphStore
from hopgraph.vectors.edge import EdgeVectorStore
from hopgraph.vectors.store import DOCUMENT_COLLECTIONS, CollectionSpec, VectorPoint

DOCS = {"d0": [], "d1": ["hr"], "d2": ["eng", "hr"], "d3": []}


def _points(collection: str) -> list[VectorPoint]:
    rng = np.random.default_rng(len(collection))
    return [VectorPoint(f"{collection}-{d}-{i}", rng.normal(size=8).astype(np.float32), {"document_id": d})
            for d in DOCS for i in range(3)]


def test_marked_documents_get_their_groups_in_every_vector_and_no_other_document_changes(tmp_path: Path) -> None:
    vectors = EdgeVectorStore(tmp_path / "vec")
    vectors.ensure_collections(CollectionSpec(dim=8, model="m", image_dim=8))
    for c in DOCUMENT_COLLECTIONS:
        vectors.upsert(c, _points(c))  # as an older version wrote them: no groups
    graph = MemoryGraphStore()
    graph.upsert_documents([Document(id=d, source=d, text=d, content_hash=d, metadata={"groups": g} if g else {})
                            for d, g in DOCS.items()], COMPLETE)
    graph.untagged = {"d0", "d1", "d2"}  # d3: written since, by a version that tags (left as it is here)
    assert tag_stored(graph, vectors, batch=2) == 3
    assert graph.untagged_documents() == {}
    for c in DOCUMENT_COLLECTIONS:
        got = {h.payload["document_id"]: h.payload.get(VECTOR_FIELD) for h in vectors.scroll(c, limit=100)[0]}
        assert got == {"d0": [PUBLIC], "d1": ["hr"], "d2": ["eng", "hr"], "d3": None}, c
    q = _points("chunks")[0].vector
    seen = {h.payload["document_id"] for h in vectors.search("chunks", np.asarray(q), 50,
                                                             where=vector_filter(frozenset({"eng"})))}
    assert seen == {"d0", "d2"}  # an untagged vector is never found by a key with groups (it fails closed)
    assert tag_stored(graph, vectors) == 0
    vectors.close()


def test_new_points_carry_their_documents_groups() -> None:
    points = {c: _points(c) for c in (*DOCUMENT_COLLECTIONS, "entities")}
    points["entities"] = [VectorPoint("e", [1.0], {"name": "x"})]
    tagged = with_groups(points, {d: g for d, g in DOCS.items() if g})
    for c in DOCUMENT_COLLECTIONS:
        assert {p.payload["document_id"]: tuple(p.payload[VECTOR_FIELD]) for p in tagged[c]} == {
            "d0": (PUBLIC,), "d1": ("hr",), "d2": ("eng", "hr"), "d3": (PUBLIC,)}
    assert tagged["entities"][0].payload == {"name": "x"}  # built from several documents: not tagged here
