"""The graph store's part that incremental communities need (``ingest.community_update``), in the
Bolt adapter's ``graphdb.community_edits``: the marks of entities whose neighbourhood changed, and
the reads and edits of the communities around them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from hopgraph.core.records import Community


@dataclass(frozen=True)
class ChainLink:
    """An entity's membership of one community, and where that community sits in the hierarchy."""

    entity_id: str
    community_id: str
    level: int
    parent_id: str | None
    has_children: bool


class IncrementalCommunities(Protocol):
    """Marks and community edits around what changed (``GraphStore`` includes it)."""

    def unclustered_entities(self) -> list[str]:
        """Entities whose neighbourhood changed since their communities were computed."""
        ...

    def mark_clustered(self, ids: Sequence[str] | None = None) -> None:
        """Clear the mark of these entities (None: of every entity)."""
        ...

    def mark_unclustered(self, ids: Sequence[str]) -> None:
        """Mark entities whose neighbourhood changed outside an ingest (e.g. a merge rewired it)."""
        ...

    def community_chains(self, entity_ids: Sequence[str]) -> list[ChainLink]:
        """Every community each entity belongs to, with level, parent and whether it has children."""
        ...

    def community_members(self, community_ids: Sequence[str]) -> dict[str, list[str]]:
        """Member entity ids of each community."""
        ...

    def community_texts(self, community_ids: Sequence[str]) -> list[Community]:
        """Stored communities without members: level, size, title, summary, key_ids, quoted."""
        ...

    def edit_memberships(self, add: Sequence[tuple[str, str]], remove: Sequence[tuple[str, str]]) -> None:
        """Add and remove (entity id, community id) memberships."""
        ...

    def refresh_communities(self, ids: Sequence[str]) -> None:
        """Recount sizes; delete those left empty and childless."""
        ...

    def clear_stale_summaries(self, ids: Sequence[str]) -> None: ...
