"""Open the configured vector store: the backend ``vectors.backend`` names (``vectors.registry``). The
built-in backends' openers are here too."""

from __future__ import annotations

from hopgraph.core.settings import Settings
from hopgraph.vectors.edge import EdgeVectorStore
from hopgraph.vectors.registry import VECTOR_BACKENDS
from hopgraph.vectors.store import VectorStore, VectorStoreError


def open_vector_store(settings: Settings) -> VectorStore:
    """Open the registered backend ``vectors.backend`` names; an unknown name is an
    ``UnknownBackendError`` listing the registered ones."""
    return VECTOR_BACKENDS.open(settings.vectors.backend, settings)


def drop_stored_collections(settings: Settings) -> None:
    """Drop a collection's vector collections through its store (one without ``drop_collections`` keeps
    them)."""
    store = open_vector_store(settings)
    try:
        drop = getattr(store, "drop_collections", None)
        if drop is not None:
            drop()
    finally:
        store.close()


def open_edge_store(settings: Settings) -> VectorStore:
    """``edge``: qdrant-edge shards in the data dir (``vectors.path``)."""
    return EdgeVectorStore(settings.vectors_dir, settings.vectors)


def open_qdrant_server(settings: Settings) -> VectorStore:
    """``server``: the Qdrant server at ``vectors.url``."""
    cfg = settings.vectors
    if not cfg.url:
        raise VectorStoreError("vectors.url is required for the server backend (HOPGRAPH_VECTORS__URL)")
    return _qdrant_client(settings, cfg.url)


def open_qdrant_memory(settings: Settings) -> VectorStore:
    """``memory``: qdrant-client in memory (tests; nothing outlives the process)."""
    return _qdrant_client(settings, ":memory:")


def _qdrant_client(settings: Settings, url: str) -> VectorStore:
    from hopgraph.vectors.qdrant_server import QdrantClientVectorStore  # qdrant-client: imported only when used

    cfg = settings.vectors
    key = cfg.api_key.get_secret_value() if cfg.api_key else None
    return QdrantClientVectorStore.connect(url, key, cfg.prefix, cfg.upsert_batch, cfg.timeout_s, cfg.exact_below,
                                           cfg.shard_number, cfg.replication_factor)
