"""Open the configured graph store: the backend ``graph.backend`` names (``graphdb.registry``), with its
pending migrations applied. The Bolt backends' opener is here too."""

from __future__ import annotations

from urllib.parse import urlparse

from hopgraph.core.settings import Settings
from hopgraph.graphdb.arcadedb_server import (
    EmbeddedArcadeDB,
    drop_arcadedb_database,
    ensure_database,
    on_server_ports,
)
from hopgraph.graphdb.bolt import BoltGraphStore, GraphStoreError
from hopgraph.graphdb.dialect import dialect_for
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


def open_bolt_store(settings: Settings) -> BoltGraphStore:
    """The ``arcadedb`` and ``neo4j`` backends: the embedded ArcadeDB (started when needed) or a server
    at ``graph.uri``, over Bolt."""
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
    return BoltGraphStore(uri, auth, cfg, dialect_for(cfg.backend))


def drop_database(settings: Settings) -> None:
    """Drop the graph database ``graph.database`` names (a deleted collection's): over ArcadeDB's HTTP
    API, or ``DROP DATABASE`` on a Neo4j server (Enterprise: Community has one database). A missing
    database is not an error; the in-memory backend keeps nothing to drop."""
    cfg = settings.graph
    if cfg.backend == "arcadedb":
        if cfg.uri is None:
            info = EmbeddedArcadeDB(settings.graph_dir, cfg).ensure_running()
            cfg, host, password = on_server_ports(cfg, info), cfg.host, info.password
        else:
            host = urlparse(cfg.uri).hostname or cfg.host
            password = cfg.password.get_secret_value() if cfg.password else ""
        drop_arcadedb_database(host, cfg.http_port, "root" if cfg.uri is None else cfg.user, password, cfg.database)
    elif cfg.backend == "neo4j":
        import neo4j

        password = cfg.password.get_secret_value() if cfg.password else ""
        with neo4j.GraphDatabase.driver(cfg.uri or "", auth=(cfg.user, password)) as drv, \
                drv.session(database="system") as s:
            s.run("DROP DATABASE $name IF EXISTS", name=cfg.database).consume()
