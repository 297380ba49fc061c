"""The graph store's parts that communities need (``ingest.communities``, ``ingest.community_update``):
the graph they are computed from and the communities themselves (``CommunityStore``), and the marks of
entities whose neighbourhood changed with the edits of the communities around them
(``IncrementalCommunities``, in the Bolt adapter's ``graphdb.community_edits``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from hopgraph.core.records import Community
from hopgraph.graphdb.records import EdgeRow, RelationRef, Topology


@dataclass(frozen=True)
class ChainLink:
    """An entity's membership of one community, and where that community sits in the hierarchy."""

    entity_id: str
    community_id: str
    level: int
    parent_id: str | None
    has_children: bool


class IncrementalCommunities(Protocol):
    """Marks and community edits around what changed (a role of ``graphdb.protocols``)."""

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


class CommunityStore(Protocol):
    """The graph communities are computed from, and the stored communities (a role of
    ``graphdb.protocols``)."""

    def topology(self) -> Topology:
        """The whole entity graph, for a full clustering."""
        ...

    def counts(self) -> dict[str, int]:
        """Node counts per label and edge counts per type."""
        ...

    def snapshot_entities(self, ids: Sequence[str] | None = None) -> list[tuple[str, str, str]]:
        """(id, name, type) of every entity, or of those of ``ids`` that exist."""
        ...

    def snapshot_edges(self, entity_ids: Sequence[str] | None = None, within: bool = False) -> list[EdgeRow]:
        """Every RELATED edge, or those with an endpoint in ``entity_ids`` (both, when ``within``)."""
        ...

    def relation_descriptions(self, refs: Sequence[RelationRef]) -> dict[str, str]: ...

    def upsert_communities(self, communities: Sequence[Community]) -> None:
        """Communities with their PARENT and IN_COMMUNITY (member) edges."""
        ...

    def community_ids(self) -> dict[str, int]:
        """Every community id and its level."""
        ...

    def level0_membership(self) -> dict[str, str]:
        """Entity id -> its level-0 community id (warm start of the next clustering)."""
        ...

    def delete_communities(self, ids: Sequence[str]) -> None: ...

    def stale_summaries(self) -> set[str]:
        """Community ids whose summaries must be written again."""
        ...

    def communities_stale(self) -> bool:
        """Whether the graph changed since communities were last built."""
        ...

    def mark_communities_built(self, regrouped: Sequence[str] | None = None) -> None:
        """Commit the rebuilt communities (a change of its own) and record them as current;
        ``regrouped``: the only entities whose memberships changed (None: possibly any)."""
        ...


class CommunityGraph(CommunityStore, IncrementalCommunities, Protocol):
    """Both community roles: what the community builder (``ingest.communities``) is given."""
