"""The Bolt adapter's part of entity types: the marks of entities whose mentions changed, and the
labelled mentions their type is voted from (the vote itself is ``ingest.entity_types``)."""

from __future__ import annotations

from collections.abc import Sequence

from hopgraph.graphdb.bolt.access import Bolt, read_ids
from hopgraph.graphdb.bolt.cypher import statements as cypher
from hopgraph.graphdb.records import LabelVote


class EntityTypesMixin:
    """Entity retyping, for ``BoltGraphStore``."""

    def untyped_entities(self: Bolt) -> list[str]:
        """The entities whose mentions changed since their type was last voted."""
        return sorted(r["id"] for r in self.read(cypher.UNTYPED))

    def mark_typed(self: Bolt, ids: Sequence[str]) -> None:
        """Record that ``ids`` were voted (after their new types are committed)."""
        self._write_ids(cypher.MARK_TYPED, ids)

    def label_votes(self: Bolt, ids: Sequence[str]) -> list[LabelVote]:
        """Every labelled mention of these entities with the entity's type (reads only: ``commit(types=)``
        writes the voted types with the change-log entry that makes them visible)."""
        return [LabelVote(r["id"], r["type"] or "", r["label"], int(r["count"] or 1))
                for r in read_ids(self, cypher.TYPE_VOTES, sorted(set(ids)))]
