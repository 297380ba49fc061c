"""The vectors of one ingest batch: chunks, sections (the mean of their chunks' vectors), entities (by
name), typed relations (``ingest.relation_vectors``), each caption of an image document and, with
CLIP, image files; and the vectors of sections and image captions that have none yet."""

from __future__ import annotations

import logging
from collections.abc import Container, Mapping, Sequence
from pathlib import Path

import numpy as np

from hopgraph.core.access import VECTOR_FIELD, vector_groups
from hopgraph.core.linalg import unit
from hopgraph.core.records import CO_OCCURS, Chunk, Document, IngestReport, Relation, Section
from hopgraph.core.settings import ExtractionSettings
from hopgraph.graphdb.protocols import EntityEditor, SectionStore
from hopgraph.ingest.extraction import Extraction
from hopgraph.ingest.relation_vectors import Lookup, relation_vectors
from hopgraph.ingest.source_text import SourceText
from hopgraph.ingest.texts import relation_point
from hopgraph.vectors.clip import ClipEmbedder
from hopgraph.vectors.embedders import Embedder
from hopgraph.vectors.store import DOCUMENT_COLLECTIONS, VectorPoint, VectorStore

log = logging.getLogger(__name__)


def section_point(section: Section, chunk_vectors: Mapping[str, np.ndarray]) -> VectorPoint | None:
    """A section's vector: the unit mean of its chunks' vectors (None when none of them has one)."""
    found = [np.asarray(chunk_vectors[c], dtype=np.float32) for c in section.chunk_ids if c in chunk_vectors]
    if not found:
        return None
    return VectorPoint(section.id, unit(np.mean(found, axis=0)),
                       {"document_id": section.document_id, "title": section.title, "path": section.path,
                        "ord": section.ord, "chunks": section.chunk_ids})


def vector_points(embedder: Embedder, cfg: ExtractionSettings, chunks: list[Chunk], sections: list[Section],
                  extraction: Extraction, relations: list[Relation], already: Mapping[str, Container[str]],
                  stored: Lookup) -> dict[str, list[VectorPoint]]:
    """The batch's points per collection, except entities and relations whose ids are in ``already``
    (their vectors were written by this process). ``stored``: the vectors already in the store (for
    composed relationship vectors whose entities were embedded by an earlier batch)."""
    names = {e.id: e.name for e in extraction.entities.values()}
    entities = [e for e in extraction.entities.values() if e.id not in already["entities"]]
    embedded = [r for r in relations if (r.type != CO_OCCURS or cfg.embed_cooccurrence)
                and r.id not in already["relationships"]]
    chunk_vecs = embedder.embed([c.text for c in chunks])
    entity_vecs = embedder.embed([e.name for e in entities])
    by_chunk = {c.id: v for c, v in zip(chunks, chunk_vecs, strict=True)}
    batch = {"entities": {e.id: v for e, v in zip(entities, entity_vecs, strict=True)}, "chunks": by_chunk}

    def lookup(collection: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        here = batch[collection]
        found = {i: here[i] for i in ids if i in here}
        rest = [i for i in ids if i not in here]
        return {**found, **stored(collection, rest)} if rest else found

    relation_vecs = relation_vectors(embedded, embedder, cfg, names, lookup)
    return {
        "chunks": [VectorPoint(c.id, v, {"document_id": c.document_id}) for c, v in zip(chunks, chunk_vecs,
                                                                                        strict=True)],
        "sections": [p for p in (section_point(s, by_chunk) for s in sections) if p is not None],
        "entities": [VectorPoint(e.id, v, {"name": e.name, "type": e.type})
                     for e, v in zip(entities, entity_vecs, strict=True)],
        "relationships": [relation_point(r, v) for r, v in zip(embedded, relation_vecs, strict=True)],
    }


def with_groups(points: Mapping[str, list[VectorPoint]],
                groups: Mapping[str, Sequence[str]]) -> dict[str, list[VectorPoint]]:
    """``points`` with the access groups of their document (``groups``: document id -> its groups) in the
    payload of every collection of one document's vectors (``vectors.store.DOCUMENT_COLLECTIONS``)."""
    return {c: [VectorPoint(p.id, p.vector, {**p.payload, VECTOR_FIELD: vector_groups(
                groups.get(p.payload["document_id"], ()))}) for p in pts] if c in DOCUMENT_COLLECTIONS else list(pts)
            for c, pts in points.items()}


def captions_of(text: str) -> list[str]:
    """An image document's captions: the distinct non-empty lines of its text, in order."""
    return list(dict.fromkeys(line.strip() for line in text.splitlines() if line.strip()))


def caption_points(embedder: Embedder, images: Mapping[str, str]) -> list[VectorPoint]:
    """One vector per caption of each image document (document id -> its text): an image is found by
    its best-matching caption too, not only by all of them embedded together (mode ``image``)."""
    rows = [(doc, i, cap) for doc, text in images.items() for i, cap in enumerate(captions_of(text))]
    if not rows:
        return []
    vecs = embedder.embed([cap for _, _, cap in rows])
    return [VectorPoint(f"{doc}#caption{i}", v, {"document_id": doc, "caption": i})
            for (doc, i, _), v in zip(rows, vecs, strict=True)]


def image_path(doc: Document) -> Path:
    """The image file of an image document (a relative ``uri`` is relative to its source file)."""
    p = Path(doc.uri or "")
    if p.is_absolute():
        return p
    return Path((doc.source or "").split("#", 1)[0]).parent / p


def image_points(clip: ClipEmbedder | None, todo: list[SourceText], report: IngestReport) -> list[VectorPoint]:
    """CLIP vectors of the image files of image documents; an unreadable file is a warning (the
    document stays searchable by its captions)."""
    assert clip is not None
    docs = {str(image_path(s.document)): s.document for s in todo if s.document.kind == "image"}
    if not docs:
        return []
    got = clip.embed_images(list(docs))
    for path, why in got.errors.items():
        report.warnings[docs[path].source] = why
        log.warning("image of %s not embedded: %s", docs[path].source, why)
    return [VectorPoint(docs[p].id, v, {"document_id": docs[p].id, "source": docs[p].source})
            for p, v in zip(got.paths, got.vectors, strict=True)]


def retype_points(graph: EntityEditor, vectors: VectorStore, types: Mapping[str, str]) -> None:
    """Give these entities' vectors their new types (entity id -> type) in the payload, which entity
    resolution reads a neighbour's type from. Written before the types are committed to the graph: a
    run killed in between votes the same types again."""
    rows = graph.snapshot_entities(sorted(types))
    found = vectors.vectors("entities", [r[0] for r in rows])
    vectors.upsert("entities", [VectorPoint(i, found[i], {"name": name, "type": types[i]})
                                for i, name, _ in rows if i in found])


def backfill_captions(graph: SectionStore, vectors: VectorStore, embedder: Embedder, batch: int = 500) -> int:
    """Write the caption vectors of image documents that have none (those ingested before caption
    vectors existed, marked by a migration); returns how many documents got them."""
    done = 0
    while True:
        todo = graph.uncaptioned_images(limit=batch)
        if not todo:
            return done
        vectors.delete_where("captions", {"document_id": list(todo)})
        vectors.upsert("captions", caption_points(embedder, todo))
        graph.mark_captions_embedded(list(todo))
        done += len(todo)


def backfill_sections(graph: SectionStore, vectors: VectorStore, batch: int = 1000) -> int:
    """Write the vectors of sections that have none (those a migration gave to documents ingested
    before sections existed); returns how many were written."""
    done = 0
    while True:
        todo = graph.unembedded_sections(limit=batch)
        if not todo:
            return done
        chunk_vecs = vectors.vectors("chunks", [c for s in todo for c in s.chunk_ids])
        vectors.upsert("sections", [p for p in (section_point(s, chunk_vecs) for s in todo) if p is not None])
        graph.mark_sections_embedded([s.id for s in todo])
        done += len(todo)
