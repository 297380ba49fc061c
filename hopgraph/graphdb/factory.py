"""Open the configured graph store: the backend ``graph.backend`` names (``graphdb.registry``), with its
pending migrations applied; drop a deleted collection's graph the way its backend declares."""

from __future__ import annotations

from hopgraph.core.settings import Settings
from hopgraph.graphdb.protocols import GraphBackend
from hopgraph.graphdb.registry import GRAPH_BACKENDS


def open_graph_store(settings: Settings, migrate: bool = True) -> GraphBackend:
    """Open the registered backend ``graph.backend`` names and apply pending migrations; an unknown
    name is an ``UnknownBackendError`` listing the registered ones."""
    store = GRAPH_BACKENDS.open(settings.graph.backend, settings)
    if migrate:
        try:
            store.migrate()
        except Exception:
            store.close()
            raise
    return store


def drop_database(settings: Settings) -> None:
    """Drop the graph data of the collection ``settings`` are placed in (``graph.database`` names its
    database), with the backend's own dropper; a missing database is not an error, and a backend that
    keeps nothing (the in-memory one) drops nothing."""
    GRAPH_BACKENDS.get(settings.graph.backend).drop_collection(settings)
