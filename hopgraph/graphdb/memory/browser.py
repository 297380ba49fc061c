"""The in-memory graph store's ``GraphBrowser`` (the API's look-ups, provenance, exports), mixed into
``MemoryGraphStore``; rows have the keys and the order of ``graphdb.bolt.cypher.browse`` and
``graphdb.cypher_export``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from hopgraph.core.access import groups_of
from hopgraph.core.records import Chunk, Community, Document, Entity, Relation, Section, SummaryNode
from hopgraph.graphdb.records import (
    COMPLETE,
    ChunkRecord,
    DocumentState,
    EntityChunk,
    RelationChunk,
    RelationRef,
    k_hop_walk,
)


class _Doc(Protocol):
    document: Document
    status: str
    content_hash: str | None


class MemoryBrowser:
    """Look-ups over the store's dicts."""

    docs: Mapping[str, _Doc]
    chunks: dict[str, Chunk]
    entities: dict[str, Entity]
    mentions: dict[tuple[str, str], int]
    relations: dict[str, Relation]
    stored_communities: dict[str, Community]
    members: set[tuple[str, str]]
    sections: dict[str, Section]
    summaries: dict[str, SummaryNode]

    def list_documents(self, skip: int = 0, limit: int = 100) -> list[DocumentState]:
        docs = sorted(self.docs.values(), key=lambda d: d.document.source)[skip:skip + limit]
        return [DocumentState(d.document.id, d.status, d.content_hash, d.document.source,
                              tuple(groups_of(d.document.metadata))) for d in docs]

    def document_groups(self, ids: Sequence[str]) -> dict[str, list[str]]:
        return {i: groups_of(self.docs[i].document.metadata) for i in ids if i in self.docs}

    def _record(self, chunk_id: str) -> ChunkRecord | None:
        c = self.chunks.get(chunk_id)
        d = self.docs.get(c.document_id) if c else None
        return ChunkRecord(c.id, c.text, c.ord, d.document.id, d.document.source) if c and d else None

    def entity(self, entity_id: str) -> dict[str, Any] | None:
        e = self.entities.get(entity_id)
        if e is None:
            return None
        counts = [n for (_, x), n in self.mentions.items() if x == entity_id]
        return {"id": e.id, "name": e.name, "type": e.type, "description": e.description, "chunks": len(counts),
                "mentions": sum(counts), "communities": sorted(c for (x, c) in self.members if x == entity_id)}

    def entity_neighbours(self, entity_id: str, skip: int = 0, limit: int = 50) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for r in self.relations.values():
            if entity_id in (r.source_id, r.target_id):
                n = self.entities[r.target_id if r.source_id == entity_id else r.source_id]
                rows.append({"id": n.id, "name": n.name, "type": n.type, "relation": r.type, "weight": r.weight,
                             "description": r.description, "outgoing": r.source_id == entity_id})
        return sorted(rows, key=lambda r: (-r["weight"], r["id"]))[skip:skip + limit]

    def document_graph(self, document_id: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        ids = sorted({e for (c, e) in self.mentions if self.chunks[c].document_id == document_id}
                     if document_id in self.docs else set())
        nodes = [{"id": i, "name": self.entities[i].name, "type": self.entities[i].type,
                  "description": self.entities[i].description} for i in ids]
        inside = set(ids)
        edges = [{"source": r.source_id, "target": r.target_id, "type": r.type, "description": r.description,
                  "id": r.id} for _, r in sorted(self.relations.items())
                 if r.source_id in inside and r.target_id in inside]
        return nodes, edges

    def communities(self, level: int | None = None, skip: int = 0, limit: int = 50) -> list[dict[str, Any]]:
        rows = sorted((c for c in self.stored_communities.values() if level is None or c.level == level),
                      key=lambda c: (c.level, -c.size, c.id))[skip:skip + limit]
        return [{"id": c.id, "level": c.level, "title": c.title, "summary": c.summary, "size": c.size} for c in rows]

    def community(self, community_id: str, member_limit: int = 200) -> dict[str, Any] | None:
        c = self.stored_communities.get(community_id)
        if c is None:
            return None
        members = sorted((self.entities[e] for (e, x) in self.members if x == community_id),
                         key=lambda e: (e.name, e.id))[:member_limit]
        return {"id": c.id, "level": c.level, "title": c.title, "summary": c.summary, "size": c.size,
                "parent_id": c.parent_id,
                "children": sorted(k.id for k in self.stored_communities.values() if k.parent_id == community_id),
                "members": [{"id": e.id, "name": e.name, "type": e.type} for e in members]}

    def chunks_of_entities(self, ids: Sequence[str]) -> list[EntityChunk]:
        out = []
        for e in ids:
            for (c, x), n in self.mentions.items():
                rec = self._record(c)
                if x == e and rec is not None and self.docs[rec.document_id].status == COMPLETE:
                    out.append(EntityChunk(entity_id=e, name=self.entities[e].name, count=n, chunk=rec))
        return out

    def chunks_of_relations(self, refs: Sequence[RelationRef]) -> list[RelationChunk]:
        out = []
        for ref in refs:
            r = self.relations.get(ref.id)
            if r is not None and (r.source_id, r.target_id) == (ref.source_id, ref.target_id):
                out += [RelationChunk(ref.id, rec) for c in r.chunk_ids if (rec := self._record(c)) is not None]
        return out

    def _neighbours(self, ids: Sequence[str]) -> list[str]:
        frontier = set(ids)
        return list(dict.fromkeys(x for r in self.relations.values() for a, x in
                                  ((r.source_id, r.target_id), (r.target_id, r.source_id)) if a in frontier))

    def k_hop(self, entity_ids: Sequence[str], hops: int = 2, limit: int = 10000) -> list[str]:
        def rings(frontier: list[str], left: int) -> list[list[str]]:  # two a step, as the adapter reads them
            first = self._neighbours(frontier)
            return [first, self._neighbours(first)] if left >= 2 else [first]

        return k_hop_walk(entity_ids, hops, limit, rings)

    def export_nodes(self, label: str) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]]
        if label == "Document":
            rows = [{"id": d.document.id, "source": d.document.source, "title": d.document.title,
                     "kind": d.document.kind, "uri": d.document.uri, "status": d.status,
                     "metadata_json": json.dumps(d.document.metadata, sort_keys=True)} for d in self.docs.values()]
        elif label == "Chunk":
            rows = [{"id": c.id, "text": c.text, "ord": c.ord, "n_tokens": c.n_tokens,
                     "chat_json": c.chat_json()} for c in self.chunks.values()]
        elif label == "Entity":
            rows = [{"id": e.id, "name": e.name, "type": e.type, "description": e.description}
                    for e in self.entities.values()]
        elif label == "Community":
            rows = [{"id": c.id, "level": c.level, "title": c.title, "summary": c.summary, "size": c.size}
                    for c in self.stored_communities.values()]
        elif label == "Section":
            rows = [{"id": s.id, "document_id": s.document_id, "title": s.title, "path": s.path, "level": s.level,
                     "ord": s.ord} for s in self.sections.values()]
        else:
            rows = [{"id": s.id, "branch": s.branch, "level": s.level, "text": s.text, "size": s.size}
                    for s in self.summaries.values()]
        return sorted(rows, key=lambda r: r["id"])

    def export_edges(self, edge_type: str) -> list[dict[str, Any]]:
        pairs: list[tuple[str, str]]
        if edge_type == "HAS_CHUNK":
            pairs = [(c.document_id, c.id) for c in self.chunks.values()] + \
                [(s.id, c) for s in self.sections.values() for c in s.chunk_ids if c in self.chunks]
        elif edge_type == "HAS_SECTION":
            pairs = [(s.document_id, s.id) for s in self.sections.values() if s.document_id in self.docs]
        elif edge_type == "SUMMARIZES":
            pairs = [(s.id, c) for s in self.summaries.values() for c in s.children
                     if c in self.chunks or c in self.summaries]
        elif edge_type == "MENTIONS":
            return [{"source": c, "target": e, "count": n} for (c, e), n in self.mentions.items()]
        elif edge_type == "RELATED":
            return [{"source": r.source_id, "target": r.target_id, "id": r.id, "type": r.type, "weight": r.weight,
                     "description": r.description} for r in self.relations.values()]
        elif edge_type == "IN_COMMUNITY":
            pairs = sorted(self.members)
        else:
            pairs = [(c.id, c.parent_id) for c in self.stored_communities.values() if c.parent_id]
        return [{"source": a, "target": b} for a, b in pairs]
