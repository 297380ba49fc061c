"""Open the configured vector store."""

from __future__ import annotations

from hopgraph.core.settings import Settings
from hopgraph.vectors.edge import EdgeVectorStore
from hopgraph.vectors.store import VectorStore, VectorStoreError


def open_vector_store(settings: Settings) -> VectorStore:
    """qdrant-edge in the data dir, a Qdrant server by URL, or qdrant-client in memory."""
    cfg = settings.vectors
    if cfg.backend == "edge":
        return EdgeVectorStore(settings.vectors_dir, cfg)
    if cfg.backend == "server" and not cfg.url:
        raise VectorStoreError("vectors.url is required for the server backend (HOPGRAPH_VECTORS__URL)")
    from hopgraph.vectors.qdrant_server import QdrantClientVectorStore  # qdrant-client: imported only when used

    url = cfg.url if cfg.backend == "server" else ":memory:"
    key = cfg.api_key.get_secret_value() if cfg.api_key else None
    return QdrantClientVectorStore.connect(url, key, cfg.prefix, cfg.upsert_batch, cfg.timeout_s, cfg.exact_below)
