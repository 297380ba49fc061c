"""The one GraphStore adapter, on the official ``neo4j`` driver, for Neo4j 5 and ArcadeDB."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import urlparse

import neo4j
from neo4j.exceptions import ClientError, ServiceUnavailable

from hopgraph.core.access import SEP, groups_of
from hopgraph.core.errors import StoreUnavailableError
from hopgraph.core.records import Chunk, Community, Document, Entity, Mention, Relation, combine_mentions
from hopgraph.core.settings import GraphSettings
from hopgraph.graphdb.bolt.access_edits import AccessEditsMixin
from hopgraph.graphdb.bolt.batches import batches
from hopgraph.graphdb.bolt.browse import BrowseMixin
from hopgraph.graphdb.bolt.chat_edits import ChatEditsMixin
from hopgraph.graphdb.bolt.community_edits import CommunityEditsMixin
from hopgraph.graphdb.bolt.cypher import statements as cypher
from hopgraph.graphdb.bolt.dialect import Dialect
from hopgraph.graphdb.bolt.entity_types import EntityTypesMixin
from hopgraph.graphdb.bolt.index_reads import IndexReadsMixin
from hopgraph.graphdb.bolt.schema_edits import SchemaMixin
from hopgraph.graphdb.bolt.section_edits import SectionEditsMixin
from hopgraph.graphdb.bolt.tree_edits import TreeEditsMixin
from hopgraph.graphdb.records import (
    DocumentState,
    RelationRef,
    RemovalFacts,
    RemovalPlan,
    StaleDescription,
    Topology,
)

log = logging.getLogger(__name__)
T = TypeVar("T")


class GraphStoreError(StoreUnavailableError):
    """A graph operation failed for a reason the caller should see."""


def _dedupe(rows: Iterable[dict[str, Any]], key: str = "id") -> list[dict[str, Any]]:
    """Last row wins per key: duplicates inside one UNWIND make MERGE race with itself."""
    out: dict[Any, dict[str, Any]] = {}
    for r in rows:
        out[r[key]] = r
    return list(out.values())


class BoltGraphStore(SchemaMixin, IndexReadsMixin, CommunityEditsMixin, TreeEditsMixin, SectionEditsMixin,
                     ChatEditsMixin, AccessEditsMixin, EntityTypesMixin, BrowseMixin):
    """GraphStore over Bolt. Writes are UNWIND batches in managed write transactions."""

    def __init__(self, uri: str, auth: tuple[str, str], cfg: GraphSettings, dialect: Dialect) -> None:
        self.cfg = cfg
        self.dialect = dialect
        self.database = cfg.database
        host = urlparse(uri).hostname or cfg.host
        self._http = (f"http://{host}:{cfg.http_port}", auth) if dialect.name == "arcadedb" else None
        self._driver = neo4j.GraphDatabase.driver(
            uri,
            auth=auth,
            max_connection_pool_size=cfg.max_connection_pool_size,
            connection_timeout=cfg.connection_timeout_s,
            max_transaction_retry_time=cfg.max_retry_time_s,
        )
        try:
            self._driver.verify_connectivity()
        except (ServiceUnavailable, OSError) as exc:
            self._driver.close()
            raise GraphStoreError(f"cannot reach the graph database at {uri}: {exc}") from exc
        self._ensure_database()

    # -- plumbing ----------------------------------------------------------------------------
    def close(self) -> None:
        self._driver.close()

    def _ensure_database(self) -> None:
        if self.dialect.create_database is None:
            return
        try:
            with self._driver.session(database="system") as s:
                s.run(self.dialect.create_database, name=self.database).consume()
        except ClientError as exc:  # community edition: only the default database exists
            log.debug("database creation skipped: %s", exc.message)

    def _session(self, read: bool = False) -> neo4j.Session:
        mode = neo4j.READ_ACCESS if read else neo4j.WRITE_ACCESS
        return self._driver.session(database=self.database, default_access_mode=mode)

    def _write(self, work: Callable[[neo4j.ManagedTransaction], T]) -> T:
        with self._session() as s:
            return s.execute_write(work)

    def read(self, query: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run one read query in a managed read transaction."""
        @neo4j.unit_of_work(timeout=self.cfg.query_timeout_s)
        def work(tx: neo4j.ManagedTransaction) -> list[dict[str, Any]]:
            return [r.data() for r in tx.run(query, dict(params or {}))]

        with self._session(read=True) as s:
            return s.execute_read(work)

    def _write_rows(self, query: str, rows: Sequence[dict[str, Any]]) -> None:
        """UNWIND ``rows`` in batches, each batch one managed transaction (the version moves only on
        ``commit``)."""
        for batch in batches(rows, self.cfg.batch_size):
            def work(tx: neo4j.ManagedTransaction, b: Sequence[dict[str, Any]] = batch) -> None:
                tx.run(query, rows=list(b)).consume()

            self._write(work)

    def _write_ids(self, query: str, ids: Sequence[str]) -> None:
        """Like _write_rows, for statements that UNWIND ``$ids``."""
        for batch in batches(ids, self.cfg.batch_size):
            def work(tx: neo4j.ManagedTransaction, b: Sequence[str] = batch) -> None:
                tx.run(query, ids=list(b)).consume()

            self._write(work)

    # -- meta ---------------------------------------------------------------------------------
    def version(self) -> int:
        rows = self.read(cypher.GET_VERSION)
        return int(rows[0]["version"]) if rows and rows[0]["version"] is not None else 0

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for name, q in {**cypher.COUNT_LABEL, **cypher.COUNT_REL}.items():
            rows = self.read(q)
            out[name] = int(rows[0]["n"]) if rows else 0
        return out

    # -- upserts ------------------------------------------------------------------------------
    def upsert_documents(self, docs: Sequence[Document], status: str) -> None:
        rows = [{"id": d.id, "source": d.source, "title": d.title, "kind": d.kind, "uri": d.uri,
                 "metadata_json": json.dumps(d.metadata, sort_keys=True), "status": status} for d in docs]
        self._write_rows(cypher.UPSERT_DOCUMENTS, _dedupe(rows))

    def upsert_chunks(self, chunks: Sequence[Chunk]) -> None:
        rows = [{"id": c.id, "document_id": c.document_id, "text": c.text, "ord": c.ord, "n_tokens": c.n_tokens,
                 "chat_json": c.chat_json()} for c in chunks]
        self._write_rows(cypher.UPSERT_CHUNKS, _dedupe(rows))

    def upsert_entities(self, entities: Sequence[Entity]) -> None:
        rows = [{"id": e.id, "name": e.name, "type": e.type, "description": e.description,
                 "description_chunk": e.description_chunk} for e in entities]
        self._write_rows(cypher.UPSERT_ENTITIES, _dedupe(rows))

    def upsert_mentions(self, mentions: Sequence[Mention]) -> None:
        rows = [{"chunk_id": m.chunk_id, "entity_id": m.entity_id, "count": m.count, "label": m.label}
                for m in combine_mentions(mentions)]
        self._write_rows(cypher.UPSERT_MENTIONS, rows)

    def upsert_relations(self, relations: Sequence[Relation]) -> None:
        merged: dict[str, Relation] = {}
        for r in relations:  # the same relation from several chunks: one row, union of support
            old = merged.get(r.id)
            merged[r.id] = r if old is None else old.merged(r)
        rows = [{"id": r.id, "source_id": r.source_id, "target_id": r.target_id, "type": r.type,
                 "description": r.description, "description_chunk": r.description_chunk, "weight": r.weight,
                 "chunk_ids": r.chunk_ids, "label": r.label} for r in merged.values()]
        self._write_rows(cypher.UPSERT_RELATIONS, rows)

    def upsert_communities(self, communities: Sequence[Community]) -> None:
        rows = _dedupe([{"id": c.id, "level": c.level, "title": c.title, "summary": c.summary, "size": c.size,
                         "key_ids": c.key_ids, "quoted": c.quoted} for c in communities])
        self._write_rows(cypher.UPSERT_COMMUNITIES, rows)
        parents = [{"id": c.id, "parent_id": c.parent_id} for c in communities if c.parent_id]
        self._write_rows(cypher.LINK_COMMUNITY_PARENTS, parents)
        members = {(e, c.id) for c in communities for e in c.member_ids}
        self._write_rows(cypher.LINK_COMMUNITY_MEMBERS,
                         [{"entity_id": e, "community_id": c} for e, c in sorted(members)])

    def set_document_status(self, rows: Sequence[tuple[str, str, str]]) -> None:
        data = [{"id": i, "status": s, "content_hash": h} for i, s, h in rows]
        self._write_rows(cypher.SET_DOCUMENT_STATUS, _dedupe(data))

    # -- reads --------------------------------------------------------------------------------
    def document_states(self, ids: Sequence[str]) -> dict[str, DocumentState]:
        out: dict[str, DocumentState] = {}
        for batch in batches(list(dict.fromkeys(ids)), self.cfg.batch_size):
            for r in self.read(cypher.DOCUMENT_STATES, {"ids": list(batch)}):
                out[r["id"]] = DocumentState(r["id"], r["status"], r["content_hash"], r["source"])
        return out

    def unfinished_documents(self) -> list[DocumentState]:
        return [DocumentState(r["id"], r["status"], None, r["source"])
                for r in self.read(cypher.UNFINISHED_DOCUMENTS)]

    def documents_under(self, prefix: str) -> list[DocumentState]:
        rows = self.read(cypher.DOCUMENTS_UNDER, {"prefix": prefix})
        return [DocumentState(r["id"], r["status"], r["content_hash"], r["source"]) for r in rows]

    def removal_facts(self, keep: Mapping[str, Collection[str]]) -> RemovalFacts:
        """What removing the chunks of each document id not in its keep-set would touch (reads only)."""
        rows = [{"document_id": d, "keep": sorted(k)} for d, k in keep.items()]
        chunk_ids: list[str] = []
        touched: set[str] = set()
        for batch in batches(rows, max(1, self.cfg.batch_size // 10)):
            for r in self.read(cypher.STALE_CHUNKS, {"rows": list(batch)}):
                chunk_ids.append(r["chunk_id"])
                touched.update(e for e in r["entity_ids"] if e is not None)
        facts = RemovalFacts(chunk_ids=sorted(set(chunk_ids)), touched_entity_ids=sorted(touched))
        for ebatch in batches(facts.touched_entity_ids, self.cfg.batch_size):
            ids = list(ebatch)
            facts.orphaned_entity_ids.update(
                r["id"] for r in self.read(cypher.ORPHANED_BY, {"ids": ids, "chunk_ids": facts.chunk_ids}))
            for r in self.read(cypher.RELATIONS_SUPPORTED_BY, {"ids": ids, "chunk_ids": facts.chunk_ids}):
                ref = RelationRef(r["id"], r["source_id"], r["target_id"])
                (facts.unsupported if r["dead"] else facts.weakened)[ref.id] = ref
        for obatch in batches(sorted(facts.orphaned_entity_ids), self.cfg.batch_size):
            facts.community_ids.update(r["id"] for r in self.read(cypher.COMMUNITIES_OF, {"ids": list(obatch)}))
        return facts

    def remove(self, plan: RemovalPlan, document_ids: Sequence[str] = ()) -> None:
        """Cascade in one managed transaction per batch: prune relation support, delete dead
        relations, chunks, orphaned entities and documents, refresh touched communities."""
        size = self.cfg.batch_size
        all_chunks = plan.chunk_ids
        rel_rows = [{"id": r.id, "source_id": r.source_id, "target_id": r.target_id} for r in plan.relations]
        steps: list[tuple[str, list[Any], dict[str, Any]]] = [
            (cypher.PRUNE_RELATION_SUPPORT, plan.touched_entity_ids, {"chunk_ids": all_chunks}),
            (cypher.MARK_STALE_DESCRIPTIONS, plan.touched_entity_ids, {}),
            (cypher.DELETE_RELATIONS, rel_rows, {}),
            (cypher.DELETE_CHUNKS, plan.chunk_ids, {}),
            (cypher.DELETE_ENTITIES, plan.entity_ids, {}),
            (cypher.DELETE_DOCUMENTS, list(document_ids), {}),
            (cypher.REFRESH_COMMUNITIES, plan.community_ids, {}),
        ]
        n = max(len(ids) for _, ids, _ in steps)
        for i in range(0, max(n, 1), size):
            def work(tx: neo4j.ManagedTransaction, i: int = i) -> None:
                for query, ids, extra in steps:
                    if ids[i : i + size]:
                        key = "rows" if query is cypher.DELETE_RELATIONS else "ids"
                        tx.run(query, {key: ids[i : i + size], **extra}).consume()

            self._write(work)
        if document_ids:  # a deletion is a committed change; a re-ingest commits when it marks complete
            self.commit(documents=document_ids)

    def topology(self) -> Topology:
        version = self.version()
        nodes = self.read(cypher.TOPOLOGY_NODES)
        ids = [r["id"] for r in nodes]
        index = {e: i for i, e in enumerate(ids)}
        src: list[int] = []
        dst: list[int] = []
        edge_ids: list[str] = []
        types: list[str] = []
        labels: list[str] = []
        weights: list[float] = []
        for r in self.read(cypher.TOPOLOGY_EDGES):
            if r["source"] in index and r["target"] in index:
                src.append(index[r["source"]])
                dst.append(index[r["target"]])
                edge_ids.append(r["id"])
                types.append(r["type"] or "RELATED")
                labels.append(r["label"] or (r["type"] or "related").replace("_", " "))
                weights.append(float(r["weight"] if r["weight"] is not None else 1.0))
        return Topology(version, ids, [r["name"] or "" for r in nodes], [r["type"] or "" for r in nodes],
                        src, dst, edge_ids, types, weights, labels)

    def relation_descriptions(self, refs: Sequence[RelationRef]) -> dict[str, str]:
        out: dict[str, str] = {}
        rows = [{"id": r.id, "source_id": r.source_id, "target_id": r.target_id} for r in refs]
        for batch in batches(rows, self.cfg.batch_size):
            out.update({r["id"]: r["description"] or "" for r in
                        self.read(cypher.RELATION_DESCRIPTIONS, {"rows": list(batch)})})
        return out

    def community_ids(self) -> dict[str, int]:
        return {r["id"]: int(r["level"]) for r in self.read(cypher.COMMUNITY_IDS)}

    def level0_membership(self) -> dict[str, str]:
        return {r["entity_id"]: r["community_id"] for r in self.read(cypher.LEVEL0_MEMBERSHIP)}


    def delete_communities(self, ids: Sequence[str]) -> None:
        self._write_ids(cypher.DELETE_COMMUNITIES, ids)

    # -- entity resolution ---------------------------------------------------------------------
    def unresolved_entities(self) -> list[Entity]:
        return [Entity(id=r["id"], name=r["name"] or "", type=r["type"] or "")
                for r in self.read(cypher.UNRESOLVED_ENTITIES)]

    def mark_resolved(self, ids: Sequence[str]) -> None:
        self._write_ids(cypher.MARK_RESOLVED, ids)

    def communities_stale(self) -> bool:
        rows = self.read(cypher.COMMUNITY_STATE)
        return not rows or rows[0]["built"] is None or rows[0]["built"] != rows[0]["version"]

    def aliases(self) -> dict[str, str]:
        """Surface-form entity id -> canonical entity id, for the merges of public documents."""
        return {r["id"]: r["entity_id"] for r in self.read(cypher.ALIASES)}

    def stale_descriptions(self) -> tuple[list[StaleDescription], list[StaleDescription]]:
        """Entities and relations that lost chunks since their description was written, with the
        texts of (up to three of) the chunks that still support them."""
        entities = [StaleDescription(r["id"], r["description"] or "", (r["name"] or "",), list(r["texts"] or []),
                                     chunk_ids=tuple(r["ids"] or ())) for r in self.read(cypher.STALE_ENTITIES)]
        rows = self.read(cypher.STALE_RELATIONS)
        wanted = sorted({c for r in rows for c in sorted(r["chunk_ids"] or [])[:3]})
        texts = {t["id"]: t["text"] or "" for b in batches(wanted, self.cfg.batch_size)
                 for t in self.read(cypher.CHUNK_TEXTS, {"ids": list(b)})}
        relations = []
        for r in rows:
            ids = [c for c in sorted(r["chunk_ids"] or [])[:3] if c in texts]
            relations.append(StaleDescription(
                r["id"], r["description"] or "", (r["source"] or "", r["target"] or ""), [texts[c] for c in ids],
                RelationRef(r["id"], r["source_id"], r["target_id"]), r["type"] or "", tuple(ids)))
        return entities, relations

    def set_descriptions(self, entities: Mapping[str, str], relations: Mapping[RelationRef, str]) -> None:
        """Write new descriptions (and clear the stale marks)."""
        self._write_rows(cypher.SET_ENTITY_DESCRIPTIONS, [{"id": i, "description": d} for i, d in entities.items()])
        self._write_rows(cypher.SET_RELATION_DESCRIPTIONS, [
            {"id": r.id, "source_id": r.source_id, "target_id": r.target_id, "description": d}
            for r, d in relations.items()])

    def stale_summaries(self) -> set[str]:
        """Communities with a member that lost chunks since the summary was written."""
        return {r["id"] for r in self.read(cypher.STALE_SUMMARIES)}

    def mentions_of_entities(self, ids: Sequence[str]) -> list[Mention]:
        """Every mention of the given entities."""
        return [Mention(chunk_id=r["chunk_id"], entity_id=r["entity_id"], count=int(r["count"] or 1),
                        label=r["label"] or "")
                for b in batches(ids, self.cfg.batch_size)
                for r in self.read(cypher.MENTIONS_OF_ENTITIES, {"ids": list(b)})]

    def mention_groups(self, ids: Sequence[str]) -> dict[str, set[str]]:
        """Entity id -> the distinct access groups (joined, "" public) of the documents that mention it."""
        out: dict[str, set[str]] = {}
        for b in batches(list(dict.fromkeys(ids)), self.cfg.batch_size):
            for r in self.read(cypher.MENTION_DOCUMENTS, {"ids": list(b)}):
                meta = json.loads(r["metadata_json"] or "{}")
                out.setdefault(r["entity_id"], set()).add(SEP.join(groups_of(meta if isinstance(meta, dict) else {})))
        return out

    def relations_of_entities(self, ids: Sequence[str]) -> list[Relation]:
        """Every relation touching the given entities (once each)."""
        found = {r["id"]: r for b in batches(ids, self.cfg.batch_size)
                 for r in self.read(cypher.RELATIONS_OF_ENTITIES, {"ids": list(b)})}
        return [Relation(id=r["id"], source_id=r["source_id"], target_id=r["target_id"], type=r["type"],
                         description=r["description"] or "", chunk_ids=list(r["chunk_ids"] or []),
                         label=r["label"] or "")
                for _, r in sorted(found.items())]

    def add_mentions(self, mentions: Sequence[Mention]) -> None:
        """Add mention counts (MERGE the edge, add to its count): how merged names' mentions move over."""
        self._write_rows(cypher.ADD_MENTIONS, [m.model_dump() for m in mentions])

    def delete_entities(self, ids: Sequence[str]) -> None:
        """Delete entities with their edges."""
        self._write_ids(cypher.DELETE_ENTITIES, ids)

    def record_aliases(self, aliases: Sequence[tuple[str, str, str]], groups: Mapping[str, str] | None = None
                       ) -> None:
        """Record (alias id, alias name, canonical id) merges with their documents' access groups; earlier
        aliases of a merged-away id follow it."""
        scope = groups or {}
        self._write_rows(cypher.REPOINT_ALIASES, [{"old": a, "new": c, "groups": scope.get(a, "")}
                                                  for a, _, c in aliases])
        self._write_rows(cypher.RECORD_ALIASES, [{"id": a, "entity_id": c, "name": n, "groups": scope.get(a, "")}
                                                 for a, n, c in aliases])
