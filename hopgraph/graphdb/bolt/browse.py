"""Read look-ups for browsing the graph (entities, neighbours, communities) and the log of
scheduled ingest runs: the parts of the Bolt adapter that serve the API rather than ingest/retrieval."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import neo4j

from hopgraph.core.access import groups_of
from hopgraph.core.times import iso_time
from hopgraph.graphdb import cypher_export
from hopgraph.graphdb.bolt import arcadedb_http
from hopgraph.graphdb.bolt.cypher import browse as cypher
from hopgraph.graphdb.bolt.dialect import Dialect
from hopgraph.graphdb.readonly import check_read_only
from hopgraph.graphdb.records import (
    ChunkRecord,
    DocumentState,
    EntityChunk,
    ExploreResult,
    IngestRun,
    RelationChunk,
    RelationRef,
    k_hop_walk,
)


class BrowseMixin:
    """Document, entity, community, provenance and ingest-run look-ups and read-only Cypher; mixed
    into the Bolt adapter, whose ``read``, ``_write`` and ``_session`` they use."""

    read: Callable[[str, Mapping[str, Any] | None], list[dict[str, Any]]]
    _write: Callable[[Callable[[neo4j.ManagedTransaction], Any]], Any]
    _session: Callable[..., neo4j.Session]
    _http: tuple[str, tuple[str, str]] | None   # ArcadeDB's HTTP API (base URL, auth), None on Neo4j
    database: str
    dialect: Dialect

    def list_documents(self, skip: int = 0, limit: int = 100) -> list[DocumentState]:
        rows = self.read(cypher.LIST_DOCUMENTS, {"skip": skip, "limit": limit})
        return [DocumentState(r["id"], r["status"], r["content_hash"], r["source"],
                              tuple(groups_of(json.loads(r["metadata_json"] or "{}")))) for r in rows]

    def document_groups(self, ids: Sequence[str]) -> dict[str, list[str]]:
        rows = self.read(cypher.DOCUMENT_METADATA, {"ids": list(dict.fromkeys(ids))})
        return {r["id"]: groups_of(json.loads(r["metadata_json"] or "{}")) for r in rows}

    def chunks_of_entities(self, ids: Sequence[str]) -> list[EntityChunk]:
        rows = self.read(cypher.CHUNKS_OF_ENTITIES, {"ids": list(ids)})
        return [
            EntityChunk(
                entity_id=r["entity_id"], name=r["name"], count=int(r["count"] or 1),
                chunk=ChunkRecord(r["chunk_id"], r["text"], int(r["ord"]), r["document_id"], r["source"]),
            )
            for r in rows
        ]

    def chunks_of_relations(self, refs: Sequence[RelationRef]) -> list[RelationChunk]:
        refs_rows = [{"id": r.id, "source_id": r.source_id, "target_id": r.target_id} for r in refs]
        rows = self.read(cypher.PROVENANCE_OF_RELATIONS, {"rows": refs_rows})
        return [RelationChunk(r["relation_id"], ChunkRecord(r["chunk_id"], r["text"], int(r["ord"]),
                                                            r["document_id"], r["source"])) for r in rows]

    def k_hop(self, entity_ids: Sequence[str], hops: int = 2, limit: int = 10000) -> list[str]:
        """Breadth-first, two hops per statement over the de-duplicated frontier (a variable-length
        pattern ``-[*1..k]-`` enumerates every path and is far slower around hubs)."""
        def rings(frontier: list[str], left: int) -> list[list[str]]:
            if left >= 2:
                row = self.read(cypher.TWO_HOP_IDS, {"ids": frontier})[0]
                return [row["first"], row["second"]]
            return [[r["id"] for r in self.read(cypher.NEIGHBOUR_IDS, {"ids": frontier})]]

        return k_hop_walk(entity_ids, hops, limit, rings)

    def explore(self, query: str, params: Mapping[str, Any] | None = None, row_limit: int = 1000,
                timeout_s: float = 30.0) -> ExploreResult:
        """A statement checked against this backend's read-only allow-list (``readonly``), stopped on the
        server past ``timeout_s`` (Neo4j enforces the transaction timeout; ArcadeDB does not, so there it
        runs over HTTP: see ``arcadedb_http``)."""
        check_read_only(query, self.dialect.name)
        if self._http is not None:
            url, auth = self._http
            return arcadedb_http.explore(url, auth, self.database, query, params, row_limit, timeout_s)

        @neo4j.unit_of_work(timeout=timeout_s)
        def work(tx: neo4j.ManagedTransaction) -> ExploreResult:
            result = tx.run(query, dict(params or {}))
            columns = list(result.keys())
            rows: list[list[Any]] = []
            for record in result:
                if len(rows) >= row_limit:
                    return ExploreResult(columns, rows, truncated=True)
                rows.append([_plain(v) for v in record.values()])
            return ExploreResult(columns, rows, truncated=False)

        with self._session(read=True) as s:
            return s.execute_read(work)

    def health_counts(self) -> dict[str, int]:
        """The counts ``hopgraph doctor`` compares: chunks, relations, image documents and orphans."""
        return {name: int(self.read(q, None)[0]["n"]) for name, q in cypher.HEALTH_COUNTS.items()}

    def entity(self, entity_id: str) -> dict[str, Any] | None:
        """An entity with its chunk and mention counts and its communities, or None."""
        rows = self.read(cypher.ENTITY, {"id": entity_id})
        if not rows or rows[0]["id"] is None:
            return None
        row = rows[0]
        row["mentions"] = int(row["mentions"] or 0)
        row["communities"] = sorted(c for c in row["communities"] if c)
        return row

    def document_graph(self, document_id: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """A document's own graph: the entities its chunks mention (id, name, type, description) and
        the relations among them (source, target, type, description, id), both in id order."""
        nodes = self.read(cypher.DOCUMENT_NODES, {"id": document_id})
        edges = self.read(cypher.RELATIONS_AMONG, {"ids": [n["id"] for n in nodes]}) if nodes else []
        return nodes, edges

    def entity_neighbours(self, entity_id: str, skip: int = 0, limit: int = 50) -> list[dict[str, Any]]:
        """Related entities, strongest relation first, with the relation's type and direction."""
        return self.read(cypher.ENTITY_NEIGHBOURS, {"id": entity_id, "skip": skip, "limit": limit})

    def communities(self, level: int | None = None, skip: int = 0, limit: int = 50) -> list[dict[str, Any]]:
        """Communities (optionally of one level), largest first."""
        return self.read(cypher.LIST_COMMUNITIES, {"level": level, "skip": skip, "limit": limit})

    def community(self, community_id: str, member_limit: int = 200) -> dict[str, Any] | None:
        """A community with its parent, children and member entities, or None."""
        rows = self.read(cypher.COMMUNITY, {"id": community_id})
        if not rows or rows[0]["id"] is None:
            return None
        row = rows[0]
        row["children"] = sorted(c for c in row["children"] if c)
        row["members"] = self.read(cypher.COMMUNITY_MEMBER_ENTITIES, {"id": community_id, "limit": member_limit})
        return row

    def export_nodes(self, label: str) -> list[dict[str, Any]]:
        """Every node of ``label`` (Document, Chunk, Entity, Community) with its exported properties."""
        return self.read(cypher_export.NODES[label], None)

    def export_edges(self, edge_type: str) -> list[dict[str, Any]]:
        """Every edge of ``edge_type`` as source id, target id and its exported properties."""
        return self.read(cypher_export.EDGES[edge_type], None)

    def record_ingest_run(self, run: IngestRun) -> None:
        """Create or update a run's record (not graph content: the graph version is unchanged)."""
        params = {"id": run.id, "source": run.source, "status": run.status, "started_at": run.started_at,
                  "finished_at": run.finished_at, "started": iso_time(run.started_at),
                  "finished": iso_time(run.finished_at), "duration_s": run.duration_s,
                  "report_json": json.dumps(run.report), "error": run.error}
        self._write(lambda tx: tx.run(cypher.RECORD_INGEST_RUN, params).consume())

    def delete_ingest_run(self, run_id: str) -> None:
        self._write(lambda tx: tx.run(cypher.DELETE_INGEST_RUN, id=run_id).consume())

    def prune_ingest_runs(self, source: str, keep: int) -> None:
        self._write(lambda tx: tx.run(cypher.PRUNE_INGEST_RUNS, source=source, keep=keep).consume())

    def ingest_runs(self, source: str | None = None, limit: int = 50) -> list[IngestRun]:
        """Recorded runs, newest first."""
        rows = self.read(cypher.LIST_INGEST_RUNS, {"source": source, "limit": limit})
        return [IngestRun(id=r["id"], source=r["source"], status=r["status"], started_at=float(r["started_at"]),
                          finished_at=r["finished_at"], duration_s=r["duration_s"],
                          report=json.loads(r["report_json"] or "{}"), error=r["error"]) for r in rows]


def _plain(value: Any) -> Any:
    """Graph values as JSON-friendly data."""
    from neo4j.graph import Node, Path, Relationship

    if isinstance(value, Node):
        return {"labels": sorted(value.labels), **dict(value.items())}
    if isinstance(value, Relationship):
        return {"type": value.type, **dict(value.items())}
    if isinstance(value, Path):
        return [_plain(n) for n in value.nodes]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
