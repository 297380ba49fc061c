"""Vector backends by name: ``vectors.backend`` picks one of those registered here, and
``vectors.factory.open_vector_store`` opens it.

Built in: ``edge`` (embedded qdrant-edge shards under the data dir), ``server`` (a Qdrant server at
``vectors.url``) and ``memory`` (qdrant-client in memory: nothing outlives the process). A plug-in
registers its own with ``register_vector_backend(name, opener)``; ``"module:function"`` openers are
imported when first opened (qdrant-client only when a Qdrant server or memory store is used).
"""

from __future__ import annotations

from hopgraph.core.backends import BackendRegistry, Opener
from hopgraph.vectors.store import VectorStore

__all__ = ["VECTOR_BACKENDS", "register_vector_backend", "vector_backend_names"]

#: every vector backend, by the name ``vectors.backend`` gives
VECTOR_BACKENDS: BackendRegistry[VectorStore] = BackendRegistry("vectors.backend")
VECTOR_BACKENDS.register("edge", "hopgraph.vectors.factory:open_edge_store")
VECTOR_BACKENDS.register("server", "hopgraph.vectors.factory:open_qdrant_server")
VECTOR_BACKENDS.register("memory", "hopgraph.vectors.factory:open_qdrant_memory", durable=False)


def register_vector_backend(name: str, opener: Opener[VectorStore] | str, *, durable: bool = True,
                            replace: bool = False) -> None:
    """Make ``vectors.backend = name`` open the store ``opener(settings)`` returns (``durable``: whether
    the vectors outlive the process; ``replace``: take over a registered name)."""
    VECTOR_BACKENDS.register(name, opener, durable=durable, replace=replace)


def vector_backend_names() -> tuple[str, ...]:
    """The names ``vectors.backend`` may take."""
    return VECTOR_BACKENDS.names
