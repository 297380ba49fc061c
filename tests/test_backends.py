"""Backends chosen by name (``graphdb.registry``, ``vectors.registry``, ``core.backends``): a backend
registered under a new name is opened by the settings alone, and hopgraph ingests and answers through it;
an unknown name is a clear error naming the registered ones; ``hopgraph.testing`` runs a platform on the
in-memory stores, with no server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hopgraph import Platform
from hopgraph.app.doctor import diagnose
from hopgraph.core.backends import BackendRegistry, UnknownBackendError
from hopgraph.core.errors import BadInputError, ConflictError
from hopgraph.core.settings import GraphSettings, Settings, VectorSettings
from hopgraph.graphdb.factory import open_graph_store
from hopgraph.graphdb.protocols import GraphAdmin
from hopgraph.graphdb.registry import GRAPH_BACKENDS, graph_backend_names, register_graph_backend
from hopgraph.testing import MemoryGraphStore, memory_settings
from hopgraph.vectors.factory import open_vector_store
from hopgraph.vectors.registry import vector_backend_names
from tests.hash_embedder import HashEmbedder

RECORDS = [{"id": "ada", "title": "Ada", "text": "Ada Lovelace wrote the first program for the Analytical Engine."},
           {"id": "alan", "title": "Alan", "text": "Alan Turing worked at Bletchley Park during the war."}]


@pytest.fixture
def memory2() -> Iterator[list[MemoryGraphStore]]:
    """The in-memory store registered as ``memory2``; the stores it opened (the name is removed after)."""
    opened: list[MemoryGraphStore] = []

    def opener(settings: Settings) -> MemoryGraphStore:
        opened.append(MemoryGraphStore())
        return opened[-1]

    register_graph_backend("memory2", opener, durable=False)
    yield opened
    GRAPH_BACKENDS.unregister("memory2")


def test_the_built_in_backends_are_registered() -> None:
    assert {"arcadedb", "neo4j", "memory"} <= set(graph_backend_names())
    assert {"edge", "server", "memory"} <= set(vector_backend_names())
    assert Settings().graph.backend == "arcadedb" and Settings().vectors.backend == "edge"  # the defaults stay


def test_a_backend_registered_by_name_is_chosen_by_settings_alone(memory2: list[MemoryGraphStore],
                                                                  tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, graph=GraphSettings(backend="memory2"),
                        vectors=VectorSettings(backend="memory"))
    with Platform(settings, embedder=HashEmbedder()) as p:
        report = p.ingest_records(RECORDS, collection="people")
        assert report.documents_ingested == 2 and len(memory2) == 1 and p._store is memory2[0]
        assert memory2[0].counts()["Document"] == 2 and memory2[0].counts()["Chunk"] >= 2
        result = p.query("Who worked at Bletchley Park?", mode="bm25", top_k=1)
        assert [r.citation.source for r in result.results] == ["people#alan"]
        graph = p.query("Who worked at Bletchley Park?", mode="graph", top_k=1)
        assert graph.results[0].citation.source == "people#alan"
        checks = diagnose(p)
        assert all(c.ok for c in checks), [c for c in checks if not c.ok]
        assert "in-memory" in next(c.detail for c in checks if c.name == "index state")
    assert not (tmp_path / "index").exists()  # an in-memory graph's index state is never persisted


def test_an_unknown_backend_names_the_registered_ones(tmp_path: Path) -> None:
    with pytest.raises(UnknownBackendError, match=r"graph\.backend = 'nope'.*'arcadedb', 'neo4j', 'memory'") as exc:
        open_graph_store(Settings(data_dir=tmp_path, graph=GraphSettings(backend="nope")))
    assert isinstance(exc.value, BadInputError)  # a setting is wrong: exit code 2, HTTP 400
    with pytest.raises(UnknownBackendError, match=r"vectors\.backend = 'qdrnt'.*'edge', 'server', 'memory'"):
        open_vector_store(Settings(data_dir=tmp_path, vectors=VectorSettings(backend="qdrnt")))
    with pytest.raises(UnknownBackendError, match=r"graph\.backend"), Platform(Settings(
            data_dir=tmp_path, graph=GraphSettings(backend="nope"))) as p:
        p.status()


def test_the_registry_refuses_a_taken_name_and_loads_named_openers_on_first_use() -> None:
    registry: BackendRegistry[GraphAdmin] = BackendRegistry("graph.backend")
    registry.register("mem", "hopgraph.graphdb.memory.store:open_memory_graph")
    with pytest.raises(ConflictError, match="'mem' is registered already"):
        registry.register("mem", lambda s: MemoryGraphStore())
    with pytest.raises(BadInputError):
        registry.register(" ", lambda s: MemoryGraphStore())
    assert isinstance(registry.open("mem", Settings()), MemoryGraphStore)
    registry.register("mem", lambda s: MemoryGraphStore(graph_version=7), replace=True)
    assert registry.open("mem", Settings()).version() == 7 and registry.names == ("mem",)
    registry.unregister("mem")
    assert registry.names == ()


def test_hopgraph_testing_runs_a_platform_with_no_server(tmp_path: Path) -> None:
    settings = memory_settings(tmp_path)
    assert (settings.graph.backend, settings.vectors.backend) == ("memory", "memory")
    assert Settings(graph={"backend": "memory"}).graph.backend == "memory"
    with Platform(settings, embedder=HashEmbedder()) as p:
        assert isinstance(p._store, MemoryGraphStore) and p.status()["graph_version"] == 0
        assert p.query("Analytical Engine", mode="bm25").results == []  # an empty store answers nothing
        with pytest.raises(ConflictError, match="runs no Cypher"):
            p.console.explore("MATCH (n) RETURN n")
        p.ingest_records(RECORDS[:1])
        assert p.documents()[0].status == "complete"
        assert p.query("Analytical Engine", mode="bm25").results[0].citation.source == "api#ada"
