"""The in-memory graph backend, as the registry lists it: one process's dicts, each opened store empty,
nothing to drop when a collection goes, no Cypher."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hopgraph.core.backends import GraphBackendSpec

if TYPE_CHECKING:
    from hopgraph.core.settings import Settings
    from hopgraph.graphdb.protocols import GraphBackend

#: the name ``graph.backend`` gives it
NAME = "memory"


def open_memory(settings: Settings) -> GraphBackend:
    """An empty in-memory graph."""
    from hopgraph.graphdb.memory.store import open_memory_graph

    return open_memory_graph(settings)


MEMORY_BACKEND: GraphBackendSpec[GraphBackend] = GraphBackendSpec(
    NAME, open_memory, durable=False, single_writer=True, dropper=None, collections="database", dialect=None)
