"""The graph store's roles: one small protocol per kind of caller, so each caller names only what it
uses and a second backend (or the in-memory store of ``hopgraph.testing``) can be read role by role.

    IngestWriter        ingest.pipeline: documents, chunks, entities, mentions, relations, removals
    DocumentReader      ingest.selectors, ingest.sources: document states and sources
    EntityEditor        ingest.resolution, ingest.post_steps, ingest.forgetting: merges, types, descriptions
    IndexSource         retrieval.index: the version, the change log and the snapshot's reads
    CommunityStore      ingest.communities (with ``IncrementalCommunities``, ``graphdb.community_protocol``)
    TreeStore           ingest.raptor (``graphdb.tree_protocol``)
    SectionStore        ingest.pipeline, ingest.embedding (``graphdb.section_protocol``)
    ChatDateStore       ingest.conversations: re-dating stored conversations (``graphdb.chat_protocol``)
    VectorGroupStore    ingest.access_tags: access groups into stored vectors (``graphdb.access_protocol``)
    RunLog              ingest.scheduler: the log of scheduled runs
    GraphAdmin          hopgraph.app, api, cli: migrations, counts, health, close
    GraphBrowser        api routes, hopgraph export: look-ups for people exploring the graph
    CypherConsole       the CLI's ``cypher``, the API's /cypher: read-only Cypher

Implementations only run statements: domain decisions (removal plans, entity merges, type votes) are
made in ``ingest``. A role may repeat a method of another (``commit``, ``snapshot_entities``) when its
caller needs it: a protocol is what one caller needs, and the same method satisfies both.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Protocol

from hopgraph.core.records import Chunk, Document, Entity, Mention, Relation
from hopgraph.graphdb.access_protocol import VectorGroupStore
from hopgraph.graphdb.chat_protocol import ChatDateStore
from hopgraph.graphdb.community_protocol import CommunityGraph, CommunityStore, IncrementalCommunities
from hopgraph.graphdb.records import (
    DocumentState,
    EdgeRow,
    EntityChunk,
    ExploreResult,
    GraphChange,
    IngestRun,
    LabelVote,
    RelationChunk,
    RelationRef,
    RemovalFacts,
    RemovalPlan,
    StaleDescription,
)
from hopgraph.graphdb.section_protocol import SectionStore
from hopgraph.graphdb.tree_protocol import TreeStore

__all__ = ["ChatDateStore", "CommunityGraph", "CommunityStore", "CypherConsole", "DocumentReader", "EntityEditor",
           "GraphAdmin", "GraphBackend", "GraphBrowser", "GraphStore", "IncrementalCommunities", "IndexSource",
           "IngestWriter", "RunLog", "SectionStore", "TreeStore", "VectorGroupStore"]


class DocumentReader(Protocol):
    """Document states: what selectors and source scans read."""

    def document_states(self, ids: Sequence[str]) -> dict[str, DocumentState]: ...

    def unfinished_documents(self) -> list[DocumentState]: ...

    def documents_under(self, prefix: str) -> list[DocumentState]:
        """Documents whose source starts with ``prefix`` (a file, a directory, a JSONL file's records)."""
        ...

    def document_groups(self, ids: Sequence[str]) -> dict[str, list[str]]:
        """The stored access groups of each of ``ids`` that exists ([]: public)."""
        ...


class IngestWriter(DocumentReader, Protocol):
    """The ingest pipeline's writes: documents, chunks, entities, mentions, relations, removals, and
    the commit that makes a batch visible."""

    def commit(self, documents: Sequence[str] = (), entities: Sequence[str] = (), communities: bool = False,
               statuses: Sequence[tuple[str, str, str]] = (), regrouped: Sequence[str] | None = None,
               types: Mapping[str, str] | None = None) -> int:
        """In one transaction: set the (id, status, hash) ``statuses`` and the entity ``types``, bump
        the version and record what changed in the change log (old entries are pruned); return the
        new version."""
        ...

    def upsert_documents(self, docs: Sequence[Document], status: str) -> None: ...

    def set_document_status(self, rows: Sequence[tuple[str, str, str]]) -> None:
        """Set (document id, status, content hash) for each row."""
        ...

    def upsert_chunks(self, chunks: Sequence[Chunk]) -> None: ...

    def upsert_entities(self, entities: Sequence[Entity]) -> None: ...

    def upsert_mentions(self, mentions: Sequence[Mention]) -> None:
        """Set mention counts (one row per chunk and entity; duplicates add up)."""
        ...

    def upsert_relations(self, relations: Sequence[Relation]) -> None: ...

    def removal_facts(self, keep: Mapping[str, Collection[str]]) -> RemovalFacts:
        """What removing the chunks of each document id not in its keep-set would touch."""
        ...

    def remove(self, plan: RemovalPlan, document_ids: Sequence[str] = ()) -> None:
        """Delete the planned chunks and entities (and documents) in one transaction per batch; mark
        the surviving touched entities, their weakened relations and their communities stale."""
        ...

    def aliases(self) -> dict[str, str]:
        """Surface-form entity id -> canonical entity id, for the recorded merges of public documents
        (those a later ingest may apply to any document; ``EntityEditor.record_aliases``)."""
        ...


class EntityEditor(Protocol):
    """Entity resolution (merges), entity types (votes of mention labels) and the descriptions that
    may quote removed text: the post-ingest steps' reads and writes."""

    def commit(self, documents: Sequence[str] = (), entities: Sequence[str] = (), communities: bool = False,
               statuses: Sequence[tuple[str, str, str]] = (), regrouped: Sequence[str] | None = None,
               types: Mapping[str, str] | None = None) -> int: ...

    def unresolved_entities(self) -> list[Entity]:
        """Entities written since the last entity resolution."""
        ...

    def mark_resolved(self, ids: Sequence[str]) -> None: ...

    def snapshot_entities(self, ids: Sequence[str] | None = None) -> list[tuple[str, str, str]]: ...

    def mentions_of_entities(self, ids: Sequence[str]) -> list[Mention]: ...

    def mention_groups(self, ids: Sequence[str]) -> dict[str, set[str]]:
        """Entity id -> the distinct access groups of the documents that mention it, each list joined by
        ``core.access.SEP`` ("": public); an entity without mentions is left out."""
        ...

    def relations_of_entities(self, ids: Sequence[str]) -> list[Relation]: ...

    def add_mentions(self, mentions: Sequence[Mention]) -> None:
        """Add to existing mention counts."""
        ...

    def upsert_relations(self, relations: Sequence[Relation]) -> None: ...

    def delete_entities(self, ids: Sequence[str]) -> None: ...

    def record_aliases(self, aliases: Sequence[tuple[str, str, str]], groups: Mapping[str, str] | None = None
                       ) -> None:
        """Record (alias id, alias name, canonical id) merges, each with the access groups of its documents
        (``groups``: alias id -> groups joined by ``core.access.SEP``; "" or absent: public). Earlier
        aliases of a merged-away id follow it and take the groups of its merge."""
        ...

    def mark_unclustered(self, ids: Sequence[str]) -> None: ...

    def untyped_entities(self) -> list[str]:
        """Entities whose mentions changed since their type was last voted (``typed = false``)."""
        ...

    def mark_typed(self, ids: Sequence[str]) -> None: ...

    def label_votes(self, ids: Sequence[str]) -> list[LabelVote]:
        """The labelled mentions of these entities, with each entity's current type (read only; the
        vote is ``ingest.entity_types.voted_types``)."""
        ...

    def stale_descriptions(self) -> tuple[list[StaleDescription], list[StaleDescription]]:
        """Entities and relations marked stale by ``remove``, with their remaining support's texts."""
        ...

    def set_descriptions(self, entities: Mapping[str, str], relations: Mapping[RelationRef, str]) -> None:
        """Write refreshed descriptions and clear the stale marks."""
        ...


class IndexSource(Protocol):
    """What the query-time index state reads: the committed version, the change log, and the exports
    (whole, or sliced to what changed)."""

    def version(self) -> int:
        """The committed graph version: bumped once by each ``commit`` (a batch of documents marked
        complete, a deletion, entity merges, rebuilt communities), not by the writes before it."""
        ...

    def changes_since(self, version: int) -> list[GraphChange] | None:
        """The committed changes after ``version``, oldest first; None when the log no longer reaches
        back that far (the reader must rebuild from scratch)."""
        ...

    def snapshot_chunks(self, document_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The chunks of complete documents (of ``document_ids`` only, when given): id, text,
        document_id, source, title, metadata (JSON), kind, uri."""
        ...

    def snapshot_mentions(self, chunk_ids: Sequence[str] | None = None,
                          entity_ids: Sequence[str] | None = None) -> list[tuple[str, str, int, str]]:
        """(chunk id, entity id, count, label) mentions: all, or those of the given chunks or entities
        (label: the type voted over the mention's occurrences, "" when none)."""
        ...

    def snapshot_entities(self, ids: Sequence[str] | None = None) -> list[tuple[str, str, str]]:
        """(id, name, type) of every entity, or of those of ``ids`` that exist."""
        ...

    def snapshot_edges(self, entity_ids: Sequence[str] | None = None, within: bool = False) -> list[EdgeRow]:
        """Every RELATED edge, or those with an endpoint in ``entity_ids`` (both, when ``within``), with
        the chunks supporting it."""
        ...

    def snapshot_memberships(self, entity_ids: Sequence[str] | None = None) -> list[tuple[str, str]]:
        """Every (entity id, community id) membership, or those of ``entity_ids``."""
        ...


class RunLog(Protocol):
    """The log of scheduled re-ingestion runs (not graph content: the version does not move)."""

    def record_ingest_run(self, run: IngestRun) -> None: ...

    def delete_ingest_run(self, run_id: str) -> None: ...

    def prune_ingest_runs(self, source: str, keep: int) -> None:
        """Keep the ``keep`` newest runs of ``source``."""
        ...

    def ingest_runs(self, source: str | None = None, limit: int = 50) -> list[IngestRun]:
        """Recorded runs, newest first."""
        ...

    def documents_under(self, prefix: str) -> list[DocumentState]: ...


class GraphAdmin(Protocol):
    """Lifecycle and health: migrations, counts, the version, unfinished documents, close."""

    def close(self) -> None: ...

    def migrate(self) -> list[str]:
        """Apply pending migrations; return the names applied."""
        ...

    def pending_migrations(self) -> list[str]:
        """Migration files not yet applied to this graph."""
        ...

    def version(self) -> int: ...

    def counts(self) -> dict[str, int]:
        """Node counts per label and edge counts per type."""
        ...

    def unfinished_documents(self) -> list[DocumentState]: ...

    def health_counts(self) -> dict[str, int]:
        """The counts ``hopgraph doctor`` compares: chunks, relations, image documents and orphans."""
        ...


class GraphBrowser(Protocol):
    """Read look-ups for people exploring the graph (the API's routes, exports)."""

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


class CypherConsole(Protocol):
    """Read-only Cypher typed by a person (the CLI's ``cypher``): only a Cypher backend has it."""

    def explore(self, cypher: str, params: Mapping[str, Any] | None = None, row_limit: int = 1000,
                timeout_s: float = 30.0) -> ExploreResult:
        """Run a statement that must be read-only (checked before it runs)."""
        ...


class GraphStore(IngestWriter, EntityEditor, IndexSource, CommunityStore, IncrementalCommunities, TreeStore,
                 SectionStore, ChatDateStore, VectorGroupStore, RunLog, GraphAdmin, Protocol):
    """Every role ingest and retrieval use, as one union: callers outside ``hopgraph.graphdb`` take the
    roles they use instead (``ingest.graph_roles`` composes the pipeline's; ``test_house`` checks it)."""


class GraphBackend(GraphStore, GraphBrowser, CypherConsole, Protocol):
    """An opened graph database (``graphdb.factory.open_graph_store``, a backend of ``graphdb.registry``):
    every role, the browser and the Cypher console too."""
