"""Open the configured graph store (starting the embedded server when needed)."""

from __future__ import annotations

from urllib.parse import urlparse

from hopgraph.core.settings import Settings
from hopgraph.graphdb.arcadedb_server import EmbeddedArcadeDB, ensure_database, on_server_ports
from hopgraph.graphdb.bolt import BoltGraphStore, GraphStoreError
from hopgraph.graphdb.dialect import dialect_for
from hopgraph.graphdb.protocols import GraphBackend


def open_graph_store(settings: Settings, migrate: bool = True) -> GraphBackend:
    """Connect to Neo4j or the embedded ArcadeDB per settings and apply pending migrations."""
    cfg = settings.graph
    if cfg.backend == "arcadedb" and cfg.uri is None:
        info = EmbeddedArcadeDB(settings.graph_dir, cfg).ensure_running()
        cfg = on_server_ports(cfg, info)  # a running server keeps its ports (a warning said so)
        uri, auth = info.uri, ("root", info.password)
    else:
        if cfg.uri is None:
            raise GraphStoreError("graph.uri is required for the neo4j backend (HOPGRAPH_GRAPH__URI)")
        password = cfg.password.get_secret_value() if cfg.password else ""
        uri, auth = cfg.uri, (cfg.user, password)
    if cfg.backend == "arcadedb":
        host = cfg.host if cfg.uri is None else (urlparse(cfg.uri).hostname or cfg.host)
        ensure_database(host, cfg.http_port, auth[0], auth[1], cfg.database)
    store = BoltGraphStore(uri, auth, cfg, dialect_for(cfg.backend))
    if migrate:
        try:
            store.migrate()
        except Exception:
            store.close()
            raise
    return store
