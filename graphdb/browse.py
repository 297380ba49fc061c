"""Read look-ups for browsing the graph (entities, neighbours, communities) and the log of
scheduled ingest runs: the parts of the Bolt adapter that serve the API rather than ingest/retrieval."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import neo4j

from graphdb import cypher
from graphdb.store import IngestRun


class BrowseMixin:
    """Entity, community and ingest-run look-ups; mixed into the Bolt adapter."""

    read: Callable[[str, Mapping[str, Any] | None], list[dict[str, Any]]]
    _write: Callable[[Callable[[neo4j.ManagedTransaction], Any]], Any]

    def entity(self, entity_id: str) -> dict[str, Any] | None:
        """An entity with its chunk and mention counts and its communities, or None."""
        rows = self.read(cypher.ENTITY, {"id": entity_id})
        if not rows or rows[0]["id"] is None:
            return None
        row = rows[0]
        row["mentions"] = int(row["mentions"] or 0)
        row["communities"] = sorted(c for c in row["communities"] if c)
        return row

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

    def record_ingest_run(self, run: IngestRun) -> None:
        """Create or update a run's record (not graph content: the graph version is unchanged)."""
        params = {"id": run.id, "source": run.source, "status": run.status, "started_at": run.started_at,
                  "finished_at": run.finished_at, "duration_s": run.duration_s,
                  "report_json": json.dumps(run.report), "error": run.error}
        self._write(lambda tx: tx.run(cypher.RECORD_INGEST_RUN, params).consume())

    def ingest_runs(self, source: str | None = None, limit: int = 50) -> list[IngestRun]:
        """Recorded runs, newest first."""
        rows = self.read(cypher.LIST_INGEST_RUNS, {"source": source, "limit": limit})
        return [IngestRun(id=r["id"], source=r["source"], status=r["status"], started_at=float(r["started_at"]),
                          finished_at=r["finished_at"], duration_s=r["duration_s"],
                          report=json.loads(r["report_json"] or "{}"), error=r["error"]) for r in rows]


__all__ = ["BrowseMixin", "IngestRun"]
