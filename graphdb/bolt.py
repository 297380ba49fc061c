"""The one GraphStore adapter, on the official ``neo4j`` driver, for Neo4j 5 and ArcadeDB."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import neo4j
from neo4j.exceptions import ClientError, ServiceUnavailable

from graphdb import cypher
from graphdb.dialect import Dialect
from graphdb.migrations import MigrationRunner
from graphdb.store import ChunkRecord, DocumentState, EntityChunk, RemovalPlan
from hopgraph.models import Chunk, Document, Entity, Mention
from hopgraph.settings import GraphSettings

log = logging.getLogger(__name__)
T = TypeVar("T")


class GraphStoreError(RuntimeError):
    """A graph operation failed for a reason the caller should see."""


def _batches(rows: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for i in range(0, len(rows), size):
        yield rows[i : i + size]


def _dedupe(rows: Iterable[dict[str, Any]], key: str = "id") -> list[dict[str, Any]]:
    """Last row wins per key: duplicates inside one UNWIND make MERGE race with itself."""
    out: dict[Any, dict[str, Any]] = {}
    for r in rows:
        out[r[key]] = r
    return list(out.values())


class BoltGraphStore:
    """GraphStore over Bolt. Writes are UNWIND batches in managed write transactions."""

    def __init__(self, uri: str, auth: tuple[str, str], cfg: GraphSettings, dialect: Dialect) -> None:
        self.cfg = cfg
        self.dialect = dialect
        self.database = cfg.database
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
        """UNWIND ``rows`` in batches, each batch one managed transaction that bumps the version."""
        for batch in _batches(rows, self.cfg.batch_size):
            def work(tx: neo4j.ManagedTransaction, b: Sequence[dict[str, Any]] = batch) -> None:
                tx.run(query, rows=list(b)).consume()
                tx.run(cypher.BUMP_VERSION).consume()

            self._write(work)

    # -- schema -------------------------------------------------------------------------------
    def migrate(self) -> list[str]:
        runner = MigrationRunner(self.cfg.migrations_dir, self._run_schema, self.read, self._record)
        return runner.apply_pending()

    def _run_schema(self, statement: str) -> None:
        with self._session() as s:
            s.run(statement).consume()

    def _record(self, params: dict[str, Any]) -> str:
        def work(tx: neo4j.ManagedTransaction) -> str:
            rec = tx.run(cypher.RECORD_MIGRATION, **params).single()
            return str(rec["checksum"]) if rec else ""

        return self._write(work)

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
        rows = [{"id": d.id, "props": {
            "source": d.source, "title": d.title, "kind": d.kind, "uri": d.uri,
            "metadata_json": json.dumps(d.metadata, sort_keys=True), "status": status,
        }} for d in docs]
        self._write_rows(cypher.UPSERT_DOCUMENTS, _dedupe(rows))

    def upsert_chunks(self, chunks: Sequence[Chunk]) -> None:
        rows = [{"id": c.id, "document_id": c.document_id,
                 "props": {"text": c.text, "ord": c.ord, "n_tokens": c.n_tokens}} for c in chunks]
        self._write_rows(cypher.UPSERT_CHUNKS, _dedupe(rows))

    def upsert_entities(self, entities: Sequence[Entity]) -> None:
        rows = [{"id": e.id, "props": {"name": e.name, "type": e.type, "description": e.description}}
                for e in entities]
        self._write_rows(cypher.UPSERT_ENTITIES, _dedupe(rows))

    def upsert_mentions(self, mentions: Sequence[Mention]) -> None:
        merged: dict[tuple[str, str], int] = {}
        for m in mentions:
            merged[(m.chunk_id, m.entity_id)] = merged.get((m.chunk_id, m.entity_id), 0) + m.count
        rows = [{"chunk_id": c, "entity_id": e, "count": n} for (c, e), n in merged.items()]
        self._write_rows(cypher.UPSERT_MENTIONS, rows)

    def set_document_status(self, rows: Sequence[tuple[str, str, str]]) -> None:
        data = [{"id": i, "status": s, "content_hash": h} for i, s, h in rows]
        self._write_rows(cypher.SET_DOCUMENT_STATUS, _dedupe(data))

    # -- reads --------------------------------------------------------------------------------
    def document_states(self, ids: Sequence[str]) -> dict[str, DocumentState]:
        out: dict[str, DocumentState] = {}
        for batch in _batches(list(dict.fromkeys(ids)), self.cfg.batch_size):
            for r in self.read(cypher.DOCUMENT_STATES, {"ids": list(batch)}):
                out[r["id"]] = DocumentState(r["id"], r["status"], r["content_hash"], r["source"])
        return out

    def unfinished_documents(self) -> list[DocumentState]:
        return [DocumentState(r["id"], r["status"], None, r["source"])
                for r in self.read(cypher.UNFINISHED_DOCUMENTS)]

    def list_documents(self, skip: int = 0, limit: int = 100) -> list[DocumentState]:
        rows = self.read(cypher.LIST_DOCUMENTS, {"skip": skip, "limit": limit})
        return [DocumentState(r["id"], r["status"], r["content_hash"], r["source"]) for r in rows]

    def plan_removal(self, keep: Mapping[str, Collection[str]]) -> RemovalPlan:
        rows = [{"document_id": d, "keep": sorted(k)} for d, k in keep.items()]
        chunk_ids: list[str] = []
        candidates: set[str] = set()
        for batch in _batches(rows, max(1, self.cfg.batch_size // 10)):
            for r in self.read(cypher.STALE_CHUNKS, {"rows": list(batch)}):
                chunk_ids.append(r["chunk_id"])
                candidates.update(e for e in r["entity_ids"] if e is not None)
        orphans: list[str] = []
        for ebatch in _batches(sorted(candidates), self.cfg.batch_size):
            res = self.read(cypher.ORPHANED_BY, {"ids": list(ebatch), "chunk_ids": chunk_ids})
            orphans.extend(r["id"] for r in res)
        return RemovalPlan(chunk_ids=sorted(set(chunk_ids)), entity_ids=sorted(orphans))

    def remove(self, plan: RemovalPlan, document_ids: Sequence[str] = ()) -> None:
        size = self.cfg.batch_size
        chunks, ents, docs = plan.chunk_ids, plan.entity_ids, list(document_ids)
        n = max(len(chunks), len(ents), len(docs))
        for i in range(0, max(n, 1), size):
            def work(tx: neo4j.ManagedTransaction, i: int = i) -> None:
                if chunks[i : i + size]:
                    tx.run(cypher.DELETE_CHUNKS, ids=chunks[i : i + size]).consume()
                if ents[i : i + size]:
                    tx.run(cypher.DELETE_ENTITIES, ids=ents[i : i + size]).consume()
                if docs[i : i + size]:
                    tx.run(cypher.DELETE_DOCUMENTS, ids=docs[i : i + size]).consume()
                tx.run(cypher.BUMP_VERSION).consume()

            self._write(work)

    def chunks_by_ids(self, ids: Sequence[str]) -> list[ChunkRecord]:
        rows = self.read(cypher.CHUNKS_BY_IDS, {"ids": list(ids)})
        return [ChunkRecord(r["chunk_id"], r["text"], int(r["ord"]), r["document_id"], r["source"])
                for r in rows]

    def chunks_of_entities(self, ids: Sequence[str]) -> list[EntityChunk]:
        rows = self.read(cypher.CHUNKS_OF_ENTITIES, {"ids": list(ids)})
        return [
            EntityChunk(
                entity_id=r["entity_id"], name=r["name"], count=int(r["count"] or 1),
                chunk=ChunkRecord(r["chunk_id"], r["text"], int(r["ord"]), r["document_id"], r["source"]),
            )
            for r in rows
        ]
