"""A data dir's running embedded server keeps its ports: settings that name other ports reach it on its
own, and say so; an unreachable HTTP port is explained (a real ArcadeDB server)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from hopgraph.core.settings import Settings
from hopgraph.graphdb.bolt.arcadedb_server import EmbeddedArcadeDB, GraphServerError, ServerInfo, ensure_database
from hopgraph.graphdb.factory import open_graph_store
from tests.conftest import free_port, server_settings


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, ServerInfo]]:
    """A data dir whose embedded server is running."""
    root = tmp_path_factory.mktemp("ports") / "data"
    server = EmbeddedArcadeDB(root / "arcadedb", server_settings())
    info = server.ensure_running()
    yield root, info
    server.stop()


def test_other_configured_ports_reach_the_running_server_and_say_so(
        data_dir: tuple[Path, ServerInfo], caplog: pytest.LogCaptureFixture) -> None:
    root, info = data_dir
    moved = server_settings()
    with caplog.at_level(logging.WARNING, logger="hopgraph.graphdb.bolt.arcadedb_server"):
        store = open_graph_store(Settings(data_dir=root, graph=moved))
    try:
        assert store.read("RETURN 1 AS one") == [{"one": 1}]
        assert store.explore("RETURN 1 AS one").rows == [[1]]  # over the server's HTTP API
    finally:
        store.close()
    said = " ".join(r.getMessage() for r in caplog.records)
    assert f"bolt {info.bolt_port} / http {info.http_port}" in said
    assert f"bolt {moved.bolt_port} / http {moved.http_port}" in said and "hopgraph db stop" in said


def test_an_unreachable_http_port_is_explained(data_dir: tuple[Path, ServerInfo]) -> None:
    _, info = data_dir
    wrong = free_port()
    with pytest.raises(GraphServerError, match=f"graph.http_port \\({wrong}\\).*HOPGRAPH_GRAPH__HTTP_PORT"):
        ensure_database(info.host, wrong, "root", info.password, "hopgraph", timeout_s=5)
