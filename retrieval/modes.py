"""Query modes.

- ``naive``: chunk vectors → chunks.
- ``local``: entity vectors → the chunks that mention those entities. A chunk scores the sum
  over its seed entities of ``similarity * idf``, where ``idf = log(1 + N / df)`` damps entities
  mentioned everywhere; the chunk's own similarity to the query breaks ties.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Literal

import numpy as np

from graphdb.store import ChunkRecord, GraphStore
from hopgraph.models import Citation, QueryResult, RetrievedChunk
from hopgraph.settings import RetrievalSettings
from vectors.embedders import Embedder
from vectors.store import VectorStore

Mode = Literal["naive", "local"]
MODES: tuple[str, ...] = ("naive", "local")


class QueryError(ValueError):
    """A query cannot be answered as asked (bad mode, empty text...)."""


def _result(rank: int, score: float, c: ChunkRecord, entities: list[str] | None = None) -> RetrievedChunk:
    return RetrievedChunk(
        rank=rank, score=round(float(score), 6), text=c.text, entities=entities or [],
        citation=Citation(document_id=c.document_id, chunk_id=c.chunk_id, source=c.source),
    )


class Retriever:
    """Answers queries over the graph and vector stores."""

    def __init__(self, graph: GraphStore, vectors: VectorStore, embedder: Embedder,
                 cfg: RetrievalSettings) -> None:
        self.graph = graph
        self.vectors = vectors
        self.embedder = embedder
        self.cfg = cfg
        self._modes: dict[str, Callable[[np.ndarray, int, dict[str, float]], list[RetrievedChunk]]] = {
            "naive": self._naive, "local": self._local,
        }

    def query(self, text: str, mode: str = "naive", top_k: int | None = None) -> QueryResult:
        """Ranked, cited chunks for a query."""
        if not text or not text.strip():
            raise QueryError("the query text is empty")
        if mode not in self._modes:
            raise QueryError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
        k = top_k or self.cfg.top_k
        if k < 1:
            raise QueryError("top_k must be at least 1")
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        qvec = self.embedder.embed([text.strip()])[0]
        timings["embed"] = (time.perf_counter() - t0) * 1000
        results = self._modes[mode](qvec, k, timings)
        timings["total"] = (time.perf_counter() - t0) * 1000
        return QueryResult(query=text, mode=mode, results=results,
                           timings_ms={k_: round(v, 2) for k_, v in timings.items()})

    def _naive(self, qvec: np.ndarray, k: int, timings: dict[str, float]) -> list[RetrievedChunk]:
        t = time.perf_counter()
        hits = self.vectors.search("chunks", qvec, limit=k * 2)
        timings["vector_search"] = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        records = {c.chunk_id: c for c in self.graph.chunks_by_ids([h.id for h in hits])}
        timings["graph"] = (time.perf_counter() - t) * 1000
        ranked = [(h.score, records[h.id]) for h in hits if h.id in records][:k]
        return [_result(i + 1, s, c) for i, (s, c) in enumerate(ranked)]

    def _local(self, qvec: np.ndarray, k: int, timings: dict[str, float]) -> list[RetrievedChunk]:
        t = time.perf_counter()
        seeds = [h for h in self.vectors.search("entities", qvec, limit=self.cfg.entity_k)
                 if h.score >= self.cfg.min_entity_score]
        timings["vector_search"] = (time.perf_counter() - t) * 1000
        if not seeds:
            return []
        t = time.perf_counter()
        links = self.graph.chunks_of_entities([h.id for h in seeds])
        timings["graph"] = (time.perf_counter() - t) * 1000
        sim = {h.id: h.score for h in seeds}
        df: dict[str, int] = defaultdict(int)
        chunks: dict[str, ChunkRecord] = {}
        for link in links:
            df[link.entity_id] += 1
            chunks[link.chunk.chunk_id] = link.chunk
        n_chunks = max(self.vectors.count("chunks"), len(chunks), 1)
        score: dict[str, float] = defaultdict(float)
        names: dict[str, list[str]] = defaultdict(list)
        for link in links:
            idf = math.log(1.0 + n_chunks / df[link.entity_id])
            score[link.chunk.chunk_id] += sim[link.entity_id] * idf
            names[link.chunk.chunk_id].append(link.name)
        t = time.perf_counter()
        ties = self._chunk_similarity(qvec, list(chunks))
        timings["tie_break"] = (time.perf_counter() - t) * 1000
        order = sorted(chunks, key=lambda c: (-round(score[c], 6), -ties.get(c, 0.0), c))[:k]
        return [_result(i + 1, score[c], chunks[c], sorted(set(names[c]))) for i, c in enumerate(order)]

    def _chunk_similarity(self, qvec: np.ndarray, chunk_ids: list[str]) -> dict[str, float]:
        """Query similarity of the given chunks (a filtered vector search)."""
        if not chunk_ids:
            return {}
        hits = self.vectors.search("chunks", qvec, limit=len(chunk_ids), where={"id": chunk_ids})
        return {h.id: h.score for h in hits}
