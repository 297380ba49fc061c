"""The records the graph store's roles (``graphdb.protocols``) read and write: document states, removal
facts and plans, the index state's exports, provenance and the log of scheduled runs; and the k-hop
walk every implementation of the browser shares."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

#: a document whose writes are under way (or were interrupted)
PENDING = "pending"
#: a document whose graph and vector writes all landed
COMPLETE = "complete"
#: a document being deleted
DELETING = "deleting"


@dataclass(frozen=True)
class DocumentState:
    """Status of a document in the graph."""

    id: str
    status: str | None
    content_hash: str | None
    source: str | None = None
    groups: tuple[str, ...] | None = None  # its access groups, where the read that made it asked (a listing)


@dataclass(frozen=True)
class ChunkRecord:
    """A chunk with its provenance."""

    chunk_id: str
    text: str
    ord: int
    document_id: str
    source: str


@dataclass(frozen=True)
class EntityChunk:
    """A chunk reached from an entity through a MENTIONS edge."""

    entity_id: str
    name: str
    chunk: ChunkRecord
    count: int


@dataclass(frozen=True)
class RelationRef:
    """A relation by id and endpoints (relations are always reached through their endpoints)."""

    id: str
    source_id: str
    target_id: str


@dataclass
class RemovalPlan:
    """What removing chunks deletes: the chunks, the entities and relations left unsupported,
    and the communities whose membership changes."""

    chunk_ids: list[str] = field(default_factory=list)
    entity_ids: list[str] = field(default_factory=list)
    touched_entity_ids: list[str] = field(default_factory=list)
    relations: list[RelationRef] = field(default_factory=list)
    community_ids: list[str] = field(default_factory=list)

    @property
    def relation_ids(self) -> list[str]:
        return [r.id for r in self.relations]

    def __bool__(self) -> bool:
        return bool(self.chunk_ids or self.entity_ids or self.relations)


@dataclass
class RemovalFacts:
    """What the graph holds about chunks about to go (read by ``IngestWriter.removal_facts``; the plan
    is made from it by ``ingest.graph_edits.plan_removal``)."""

    chunk_ids: list[str] = field(default_factory=list)
    touched_entity_ids: list[str] = field(default_factory=list)       # entities those chunks mention
    orphaned_entity_ids: set[str] = field(default_factory=set)        # mentioned by those chunks only
    unsupported: dict[str, RelationRef] = field(default_factory=dict)  # every supporting chunk goes
    weakened: dict[str, RelationRef] = field(default_factory=dict)     # some supporting chunks go
    community_ids: set[str] = field(default_factory=set)              # communities of the orphans


@dataclass(frozen=True)
class StaleDescription:
    """An entity or relation whose description may quote removed chunks: its current description,
    the names it is about, and the texts of chunks that still support it."""

    id: str
    description: str
    names: tuple[str, ...]
    texts: list[str]
    ref: RelationRef | None = None      # relations: how to reach them
    type: str = ""
    chunk_ids: tuple[str, ...] = ()     # the ids of ``texts``, smallest first


@dataclass(frozen=True)
class Topology:
    """The entity graph for the in-memory snapshot: ids, COO edge index, types and weights."""

    version: int
    entity_ids: list[str]
    names: list[str]
    types: list[str]
    sources: list[int]
    targets: list[int]
    edge_ids: list[str]
    edge_types: list[str]
    weights: list[float]
    edge_labels: list[str] = field(default_factory=list)  # the predicates as written ("born in")

    def shown(self, k: int) -> str:
        """Edge ``k``'s predicate as people read it: its label, else its type with spaces."""
        return self.edge_labels[k] if k < len(self.edge_labels) else self.edge_types[k].replace("_", " ")


@dataclass(frozen=True)
class GraphChange:
    """One committed graph version: the documents and entities it changed, and whether it rebuilt
    the communities (the change log readers patch their index state from)."""

    version: int
    documents: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    communities: bool = False
    regrouped: tuple[str, ...] | None = None  # with communities: whose memberships changed (None: anyone's)


@dataclass(frozen=True)
class EdgeRow:
    """One RELATED edge of the index state's export."""

    source: str
    target: str
    type: str
    weight: float
    id: str
    label: str = ""  # the predicate as written ("born in"), when extraction kept it
    chunk_ids: tuple[str, ...] = ()  # the chunks that state it (its weight counts them)


@dataclass(frozen=True)
class RelationChunk:
    """A chunk that supports a relation."""

    relation_id: str
    chunk: ChunkRecord


@dataclass(frozen=True)
class ExploreResult:
    """Rows of a read-only exploration query."""

    columns: list[str]
    rows: list[list[Any]]
    truncated: bool


@dataclass(frozen=True)
class IngestRun:
    """The recorded outcome of one scheduled re-ingestion run."""

    id: str
    source: str
    status: str
    started_at: float
    finished_at: float | None = None
    duration_s: float | None = None
    report: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


@dataclass(frozen=True)
class LabelVote:
    """A labelled mention of an entity, with the entity's current type: one ballot of its type vote."""

    entity_id: str
    type: str
    label: str
    count: int


def k_hop_walk(entity_ids: Sequence[str], hops: int, limit: int,
               rings: Callable[[list[str], int], list[list[str]]]) -> list[str]:
    """Entities within ``hops`` of ``entity_ids``, nearest first, at most ``limit``: breadth-first over the
    de-duplicated frontier. ``rings(frontier, hops_left)`` returns the next one or more rings of neighbours
    (an implementation reads as many per call as it can: the Bolt adapter two per statement)."""
    if not 1 <= hops <= 5:
        raise ValueError("hops must be between 1 and 5")
    seen = set(entity_ids)
    found: list[str] = []
    frontier = list(dict.fromkeys(entity_ids))
    left = hops
    while left > 0 and frontier and len(found) < limit:
        steps = rings(frontier, left)
        for ring in steps:
            frontier = [e for e in ring if e not in seen]
            seen.update(frontier)
            found.extend(frontier)
        left -= len(steps)
    return found[:limit]


def complete_log(changes: Sequence[GraphChange], since: int, current: int) -> bool:
    """Whether ``changes`` are every version from ``since + 1`` up to at least ``current`` (not when
    the log was pruned, or the versions were bumped before the log existed)."""
    versions = [c.version for c in changes]
    return versions == list(range(since + 1, since + 1 + len(versions))) and (versions or [since])[-1] >= current
