"""The Bolt adapter's part of incremental community maintenance: marks of entities whose
neighbourhood changed, community chains and members, and membership edits."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from hopgraph.core.records import Community
from hopgraph.graphdb.bolt.access import Bolt, read_ids
from hopgraph.graphdb.bolt.cypher import communities as q
from hopgraph.graphdb.bolt.cypher import statements as cypher
from hopgraph.graphdb.community_protocol import ChainLink


class CommunityEditsMixin:
    """Incremental community reads and writes, for ``BoltGraphStore``."""

    def unclustered_entities(self: Bolt) -> list[str]:
        return sorted(r["id"] for r in self.read(q.UNCLUSTERED))

    def mark_clustered(self: Bolt, ids: Sequence[str] | None = None) -> None:
        if ids is None:
            self._write(lambda tx: tx.run(q.MARK_ALL_CLUSTERED).consume())
        else:
            self._write_ids(q.MARK_CLUSTERED, ids)

    def mark_unclustered(self: Bolt, ids: Sequence[str]) -> None:
        self._write_ids(q.MARK_UNCLUSTERED, ids)

    def community_chains(self: Bolt, entity_ids: Sequence[str]) -> list[ChainLink]:
        return [ChainLink(r["entity_id"], r["community_id"], int(r["level"] or 0), r["parent_id"],
                          int(r["children"] or 0) > 0) for r in read_ids(self, q.CHAINS, entity_ids)]

    def community_members(self: Bolt, community_ids: Sequence[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = defaultdict(list)
        for r in read_ids(self, q.MEMBERS, community_ids):
            out[r["community_id"]].append(r["entity_id"])
        return {c: sorted(m) for c, m in out.items()}

    def community_texts(self: Bolt, community_ids: Sequence[str]) -> list[Community]:
        return [Community(id=r["id"], level=int(r["level"] or 0), size=int(r["size"] or 0),
                          title=r["title"] or "", summary=r["summary"] or "", key_ids=list(r["key_ids"] or []),
                          quoted=list(r["quoted"] or []), parent_id=r["parent_id"])
                for r in read_ids(self, q.DESCRIPTIONS, community_ids)]

    def edit_memberships(self: Bolt, add: Sequence[tuple[str, str]], remove: Sequence[tuple[str, str]]) -> None:
        def rows(pairs: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
            return [{"entity_id": e, "community_id": c} for e, c in sorted(set(pairs))]

        self._write_rows(q.REMOVE_MEMBERS, rows(remove))
        self._write_rows(cypher.LINK_COMMUNITY_MEMBERS, rows(add))

    def refresh_communities(self: Bolt, ids: Sequence[str]) -> None:
        self._write_ids(cypher.REFRESH_COMMUNITIES, sorted(set(ids)))

    def clear_stale_summaries(self: Bolt, ids: Sequence[str]) -> None:
        self._write_ids(q.CLEAR_STALE_SUMMARIES, ids)
