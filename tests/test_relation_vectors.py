"""Relationship vectors: the embedded text, or composed from vectors the ingest already has."""

from pathlib import Path

import numpy as np
import pytest

from hopgraph.app.platform import Platform
from hopgraph.core.records import CO_OCCURS, Relation
from hopgraph.core.settings import ExtractionSettings, IngestSettings
from hopgraph.ingest.relation_vectors import relation_vectors, stating_chunk
from hopgraph.ingest.texts import relation_text
from hopgraph.vectors.embedders import SentenceTransformerEmbedder

from .conftest import ServerInfo, settings_for


def unit(v: np.ndarray) -> np.ndarray:
    return np.asarray(v, dtype=np.float32) / np.linalg.norm(v)


def test_composed_sums_entities_type_and_stating_chunk(embedder: SentenceTransformerEmbedder) -> None:
    names = {"a": "Marie Curie", "b": "Paris", "c": "Pierre Curie"}
    chunk = "Marie Curie worked in Paris with Pierre Curie."
    rels = [Relation(id="r1", source_id="a", target_id="b", type="work_in", chunk_ids=["k2", "k1"]),
            Relation(id="r2", source_id="a", target_id="c", type="marry", description_chunk="k9")]
    stored = {"entities": dict(zip(["a", "b"], embedder.embed([names["a"], names["b"]]), strict=True)),
              "chunks": {"k1": embedder.embed([chunk])[0]}}
    asked: list[tuple[str, list[str]]] = []

    def lookup(collection: str, ids: list[str]) -> dict[str, np.ndarray]:
        asked.append((collection, list(ids)))
        return {i: stored[collection][i] for i in ids if i in stored[collection]}

    got = relation_vectors(rels, embedder, ExtractionSettings(), names, lookup)  # composed: the default
    assert stating_chunk(rels[0]) == "k1" and stating_chunk(rels[1]) == "k9"
    a, b, c = embedder.embed(list(names.values()))
    work, marry = embedder.embed(["work in", "marry"])
    # r1: both ends stored, its smallest chunk stored; r2: "c" has no stored vector (its name is
    # embedded), its stating chunk has none (left out of the sum)
    want = [unit(unit(unit(a) + unit(work) + unit(b)) + unit(stored["chunks"]["k1"])),
            unit(unit(a) + unit(marry) + unit(c))]
    for g, w in zip(got, want, strict=True):
        assert float(np.dot(g, w)) > 0.9999
    assert ("entities", ["a", "b", "c"]) in asked and ("chunks", ["k1", "k9"]) in asked
    # the text form embeds the relation text and reads nothing
    asked.clear()
    text_form = ExtractionSettings(relation_vectors="text")
    text = relation_vectors(rels, embedder, text_form, names, lookup)
    want_text = embedder.embed([relation_text(r, names, text_form.relation_text_words) for r in rels])
    assert np.allclose(text, want_text, atol=1e-6) and not asked
    assert relation_vectors([], embedder, ExtractionSettings(), names, lookup).shape == (0, embedder.dim)


@pytest.mark.parametrize("doc_batch", [1, 8])
def test_ingest_writes_composed_relationship_vectors(arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder,
                                                     tmp_path: Path, doc_batch: int) -> None:
    """Through the pipeline, in one batch or one document per batch (entities embedded by an earlier
    batch are read back from the store): each typed relation's vector is the composition of the stored
    entity vectors, its type and its stating chunk."""
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "curie.txt").write_text("Marie Curie worked in Paris. Marie Curie married Pierre Curie in Sceaux.")
    (root / "curie2.txt").write_text("Pierre Curie taught in Paris. Marie Curie was born in Warsaw.")
    cfg = settings_for(arcadedb, tmp_path / "data", extraction=ExtractionSettings(relation_vectors="composed"),
                       ingest=IngestSettings(doc_batch=doc_batch))
    with Platform(cfg, embedder=embedder) as p:  # type: ignore[arg-type]
        p.ingest([root])
        ids = [i for i, _, _ in p._store.snapshot_entities()]
        typed = [r for r in p._store.relations_of_entities(ids) if r.type != CO_OCCURS]
        assert len(typed) >= 2
        have = p.vectors.vectors("relationships", [r.id for r in typed])
        ends = p.vectors.vectors("entities", sorted({e for r in typed for e in (r.source_id, r.target_id)}))
        chunks = p.vectors.vectors("chunks", sorted({min(r.chunk_ids) for r in typed}))
        for r in typed:
            triple = unit(unit(ends[r.source_id]) + unit(embedder.embed([r.type.replace("_", " ")])[0])
                          + unit(ends[r.target_id]))
            want = unit(triple + unit(chunks[min(r.chunk_ids)]))
            assert float(np.dot(have[r.id], want)) > 0.999, r
