"""Vector backends by name: ``vectors.backend`` picks one of those registered here, and
``vectors.factory.open_vector_store`` opens it.

Built in: ``edge`` (embedded qdrant-edge shards under the data dir: one process owns them, and a
collection's shards go with its folder), ``server`` (a Qdrant server at ``vectors.url``) and ``memory``
(qdrant-client in memory: nothing outlives the process). A plug-in registers its own with
``register_vector_backend(name, opener)``, or declares a ``Backend`` (``core.backends``) under the
entry-point group ``hopgraph.vector_backends``; ``"module:function"`` openers are imported when first
opened (qdrant-client only when a Qdrant server or memory store is used).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hopgraph.core.backends import Backend, BackendRegistry, Dropper, Opener

if TYPE_CHECKING:
    from hopgraph.vectors.store import VectorStore

__all__ = ["VECTOR_BACKENDS", "register_vector_backend", "vector_backend", "vector_backend_names"]

#: the entry-point group a package declares its vector backends in
GROUP = "hopgraph.vector_backends"
#: the name of the in-memory backend (``hopgraph.testing`` chooses it)
MEMORY = "memory"

#: how a store that keeps its collections outside the data dir drops them: through the store itself
_DROP = "hopgraph.vectors.factory:drop_stored_collections"
#: every vector backend, by the name ``vectors.backend`` gives
VECTOR_BACKENDS: BackendRegistry[VectorStore] = BackendRegistry("vectors.backend", GROUP)
VECTOR_BACKENDS.add(Backend("edge", "hopgraph.vectors.factory:open_edge_store", single_writer=True))
VECTOR_BACKENDS.add(Backend("server", "hopgraph.vectors.factory:open_qdrant_server", dropper=_DROP))
VECTOR_BACKENDS.add(Backend(MEMORY, "hopgraph.vectors.factory:open_qdrant_memory", durable=False,
                            dropper=_DROP))


def register_vector_backend(name: str, opener: Opener[VectorStore] | str, *, durable: bool = True,
                            replace: bool = False, dropper: Dropper | str | None = _DROP,
                            **capabilities: Any) -> None:
    """Make ``vectors.backend = name`` open the store ``opener(settings)`` returns (``durable``: whether
    the vectors outlive the process; ``replace``: take over a registered name; ``dropper``: how a deleted
    collection's vectors go, by default through the store's ``drop_collections``)."""
    VECTOR_BACKENDS.register(name, opener, durable=durable, replace=replace, dropper=dropper, **capabilities)


def vector_backend(name: str) -> Backend[VectorStore]:
    """The vector backend registered as ``name``; ``UnknownBackendError`` naming the registered ones if none."""
    return VECTOR_BACKENDS.get(name)


def vector_backend_names() -> tuple[str, ...]:
    """The names ``vectors.backend`` may take."""
    return VECTOR_BACKENDS.names
