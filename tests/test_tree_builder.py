"""The RAPTOR tree builder (``ingest.raptor``) on the in-memory graph fake and an embedded qdrant-edge
store: a build covers every chunk once, an unchanged graph rebuilds nothing, and a deleted document
leaves no summary, root or vector with its chunks (a fast test; the same code over ArcadeDB and real
embeddings is test_raptor's integration test)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hopgraph.core.records import Chunk, Document
from hopgraph.core.summary_settings import RaptorSettings
from hopgraph.ingest.graph_edits import plan_removal
from hopgraph.ingest.raptor import TreeBuilder
from hopgraph.testing import MemoryGraphStore
from hopgraph.vectors.edge import EdgeVectorStore
from hopgraph.vectors.store import CollectionSpec, VectorPoint
from tests.hash_embedder import HashEmbedder

TOPICS = ["rivers and their deltas", "copper mines of the north", "the orchestra's winter season"]


def _corpus(graph: MemoryGraphStore, vectors: EdgeVectorStore) -> None:
    """Three documents of eight chunks each; a chunk's vector is its topic's direction plus noise."""
    rng = np.random.default_rng(7)
    centres = np.eye(HashEmbedder.dim, dtype=np.float32)[:3] * 4
    for t, topic in enumerate(TOPICS):
        doc = f"doc_{t}"
        graph.upsert_documents([Document(id=doc, source=f"/{t}.txt", content_hash=doc)], status="complete")
        chunks = [Chunk(id=f"c{t}_{i}", document_id=doc, text=f"Passage {i} is about {topic}. It says more.",
                        ord=i) for i in range(8)]
        graph.upsert_chunks(chunks)
        vectors.upsert("chunks", [VectorPoint(c.id, centres[t] + rng.normal(0, 0.3, HashEmbedder.dim).astype(
            np.float32), {"document_id": doc}) for c in chunks])


def _leaves(graph: MemoryGraphStore) -> list[str]:
    return sorted(c for b in graph.tree_branches() for c in b.leaves)


def test_the_tree_covers_every_chunk_and_forgets_a_deleted_document(tmp_path: Path) -> None:
    graph = MemoryGraphStore()
    vectors = EdgeVectorStore(tmp_path / "vectors")
    try:
        vectors.ensure_collections(CollectionSpec(dim=HashEmbedder.dim, model=HashEmbedder.name))
        _corpus(graph, vectors)
        builder = TreeBuilder(graph, vectors, HashEmbedder(), RaptorSettings(branch_size=8, umap_neighbors=4))
        first = builder.update()
        assert first.full and first.built >= 2 and _leaves(graph) == sorted(graph.chunk_ids())  # each chunk once
        nodes = graph.summary_nodes(list(graph.summaries))
        assert first.summaries_written == len(nodes) and all(n.children and n.text for n in nodes)
        assert set(vectors.vectors("summaries", [n.id for n in nodes])) == {n.id for n in nodes}
        assert builder.update().built == 0  # nothing changed: nothing rebuilt

        graph.remove(plan_removal(graph.removal_facts({"doc_1": ()})), ["doc_1"])
        gone = {f"c1_{i}" for i in range(8)}
        second = builder.update()
        assert second.built + second.dropped > 0 and _leaves(graph) == sorted(graph.chunk_ids())
        nodes = graph.summary_nodes(list(graph.summaries))
        assert all(gone.isdisjoint(n.children) and gone.isdisjoint(n.central) for n in nodes)
        page, _ = vectors.scroll("summaries", limit=1000)
        assert {h.id for h in page} == {n.id for n in nodes}
        assert all(gone.isdisjoint(h.payload["chunks"]) for h in page)
    finally:
        vectors.close()
