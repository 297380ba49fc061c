"""What runs on the Ray workers: a batch is parsed (chunked, spaCy-extracted) by one task and embedded
(chunk texts, entity names, relation types) by a second, so that the two stages take different
resources — parsing one CPU, embedding its threads' CPUs or a share of a GPU — and a cluster's CPU-only
nodes parse while its GPU nodes embed. The second task is given the first's result by reference: Ray
runs it once the parse is done and moves the parsed batch between the nodes itself.

A worker process keeps what it loaded between tasks (``_PARSERS``, ``_EMBEDDERS``: one of each for the
settings it last served), and the alias map it built (``alias_sync``). Tasks are given
``WorkerSettings``, never the stores' or the LLM's credentials.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict

from hopgraph.core.records import IngestReport
from hopgraph.core.settings import ChunkingSettings, EmbedderSettings, ExtractionSettings, Settings
from hopgraph.ingest.alias_sync import AliasCache, AliasChain
from hopgraph.ingest.batches import Prepared, prepare, stage
from hopgraph.ingest.chunking import Chunker
from hopgraph.ingest.extraction import Extraction
from hopgraph.ingest.extractors import local_extractor
from hopgraph.ingest.relation_vectors import type_text
from hopgraph.ingest.source_text import SourceText
from hopgraph.ingest.texts import merge_relations
from hopgraph.vectors.embedders import Embedder, make_embedder

T = TypeVar("T")


class WorkerSettings(BaseModel):
    """What a Ray task is given: the models' and the chunker's settings and the chunk limit. Never the
    stores' or the LLM's credentials (``Settings`` holds them; a task's arguments are pickled in clear)."""

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
    """One batch as the tasks send it back: chunked, extracted (None with another extractor than spaCy),
    the texts embedded with their vectors (after the embedding task), what was skipped and how long each
    stage took."""

    prepared: Prepared | None
    extraction: Extraction | None = None
    texts: list[str] = field(default_factory=list)
    vectors: np.ndarray | None = None
    skipped: dict[str, str] = field(default_factory=dict)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    node: str = ""  # where the batch was parsed
    embed_node: str = ""  # where it was embedded
    loads: int = 0  # worker processes that loaded their models for this batch (their first task)
    alias_entries: int = 0  # alias entries the parsing process fetched (the links of the chain it lacked)


class _Parser:
    """What a parsing process keeps: the chunker (it counts word pieces with the embedder's tokenizer,
    not its model), the spaCy extractor and the alias map."""

    def __init__(self, settings: WorkerSettings) -> None:
        self.settings = settings
        c = settings.chunking
        self.chunker = Chunker(make_embedder(settings.embedder).count_tokens, c.max_tokens, c.overlap_tokens,
                               c.sections)
        self.aliases = AliasCache()
        # None for an extractor that is not local (the LLM): the ingest process extracts the batch
        self.extractor = local_extractor(settings.extraction, resolve=lambda eid: self.aliases.aliases.get(eid, eid))

    def run(self, batch: list[SourceText]) -> Computed:
        report = IngestReport()
        prepared = prepare(self.chunker, batch, self.settings.max_document_chunks, report)
        out = Computed(prepared, skipped=report.skipped, stage_seconds=report.stage_seconds)
        if prepared is not None and self.extractor is not None:
            with stage(report, "extract"):
                out.extraction = self.extractor.extract(prepared.to_extract)
        return out


_PARSERS: dict[str, _Parser] = {}
_EMBEDDERS: dict[str, Embedder] = {}


def _kept(cache: dict[str, T], key: str, make: Callable[[], T]) -> tuple[T, bool]:
    """What ``cache`` holds for ``key``, made by ``make()`` if it holds nothing for it (what it held for
    other settings is dropped), and whether it was made now."""
    if key in cache:
        return cache[key], False
    cache.clear()
    cache[key] = made = make()
    return made, True


def parse_batch(settings: WorkerSettings, batch: list[SourceText], aliases: AliasChain,
                warm: bool = False) -> Computed:
    """The first task: chunk and extract one batch, resolving entities by the alias map ``aliases``
    stands for (``warm``: load the spaCy model now, for a batch of none)."""
    import ray

    parser, loaded = _kept(_PARSERS, settings.model_dump_json(), lambda: _Parser(settings))
    if warm and parser.extractor is not None:
        parser.extractor.extract([])
    fetched = parser.aliases.update(aliases, ray.get)
    out = parser.run(batch)
    out.alias_entries, out.loads = fetched, int(loaded)
    out.node = ray.util.get_node_ip_address()
    return out


def embed_batch(settings: WorkerSettings, parsed: Computed, threads: int, warm: bool = False) -> Computed:
    """The second task: embed what the first parsed, as the local engine does (chunk texts in one call,
    as ``vector_points`` embeds them; then entity names and relation types), with ``threads`` intra-op
    threads — the ingest process's count: the float sums of a matrix product depend on how many threads
    split it, so the same count gives the same vectors."""
    import ray
    import torch

    def make() -> Embedder:
        torch.set_num_threads(threads)
        return make_embedder(settings.embedder)

    embedder, loaded = _kept(_EMBEDDERS, settings.embedder.model_dump_json() + f"/{threads}", make)
    if warm:
        embedder.embed(["warm"])
    parsed.loads += int(loaded)
    parsed.embed_node = ray.util.get_node_ip_address()
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
        parsed.vectors = np.concatenate([embedder.embed(g) for g in groups if g] or
                                        [np.zeros((0, embedder.dim), dtype=np.float32)])
    parsed.stage_seconds = report.stage_seconds
    return parsed
