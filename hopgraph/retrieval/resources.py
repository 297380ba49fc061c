"""What query modes share between queries: the stores, the models, the index keeper (whose state
holds everything derived per graph version: BM25, PPR walks, a mode's own memos), the gpu/ parts
and the rerankers. Caches are replaced whole, never mutated in place, so concurrent queries (the
API's threads) never see a half-updated one."""

from __future__ import annotations

import threading

from hopgraph.core.result_settings import NliSettings
from hopgraph.graphdb.protocols import IndexSource
from hopgraph.retrieval.index.keeper import IndexKeeper
from hopgraph.retrieval.index.state import IndexState
from hopgraph.retrieval.keyword import KeywordIndex
from hopgraph.retrieval.nli_clusters import NliScorer
from hopgraph.retrieval.ppr import JointWalk
from hopgraph.retrieval.rerank import Reranker, make_reranker
from hopgraph.retrieval.subgraph import GpuParts
from hopgraph.vectors.clip import ClipEmbedder
from hopgraph.vectors.embedders import Embedder
from hopgraph.vectors.store import VectorStore


class Resources:
    """The stores, models and index keeper of one retriever."""

    def __init__(self, graph: IndexSource, vectors: VectorStore, embedder: Embedder, keeper: IndexKeeper,
                 gpu: GpuParts, clip: ClipEmbedder | None = None) -> None:
        self.graph = graph
        self.vectors = vectors
        self.embedder = embedder
        self.keeper = keeper
        self.gpu = gpu
        self.clip = clip
        self._rerankers: dict[str, Reranker] = {}
        self._nli: dict[tuple[str, str, tuple[str, ...]], NliScorer] = {}
        self._lock = threading.Lock()

    @staticmethod
    def keyword(state: IndexState) -> KeywordIndex:
        """The BM25 index of the state's chunks."""
        return state.keyword

    @staticmethod
    def walk(state: IndexState, link_weight: float, session_weight: float = 0.0) -> JointWalk:
        """The PPR walk of the state, per link and session-link weight (per-query settings)."""
        return state.walk(link_weight, session_weight)

    def reranker(self, name: str) -> Reranker:
        """The reranker called ``name`` (loaded once)."""
        found = self._rerankers.get(name)
        if found is None:
            with self._lock:
                found = self._rerankers.get(name) or make_reranker(name, self.embedder)
                self._rerankers = {**self._rerankers, name: found}
        return found

    def nli(self, cfg: NliSettings) -> NliScorer:
        """The NLI cross-encoder of these settings (loaded once per model, device and label order)."""
        key = (str(cfg.model), cfg.device, cfg.labels)
        found = self._nli.get(key)
        if found is None:
            with self._lock:
                found = self._nli.get(key) or NliScorer(cfg)
                self._nli = {**self._nli, key: found}
        return found
