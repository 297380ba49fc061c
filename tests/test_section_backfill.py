"""The backfills of sections and captions (``ingest.embedding``) on the in-memory graph fake and an
embedded qdrant-edge store: what a migration marked gets its vectors once, and nothing after (a fast
test; the migration itself on ArcadeDB is test_sections' integration test)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hopgraph.core.records import Chunk, Document, Section
from hopgraph.ingest.embedding import backfill_captions, backfill_sections
from hopgraph.testing import MemoryGraphStore
from hopgraph.vectors.edge import EdgeVectorStore
from hopgraph.vectors.store import CollectionSpec, VectorPoint
from tests.hash_embedder import HashEmbedder


def test_marked_sections_and_captions_get_their_vectors_once(tmp_path: Path) -> None:
    graph = MemoryGraphStore()
    graph.upsert_documents([Document(id="doc_t", source="/t.md", content_hash="t"),
                            Document(id="doc_i", source="/i.png", content_hash="i", kind="image")], status="complete")
    graph.upsert_chunks([Chunk(id=f"t{i}", document_id="doc_t", text=f"Text {i}.", ord=i) for i in range(3)] +
                        [Chunk(id="i0", document_id="doc_i", text="A red kite over a field.", ord=0)])
    graph.replace_sections(["doc_t"], [Section(id="s0", document_id="doc_t", title="A", path="A", level=1, ord=0,
                                               chunk_ids=["t0", "t1"]),
                                       Section(id="s1", document_id="doc_t", title="B", path="B", level=1, ord=1,
                                               chunk_ids=["t2"])])
    graph.unembedded |= {"s0", "s1"}   # as the sections migration leaves older documents
    graph.uncaptioned.add("doc_i")     # as the captions migration marks older images
    vectors = EdgeVectorStore(tmp_path / "vectors")
    try:
        vectors.ensure_collections(CollectionSpec(dim=HashEmbedder.dim, model=HashEmbedder.name))
        chunk_vecs = {c: np.eye(HashEmbedder.dim, dtype=np.float32)[k] for k, c in enumerate(["t0", "t1", "t2"])}
        vectors.upsert("chunks", [VectorPoint(c, v, {"document_id": "doc_t"}) for c, v in chunk_vecs.items()])

        assert backfill_sections(graph, vectors, batch=1) == 2 and graph.unembedded_sections() == []
        got = vectors.vectors("sections", ["s0", "s1"])
        assert np.allclose(got["s0"], (chunk_vecs["t0"] + chunk_vecs["t1"]) / np.sqrt(2), atol=1e-5)  # unit mean
        assert np.allclose(got["s1"], chunk_vecs["t2"], atol=1e-5)
        assert backfill_captions(graph, vectors, HashEmbedder()) == 1 and graph.uncaptioned_images() == {}
        assert vectors.count("captions") >= 1
        assert backfill_sections(graph, vectors) == 0 and backfill_captions(graph, vectors, HashEmbedder()) == 0
    finally:
        vectors.close()
