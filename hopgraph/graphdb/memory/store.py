"""The in-memory graph store, backend ``memory`` (``graph.backend = "memory"``): every role of
``graphdb.protocols.GraphBackend`` in dicts, for tests (hopgraph's own and a user's) that need no server.
Nothing outlives the store: each ``open_graph_store`` gives an empty graph.

It follows the Bolt adapter's semantics statement by statement (MERGE = keep the first description,
relation support is a union and the weight its size, removal prunes support and refreshes community
sizes); ``tests/test_store_contract.py`` runs the same scenarios against it and the real ArcadeDB.
Communities, the RAPTOR tree and sections are in ``graphdb.memory.structure``, the browser in
``graphdb.memory.browser``; the Cypher console (``CypherConsole``) refuses: there is no Cypher engine here.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hopgraph.core.access import SEP, groups_of
from hopgraph.core.errors import ConflictError
from hopgraph.core.records import (
    Chunk,
    Community,
    Document,
    Entity,
    Mention,
    Relation,
    Section,
    SummaryNode,
    combine_mentions,
)
from hopgraph.core.settings import Settings
from hopgraph.graphdb.memory.browser import MemoryBrowser
from hopgraph.graphdb.memory.structure import (
    MemoryAccessMarks,
    MemoryChats,
    MemoryCommunities,
    MemorySections,
    MemoryTree,
)
from hopgraph.graphdb.protocols import GraphBackend
from hopgraph.graphdb.records import (
    COMPLETE,
    DocumentState,
    EdgeRow,
    ExploreResult,
    GraphChange,
    IngestRun,
    LabelVote,
    RelationRef,
    RemovalFacts,
    RemovalPlan,
    StaleDescription,
    Topology,
    complete_log,
)


@dataclass
class _Doc:
    document: Document
    status: str
    content_hash: str | None  # set with the status, not by the upsert


@dataclass
class MemoryGraphStore(MemoryCommunities, MemoryTree, MemorySections, MemoryChats, MemoryAccessMarks,
                       MemoryBrowser):
    """Dicts for nodes, edges keyed by their endpoints; a version bumped by each commit."""

    docs: dict[str, _Doc] = field(default_factory=dict)
    chunks: dict[str, Chunk] = field(default_factory=dict)
    sections: dict[str, Section] = field(default_factory=dict)
    entities: dict[str, Entity] = field(default_factory=dict)
    resolved: set[str] = field(default_factory=set)
    mentions: dict[tuple[str, str], int] = field(default_factory=dict)
    labels: dict[tuple[str, str], str] = field(default_factory=dict)  # a mention's (voted) label
    relations: dict[str, Relation] = field(default_factory=dict)
    stored_communities: dict[str, Community] = field(default_factory=dict)
    members: set[tuple[str, str]] = field(default_factory=set)       # (entity id, community id)
    alias_of: dict[str, tuple[str, str]] = field(default_factory=dict)  # alias id -> (canonical, name)
    alias_groups: dict[str, str] = field(default_factory=dict)  # alias id -> its merge's access groups
    runs: dict[str, IngestRun] = field(default_factory=dict)
    stale_entities: set[str] = field(default_factory=set)
    stale_relations: set[str] = field(default_factory=set)
    stale_communities: set[str] = field(default_factory=set)
    unclustered: set[str] = field(default_factory=set)   # entities whose neighbourhood changed
    untyped: set[str] = field(default_factory=set)       # entities whose mentions changed
    summaries: dict[str, SummaryNode] = field(default_factory=dict)
    unembedded: set[str] = field(default_factory=set)    # sections a migration gave older documents
    uncaptioned: set[str] = field(default_factory=set)   # image documents a migration marked
    undated: set[str] = field(default_factory=set)       # conversations a migration marked for re-dating
    untagged: set[str] = field(default_factory=set)      # documents whose vectors a migration marked
    graph_version: int = 0
    change_log: list[GraphChange] = field(default_factory=list)
    communities_version: int | None = None

    def commit(self, documents: Sequence[str] = (), entities: Sequence[str] = (), communities: bool = False,
               statuses: Sequence[tuple[str, str, str]] = (), regrouped: Sequence[str] | None = None,
               types: Mapping[str, str] | None = None) -> int:
        self.set_document_status(statuses)
        for e, t in (types or {}).items():
            if e in self.entities:
                self.entities[e] = self.entities[e].model_copy(update={"type": t})
        self.graph_version += 1
        self.change_log.append(GraphChange(self.graph_version, tuple(sorted(set(documents))),
                                           tuple(sorted(set(entities))), communities,
                                           None if regrouped is None else tuple(sorted(set(regrouped)))))
        if communities:
            self.communities_version = self.graph_version
        return self.graph_version

    def changes_since(self, version: int) -> list[GraphChange] | None:
        found = [c for c in self.change_log if c.version > version]
        return found if complete_log(found, version, self.graph_version) else None

    def close(self) -> None:
        return None

    def explore(self, cypher: str, params: Mapping[str, Any] | None = None, row_limit: int = 1000,
                timeout_s: float = 30.0) -> ExploreResult:
        """Refused: the in-memory store runs no Cypher (``ConflictError``)."""
        raise ConflictError("the in-memory graph store (graph.backend = 'memory') runs no Cypher")

    def migrate(self) -> list[str]:
        return []

    def version(self) -> int:
        return self.graph_version

    def pending_migrations(self) -> list[str]:
        return []

    def counts(self) -> dict[str, int]:
        section_links = sum(1 for s in self.sections.values() for c in s.chunk_ids if c in self.chunks)
        return {"Document": len(self.docs), "Chunk": len(self.chunks), "Entity": len(self.entities),
                "Community": len(self.stored_communities), "Summary": len(self.summaries),
                "HAS_CHUNK": len(self.chunks) + section_links, "MENTIONS": len(self.mentions),
                "RELATED": len(self.relations), "IN_COMMUNITY": len(self.members)}

    def health_counts(self) -> dict[str, int]:
        mentioned = {e for (_, e) in self.mentions}
        return {"chunks": len(self.chunks), "all_relations": len(self.relations),
                "typed_relations": sum(1 for r in self.relations.values() if r.type != "co_occurs"),
                "image_documents": sum(1 for d in self.docs.values() if d.document.kind == "image"
                                       and d.status == COMPLETE),
                "orphan_entities": sum(1 for e in self.entities if e not in mentioned),
                "orphan_chunks": sum(1 for c in self.chunks.values() if c.document_id not in self.docs),
                "empty_communities": sum(1 for c in self.stored_communities if not self._has_children(c)
                                         and not any(x == c for (_, x) in self.members))}

    # -- documents ---------------------------------------------------------------------------------
    def upsert_documents(self, docs: Sequence[Document], status: str) -> None:
        for d in docs:
            old = self.docs.get(d.id)
            self.docs[d.id] = _Doc(d, status, old.content_hash if old else None)

    def set_document_status(self, rows: Sequence[tuple[str, str, str]]) -> None:
        for i, status, content_hash in rows:
            if i in self.docs:
                self.docs[i].status, self.docs[i].content_hash = status, content_hash

    def _state(self, d: _Doc) -> DocumentState:
        return DocumentState(d.document.id, d.status, d.content_hash, d.document.source)

    def document_states(self, ids: Sequence[str]) -> dict[str, DocumentState]:
        return {i: self._state(self.docs[i]) for i in ids if i in self.docs}

    def unfinished_documents(self) -> list[DocumentState]:
        return [self._state(d) for d in self.docs.values() if d.status in ("pending", "deleting")]

    def documents_under(self, prefix: str) -> list[DocumentState]:
        return [self._state(d) for d in self.docs.values() if d.document.source.startswith(prefix)]

    # -- content -----------------------------------------------------------------------------------
    def upsert_chunks(self, chunks: Sequence[Chunk]) -> None:
        self.chunks.update({c.id: c for c in chunks if c.document_id in self.docs})

    def upsert_entities(self, entities: Sequence[Entity]) -> None:
        for e in entities:
            self.entities.setdefault(e.id, e)  # ON CREATE SET: the first name and type stay
            self.unclustered.add(e.id)
            self.untyped.add(e.id)

    def upsert_mentions(self, mentions: Sequence[Mention]) -> None:
        for m in combine_mentions(mentions):
            if m.chunk_id in self.chunks and m.entity_id in self.entities:
                self.mentions[(m.chunk_id, m.entity_id)] = m.count
                self.labels[(m.chunk_id, m.entity_id)] = m.label

    def add_mentions(self, mentions: Sequence[Mention]) -> None:
        for m in mentions:
            if m.chunk_id in self.chunks and m.entity_id in self.entities:
                key = (m.chunk_id, m.entity_id)
                if key not in self.mentions:
                    self.labels.pop(key, None)  # a new edge: no label
                self.mentions[key] = self.mentions.get(key, 0) + m.count

    def upsert_relations(self, relations: Sequence[Relation]) -> None:
        for r in relations:
            if r.source_id not in self.entities or r.target_id not in self.entities:
                continue
            old = self.relations.get(r.id)
            support = r.chunk_ids if old is None else [c for c in old.chunk_ids if c not in r.chunk_ids] + r.chunk_ids
            base = r if old is None else old
            self.relations[r.id] = base.model_copy(update={"chunk_ids": support, "weight": float(len(support))})

    def removal_facts(self, keep: Mapping[str, Collection[str]]) -> RemovalFacts:
        stale = sorted(c.id for c in self.chunks.values() if c.document_id in keep and c.id not in keep[c.document_id])
        gone = set(stale)
        touched = sorted({e for (c, e) in self.mentions if c in gone})
        facts = RemovalFacts(chunk_ids=stale, touched_entity_ids=touched)
        facts.orphaned_entity_ids = {e for e in touched if all(c in gone for (c, x) in self.mentions if x == e)}
        for r in self.relations.values():
            if (r.source_id in touched or r.target_id in touched) and any(c in gone for c in r.chunk_ids):
                ref = RelationRef(r.id, r.source_id, r.target_id)
                (facts.unsupported if all(c in gone for c in r.chunk_ids) else facts.weakened)[r.id] = ref
        facts.community_ids = {c for (e, c) in self.members if e in facts.orphaned_entity_ids}
        return facts

    def remove(self, plan: RemovalPlan, document_ids: Sequence[str] = ()) -> None:
        gone = set(plan.chunk_ids)
        for rid, r in list(self.relations.items()):
            if (r.source_id in plan.touched_entity_ids or r.target_id in plan.touched_entity_ids) and \
                    any(c in gone for c in r.chunk_ids):
                support = [c for c in r.chunk_ids if c not in gone]
                self.relations[rid] = r.model_copy(update={"chunk_ids": support, "weight": float(len(support))})
                self.stale_relations.add(rid)
        touched = {e for e in plan.touched_entity_ids if e in self.entities}
        self.stale_entities |= touched
        self.unclustered |= touched
        self.untyped |= touched
        self.stale_communities |= {c for (e, c) in self.members if e in plan.touched_entity_ids}
        for ref in plan.relations:
            self.relations.pop(ref.id, None)
        for c in plan.chunk_ids:
            self.chunks.pop(c, None)
        self.mentions = {k: n for k, n in self.mentions.items() if k[0] not in gone}
        self.delete_entities(plan.entity_ids)
        for d in document_ids:
            self.docs.pop(d, None)
            self.chunks = {k: c for k, c in self.chunks.items() if c.document_id != d}
        for cid in plan.community_ids:
            if cid in self.stored_communities:
                size = sum(1 for (_, c) in self.members if c == cid)
                has_children = any(x.parent_id == cid for x in self.stored_communities.values())
                if size == 0 and not has_children:
                    self.delete_communities([cid])
                else:
                    self.stored_communities[cid] = self.stored_communities[cid].model_copy(update={"size": size})
        if document_ids:
            self.commit(documents=document_ids)

    def stale_descriptions(self) -> tuple[list[StaleDescription], list[StaleDescription]]:
        live = self.stale_entities & set(self.entities)

        def texts(chunk_ids: list[str]) -> list[str]:
            return [self.chunks[c].text for c in sorted(chunk_ids)[:3] if c in self.chunks]

        entities = [StaleDescription(e, self.entities[e].description, (self.entities[e].name,),
                                     texts([c for (c, x) in self.mentions if x == e])) for e in sorted(live)]
        relations = []
        for rid in sorted(self.stale_relations):
            r = self.relations.get(rid)
            if r is not None and (r.source_id in live or r.target_id in live):
                relations.append(StaleDescription(
                    rid, r.description, (self.entities[r.source_id].name, self.entities[r.target_id].name),
                    texts(r.chunk_ids), RelationRef(rid, r.source_id, r.target_id), r.type))
        return entities, relations

    def set_descriptions(self, entities: Mapping[str, str], relations: Mapping[RelationRef, str]) -> None:
        for i, d in entities.items():
            if i in self.entities:
                self.entities[i] = self.entities[i].model_copy(update={"description": d})
            self.stale_entities.discard(i)
        for ref, d in relations.items():
            if ref.id in self.relations:
                self.relations[ref.id] = self.relations[ref.id].model_copy(update={"description": d})
            self.stale_relations.discard(ref.id)

    def stale_summaries(self) -> set[str]:
        return self.stale_communities & set(self.stored_communities)

    # -- entity resolution -------------------------------------------------------------------------
    def unresolved_entities(self) -> list[Entity]:
        return [e for i, e in self.entities.items() if i not in self.resolved]

    def mark_resolved(self, ids: Sequence[str]) -> None:
        self.resolved.update(i for i in ids if i in self.entities)

    def aliases(self) -> dict[str, str]:
        return {a: c for a, (c, _) in self.alias_of.items() if not self.alias_groups.get(a)}

    def mentions_of_entities(self, ids: Sequence[str]) -> list[Mention]:
        wanted = set(ids)
        return [Mention(chunk_id=c, entity_id=e, count=n, label=self.labels.get((c, e), ""))
                for (c, e), n in self.mentions.items() if e in wanted]

    def mention_groups(self, ids: Sequence[str]) -> dict[str, set[str]]:
        wanted, out = set(ids), dict[str, set[str]]()
        for c, e in self.mentions:
            if (d := self.docs.get(self.chunks[c].document_id) if e in wanted and c in self.chunks else None):
                out.setdefault(e, set()).add(SEP.join(groups_of(d.document.metadata)))
        return out

    def untyped_entities(self) -> list[str]:
        return sorted(self.untyped & set(self.entities))

    def mark_typed(self, ids: Sequence[str]) -> None:
        self.untyped -= set(ids)

    def label_votes(self, ids: Sequence[str]) -> list[LabelVote]:
        wanted = set(ids)
        return [LabelVote(e, self.entities[e].type, self.labels[(c, e)], n) for (c, e), n in self.mentions.items()
                if e in wanted and self.labels.get((c, e))]

    def relations_of_entities(self, ids: Sequence[str]) -> list[Relation]:
        wanted = set(ids)
        return [r for _, r in sorted(self.relations.items()) if r.source_id in wanted or r.target_id in wanted]

    def delete_entities(self, ids: Sequence[str]) -> None:
        dead = set(ids)
        for i in dead:
            self.entities.pop(i, None)
        self.mentions = {k: n for k, n in self.mentions.items() if k[1] not in dead}
        self.relations = {k: r for k, r in self.relations.items()
                          if r.source_id not in dead and r.target_id not in dead}
        self.members = {(e, c) for (e, c) in self.members if e not in dead}

    def record_aliases(self, aliases: Sequence[tuple[str, str, str]], groups: Mapping[str, str] | None = None
                       ) -> None:
        scope = groups or {}
        for alias, _, canonical in aliases:  # earlier aliases of a merged-away entity follow it
            moved = {a for a, (c, _) in self.alias_of.items() if c == alias}
            self.alias_of = {a: ((canonical if c == alias else c), n) for a, (c, n) in self.alias_of.items()}
            self.alias_groups.update((a, scope.get(alias, "")) for a in moved)
        for alias, name, canonical in aliases:
            self.alias_of[alias] = (canonical, name)
            self.alias_groups[alias] = scope.get(alias, "")

    # -- snapshot exports --------------------------------------------------------------------------
    def topology(self) -> Topology:
        ids = sorted(self.entities)
        index = {e: i for i, e in enumerate(ids)}
        rels = list(self.relations.values())
        return Topology(self.graph_version, ids, [self.entities[e].name for e in ids],
                        [self.entities[e].type for e in ids], [index[r.source_id] for r in rels],
                        [index[r.target_id] for r in rels], [r.id for r in rels], [r.type for r in rels],
                        [r.weight for r in rels], [r.shown for r in rels])

    def snapshot_chunks(self, document_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        wanted = None if document_ids is None else set(document_ids)
        out = []
        for c in self.chunks.values():
            d = self.docs[c.document_id]
            if d.status == COMPLETE and (wanted is None or d.document.id in wanted):
                out.append({"id": c.id, "text": c.text, "document_id": d.document.id, "source": d.document.source,
                            "title": d.document.title, "metadata": json.dumps(d.document.metadata),
                            "kind": d.document.kind, "uri": d.document.uri,
                            "chat": c.chat_json()})
        return out

    def snapshot_mentions(self, chunk_ids: Sequence[str] | None = None,
                          entity_ids: Sequence[str] | None = None) -> list[tuple[str, str, int, str]]:
        cs, es = set(chunk_ids or ()), set(entity_ids or ())
        return [(c, e, n, self.labels.get((c, e), "")) for (c, e), n in self.mentions.items()
                if (chunk_ids is None and entity_ids is None) or c in cs or e in es]

    def snapshot_entities(self, ids: Sequence[str] | None = None) -> list[tuple[str, str, str]]:
        keep = self.entities if ids is None else [i for i in dict.fromkeys(ids) if i in self.entities]
        return [(i, self.entities[i].name, self.entities[i].type) for i in keep]

    def snapshot_edges(self, entity_ids: Sequence[str] | None = None, within: bool = False) -> list[EdgeRow]:
        es = None if entity_ids is None else set(entity_ids)
        return [EdgeRow(r.source_id, r.target_id, r.type, r.weight, r.id, chunk_ids=tuple(r.chunk_ids))
                for r in self.relations.values()
                if es is None or (r.source_id in es and r.target_id in es if within
                                  else r.source_id in es or r.target_id in es)]

    def snapshot_memberships(self, entity_ids: Sequence[str] | None = None) -> list[tuple[str, str]]:
        es = None if entity_ids is None else set(entity_ids)
        return sorted(m for m in self.members if es is None or m[0] in es)

    def record_ingest_run(self, run: IngestRun) -> None:
        self.runs[run.id] = run

    def delete_ingest_run(self, run_id: str) -> None:
        self.runs.pop(run_id, None)

    def prune_ingest_runs(self, source: str, keep: int) -> None:
        mine = sorted((r for r in self.runs.values() if r.source == source), key=lambda r: -r.started_at)
        for r in mine[keep:]:
            del self.runs[r.id]

    def ingest_runs(self, source: str | None = None, limit: int = 50) -> list[IngestRun]:
        mine = [r for r in self.runs.values() if source is None or r.source == source]
        return sorted(mine, key=lambda r: -r.started_at)[:limit]


def open_memory_graph(settings: Settings) -> GraphBackend:
    """The ``memory`` backend's opener (``graphdb.registry``): an empty in-memory graph."""
    return MemoryGraphStore()
