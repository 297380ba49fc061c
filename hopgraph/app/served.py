"""Look-ups in the served index state, returned as plain records: entities by name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, NamedTuple

if TYPE_CHECKING:
    from hopgraph.retrieval.index.state import IndexState

#: how a name is matched: as written, normalized (case, articles, possessives, punctuation), or a normalized prefix
NameMatch = Literal["exact", "normalized", "prefix"]


class EntityHit(NamedTuple):
    """An entity of the served index state and how many chunks mention it."""

    id: str
    name: str
    type: str
    chunks: int


def find_entities(state: IndexState, name: str, match: NameMatch = "normalized", limit: int = 20) -> list[EntityHit]:
    """Entities of ``state`` named ``name``, most mentioned first (``retrieval.parts.entity_lookup``)."""
    from hopgraph.retrieval.parts.entity_lookup import find_entities as lookup

    snap = state.snapshot
    return [EntityHit(snap.entity_ids[e], snap.entity_names[e], snap.entity_types[e], int(snap.entity_df[e]))
            for e in lookup(state, name, match, limit)]
