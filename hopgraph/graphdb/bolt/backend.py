"""The Bolt backends as the registry lists them: ``arcadedb`` (the embedded server, started when needed,
or one at ``graph.uri``) and ``neo4j`` (a Neo4j 5 server at ``graph.uri``), their openers and how a
collection's database is dropped. This module imports no driver: the openers do."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlparse

from hopgraph.core.backends import GraphBackendSpec
from hopgraph.graphdb.bolt.dialect import ARCADEDB, NEO4J

if TYPE_CHECKING:
    from hopgraph.core.settings import GraphSettings, Settings
    from hopgraph.graphdb.bolt.store import BoltGraphStore
    from hopgraph.graphdb.protocols import GraphBackend


def _password(cfg: GraphSettings) -> str:
    return cfg.password.get_secret_value() if cfg.password else ""


def open_arcadedb(settings: Settings) -> BoltGraphStore:
    """The embedded ArcadeDB (started when needed) or a server at ``graph.uri``, over Bolt; the
    database is created over its HTTP API when missing."""
    from hopgraph.graphdb.bolt.arcadedb_server import EmbeddedArcadeDB, ensure_database, on_server_ports
    from hopgraph.graphdb.bolt.store import BoltGraphStore

    cfg = settings.graph
    if cfg.uri is None:
        info = EmbeddedArcadeDB(settings.graph_dir, cfg).ensure_running()
        cfg = on_server_ports(cfg, info)  # a running server keeps its ports (a warning said so)
        uri, auth = info.uri, ("root", info.password)
    else:
        uri, auth = cfg.uri, (cfg.user, _password(cfg))
    host = cfg.host if cfg.uri is None else (urlparse(cfg.uri).hostname or cfg.host)
    ensure_database(host, cfg.http_port, auth[0], auth[1], cfg.database)
    return BoltGraphStore(uri, auth, cfg, ARCADEDB)


def open_neo4j(settings: Settings) -> BoltGraphStore:
    """A Neo4j 5 server at ``graph.uri`` (the store creates the database where the edition allows)."""
    from hopgraph.graphdb.bolt.store import BoltGraphStore, GraphStoreError

    cfg = settings.graph
    if cfg.uri is None:
        raise GraphStoreError("graph.uri is required for the neo4j backend (HOPGRAPH_GRAPH__URI)")
    return BoltGraphStore(cfg.uri, (cfg.user, _password(cfg)), cfg, NEO4J)


def drop_arcadedb(settings: Settings) -> None:
    """Drop the database ``graph.database`` names over ArcadeDB's HTTP API (a missing one is no error)."""
    from hopgraph.graphdb.bolt.arcadedb_server import EmbeddedArcadeDB, drop_arcadedb_database, on_server_ports

    cfg = settings.graph
    if cfg.uri is None:
        info = EmbeddedArcadeDB(settings.graph_dir, cfg).ensure_running()
        cfg, host, password = on_server_ports(cfg, info), cfg.host, info.password
    else:
        host = urlparse(cfg.uri).hostname or cfg.host
        password = _password(cfg)
    drop_arcadedb_database(host, cfg.http_port, "root" if cfg.uri is None else cfg.user, password, cfg.database)


def drop_neo4j(settings: Settings) -> None:
    """``DROP DATABASE`` on a Neo4j server (Enterprise: Community has one database); a missing one is no
    error."""
    import neo4j

    cfg = settings.graph
    with neo4j.GraphDatabase.driver(cfg.uri or "", auth=(cfg.user, _password(cfg))) as drv, \
            drv.session(database="system") as s:
        s.run("DROP DATABASE $name IF EXISTS", name=cfg.database).consume()


#: a database per collection, ``<graph.database>_<collection>``; the data dir's graph folder locates it
ARCADEDB_BACKEND: GraphBackendSpec[GraphBackend] = GraphBackendSpec(
    ARCADEDB.name, open_arcadedb, durable=True, single_writer=False, dropper=drop_arcadedb,
    collections="database", collection_separator="_", dialect=ARCADEDB.name, located_by="data_dir")
#: a database per collection, ``<graph.database>.<collection>`` (Neo4j's names allow no ``_``) at ``graph.uri``
NEO4J_BACKEND: GraphBackendSpec[GraphBackend] = GraphBackendSpec(
    NEO4J.name, open_neo4j, durable=True, single_writer=False, dropper=drop_neo4j,
    collections="database", collection_separator=".", dialect=NEO4J.name, located_by="uri")

#: the Bolt backends, in the order the registry lists them
BOLT_BACKENDS = (ARCADEDB_BACKEND, NEO4J_BACKEND)
