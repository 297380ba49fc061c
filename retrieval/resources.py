"""What query modes share between queries: the stores, the models and the per-graph-version
caches (BM25 index, PPR transitions, image edges, the gpu/ parts, rerankers).

Every cache is replaced whole, never mutated in place, so concurrent queries (the API's threads)
never see a half-updated one; a race costs at most one extra build.
"""

from __future__ import annotations

import threading
from typing import Any

import scipy.sparse as sp

from graphdb.store import GraphStore
from hopgraph.core.settings import ImageRetrievalSettings
from retrieval import image
from retrieval.keyword import KeywordIndex
from retrieval.ppr import joint_transition
from retrieval.rerank import Reranker, make_reranker
from retrieval.snapshot import Snapshot, SnapshotCache
from retrieval.subgraph import GpuParts
from vectors.clip import ClipEmbedder
from vectors.embedders import Embedder
from vectors.store import VectorStore


class Resources:
    """The stores, models and caches of one retriever."""

    def __init__(self, graph: GraphStore, vectors: VectorStore, embedder: Embedder, cache: SnapshotCache,
                 gpu: GpuParts, clip: ClipEmbedder | None = None) -> None:
        self.graph = graph
        self.vectors = vectors
        self.embedder = embedder
        self.snapshots = cache
        self.gpu = gpu
        self.clip = clip
        self._keyword: dict[int, KeywordIndex] = {}
        self._transition: dict[tuple[int, float], sp.csr_matrix] = {}
        self._images: tuple[int, image.ImageIndex] | None = None
        self._edges: tuple[tuple[Any, ...], image.EntityEdges] | None = None
        self._rerankers: dict[str, Reranker] = {}
        self._lock = threading.Lock()

    def keyword(self, snap: Snapshot) -> KeywordIndex:
        """The BM25 index of the snapshot's chunks."""
        index = self._keyword.get(snap.version)
        if index is None:
            index = KeywordIndex(snap.chunk_texts)
            self._keyword = {snap.version: index}
        return index

    def transition(self, snap: Snapshot, link_weight: float) -> sp.csr_matrix:
        """The PPR transition of the snapshot, per link weight (a per-query setting)."""
        key = (snap.version, link_weight)
        transition = self._transition.get(key)
        if transition is None:
            transition = joint_transition(snap, link_weight=link_weight)
            self._transition = {**{k: v for k, v in self._transition.items() if k[0] == snap.version},
                                key: transition}
        return transition

    def image_index(self, snap: Snapshot) -> image.ImageIndex:
        """The image chunks of the snapshot."""
        if self._images is None or self._images[0] != snap.version:
            self._images = (snap.version, image.ImageIndex.of(snap))
        return self._images[1]

    def image_edges(self, snap: Snapshot, cfg: ImageRetrievalSettings) -> image.EntityEdges:
        """Image mode's expansion edges, per graph version AND edge settings."""
        key = (snap.version, cfg.similar_k, cfg.similar_min, cfg.cooccur_k)
        if self._edges is None or self._edges[0] != key:
            self._edges = (key, image.entity_edges(snap, cfg))
        return self._edges[1]

    def reranker(self, name: str) -> Reranker:
        """The reranker called ``name`` (loaded once)."""
        found = self._rerankers.get(name)
        if found is None:
            with self._lock:
                found = self._rerankers.get(name) or make_reranker(name, self.embedder)
                self._rerankers = {**self._rerankers, name: found}
        return found
