"""The Platform facade: opens the stores from settings and exposes ingest, query and delete."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from hopgraph.app.collection_registry import require as require_collection
from hopgraph.app.platform_roles import GraphRoles
from hopgraph.core.collections import DEFAULT, placed
from hopgraph.core.errors import BadInputError
from hopgraph.core.memory import keep_freed_memory
from hopgraph.core.records import IngestReport, QueryFilters, QueryResult
from hopgraph.core.service_settings import ScheduledSource
from hopgraph.core.settings import RetrievalSettings, Settings
from hopgraph.graphdb.factory import open_graph_store
from hopgraph.graphdb.protocols import GraphBackend
from hopgraph.graphdb.records import DocumentState, IngestRun
from hopgraph.graphdb.registry import GRAPH_BACKENDS
from hopgraph.ingest.caller import OWNER, Caller
from hopgraph.vectors.clip import ClipEmbedder
from hopgraph.vectors.embedders import Embedder, for_questions, make_embedder
from hopgraph.vectors.factory import open_vector_store
from hopgraph.vectors.registry import VECTOR_BACKENDS
from hopgraph.vectors.store import COLLECTIONS, CollectionSpec, VectorStore

if TYPE_CHECKING:  # the ingest pipeline, the retriever and the LLM client are imported on first use: a
    # command that only counts (``status``, ``doctor``) never loads their array and model libraries
    from hopgraph.app.answers import Answerer
    from hopgraph.app.served import EntityHit, NameMatch
    from hopgraph.ingest.community_plan import CommunityReport
    from hopgraph.ingest.control import IngestControl
    from hopgraph.ingest.pipeline import Ingestor
    from hopgraph.ingest.raptor import TreeReport
    from hopgraph.retrieval.index.keeper import Freshness
    from hopgraph.retrieval.retriever import Retriever

log = logging.getLogger(__name__)


class Platform(GraphRoles):
    """One process's handle on the graph store, the vector store and the models.

    Callers take a role of the graph store (``admin``, ``browser``, ``console``, ``writer``, ...; see
    ``GraphRoles``) and the operations: ``query``, ``ingest``, ``delete``, ``warm``, ``freshness``,
    ``close`` and the few below them; the whole store (every role at once) stays private. Use as a context
    manager; stores are opened lazily and closed (vectors flushed) on exit.
    """

    def __init__(self, settings: Settings | None = None, embedder: Embedder | None = None,
                 collection: str | None = None) -> None:
        """``collection``: the collection to open (default: ``settings.collection``); other than
        ``default`` it must have been created (``hopgraph.app.collections``)."""
        self.settings = placed(settings or Settings(), collection)
        if self.settings.collection != DEFAULT:
            require_collection(self.settings, self.settings.collection)
        if self.settings.index.keep_freed_memory:  # before the stores start threads (see hopgraph.core.memory)
            keep_freed_memory()
        if embedder is not None:  # share a loaded model between platforms (tests, servers)
            self.__dict__["embedder"] = embedder
        self._graph: GraphBackend | None = None
        self._vectors: VectorStore | None = None
        self._retriever: Retriever | None = None
        self._ingest: Ingestor | None = None
        self._answerer: Answerer | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> Platform:
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Write the index state, flush and close the stores."""
        if self._retriever is not None:
            self._retriever.keeper.close()
        self._retriever = None
        if self._ingest is not None:
            self._ingest.close()
        self._ingest = None
        if self._answerer is not None:
            self._answerer.client.close()
            self._answerer = None
        if self._vectors is not None:
            self._vectors.close()
            self._vectors = None
        if self._graph is not None:
            self._graph.close()
            self._graph = None

    @property
    def _store(self) -> GraphBackend:
        """The opened graph store (``graph.backend``), every role: handed out one role at a time."""
        if self._graph is None:
            self._graph = open_graph_store(self.settings)
        return self._graph

    def migrate(self) -> list[str]:
        """Apply pending graph migrations; return the names applied (none when the store was already open:
        opening applies them)."""
        if self._graph is None:
            self._graph = open_graph_store(self.settings, migrate=False)
        return self._graph.migrate()

    @property
    def persists_index(self) -> bool:
        """Whether the index state is written to disk: ``index.persist``, and both stores outlive the
        process (an in-memory store's state would be read back by the next one's)."""
        cfg = self.settings
        return cfg.index.persist and GRAPH_BACKENDS.get(cfg.graph.backend).durable and \
            VECTOR_BACKENDS.get(cfg.vectors.backend).durable

    @cached_property
    def embedder(self) -> Embedder:
        return make_embedder(self.settings.embedder)

    @cached_property
    def question_embedder(self) -> Embedder:
        """What embeds questions (``embedder.onnx_queries``: an ONNX copy of the model, without torch)."""
        return for_questions(self.embedder)

    @cached_property
    def clip(self) -> ClipEmbedder | None:
        """The CLIP embedder when ``clip.enabled`` (image vectors, text -> image search, image queries)."""
        return ClipEmbedder(self.settings.clip) if self.settings.clip.enabled else None

    @property
    def vectors(self) -> VectorStore:
        if self._vectors is None:
            store = open_vector_store(self.settings)
            clip = self.clip
            try:
                store.ensure_collections(CollectionSpec(
                    dim=self.embedder.dim, model=self.embedder.name,
                    image_dim=clip.dim if clip else None, image_model=clip.name if clip else None))
            except Exception:
                store.close()
                raise
            self._vectors = store
        return self._vectors

    # -- operations --------------------------------------------------------------------------
    def ingest(self, paths: Sequence[Path | str], progress: bool = False,
               control: IngestControl | None = None, groups: Sequence[str] = (),
               caller: Caller = OWNER) -> IngestReport:
        """Ingest files and directories (unchanged documents are skipped); ``control`` follows the
        progress and can stop the run at its next checkpoint (``IngestCancelled``); ``groups``: the access
        groups of the documents that name none of their own (none: public in the collection); ``caller``:
        the files the run may read (never the data dir) and whose groups it may widen (``ingest.caller``)."""
        try:
            return self._ingestor().ingest_paths([Path(p) for p in paths], progress=progress, control=control,
                                                 groups=groups, caller=caller)
        finally:
            self._refresh_index()

    def delete(self, doc_id: str) -> bool:
        """Delete one document and everything only it supported. False if it does not exist."""
        return self.delete_documents([doc_id]) == 1

    def delete_documents(self, doc_ids: Sequence[str]) -> int:
        """Delete documents and everything only they supported; return how many existed."""
        try:
            return self._ingestor().delete(list(dict.fromkeys(doc_ids)))
        finally:
            self._refresh_index()

    def select(self, targets: Sequence[str]) -> dict[str, list[str]]:
        """Target (a document id, a source file or directory, or a glob) -> the document ids it names."""
        from hopgraph.ingest.selectors import select_documents

        return select_documents(self.document_reader, targets)

    def _refresh_index(self) -> None:
        """After this process's own writes: bring the index state up to date now (a delta, on the
        writer's thread; queries keep answering from the previous state meanwhile). With
        ``index.persist`` the state is kept current even before any query, so that the next
        process (``serve`` after ``hopgraph ingest``) loads it instead of building it."""
        if self._retriever is not None or self.persists_index:
            try:
                self.retriever.keeper.refresh()
            except Exception as exc:  # the write stands; the next query or poll refreshes again
                log.warning("index state not refreshed after the write: %s", exc)

    def update_communities(self, rebuild: bool = False) -> CommunityReport:
        """Bring the communities up to date with the graph: around what changed, or (``rebuild``)
        re-clustered from scratch."""
        try:
            return self._ingestor().update_communities(rebuild=rebuild)
        finally:
            self._refresh_index()

    def update_tree(self, rebuild: bool = False, progress: bool = False) -> TreeReport:
        """Build or update the RAPTOR tree now (whether or not ``raptor.enabled`` builds it at ingest):
        only the branches that gained or lost chunks, or (``rebuild``) every branch."""
        from tqdm import tqdm

        bar = tqdm(unit="branch", desc="tree", disable=not progress, dynamic_ncols=True)

        def advance(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        try:
            return self._ingestor().update_tree(rebuild=rebuild, progress=advance)
        finally:
            bar.close()

    def recover(self) -> int:
        """Repair what a killed process left: finish deletions, drop vectors of pending documents
        (when nothing is left unfinished, the usual case, no model is loaded)."""
        if not self.document_reader.unfinished_documents():
            return 0
        return self._ingestor().recover()

    def reingest(self, source: ScheduledSource) -> IngestRun:
        """Re-ingest a scheduled source of this platform's collection incrementally; the outcome is
        recorded in the graph."""
        from hopgraph.ingest.scheduler import run_source

        if source.collection != self.settings.collection:
            raise BadInputError(f"scheduled source {source.name!r} goes to collection {source.collection!r}, not "
                                f"{self.settings.collection!r}")

        try:
            return run_source(self._ingestor(), self.run_log, source, self.settings.scheduler.keep_runs)
        finally:
            self._refresh_index()

    @property
    def retriever(self) -> Retriever:
        """One retriever per platform; its index state is persisted in ``settings.index_dir``."""
        if self._retriever is None:
            from hopgraph.retrieval.index.keeper import IndexKeeper
            from hopgraph.retrieval.retriever import Retriever, recipe_of

            cfg = self.settings
            keeper = IndexKeeper(self.index_source, self.vectors, recipe_of(cfg.retrieval), self.embedder.dim,
                                 folder=cfg.index_dir if self.persists_index else None,
                                 persist_every_s=cfg.index.persist_every_s, owner=cfg.graph_identity)
            self._retriever = Retriever(self._store, self.vectors, self.question_embedder, cfg.retrieval,
                                        keeper=keeper,
                                        clip=self.clip, gpu=cfg.gpu, gnn_checkpoint=cfg.gnn_checkpoint_path)
        return self._retriever

    def ingest_records(self, records: Sequence[dict[str, Any]], collection: str = "api",
                       control: IngestControl | None = None, caller: Caller = OWNER) -> IngestReport:
        """Ingest JSON records (``{id, text, title?, metadata?}`` or ``{id, image, captions}``) as
        documents with source ``<collection>#<id>``: re-sending a record updates its document (unless
        that widens its groups and ``caller`` may not: ``ingest.caller``)."""
        from hopgraph.ingest.sources import record_to_source

        items = [record_to_source(collection, rec, f"{collection}#{i}") for i, rec in enumerate(records)]
        try:
            return self._ingestor().ingest_sources(items, total=len(items), control=control, caller=caller)
        finally:
            self._refresh_index()

    def query(self, text: str, mode: str = "graph", top_k: int | None = None, explain: bool = False,
              retrieval: RetrievalSettings | None = None, filters: QueryFilters | None = None,
              reader: Iterable[str] | None = None) -> QueryResult:
        """Ranked chunks with citations and a cited context (``retrieval`` overrides the settings);
        ``reader``: the access groups of the one asking, who then finds only the documents they may read
        (None: every document)."""
        return self.retriever.query(text, mode, top_k, explain=explain, cfg=retrieval, filters=filters,
                                    reader=None if reader is None else frozenset(reader))

    @property
    def answerer(self) -> Answerer:
        """Answers from a mode's cited context by the LLM of the ``llm`` settings (ConflictError when
        none is configured)."""
        from hopgraph.app.answers import Answerer, require_llm

        require_llm(self.settings.llm)
        if self._answerer is None:
            from hopgraph.ingest.llm_client import ChatClient

            cfg = self.settings
            client = ChatClient(cfg.llm, cfg.llm.cache_dir or cfg.data_dir / "llm-cache")
            self._answerer = Answerer(lambda q, mode, k, r, f, who: self.query(q, mode, k, False, r, f, who),
                                      client, cfg.retrieval, cfg.answer)
        return self._answerer

    def query_image(self, path: str, top_k: int | None = None) -> QueryResult:
        """Images similar to the image at ``path`` (needs CLIP)."""
        return self.retriever.query(mode="image", image=path, top_k=top_k)

    def documents(self, skip: int = 0, limit: int = 100) -> list[DocumentState]:
        """Ingested documents with their status, in id order."""
        return self.browser.list_documents(skip=skip, limit=limit)

    def status(self) -> dict[str, Any]:
        """Counts of graph items and vectors, and the dead letters (documents whose parsing failed, not written)."""
        from hopgraph.ingest.dead_letters import load_dead_letters

        vectors = {name: self.vectors.count(name) for name in COLLECTIONS}
        dead = [d.model_dump() for d in load_dead_letters(self.settings.data_dir)]
        return {"graph": self.admin.counts(), "graph_version": self.admin.version(), "vectors": vectors,
                "dead_letters": dead}

    def chunk_count(self) -> int:
        """How many chunk vectors the vector store holds."""
        return self.vectors.count("chunks")

    def freshness(self) -> Freshness:
        """The version of the index state that answers queries, the graph's, and the last refresh."""
        return self.retriever.keeper.freshness()

    def warm(self, poll: bool = False, questions_only: bool = False) -> None:
        """Open both stores, bring the index state up to date (loaded from disk, or built once) and load the
        embedding models, before the first query needs them. ``poll``: then keep the index state current on
        a thread (``index.poll_s``) until ``stop_polling`` or ``close``. ``questions_only`` (a long-lived
        process that only queries): start loading the question embedder in the background instead, and
        import the array libraries the served index state's modes use."""
        if questions_only:
            self.question_embedder.warm()
            state = self.retriever.state()
            from hopgraph.retrieval.parts.signals import load_torch_for

            load_torch_for(state.snapshot)
        else:
            embedder = self.embedder
            self.vectors.count("chunks")
            self.retriever.keeper.refresh()  # before the first request, never inside one
            embedder.embed(["warm up"])
            self.question_embedder.embed(["warm up"])
        if poll:  # after the model: the poller's first act is to grow the heap, which should not slow the start
            self.retriever.keeper.start_polling(self.settings.index.poll_s, pregrow=self.settings.index.pregrow)

    def stop_polling(self) -> None:
        """Stop keeping the index state current on a thread (``warm(poll=True)``); queries still answer."""
        if self._retriever is not None:
            self._retriever.keeper.stop_polling()

    def readable_documents(self, reader: Iterable[str]) -> list[str]:
        """The ids of the documents of the served index state that ``reader`` (access groups) may read, in
        id order."""
        from hopgraph.retrieval.index.view import readable_documents

        return readable_documents(self.retriever.state(), frozenset(reader))

    def find_entities(self, name: str, match: NameMatch = "normalized", limit: int = 20) -> list[EntityHit]:
        """Entities of the served index state named ``name``, most mentioned first."""
        from hopgraph.app.served import find_entities

        return find_entities(self.retriever.state(), name, match, limit)

    def corpus_ids(self) -> dict[str, str]:
        """Chunk id -> corpus record id (``metadata.corpus_id`` of BEIR/JSONL documents)."""
        snap = self.retriever.snapshot()
        return {c: cid for c, cid in zip(snap.chunk_ids, snap.chunk_corpus_ids, strict=True) if cid}

    def extractor_warmup(self) -> None:
        """Load the spaCy model and start the extraction worker now (benchmarks time ingestion, not
        model loading)."""
        self._ingestor().warm_up()

    def _ingestor(self) -> Ingestor:
        """One ingestor per platform: the spaCy model and the alias map are loaded once."""
        if self._ingest is None:
            from hopgraph.ingest.pipeline import Ingestor

            self._ingest = Ingestor(self._store, self.vectors, self.embedder, self.settings, clip=self.clip)
        return self._ingest
