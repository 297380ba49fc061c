"""What runs on the Ray workers: two actor kinds, each loading its model once in ``__init__`` and
serving every batch of every ingest of the engine that made it.

- ``ParseActor`` chunks a batch and extracts it with spaCy (one CPU, one thread: spaCy's
  ``n_process = 1``, torch's one intra-op thread). It counts word pieces with the embedder's
  ``tokenizer.json`` alone, never loading the embedding model. A document whose chunking or extraction
  raises is returned as a ``DeadLetter``; the rest of the batch is parsed without it.
- ``EmbedActor`` embeds a parsed batch (chunk texts, entity names, relation types) with as many
  intra-op threads as the CPUs it declares (torch's, and onnxruntime's for the int8 ONNX embedder), or
  on its share of a GPU with one CPU thread.

Both are given ``WorkerSettings`` only, never the stores' or the LLM's credentials. ``info()`` says what
an actor declared to Ray and what it runs, so that the two can be compared.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from hopgraph.core.records import DeadLetter, IngestReport
from hopgraph.core.settings import ChunkingSettings, EmbedderSettings, ExtractionSettings, Settings
from hopgraph.ingest.alias_sync import AliasCache, AliasChain
from hopgraph.ingest.batches import Prepared, prepare, stage
from hopgraph.ingest.chunking import Chunker
from hopgraph.ingest.extraction import Extraction
from hopgraph.ingest.extractors import local_extractor
from hopgraph.ingest.relation_vectors import type_text
from hopgraph.ingest.source_text import SourceText
from hopgraph.ingest.texts import merge_relations
from hopgraph.vectors.embedders import make_embedder


class WorkerSettings(BaseModel):
    """What an actor is given: the models' and the chunker's settings and the chunk limit. Never the
    stores' or the LLM's credentials (``Settings`` holds them; an actor's arguments are pickled in clear)."""

    model_config = ConfigDict(frozen=True)

    embedder: EmbedderSettings
    chunking: ChunkingSettings
    extraction: ExtractionSettings
    max_document_chunks: int

    @classmethod
    def of(cls, settings: Settings) -> WorkerSettings:
        return cls(embedder=settings.embedder, chunking=settings.chunking, extraction=settings.extraction,
                   max_document_chunks=settings.ingest.max_document_chunks)


@dataclass
class Computed:
    """One batch as the actors send it back: chunked, extracted (None with another extractor than spaCy),
    the texts embedded with their vectors (after the embed actor), what was skipped or failed and how
    long each stage took."""

    prepared: Prepared | None
    extraction: Extraction | None = None
    texts: list[str] = field(default_factory=list)
    vectors: np.ndarray | None = None
    skipped: dict[str, str] = field(default_factory=dict)
    dead: list[DeadLetter] = field(default_factory=list)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    node: str = ""  # where the batch was parsed
    embed_node: str = ""  # where it was embedded
    alias_entries: int = 0  # alias entries the parse actor fetched (the links of the chain it lacked)


def _assigned(resource: str) -> float:
    """How much of ``resource`` Ray assigned to this actor."""
    import ray

    return float(ray.get_runtime_context().get_assigned_resources().get(resource, 0.0))


def _set_threads(n: int) -> None:
    """Run ``n`` intra-op threads in this process (torch's; OpenMP's for libraries started later)."""
    import torch

    os.environ["OMP_NUM_THREADS"] = str(n)
    torch.set_num_threads(n)


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc)[:500]}"


class ParseActor:
    """Chunks and extracts batches on one thread; loads the tokenizer and the spaCy model once."""

    threads = 1

    def __init__(self, settings: WorkerSettings) -> None:
        import ray

        _set_threads(self.threads)
        self.settings = settings.model_copy(update={"extraction": settings.extraction.model_copy(
            update={"n_process": self.threads})})
        c = settings.chunking
        self.chunker = Chunker(make_embedder(settings.embedder).count_tokens, c.max_tokens, c.overlap_tokens,
                               c.sections)
        self.aliases = AliasCache()
        # None for an extractor that is not local (the LLM): the ingest process extracts the batch
        self.extractor = local_extractor(self.settings.extraction,
                                         resolve=lambda eid: self.aliases.aliases.get(eid, eid))
        if self.extractor is not None:
            self.extractor.extract([])  # the spaCy model loads now
        self.chunker.chunk_document("warm", "Warm up.")  # and the sentencizer and the tokenizer
        self.loads = 1
        self.node = ray.util.get_node_ip_address()

    def info(self) -> dict[str, Any]:
        """What this actor declared to Ray and what it runs."""
        import torch

        return {"kind": "parse", "loads": self.loads, "node": self.node, "pid": os.getpid(),
                "cpus": _assigned("CPU"), "gpus": _assigned("GPU"), "torch_threads": torch.get_num_threads(),
                "spacy_n_process": self.settings.extraction.n_process}

    def _run(self, batch: list[SourceText]) -> Computed:
        report = IngestReport()
        prepared = prepare(self.chunker, batch, self.settings.max_document_chunks, report)
        out = Computed(prepared, skipped=report.skipped, stage_seconds=report.stage_seconds)
        if prepared is not None and self.extractor is not None:
            with stage(report, "extract"):
                out.extraction = self.extractor.extract(prepared.to_extract)
        return out

    def parse(self, batch: list[SourceText], aliases: AliasChain) -> tuple[list[DeadLetter], Computed]:
        """The batch chunked and extracted, resolving entities by the alias map ``aliases`` stands for.
        Where it raises, each document is tried alone: those that raise again are dead letters, and the
        others are parsed together. Returns the dead letters apart too (the engine reads them without
        fetching the batch)."""
        import ray

        fetched = self.aliases.update(aliases, ray.get)
        try:
            out = self._run(batch)
        except Exception as exc:  # one document's failure: find it
            if len(batch) == 1:
                failed = {batch[0].document.id: exc}
            else:
                failed = {}
                for s in batch:
                    try:
                        self._run([s])
                    except Exception as one:
                        failed[s.document.id] = one
            out = self._run([s for s in batch if s.document.id not in failed])
            out.dead = [DeadLetter(source=s.document.source, document_id=s.document.id,
                                   content_hash=s.document.content_hash, error=_error(failed[s.document.id]))
                        for s in batch if s.document.id in failed]
        out.alias_entries, out.node = fetched, self.node
        return out.dead, out


class EmbedActor:
    """Embeds parsed batches with ``threads`` intra-op threads (or on its GPU share); loads the model once."""

    def __init__(self, settings: WorkerSettings, threads: int) -> None:
        import ray

        _set_threads(threads)
        self.threads = threads
        self.embedder = make_embedder(settings.embedder.model_copy(update={"threads": threads}))
        self.embedder.embed(["warm"])  # the model loads now
        self.loads = 1
        self.node = ray.util.get_node_ip_address()

    def info(self) -> dict[str, Any]:
        """What this actor declared to Ray and what it runs (onnxruntime's threads where it embeds with it)."""
        import torch

        session = getattr(self.embedder, "_sess", None)
        onnx = session.get_session_options().intra_op_num_threads if session is not None else None
        return {"kind": "embed", "loads": self.loads, "node": self.node, "pid": os.getpid(),
                "cpus": _assigned("CPU"), "gpus": _assigned("GPU"), "torch_threads": torch.get_num_threads(),
                "onnx_threads": onnx}

    def embed(self, parsed: Computed) -> Computed:
        """Embed what a parse actor parsed, as the local engine does (chunk texts in one call, as
        ``vector_points`` embeds them; then entity names and relation types)."""
        parsed.embed_node = self.node
        prepared = parsed.prepared
        if prepared is None:
            return parsed
        report = IngestReport(stage_seconds=parsed.stage_seconds)
        with stage(report, "embed"):
            groups = [[c.text for c in prepared.chunks]]
            if parsed.extraction is not None:
                groups.append(list(dict.fromkeys(e.name for e in parsed.extraction.entities.values())))
                groups.append(sorted({type_text(r) for r in merge_relations(parsed.extraction.relations)}))
            parsed.texts = [t for g in groups for t in g]
            parsed.vectors = np.concatenate([self.embedder.embed(g) for g in groups if g] or
                                            [np.zeros((0, self.embedder.dim), dtype=np.float32)])
        parsed.stage_seconds = report.stage_seconds
        return parsed
