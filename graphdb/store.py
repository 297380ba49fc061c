"""The GraphStore protocol: everything ingest and retrieval need from the graph database."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from graphdb.community_protocol import IncrementalCommunities
from graphdb.section_protocol import SectionStore
from graphdb.tree_protocol import SummaryTree
from hopgraph.core.records import Chunk, Community, Document, Entity, Mention, Relation

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
    """What the graph holds about chunks about to go (read by ``GraphStore.removal_facts``; the plan
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


class GraphStore(IncrementalCommunities, SummaryTree, SectionStore, Protocol):
    """What ingest and retrieval need from the graph database. Implementations only run statements:
    the domain decisions (removal plans, entity merges) are made in ``ingest.graph_edits``."""

    def close(self) -> None: ...

    def migrate(self) -> list[str]:
        """Apply pending migrations; return the names applied."""
        ...

    def version(self) -> int:
        """The committed graph version: bumped once by each ``commit`` (a batch of documents marked
        complete, a deletion, entity merges, rebuilt communities), not by the writes before it."""
        ...

    def commit(self, documents: Sequence[str] = (), entities: Sequence[str] = (), communities: bool = False,
               statuses: Sequence[tuple[str, str, str]] = (), regrouped: Sequence[str] | None = None,
               types: Mapping[str, str] | None = None) -> int:
        """In one transaction: set the (id, status, hash) ``statuses`` and the entity ``types``, bump
        the version and record what changed in the change log (old entries are pruned); return the
        new version."""
        ...

    def changes_since(self, version: int) -> list[GraphChange] | None:
        """The committed changes after ``version``, oldest first; None when the log no longer reaches
        back that far (the reader must rebuild from scratch)."""
        ...

    def counts(self) -> dict[str, int]:
        """Node counts per label and edge counts per type."""
        ...

    # -- documents ---------------------------------------------------------------------------------
    def upsert_documents(self, docs: Sequence[Document], status: str) -> None: ...

    def set_document_status(self, rows: Sequence[tuple[str, str, str]]) -> None:
        """Set (document id, status, content hash) for each row."""
        ...

    def document_states(self, ids: Sequence[str]) -> dict[str, DocumentState]: ...

    def unfinished_documents(self) -> list[DocumentState]: ...

    def documents_under(self, prefix: str) -> list[DocumentState]:
        """Documents whose source starts with ``prefix`` (a file, a directory, a JSONL file's records)."""
        ...

    # -- content -----------------------------------------------------------------------------------
    def upsert_chunks(self, chunks: Sequence[Chunk]) -> None: ...

    def upsert_entities(self, entities: Sequence[Entity]) -> None: ...

    def upsert_mentions(self, mentions: Sequence[Mention]) -> None:
        """Set mention counts (one row per chunk and entity; duplicates add up)."""
        ...

    def add_mentions(self, mentions: Sequence[Mention]) -> None:
        """Add to existing mention counts."""
        ...

    def upsert_relations(self, relations: Sequence[Relation]) -> None: ...

    def removal_facts(self, keep: Mapping[str, Collection[str]]) -> RemovalFacts:
        """What removing the chunks of each document id not in its keep-set would touch."""
        ...

    def remove(self, plan: RemovalPlan, document_ids: Sequence[str] = ()) -> None:
        """Delete the planned chunks and entities (and documents) in one transaction per batch; mark
        the surviving touched entities, their weakened relations and their communities stale."""
        ...

    def stale_descriptions(self) -> tuple[list[StaleDescription], list[StaleDescription]]:
        """Entities and relations marked stale by ``remove``, with their remaining support's texts."""
        ...

    def set_descriptions(self, entities: Mapping[str, str], relations: Mapping[RelationRef, str]) -> None:
        """Write refreshed descriptions and clear the stale marks."""
        ...

    def stale_summaries(self) -> set[str]:
        """Community ids whose summaries must be written again."""
        ...

    # -- entity resolution -------------------------------------------------------------------------
    def unresolved_entities(self) -> list[Entity]:
        """Entities written since the last entity resolution."""
        ...

    def mark_resolved(self, ids: Sequence[str]) -> None: ...

    def aliases(self) -> dict[str, str]:
        """Surface-form entity id -> canonical entity id, for every recorded merge."""
        ...

    def mentions_of_entities(self, ids: Sequence[str]) -> list[Mention]: ...

    def untyped_entities(self) -> list[str]:
        """Entities whose mentions changed since their type was last voted (``typed = false``)."""
        ...

    def mark_typed(self, ids: Sequence[str]) -> None: ...

    def vote_types(self, ids: Sequence[str]) -> dict[str, str]:
        """The majority label of each entity's mentions where it differs from its type (read only)."""
        ...

    def relations_of_entities(self, ids: Sequence[str]) -> list[Relation]: ...

    def delete_entities(self, ids: Sequence[str]) -> None: ...

    def record_aliases(self, aliases: Sequence[tuple[str, str, str]]) -> None:
        """Record (alias id, alias name, canonical id) merges."""
        ...

    # -- communities -------------------------------------------------------------------------------
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

    def relation_descriptions(self, refs: Sequence[RelationRef]) -> dict[str, str]: ...

    def communities_stale(self) -> bool:
        """Whether the graph changed since communities were last built."""
        ...

    def mark_communities_built(self, regrouped: Sequence[str] | None = None) -> None:
        """Commit the rebuilt communities (a change of its own) and record them as current;
        ``regrouped``: the only entities whose memberships changed (None: possibly any)."""
        ...

    # -- exports for the query-time snapshot -------------------------------------------------------
    def topology(self) -> Topology: ...

    def snapshot_chunks(self, document_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The chunks of complete documents (of ``document_ids`` only, when given): id, text,
        document_id, source, title, metadata (JSON), kind, uri."""
        ...

    def snapshot_mentions(self, chunk_ids: Sequence[str] | None = None,
                          entity_ids: Sequence[str] | None = None) -> list[tuple[str, str, int]]:
        """(chunk id, entity id, count) mentions: all, or those of the given chunks or entities."""
        ...

    def snapshot_entities(self, ids: Sequence[str] | None = None) -> list[tuple[str, str, str]]:
        """(id, name, type) of every entity, or of those of ``ids`` that exist."""
        ...

    def snapshot_edges(self, entity_ids: Sequence[str] | None = None, within: bool = False) -> list[EdgeRow]:
        """Every RELATED edge, or those with an endpoint in ``entity_ids`` (both, when ``within``)."""
        ...

    def snapshot_memberships(self, entity_ids: Sequence[str] | None = None) -> list[tuple[str, str]]:
        """Every (entity id, community id) membership, or those of ``entity_ids``."""
        ...

    # -- the log of scheduled runs -----------------------------------------------------------------
    def record_ingest_run(self, run: IngestRun) -> None: ...

    def delete_ingest_run(self, run_id: str) -> None: ...

    def prune_ingest_runs(self, source: str, keep: int) -> None:
        """Keep the ``keep`` newest runs of ``source``."""
        ...


class GraphBrowser(Protocol):
    """Read look-ups for people exploring the graph (the API's routes, the CLI's ``cypher``)."""

    def list_documents(self, skip: int = 0, limit: int = 100) -> list[DocumentState]: ...

    def document_states(self, ids: Sequence[str]) -> dict[str, DocumentState]: ...

    def entity(self, entity_id: str) -> dict[str, Any] | None: ...

    def entity_neighbours(self, entity_id: str, skip: int = 0, limit: int = 50) -> list[dict[str, Any]]: ...

    def document_graph(self, document_id: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]: ...

    def communities(self, level: int | None = None, skip: int = 0, limit: int = 50) -> list[dict[str, Any]]: ...

    def community(self, community_id: str, member_limit: int = 200) -> dict[str, Any] | None: ...

    def chunks_of_entities(self, ids: Sequence[str]) -> list[EntityChunk]:
        """Provenance: the chunks mentioning each entity."""
        ...

    def chunks_of_relations(self, refs: Sequence[RelationRef]) -> list[RelationChunk]:
        """Provenance: the chunks stating each relation."""
        ...

    def k_hop(self, entity_ids: Sequence[str], hops: int = 2, limit: int = 10000) -> list[str]:
        """Entity ids (not the seeds) within ``hops`` RELATED edges of the seeds."""
        ...

    def ingest_runs(self, source: str | None = None, limit: int = 50) -> list[IngestRun]: ...

    def export_nodes(self, label: str) -> list[dict[str, Any]]: ...

    def export_edges(self, edge_type: str) -> list[dict[str, Any]]: ...

    def explore(self, cypher: str, params: Mapping[str, Any] | None = None, row_limit: int = 1000,
                timeout_s: float = 30.0) -> ExploreResult:
        """Run a statement that must be read-only (checked before it runs)."""
        ...
