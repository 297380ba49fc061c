"""Graph backends by name: ``graph.backend`` picks one of those registered here, and
``graphdb.factory.open_graph_store`` opens it.

Built in: ``arcadedb`` (the embedded server, or one at ``graph.uri``) and ``neo4j`` (a Neo4j 5 server
at ``graph.uri``), both the Bolt adapter; ``memory``, the in-memory store of ``hopgraph.testing`` (for a
user's own tests: nothing outlives the process). A plug-in registers its own::

    from hopgraph.graphdb.registry import register_graph_backend
    register_graph_backend("mygraph", lambda settings: MyGraph(settings.graph))

An opener returns every role of ``graphdb.protocols.GraphBackend``, unmigrated (the factory applies
the migrations). Openers named as ``"module:function"`` are imported when first opened, so that this
module loads no driver, and names ``hopgraph.testing`` (a layer above) without importing it.
"""

from __future__ import annotations

from hopgraph.core.backends import BackendRegistry, Opener
from hopgraph.graphdb.protocols import GraphBackend

__all__ = ["GRAPH_BACKENDS", "graph_backend_names", "register_graph_backend"]

#: every graph backend, by the name ``graph.backend`` gives
GRAPH_BACKENDS: BackendRegistry[GraphBackend] = BackendRegistry("graph.backend")
GRAPH_BACKENDS.register("arcadedb", "hopgraph.graphdb.factory:open_bolt_store")
GRAPH_BACKENDS.register("neo4j", "hopgraph.graphdb.factory:open_bolt_store")
GRAPH_BACKENDS.register("memory", "hopgraph.testing.memory_graph:open_memory_graph", durable=False)


def register_graph_backend(name: str, opener: Opener[GraphBackend] | str, *, durable: bool = True,
                           replace: bool = False) -> None:
    """Make ``graph.backend = name`` open the store ``opener(settings)`` returns (``durable``: whether
    the graph outlives the process; ``replace``: take over a registered name)."""
    GRAPH_BACKENDS.register(name, opener, durable=durable, replace=replace)


def graph_backend_names() -> tuple[str, ...]:
    """The names ``graph.backend`` may take."""
    return GRAPH_BACKENDS.names
