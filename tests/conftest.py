"""Shared fixtures: one real embedded ArcadeDB server per session, a database per test,
the real MiniLM embedder and spaCy model, and qdrant-edge in a temporary directory."""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from hopgraph.app.platform import Platform
from hopgraph.core.settings import GraphSettings, RetrievalSettings, Settings
from hopgraph.graphdb.bolt.arcadedb_server import EmbeddedArcadeDB, ServerInfo
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.paths import SHARED_DATA, missing_data_message, reads_shared_data
from tests.scheduling import module_of, order_longest_first, pytest_xdist_make_scheduler  # noqa: F401 (a hook)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


#: the JVM options of the ArcadeDB servers the tests start: the client compiler only, which cuts the
#: server's CPU by a third to a half on the short runs of a test (its start, database creation, small
#: statements); the product keeps the JVM's default
TEST_JVM_OPTIONS = ["-XX:TieredStopAtLevel=1"]


def server_settings(heap: str = "512m", **extra: Any) -> GraphSettings:
    """Settings of an embedded ArcadeDB server a test starts: free ports, a small heap, ``TEST_JVM_OPTIONS``."""
    return GraphSettings(bolt_port=free_port(), http_port=free_port(), heap=heap, jvm_options=TEST_JVM_OPTIONS,
                         **extra)


@pytest.fixture(scope="session")
def arcadedb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerInfo]:
    """A real ArcadeDB server (bundled JRE, Bolt plugin) for the whole session."""
    root = tmp_path_factory.mktemp("arcadedb")
    cfg = server_settings(heap="768m")
    server = EmbeddedArcadeDB(root, cfg)
    info = server.ensure_running()
    yield info
    server.stop()


@pytest.fixture(scope="session")
def embedder() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


#: tests never let a stage cap degrade a mode: a ranking must not depend on the machine's load
#: (degradation itself is tested with an injected slow stage, see test_retrieval)
NO_CAPS = RetrievalSettings(stage_cap_ms=None)


#: the databases ``settings_for`` named in the running module (see ``_drop_module_databases``)
_MADE: list[tuple[ServerInfo, str]] = []


def settings_for(info: ServerInfo, data_dir: Path, database: str | None = None, **extra: object) -> Settings:
    """Settings that use the session's server, a fresh database and a fresh data dir, no stage caps."""
    graph = GraphSettings(
        uri=info.uri, password=info.password, http_port=info.http_port,  # type: ignore[arg-type]
        database=database or f"t{uuid.uuid4().hex[:12]}",
    )
    _MADE.append((info, graph.database))
    extra.setdefault("retrieval", NO_CAPS)
    return Settings(data_dir=data_dir, graph=graph, **extra)  # type: ignore[arg-type]


def drop_database(info: ServerInfo, name: str) -> None:
    """Drop a database of a running ArcadeDB server (nothing if it or the server is gone)."""
    with contextlib.suppress(httpx.HTTPError):  # a server a test started and stopped itself
        httpx.post(f"http://{info.host}:{info.http_port}/api/v1/server", auth=("root", info.password),
                   json={"command": f"drop database {name}"}, timeout=30.0)


@pytest.fixture(scope="module", autouse=True)
def _drop_module_databases() -> Iterator[None]:
    """Each module's databases are dropped when it ends: the session's one server would otherwise keep
    every test's database open (some 55 files, its caches and schema each) to the end of the run."""
    start = len(_MADE)
    yield
    made, _MADE[start:] = _MADE[start:], []
    for info, name in dict.fromkeys(made):
        drop_database(info, name)


@pytest.fixture
def settings(arcadedb: ServerInfo, tmp_path: Path) -> Settings:
    return settings_for(arcadedb, tmp_path / "data")


@pytest.fixture
def platform(settings: Settings, embedder: SentenceTransformerEmbedder) -> Iterator[Platform]:
    with Platform(settings, embedder=embedder) as p:
        yield p


#: fixtures that start or load a real engine or model: a test using one is an integration test
ENGINE_FIXTURES = {"arcadedb", "embedder", "settings", "platform", "store", "loaded", "ingested", "hotpot",
                   "reader", "api", "api_url", "api_schema", "admin", "server", "llm", "neo4j_uri", "qdrant_url"}
#: modules whose tests run the CLI, a server, worker processes or a Ray cluster, or load a model or a vector
#: engine, themselves
ENGINE_MODULES = {"test_cli", "test_serve_cli", "test_clip", "test_docker", "test_kill_resume", "test_vectors",
                  "test_arcadedb_server", "test_embedders", "test_demo", "test_extraction_worker", "test_ray_ingest",
                  "test_plain_encoder", "test_wheel", "test_graph_ports", "test_upgrade",
                  "test_ray_pools"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark integration tests, so ``pytest -m "not integration"`` runs the fast unit tests alone, and put
    the longest modules first (a stable sort: each module's tests stay together and in their order)."""
    for item in items:
        if module_of(item.nodeid) in ENGINE_MODULES or ENGINE_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.integration)
    order_longest_first(items)


def pytest_collection_finish(session: pytest.Session) -> None:
    """A run whose selected tests come from modules reading the developer data stops, saying where it
    looked, when the data is not there: before the first test (with pytest-xdist, each worker after its
    first), instead of each test failing on a missing file."""
    if SHARED_DATA.is_dir():
        return
    readers = sorted({item.module.__name__ for item in session.items
                      if isinstance(item, pytest.Function) and reads_shared_data(item.module)})
    if not readers:
        return
    message = missing_data_message(readers)
    if not hasattr(session.config, "workerinput"):
        raise pytest.UsageError(message)
    # a pytest-xdist worker: an error here would leave the controller waiting for tests that never come;
    # the worker says why and stops after its first test, and the controller stops with the same message
    sys.stderr.write(f"\nERROR: {message}\n")
    session.shouldfail = message


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """A failure's test and error, printed the moment it fails: a run that dies later (a crashed native
    library, a killed CI job) still says what failed before."""
    if report.failed:
        lines = str(report.longrepr).strip().splitlines() or ["?"]
        error = next((line for line in lines if line.startswith("E ")), lines[-1])
        sys.stderr.write(f"\n{report.when.upper()} FAILED {report.nodeid}: {error.strip()[:300]}\n")
        sys.stderr.flush()
