"""Graph backends by name: ``graph.backend`` picks one of those registered here, and
``graphdb.factory.open_graph_store`` opens it.

Each backend is a folder of ``graphdb`` that declares a ``GraphBackendSpec`` (``core.backends``): its
opener and what it can do (single writer, a database per collection or a partition key, how a
collection's data is dropped, its Cypher dialect, durable or not). Built in: the Bolt adapter's
(``graphdb.bolt.backend``: the embedded ArcadeDB server, or a Neo4j 5 server) and the in-memory store
(``graphdb.memory.backend``: nothing outlives the process). A plug-in registers its own::

    from hopgraph.graphdb.registry import register_graph_backend
    register_graph_backend("mygraph", lambda settings: MyGraph(settings.graph))

or declares a ``GraphBackendSpec`` under the entry-point group ``hopgraph.graph_backends``, loaded on
the first look-up of a name. An opener returns every role of ``graphdb.protocols.GraphBackend``,
unmigrated (the factory applies the migrations). This module loads no driver: openers import theirs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hopgraph.core.backends import BackendRegistry, GraphBackendSpec, Opener
from hopgraph.graphdb.bolt.backend import BOLT_BACKENDS
from hopgraph.graphdb.memory.backend import MEMORY_BACKEND

if TYPE_CHECKING:
    from hopgraph.graphdb.protocols import GraphBackend

__all__ = ["GRAPH_BACKENDS", "graph_backend", "graph_backend_names", "graph_dialect", "register_graph_backend"]

#: the entry-point group a package declares its graph backends in
GROUP = "hopgraph.graph_backends"

#: every graph backend, by the name ``graph.backend`` gives
GRAPH_BACKENDS: BackendRegistry[GraphBackend] = BackendRegistry("graph.backend", GROUP, GraphBackendSpec)
for _backend in (*BOLT_BACKENDS, MEMORY_BACKEND):
    GRAPH_BACKENDS.add(_backend)
GRAPH_BACKENDS.publish()


def register_graph_backend(name: str, opener: Opener[GraphBackend] | str, *, durable: bool = True,
                           replace: bool = False, **capabilities: Any) -> None:
    """Make ``graph.backend = name`` open the store ``opener(settings)`` returns (``durable``: whether
    the graph outlives the process; ``replace``: take over a registered name; ``capabilities``: the other
    fields of ``GraphBackendSpec``)."""
    GRAPH_BACKENDS.register(name, opener, durable=durable, replace=replace, **capabilities)


def graph_backend_names() -> tuple[str, ...]:
    """The names ``graph.backend`` may take."""
    return GRAPH_BACKENDS.names


def graph_backend(name: str) -> GraphBackendSpec[GraphBackend]:
    """The graph backend registered as ``name``; ``UnknownBackendError`` naming the registered ones if none."""
    return GRAPH_BACKENDS.get(name)  # type: ignore[return-value]


def graph_dialect(name: str) -> str | None:
    """The Cypher dialect of the backend ``name`` (None: no Cypher, or no such backend)."""
    found = GRAPH_BACKENDS.find(name)
    return found.dialect if isinstance(found, GraphBackendSpec) else None
