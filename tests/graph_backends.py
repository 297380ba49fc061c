"""Graph store fixtures: the real ArcadeDB server everywhere, Neo4j 5 where Docker runs."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from hopgraph.core.settings import GraphSettings, Settings
from hopgraph.graphdb.bolt.store import BoltGraphStore
from hopgraph.graphdb.factory import open_graph_store


def docker_unavailable_reason() -> str | None:
    """Why Neo4j cannot be started through testcontainers here, or None if it can."""
    if shutil.which("docker") is None:
        return "no docker client on PATH"
    try:
        out = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"docker info failed: {exc}"
    if out.returncode != 0:
        return "no Docker engine is running (docker info: " + (out.stderr.strip().splitlines() or ["?"])[-1] + ")"
    return None


@pytest.fixture(scope="session")
def neo4j_uri() -> Iterator[tuple[str, str]]:
    reason = docker_unavailable_reason()
    if reason:
        pytest.skip(f"Neo4j 5 tests need Docker: {reason}")
    from testcontainers.neo4j import Neo4jContainer

    with Neo4jContainer("neo4j:5", password="hopgraph-test") as c:
        yield c.get_connection_url(), "hopgraph-test"


def open_store(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> BoltGraphStore:
    from .conftest import settings_for

    if backend == "arcadedb":
        settings = settings_for(request.getfixturevalue("arcadedb"), tmp_path / "data")
    else:
        uri, password = request.getfixturevalue("neo4j_uri")
        settings = Settings(data_dir=tmp_path / "data", graph=GraphSettings(
            backend="neo4j", uri=uri, user="neo4j", password=password, database="neo4j"))  # type: ignore[arg-type]
    store = open_graph_store(settings)
    assert isinstance(store, BoltGraphStore)  # these tests reach into the adapter (``read``, ``_write``)
    if backend == "neo4j":  # one shared database: start clean
        store._write(lambda tx: tx.run("MATCH (n) WHERE NOT n:Migration DETACH DELETE n").consume())
    return store
