"""The ingestion pipeline: resumable, idempotent and incremental.

Per batch of documents: chunk → extract → embed, then
1. documents are upserted with status ``pending``;
2. chunks the documents no longer have, and entities left with no mention, are removed
   (vectors first, then the graph, so vectors never point at missing graph items for long);
3. chunks, entities and mentions are MERGEd, their vectors upserted;
4. documents are marked ``complete`` with their content hash.

A document is skipped only when it is ``complete`` with the same hash, so a killed run is
finished by rerunning it, and ids derived from content make every step idempotent.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from tqdm import tqdm

from hopgraph.core.access import groups_of
from hopgraph.core.records import Chunk, IngestReport, Relation, Section
from hopgraph.core.settings import Settings
from hopgraph.graphdb.records import COMPLETE, DELETING, PENDING, RemovalPlan
from hopgraph.ingest.batches import Prepared, extract, prepared_batches, stage
from hopgraph.ingest.caller import OWNER, Caller, hold_back
from hopgraph.ingest.chunking import Chunker
from hopgraph.ingest.communities import CommunityBuilder
from hopgraph.ingest.community_plan import CommunityReport
from hopgraph.ingest.control import IngestCancelled, IngestControl, check_free_space, unattended
from hopgraph.ingest.counting import count_documents
from hopgraph.ingest.dead_letters import record_dead_letters
from hopgraph.ingest.embedded_memo import COLLECTIONS as MEMO_COLLECTIONS
from hopgraph.ingest.embedded_memo import EmbeddedMemo
from hopgraph.ingest.embedding import caption_points, image_points, vector_points, with_groups
from hopgraph.ingest.extraction import Extraction, Extractor
from hopgraph.ingest.extraction_worker import parser_pool
from hopgraph.ingest.extractors import make_extractor
from hopgraph.ingest.graph_edits import plan_removal
from hopgraph.ingest.graph_roles import IngestGraph
from hopgraph.ingest.llm_client import ChatClient
from hopgraph.ingest.llm_reports import LlmReporter
from hopgraph.ingest.local_engine import busiest, embed_threads, pipelined
from hopgraph.ingest.post_steps import run_post_steps
from hopgraph.ingest.raptor import TreeBuilder, TreeReport
from hopgraph.ingest.raptor_summary import LlmSummarizer
from hopgraph.ingest.ray_engine import RayEngine
from hopgraph.ingest.resolution import EntityResolver
from hopgraph.ingest.source_text import Skipped, SourceText
from hopgraph.ingest.sources import default_groups, read_sources, require_paths, vanished
from hopgraph.ingest.texts import merge_relations
from hopgraph.vectors.clip import ClipEmbedder
from hopgraph.vectors.embedders import Embedder
from hopgraph.vectors.registry import vector_backend
from hopgraph.vectors.store import VectorStore

log = logging.getLogger(__name__)
#: documents read ahead to skip the unchanged ones with one state read (a write batch is ``ingest.doc_batch``)
_LOOKAHEAD = 1024
#: batches in one run from which spaCy parses in worker processes (their start costs seconds)
_WORKER_MIN_BATCHES = 4


class Ingestor:
    """Writes documents into the graph and vector stores."""

    def __init__(self, graph: IngestGraph, vectors: VectorStore, embedder: Embedder, settings: Settings,
                 clip: ClipEmbedder | None = None) -> None:
        self.graph = graph
        self.vectors = vectors
        self.embedder = embedder
        self.clip = clip
        self.settings = settings
        self.chunker = Chunker(embedder.count_tokens, settings.chunking.max_tokens,
                               settings.chunking.overlap_tokens, settings.chunking.sections)
        self.aliases = graph.aliases()
        # entity and relationship ids whose vectors this process wrote: a later batch mentioning
        # them again does not embed them again (an entity recurs in many batches); ids leave it
        # when their vectors are deleted
        self._embedded = EmbeddedMemo()
        self._removals = 0  # removals written so far (a batch embedded before one is checked at its write)
        self._llm: ChatClient | None = None
        self.extractor = self._extractor()
        self._ray = RayEngine(settings) if settings.ingest.engine == "ray" else None  # per-document work on Ray
        self._parsers = parser_pool(self.extractor, settings.extraction) if self._ray is None else None
        self.resolver = EntityResolver(graph, vectors, embedder, settings.resolution,
                                       extraction=settings.extraction)
        reporter = LlmReporter(self._chat()) if settings.communities.llm_summaries else None
        self.communities = CommunityBuilder(graph, vectors, embedder, settings.communities, reporter=reporter,
                                            max_concurrency=settings.llm.max_concurrency)
        summarizer = (LlmSummarizer(self._chat(), settings.llm.max_concurrency)
                      if settings.raptor.llm_summaries else None)
        self.tree = TreeBuilder(graph, vectors, embedder, settings.raptor, llm=summarizer)

    def _extractor(self) -> Extractor:
        """spaCy by default; the OpenAI-compatible LLM when ``extraction.method = "llm"`` (``ingest.extractors``)."""
        return make_extractor(self.settings.extraction, resolve=lambda eid: self.aliases.get(eid, eid),
                              chat=self._chat)

    def warm_up(self) -> None:
        """Load the extraction model now, and start the extraction workers."""
        self.extractor.extract([])
        if self._parsers is not None:
            self._parsers.start()

    def close(self) -> None:
        """Stop the extraction workers and leave the Ray cluster (a later ingest starts or joins again)."""
        self.end_run()
        if self._ray is not None:
            self._ray.close()

    def end_run(self) -> None:
        """After a run: stop the extraction workers (each holds a spaCy model); the Ray engine stays
        connected, so that its worker processes keep their models for the next run of this ingestor
        (a server's uploads and scheduled jobs)."""
        if self._parsers is not None:
            self._parsers.close()
        self._embedded.end_run()

    def _chat(self) -> ChatClient:
        """One LLM client (and response cache) for extraction and community reports."""
        if self._llm is None:
            cfg = self.settings.llm
            self._llm = ChatClient(cfg, cfg.cache_dir or self.settings.data_dir / "llm-cache")
        return self._llm

    # -- entry points ------------------------------------------------------------------------
    def ingest_paths(self, paths: Sequence[Path], progress: bool = False, prune: bool = True,
                     control: IngestControl | None = None, groups: Sequence[str] = (),
                     caller: Caller = OWNER) -> IngestReport:
        """Ingest files and directories. With ``prune``, documents previously ingested from these
        paths that no longer exist (a deleted file, a record removed from a JSONL) are deleted.
        ``control`` follows the progress and may stop the run (``IngestCancelled``); a missing path is
        a NotFoundError. ``groups``: the access groups of the documents that name none of their own;
        ``caller``: what the run may read and whose groups it may widen (``ingest.caller``)."""
        cfg, data = self.settings.ingest, self.settings.data_dir
        sources = default_groups(read_sources(paths, cfg.extensions, cfg.max_file_bytes, cfg.csv, data_dir=data,
                                              strict_utf8=cfg.strict_utf8, caller=caller), groups)
        require_paths(paths)
        t0 = time.perf_counter()
        seen: set[str] = set()
        unsure: set[str] = set()  # files with unreadable parts: keep what came from them before (Skipped.keep)

        def tracked() -> Iterator[SourceText | Skipped]:
            for item in sources:
                if isinstance(item, SourceText):
                    seen.add(item.document.source)
                elif item.keep:
                    unsure.add(item.origin)
                yield item

        total = count_documents(paths, cfg.extensions, data, caller) if progress or control else None
        report = self.ingest_sources(tracked(), total, progress=progress, finish=False, control=control, caller=caller)
        if prune:
            gone = vanished(self.graph, paths, seen, unsure, data)
            if gone:
                log.info("removing %d document(s) whose source no longer exists", len(gone))
                report.documents_deleted = self.delete(gone, finish=False)
        self._finish(report)
        report.seconds = time.perf_counter() - t0
        report.bound = busiest(report, report.seconds)
        return report

    def ingest_sources(self, items: Iterable[SourceText | Skipped], total: int | None = None,
                       progress: bool = False, finish: bool = True,
                       control: IngestControl | None = None, caller: Caller = OWNER) -> IngestReport:
        """Ingest already-read sources (Skipped items are only reported; so is a document whose groups
        ``caller`` may not widen: ``ingest.caller``)."""
        t0 = time.perf_counter()
        report = IngestReport()
        if self._ray is not None:  # an unreachable cluster fails here, before anything is written
            self._ray.start()
        self.recover()
        ctl = control or unattended()
        ctl.total = ctl.total if total is None else total
        bar = tqdm(total=total, unit="doc", desc="ingest", disable=not progress, dynamic_ncols=True)
        try:
            self._write_all(self._changed(items, report, ctl, bar, caller), report, ctl, bar)
        finally:
            bar.close()
            self.end_run()  # the extraction workers leave with the run; Ray's keep their models
        record_dead_letters(self.settings.data_dir, report.dead_letters, self.graph.document_states)
        if finish:
            self._finish(report)
        report.seconds = time.perf_counter() - t0
        report.bound = busiest(report, report.seconds)
        return report

    def _finish(self, report: IngestReport) -> None:
        """After a run: the named post-steps (``ingest.post_steps``: resolve, forget, chat_dates, types,
        communities, tree, vector_write)."""
        run_post_steps(self, report)

    def forget_embedded(self, collection: str, ids: Sequence[str]) -> None:
        """Forget that ``ids`` were embedded in this run (merged away: a later batch embeds its canonical)."""
        self._embedded.forget(collection, ids)

    def update_tree(self, rebuild: bool = False, progress: Callable[[int, int], None] | None = None) -> TreeReport:
        """Bring the RAPTOR tree up to date now (``rebuild``: re-partition and rebuild every branch);
        ``progress(done, total)`` follows the branches built."""
        built = self.tree.update(rebuild=rebuild, progress=progress)
        self.vectors.flush()
        return built

    def update_communities(self, rebuild: bool = False) -> CommunityReport:
        """Bring the communities up to date now (``rebuild``: re-cluster everything) and commit them."""
        built = self.communities.update(rebuild=rebuild)
        self.graph.mark_communities_built(built.regrouped)
        self.vectors.flush()
        return built

    def delete(self, document_ids: Sequence[str], finish: bool = True) -> int:
        """Delete documents with their chunks, mentions, orphaned entities, relations and vectors."""
        states = self.graph.document_states(document_ids)
        ids = [i for i in document_ids if i in states]
        if not ids:
            return 0
        self.graph.set_document_status([(i, DELETING, states[i].content_hash or "") for i in ids])
        self._remove(plan_removal(self.graph.removal_facts({i: () for i in ids})), ids)
        if finish:
            self._finish(IngestReport(documents_deleted=len(ids)))
        return len(ids)

    def recover(self) -> int:
        """After a killed run: finish interrupted deletions, and drop the vectors of documents left
        pending (the rerun writes them again), so that no vector belongs to a document the graph does
        not mark complete. Returns the number of pending documents found. Only for the embedded vector
        store, which has one writer: with a Qdrant server another process may be writing them now."""
        self.finish_interrupted_deletes()
        if not vector_backend(self.settings.vectors.backend).single_writer:
            return 0
        pending = [d.id for d in self.graph.unfinished_documents() if d.status == PENDING]
        for i in range(0, len(pending), 500):
            for collection in ("chunks", "sections", "images", "captions"):
                self.vectors.delete_where(collection, {"document_id": pending[i : i + 500]})
        if pending:
            log.info("%d document(s) left pending by an interrupted run: their vectors are dropped until "
                     "the rerun writes them", len(pending))
        return len(pending)

    def finish_interrupted_deletes(self) -> None:
        """Complete deletions that a killed process left half done."""
        left = [d.id for d in self.graph.unfinished_documents() if d.status == DELETING]
        if left:
            log.info("finishing %d interrupted deletion(s)", len(left))
            self._remove(plan_removal(self.graph.removal_facts({i: () for i in left})), left)

    # -- internals ---------------------------------------------------------------------------
    def _remove(self, plan: RemovalPlan, document_ids: Sequence[str] = ()) -> None:
        self._removals += 1
        if document_ids:
            self.vectors.delete("images", list(document_ids))
            self.vectors.delete_where("sections", {"document_id": list(document_ids)})
            self.vectors.delete_where("captions", {"document_id": list(document_ids)})
            self.graph.replace_sections(list(document_ids), [])
        self.vectors.delete("chunks", plan.chunk_ids)
        self.vectors.delete("entities", plan.entity_ids)
        self.vectors.delete("relationships", plan.relation_ids)
        self._embedded.forget("entities", plan.entity_ids)
        self._embedded.forget("relationships", plan.relation_ids)
        self.graph.remove(plan, document_ids)
        if plan.community_ids:  # communities the removal emptied are gone from the graph
            alive = {c.id for c in self.graph.community_texts(plan.community_ids)}
            self.vectors.delete("communities", [c for c in plan.community_ids if c not in alive])

    def _changed(self, items: Iterable[SourceText | Skipped], report: IngestReport, ctl: IngestControl,
                 bar: tqdm, caller: Caller) -> Iterator[list[SourceText]]:
        """The write batches (``ingest.doc_batch``) of the new and changed documents among ``items``: the
        skipped ones reported, the unchanged ones counted, read ahead ``_LOOKAHEAD`` at a time (one state
        read for all: a re-ingest where one document changed reads states, not documents)."""
        limit, size = self.settings.ingest.max_document_chars, self.settings.ingest.doc_batch
        block: list[SourceText] = []
        for item in itertools.chain(items, [None]):
            if item is not None:
                report.documents_seen += 1
            if isinstance(item, SourceText) and len(item.text) > limit:
                item = Skipped(item.document.source, f"too long: {len(item.text):,} characters > "
                               f"ingest.max_document_chars={limit:,}")
            if isinstance(item, SourceText) and item.warning:
                report.warnings[item.document.source] = item.warning
                log.warning("%s: %s", item.document.source, item.warning)
            if isinstance(item, Skipped):
                report.skipped[item.source] = item.reason
                log.warning("skipped %s: %s", item.source, item.reason)
                bar.update(1)
                ctl.advance(1)
                continue
            if item is not None:
                block.append(item)
                if len(block) < _LOOKAHEAD:
                    continue
            latest = {s.document.id: s for s in block}  # a repeated id: its last version is what gets written
            states = self.graph.document_states(list(latest)) if latest else {}
            changed = []
            for s in block:
                st = states.get(s.document.id)
                if latest[s.document.id] is not s or (st is not None and st.status == COMPLETE and
                                                      st.content_hash == s.document.content_hash):
                    report.documents_unchanged += latest[s.document.id] is s
                    bar.update(1)
                    ctl.advance(1)
                else:
                    changed.append(s)
            kept = hold_back(self.graph, changed, caller, report.skipped)
            bar.update(len(changed) - len(kept))
            ctl.advance(len(changed) - len(kept))
            yield from (kept[i : i + size] for i in range(0, len(kept), size))
            block = []

    def _write_all(self, batches: Iterator[list[SourceText]], report: IngestReport, ctl: IngestControl,
                   bar: tqdm) -> None:
        """Chunk, extract, embed and write every batch, the stages overlapping across the whole run: on
        Ray (chunked, extracted and embedded on the cluster, written here in order), else pipelined here."""
        if self._ray is not None:
            stream = self._ray.prepared(batches, self.aliases, self.embedder, report)
        else:
            head = list(itertools.islice(batches, _WORKER_MIN_BATCHES))
            use = self._parsers is not None and (len(head) >= _WORKER_MIN_BATCHES or self._parsers.running)
            parsers = self._parsers if use else None
            report.extraction_workers = parsers.processes if parsers is not None else 0
            threads = embed_threads(self.settings.ingest.embed_threads)
            report.stage_threads.update(extract=report.extraction_workers, embed=threads, write=1)
            chunked = prepared_batches(self.chunker, itertools.chain(head, batches),
                                       self.settings.ingest.max_document_chunks, parsers, self.aliases, report)
            stream = pipelined(chunked, self._compute, report, threads)
        for done, ready in stream:
            if ready is not None:
                self._write_batch(ready, report, ctl)
            bar.update(len(done))
            ctl.advance(len(done))

    def _checkpoint(self, ctl: IngestControl, report: IngestReport, writing: bool = False) -> None:
        """Stop here if asked to, or (before writing) if the disk is nearly full: nothing of the
        current batch is written yet."""
        if ctl.stopping:
            self.vectors.flush()
            raise IngestCancelled(report)
        if writing:
            check_free_space(self.settings.vectors_dir, self.settings.ingest.min_free_mb)

    def _compute(self, prepared: Prepared, report: IngestReport) -> Prepared:
        """Extract (or take the workers' or Ray's extraction) and embed one batch: on the embedding
        thread of a local ingest, ahead of the writer. The points are computed against the ids this
        process embedded so far and tagged with the count of removals then (see ``_write_batch``)."""
        prepared.removals = self._removals
        for collection, marked in prepared.marked.items():  # computed before: its marks go
            self._embedded.unexpect(collection, marked)
        extraction = extract(prepared, self.extractor, self._parsers, self.aliases, report)
        prepared.relations = merge_relations(extraction.relations)
        with stage(report, "embed"):  # on Ray, from the vectors its worker computed
            embedder = prepared.embedder or self.embedder
            points = vector_points(embedder, self.settings.extraction, prepared.chunks, prepared.sections,
                                   extraction, prepared.relations, self._embedded.known(), self.vectors.vectors)
            points["captions"] = caption_points(embedder, {s.document.id: s.text for s in prepared.todo
                                                                if s.document.kind == "image"})
        prepared.points = points
        prepared.marked = {c: self._embedded.expect(c, (p.id for p in points[c])) for c in MEMO_COLLECTIONS}
        return prepared

    def _write_batch(self, prepared: Prepared, report: IngestReport, ctl: IngestControl) -> None:
        """Write one batch (computed ahead by ``_compute``, or now). Where a write removed entities or
        relations since its points were computed, they are computed again: an id it skipped as embedded
        may be gone with its vector."""
        todo, chunks, sections, per_doc = prepared.todo, prepared.chunks, prepared.sections, prepared.per_doc
        self._checkpoint(ctl, report)
        if prepared.points is None or prepared.removals != self._removals:
            self._compute(prepared, report)
        extraction, relations, points = prepared.extraction, prepared.relations, prepared.points
        assert extraction is not None and relations is not None and points is not None
        if self.clip is not None:
            with stage(report, "image_embed"):
                points["images"] = image_points(self.clip, todo, report)
        self._checkpoint(ctl, report, writing=True)
        with stage(report, "graph_write"):
            self._write_graph(todo, per_doc, chunks, sections, extraction, relations)
        with stage(report, "vector_write"):
            for collection, pts in with_groups(points, {s.document.id: groups_of(s.document.metadata)
                                                        for s in todo}).items():
                self.vectors.upsert(collection, pts)
                if collection in MEMO_COLLECTIONS:
                    self._embedded.wrote(collection, (p.id for p in pts))
        with stage(report, "graph_write"):  # the commit point of the batch
            self.graph.commit(documents=[s.document.id for s in todo],
                              statuses=[(s.document.id, COMPLETE, s.document.content_hash) for s in todo])
        report.documents_ingested += len(todo)
        report.chunks += len(chunks)
        report.entities += len(extraction.entities)
        report.mentions += len(extraction.mentions)
        report.relations += len(relations)

    def _write_graph(self, todo: list[SourceText], per_doc: dict[str, list[str]], chunks: list[Chunk],
                     sections: list[Section], extraction: Extraction, relations: list[Relation]) -> None:
        """Documents (pending), removal of what changed documents no longer support, then the new items
        (a document's sections are replaced whole)."""
        self.graph.upsert_documents([s.document for s in todo], status=PENDING)
        plan = plan_removal(self.graph.removal_facts(per_doc), keep_entities=extraction.entities,
                            keep_relations={r.id for r in relations})
        if plan:
            self._remove(plan)
        self.graph.upsert_chunks(chunks)
        self.vectors.delete_where("sections", {"document_id": list(per_doc)})
        self.vectors.delete_where("captions", {"document_id": list(per_doc)})
        self.graph.replace_sections(list(per_doc), sections)
        self.graph.upsert_entities(list(extraction.entities.values()))
        self.graph.upsert_mentions(extraction.mentions)
        self.graph.upsert_relations(relations)
