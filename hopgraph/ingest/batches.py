"""One write batch of the ingest pipeline before its extraction: its documents chunked (those over
``ingest.max_document_chunks`` skipped), and the stage timer of the pipeline's report."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from hopgraph.core.records import Chunk, IngestReport, Relation, Section
from hopgraph.ingest.chunking import Chunker
from hopgraph.ingest.conversations import chat_contexts
from hopgraph.ingest.extraction import Extraction, Extractor
from hopgraph.ingest.extraction_worker import ExtractionWorker, Pending
from hopgraph.ingest.graph_docs import graph_extraction
from hopgraph.ingest.source_text import SourceText
from hopgraph.vectors.embedders import Embedder
from hopgraph.vectors.store import VectorPoint

log = logging.getLogger(__name__)


@contextlib.contextmanager
def stage(report: IngestReport, name: str) -> Iterator[None]:
    """Add the time spent in a pipeline stage to the report."""
    t = time.perf_counter()
    try:
        yield
    finally:
        report.stage_seconds[name] = report.stage_seconds.get(name, 0.0) + time.perf_counter() - t


@dataclass
class Prepared:
    """A chunked batch waiting for its extraction (``in_workers``: by the spaCy worker processes;
    ``pending``: already submitted to them, parsed ahead; ``extraction`` and ``embedder``: extracted,
    and its texts embedded, on a Ray worker)."""

    todo: list[SourceText]
    chunks: list[Chunk]
    sections: list[Section]
    per_doc: dict[str, list[str]]          # document id -> its chunk ids
    graphs: dict[str, Any]                 # graph documents' own graphs (not parsed)
    to_extract: list[Chunk]                # the chunks to parse
    in_workers: bool = False
    pending: Pending | None = None
    extraction: Extraction | None = None
    embedder: Embedder | None = None
    relations: list[Relation] | None = None                  # computed: the merged relations
    points: dict[str, list[VectorPoint]] | None = None       # computed: the vectors per collection
    removals: int = 0                                        # the ingestor's removals when computed
    marked: dict[str, set[str]] = field(default_factory=dict)  # ids it marked as coming (EmbeddedMemo)


def prepare(chunker: Chunker, batch: list[SourceText], most_chunks: int, report: IngestReport) -> Prepared | None:
    """Chunk documents known to be new or changed; None when every one of them is too long."""
    todo = list(batch)
    chunks: list[Chunk] = []
    sections: list[Section] = []
    per_doc: dict[str, list[str]] = {}
    with stage(report, "chunk"):
        for s in list(todo):
            doc_sections, doc_chunks = chunker.chunk_document(s.document.id, s.text)
            unread: list[str] = []
            doc_chunks = chat_contexts(s.text, doc_chunks, s.document.source, unread)
            if doc_chunks and doc_chunks[0].chat is not None:
                report.conversations += 1
                report.dated_chunks += sum(1 for c in doc_chunks if c.chat is not None and c.chat.session)
            if unread:
                said = f"{len(unread)} session date(s) not understood, left undated: {unread[0][:60]!r}"
                earlier = report.warnings.get(s.document.source)
                report.warnings[s.document.source] = f"{earlier}; {said}" if earlier else said
            if len(doc_chunks) > most_chunks:
                report.skipped[s.document.source] = (f"too long: {len(doc_chunks):,} chunks > "
                                                     f"ingest.max_document_chunks={most_chunks:,}")
                log.warning("skipped %s: %s", s.document.source, report.skipped[s.document.source])
                todo.remove(s)
                continue
            per_doc[s.document.id] = [c.id for c in doc_chunks]
            chunks.extend(doc_chunks)
            sections.extend(doc_sections)
    if not todo:
        return None
    graphs = {s.document.id: s.graph for s in todo if s.graph is not None}
    return Prepared(todo, chunks, sections, per_doc, graphs, [c for c in chunks if c.document_id not in graphs])


def extract(prepared: Prepared, extractor: Extractor, parsers: ExtractionWorker | None, aliases: Mapping[str, str],
            report: IngestReport) -> Extraction:
    """The batch's extraction: Ray's, else the workers' (sent ahead; the wait is the ``extract`` stage),
    else parsed here; graph documents add their own entities and relations once."""
    if prepared.extraction is None:
        with stage(report, "extract"):
            if prepared.in_workers and parsers is not None:
                pending = prepared.pending or parsers.submit(prepared.to_extract, aliases)
                prepared.extraction = parsers.result(pending, extractor, prepared.to_extract)
            else:
                prepared.extraction = extractor.extract(prepared.to_extract)
    for doc_id, graph in prepared.graphs.items():
        prepared.extraction.add(graph_extraction(doc_id, graph, [c for c in prepared.chunks
                                                                 if c.document_id == doc_id]))
    prepared.graphs = {}
    return prepared.extraction


def prepared_batches(chunker: Chunker, batches: Iterable[list[SourceText]], most_chunks: int,
                     parsers: ExtractionWorker | None, aliases: Mapping[str, str], report: IngestReport
                     ) -> Iterator[tuple[list[SourceText], Prepared | None]]:
    """Each batch with its ``prepare``, chunked (and sent to the parse workers) as the caller asks for it."""
    for batch in batches:
        prepared = prepare(chunker, batch, most_chunks, report)
        if prepared is not None and parsers is not None:
            prepared.in_workers = True
            prepared.pending = parsers.submit(prepared.to_extract, aliases)
        yield batch, prepared
