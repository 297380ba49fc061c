"""Forgetting removed text: descriptions that quoted chunks which are gone are written again from
what still supports them, with the vectors of the relations among them."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from hopgraph.core.records import CO_OCCURS, Chunk, Entity, Relation
from hopgraph.core.settings import ExtractionSettings
from hopgraph.graphdb.protocols import EntityEditor
from hopgraph.graphdb.records import StaleDescription
from hopgraph.ingest.extraction import Extractor
from hopgraph.ingest.graph_edits import refreshed_description
from hopgraph.ingest.relation_vectors import relation_vectors
from hopgraph.ingest.texts import merge_relations, relation_point
from hopgraph.vectors.embedders import Embedder
from hopgraph.vectors.store import VectorStore

log = logging.getLogger(__name__)


def described_again(extractor: Extractor, items: Sequence[StaleDescription]) -> dict[str, str | None]:
    """Descriptions extracted again from each item's smallest remaining chunk (which describes it,
    see ``Entity.description_chunk``): None where that is the current one."""
    firsts = {it.chunk_ids[0]: it.texts[0] for it in items if it.chunk_ids and it.texts}
    got = extractor.extract([Chunk(id=c, document_id="", text=t, ord=0) for c, t in sorted(firsts.items())])
    relations = {r.id: r for r in merge_relations(got.relations)}
    out: dict[str, str | None] = {}
    for it in items:
        found: Entity | Relation | None = got.entities.get(it.id) if it.ref is None else relations.get(it.id)
        if it.chunk_ids and found is not None and found.description_chunk == it.chunk_ids[0]:
            out[it.id] = found.description if found.description != it.description else None
    return out


def forget_removed_text(graph: EntityEditor, vectors: VectorStore, embedder: Embedder, extractor: Extractor,
                        cfg: ExtractionSettings) -> None:
    """Rewrite the descriptions marked stale (marks left by a killed run are picked up too). With a
    ``local`` extractor (spaCy) the smallest remaining chunk is extracted again, so the graph holds exactly
    what a fresh ingest would write; with an LLM extractor (too costly to call again) the description
    becomes the first remaining sentence naming the item."""
    entities, relations = graph.stale_descriptions()
    if not entities and not relations:
        return
    fresh = {e.id: refreshed_description(e.description, e.names, e.texts) for e in [*entities, *relations]}
    if extractor.local:
        fresh.update(described_again(extractor, [*entities, *relations]))
    changed = [r for r in relations if fresh[r.id] is not None and r.ref is not None
               and (r.type != CO_OCCURS or cfg.embed_cooccurrence)]
    graph.set_descriptions({e.id: fresh[e.id] or e.description for e in entities},
                           {r.ref: fresh[r.id] or r.description for r in relations if r.ref is not None})
    rels = [Relation(id=r.id, source_id=r.ref.source_id, target_id=r.ref.target_id, type=r.type,
                     description=fresh[r.id] or "", description_chunk=r.chunk_ids[0] if r.chunk_ids else "")
            for r in changed if r.ref is not None]
    names = {rel.source_id: r.names[0] for rel, r in zip(rels, changed, strict=True)}
    names.update({rel.target_id: r.names[1] for rel, r in zip(rels, changed, strict=True)})
    if rels:
        vecs = relation_vectors(rels, embedder, cfg, names, vectors.vectors)
        vectors.upsert("relationships", [relation_point(r, v) for r, v in zip(rels, vecs, strict=True)])
    log.info("forgot removed text: %d entity and %d relation description(s) rewritten",
             sum(fresh[e.id] is not None for e in entities), sum(fresh[r.id] is not None for r in relations))
