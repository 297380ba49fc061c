"""The graph store's roles as the platform hands them out: each accessor returns the opened store typed as
one role protocol (``graphdb.protocols``), so a caller sees only the methods of the role it asked for."""

from __future__ import annotations

from hopgraph.graphdb.protocols import (
    ChatDateStore,
    CommunityGraph,
    CypherConsole,
    DocumentReader,
    EntityEditor,
    GraphAdmin,
    GraphBackend,
    GraphBrowser,
    IndexSource,
    IngestWriter,
    RunLog,
    SectionStore,
    TreeStore,
    VectorGroupStore,
)


class GraphRoles:
    """Role accessors over ``_store``, the opened graph store (every role at once), which stays private."""

    @property
    def _store(self) -> GraphBackend:
        raise NotImplementedError

    @property
    def admin(self) -> GraphAdmin:
        """Migrations, counts, the version and health of the graph store."""
        return self._store

    @property
    def browser(self) -> GraphBrowser:
        """Read look-ups for exploring the graph (entities, communities, provenance, exports)."""
        return self._store

    @property
    def console(self) -> CypherConsole:
        """Read-only Cypher, checked before it runs."""
        return self._store

    @property
    def writer(self) -> IngestWriter:
        """The ingest pipeline's writes: documents, chunks, entities, mentions, relations, removals."""
        return self._store

    @property
    def document_reader(self) -> DocumentReader:
        """Document states: unfinished documents, documents under a source, their access groups."""
        return self._store

    @property
    def editor(self) -> EntityEditor:
        """Entity merges, types and descriptions (the post-ingest steps' reads and writes)."""
        return self._store

    @property
    def index_source(self) -> IndexSource:
        """The version, the change log and the snapshot reads of the query-time index state."""
        return self._store

    @property
    def community_store(self) -> CommunityGraph:
        """Communities: the topology they are clustered from, their levels, members, summaries and staleness."""
        return self._store

    @property
    def tree_store(self) -> TreeStore:
        """The RAPTOR tree's branches and summaries."""
        return self._store

    @property
    def sections(self) -> SectionStore:
        """Document sections and the chunks they hold."""
        return self._store

    @property
    def chat_dates(self) -> ChatDateStore:
        """The turn dates of stored conversations."""
        return self._store

    @property
    def vector_groups(self) -> VectorGroupStore:
        """The access groups to write into stored vectors."""
        return self._store

    @property
    def run_log(self) -> RunLog:
        """The log of scheduled re-ingestion runs."""
        return self._store
