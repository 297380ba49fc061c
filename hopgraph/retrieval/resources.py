"""What query modes share between queries: the stores, the models, the index keeper (whose state
holds everything derived per graph version: BM25, PPR walks, a mode's own memos), the rerankers, and
what a mode keeps for itself between queries (``kept``: the torch PPR engine, the pcst and gnn modes'
device parts), built the first time a query of that mode needs it. Caches are replaced whole, never
mutated in place, so concurrent queries (the API's threads) never see a half-updated one."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from hopgraph.core.gpu_settings import GpuSettings
from hopgraph.core.result_settings import NliSettings
from hopgraph.graphdb.protocols import IndexSource
from hopgraph.retrieval.index.keeper import IndexKeeper
from hopgraph.retrieval.index.state import IndexState
from hopgraph.retrieval.parts.keyword import KeywordIndex
from hopgraph.retrieval.parts.nli_clusters import NliScorer
from hopgraph.retrieval.parts.ppr import JointWalk
from hopgraph.retrieval.parts.rerank import Reranker, make_reranker
from hopgraph.vectors.clip import ClipEmbedder
from hopgraph.vectors.embedders import Embedder
from hopgraph.vectors.store import VectorStore

T = TypeVar("T")


class Resources:
    """The stores, models and index keeper of one retriever."""

    def __init__(self, graph: IndexSource, vectors: VectorStore, embedder: Embedder, keeper: IndexKeeper,
                 gpu: GpuSettings, gnn_checkpoint: Path | None = None, clip: ClipEmbedder | None = None) -> None:
        self.graph = graph
        self.vectors = vectors
        self.embedder = embedder
        self.keeper = keeper
        self.gpu = gpu  # the device settings (``gpu.*``) of the torch engines a mode may build
        self.gnn_checkpoint = gnn_checkpoint
        self.clip = clip
        self._rerankers: dict[str, Reranker] = {}
        self._nli: dict[tuple[str, str, tuple[str, ...]], NliScorer] = {}
        self._kept: dict[str, Any] = {}
        self._lock = threading.Lock()

    def kept(self, key: str, build: Callable[[], T]) -> T:
        """What a mode keeps between queries under ``key``: ``build()`` the first time it is asked for."""
        found = self._kept.get(key)
        if found is None:
            with self._lock:
                found = self._kept.get(key)
                if found is None:
                    found = build()
                    self._kept = {**self._kept, key: found}
        return found

    def forget(self, key: str) -> None:
        """Drop what a mode keeps under ``key`` (built again on next use)."""
        with self._lock:
            self._kept = {k: v for k, v in self._kept.items() if k != key}

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
