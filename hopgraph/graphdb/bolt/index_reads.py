"""The Bolt adapter's change log (commit markers) and the index state's exports."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import neo4j

from hopgraph.graphdb.bolt.access import Bolt, read_ids
from hopgraph.graphdb.bolt.batches import batches
from hopgraph.graphdb.bolt.cypher import index as q
from hopgraph.graphdb.bolt.cypher import statements as cypher
from hopgraph.graphdb.records import EdgeRow, GraphChange, complete_log

#: how many committed changes the log keeps; a reader further behind rebuilds from scratch
CHANGE_LOG_KEEP = 5000


def _edge(r: Mapping[str, Any]) -> EdgeRow:
    return EdgeRow(r["source"], r["target"], r["type"] or "RELATED",
                   float(r["weight"] if r["weight"] is not None else 1.0), r["id"], r.get("label") or "",
                   tuple(r.get("chunk_ids") or ()))


class IndexReadsMixin:
    """Commit markers, the change log and the exports, for ``BoltGraphStore``."""

    # -- commit markers ------------------------------------------------------------------------
    def commit(self: Bolt, documents: Sequence[str] = (), entities: Sequence[str] = (), communities: bool = False,
               statuses: Sequence[tuple[str, str, str]] = (), regrouped: Sequence[str] | None = None,
               types: Mapping[str, str] | None = None) -> int:
        rows = list({i: {"id": i, "status": s, "content_hash": h} for i, s, h in statuses}.values())
        typed = [{"id": e, "type": t} for e, t in sorted((types or {}).items())]
        params = {"documents": sorted(set(documents)), "entities": sorted(set(entities)),
                  "communities": communities, "at": time.time(),
                  "regrouped": None if regrouped is None else sorted(set(regrouped))}

        def work(tx: neo4j.ManagedTransaction) -> int:
            if rows:
                tx.run(cypher.SET_DOCUMENT_STATUS, rows=rows).consume()
            for batch in batches(typed, self.cfg.batch_size):
                tx.run(cypher.SET_ENTITY_TYPES, rows=batch).consume()
            version = int(tx.run(q.COMMIT, params).single(strict=True)["version"])
            if communities:
                tx.run(q.MARK_COMMUNITIES_BUILT).consume()
            if version % 100 == 0:
                tx.run(q.PRUNE_CHANGES, below=version - CHANGE_LOG_KEEP).consume()
            return version

        return self._write(work)

    def mark_communities_built(self: Bolt, regrouped: Sequence[str] | None = None) -> None:
        self.commit(communities=True, regrouped=regrouped)

    def changes_since(self: Bolt, version: int) -> list[GraphChange] | None:
        current = self.version()  # first: changes committed meanwhile come as extra rows
        rows = self.read(q.CHANGES_SINCE, {"version": version})
        changes = [GraphChange(int(r["version"]), tuple(r["documents"] or ()), tuple(r["entities"] or ()),
                               bool(r["communities"]), None if r["regrouped"] is None else tuple(r["regrouped"]))
                   for r in rows]
        return changes if complete_log(changes, version, current) else None

    # -- exports -------------------------------------------------------------------------------
    def snapshot_chunks(self: Bolt, document_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        if document_ids is None:
            return self.read(q.CHUNKS)
        return read_ids(self, q.CHUNKS_OF_DOCUMENTS, document_ids)

    def snapshot_mentions(self: Bolt, chunk_ids: Sequence[str] | None = None,
                          entity_ids: Sequence[str] | None = None) -> list[tuple[str, str, int, str]]:
        if chunk_ids is None and entity_ids is None:
            rows = self.read(q.MENTIONS)
        else:
            rows = read_ids(self, q.MENTIONS_OF_CHUNKS, chunk_ids or []) + read_ids(self, q.MENTIONS_OF_ENTITIES,
                                                                                  entity_ids or [])
        found = {(r["chunk_id"], r["entity_id"]): (int(r["count"] or 1), r.get("label") or "") for r in rows}
        return [(c, e, n, label) for (c, e), (n, label) in found.items()]

    def snapshot_entities(self: Bolt, ids: Sequence[str] | None = None) -> list[tuple[str, str, str]]:
        rows = self.read(q.ENTITIES) if ids is None else read_ids(self, q.ENTITIES_OF, ids)
        return [(r["id"], r["name"] or "", r["type"] or "") for r in rows]

    def snapshot_edges(self: Bolt, entity_ids: Sequence[str] | None = None, within: bool = False) -> list[EdgeRow]:
        if entity_ids is None:
            return [_edge(r) for r in self.read(q.EDGES)]
        if within:  # filtered here: ``WHERE b.id IN $all`` on the server is 5x slower (ArcadeDB 26.10)
            everyone = set(entity_ids)
            rows = [r for r in read_ids(self, q.EDGES_FROM, sorted(everyone)) if r["target"] in everyone]
        else:
            rows = read_ids(self, q.EDGES_FROM, entity_ids) + read_ids(self, q.EDGES_TO, entity_ids)
        return list({r["id"]: _edge(r) for r in rows}.values())

    def snapshot_memberships(self: Bolt, entity_ids: Sequence[str] | None = None) -> list[tuple[str, str]]:
        rows = self.read(q.MEMBERSHIPS) if entity_ids is None else read_ids(self, q.MEMBERSHIPS_OF, entity_ids)
        return [(r["entity_id"], r["community_id"]) for r in rows]
