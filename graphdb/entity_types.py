"""The Bolt adapter's part of entity types: an entity's type is the majority label of its mentions
(``hopgraph.core.records.majority_label``), so it never depends on which mention was read first."""

from __future__ import annotations

from collections.abc import Sequence

from graphdb import cypher
from graphdb.batches import batches
from graphdb.bolt_access import BoltAccess
from hopgraph.core.records import majority_label


class EntityTypesMixin(BoltAccess):
    """Entity retyping, for ``BoltGraphStore``."""

    def untyped_entities(self) -> list[str]:
        """The entities whose mentions changed since their type was last voted."""
        return sorted(r["id"] for r in self.read(cypher.UNTYPED))

    def mark_typed(self, ids: Sequence[str]) -> None:
        """Record that ``ids`` were voted (after their new types are committed)."""
        self._write_ids(cypher.MARK_TYPED, ids)

    def vote_types(self, ids: Sequence[str]) -> dict[str, str]:
        """The majority label of each entity's mentions (``majority_label``) where it differs from the
        entity's type (one without labelled mentions keeps its type). Reads only: ``commit(types=)``
        writes them with the change-log entry that makes them visible."""
        votes: dict[str, dict[str, int]] = {}
        types: dict[str, str] = {}
        for b in batches(sorted(set(ids)), self.cfg.batch_size):
            for r in self.read(cypher.TYPE_VOTES, {"ids": list(b)}):
                v = votes.setdefault(r["id"], {})
                v[r["label"]] = v.get(r["label"], 0) + int(r["count"] or 1)
                types[r["id"]] = r["type"] or ""
        return {e: t for e, v in sorted(votes.items()) if (t := majority_label(v)) and t != types[e]}
