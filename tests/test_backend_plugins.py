"""Backends from another package: a distribution declaring entry points in the groups
``hopgraph.graph_backends`` and ``hopgraph.vector_backends`` (a dist-info on ``sys.path``, as an install
leaves it) adds backends the settings choose by name alone; the graph one, a thin wrapper over the
in-memory store with capabilities of its own, passes the store contract's scenario of every role, and
hopgraph ingests and answers through both."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hopgraph import Platform
from hopgraph.core.collections import placed
from hopgraph.core.settings import GraphSettings, Settings, VectorSettings
from hopgraph.graphdb.factory import drop_database, open_graph_store
from hopgraph.graphdb.registry import GRAPH_BACKENDS, graph_backend, graph_backend_names, graph_dialect
from hopgraph.testing import MemoryGraphStore
from hopgraph.vectors.factory import open_vector_store
from hopgraph.vectors.registry import VECTOR_BACKENDS, vector_backend, vector_backend_names
from tests.hash_embedder import HashEmbedder
from tests.store_scenarios import SCENARIOS

MODULE = "hopgraph_plugin_demo"
PLUGIN = '''"""A user's package with a graph and a vector backend of its own."""
from hopgraph.core.backends import Backend, GraphBackendSpec
from hopgraph.graphdb.memory.store import MemoryGraphStore

OPENED = []
DROPPED = []


class WrappedGraph(MemoryGraphStore):
    """The in-memory store under another name."""


def open_graph(settings):
    OPENED.append(WrappedGraph())
    return OPENED[-1]


GRAPH = GraphBackendSpec("wrapped-graph", open_graph, durable=False, single_writer=True,
                         collection_separator="-", dropper=lambda settings: DROPPED.append(settings.graph.database))


def vectors():
    return Backend("wrapped-vectors", "hopgraph.vectors.factory:open_qdrant_memory", durable=False)
'''
ENTRY_POINTS = f"""[hopgraph.graph_backends]
wrapped-graph = {MODULE}:GRAPH

[hopgraph.vector_backends]
wrapped-vectors = {MODULE}:vectors
broken-vectors = {MODULE}:no_such_thing
"""
RECORDS = [{"id": "ada", "title": "Ada", "text": "Ada Lovelace wrote the first program for the Analytical Engine."},
           {"id": "alan", "title": "Alan", "text": "Alan Turing worked at Bletchley Park during the war."}]


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """The package installed on ``sys.path`` (its module and dist-info); removed after."""
    site = tmp_path / "site"
    (site / f"{MODULE}-0.1.dist-info").mkdir(parents=True)
    (site / f"{MODULE}.py").write_text(PLUGIN)
    (site / f"{MODULE}-0.1.dist-info" / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {MODULE}\n"
                                                               "Version: 0.1\n")
    (site / f"{MODULE}-0.1.dist-info" / "entry_points.txt").write_text(ENTRY_POINTS)
    monkeypatch.syspath_prepend(str(site))
    for registry in (GRAPH_BACKENDS, VECTOR_BACKENDS):
        registry.reload_plugins()
    yield sys.modules.get(MODULE)
    GRAPH_BACKENDS.unregister("wrapped-graph")
    VECTOR_BACKENDS.unregister("wrapped-vectors")
    for registry in (GRAPH_BACKENDS, VECTOR_BACKENDS):
        registry.reload_plugins()
    sys.modules.pop(MODULE, None)


def _settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path, graph=GraphSettings(backend="wrapped-graph"),
                    vectors=VectorSettings(backend="wrapped-vectors"))


def test_entry_points_add_backends_the_settings_choose(plugin: object, tmp_path: Path,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    assert graph_backend_names()[:3] == ("arcadedb", "neo4j", "memory")  # the built-ins first, in order
    assert "wrapped-graph" in graph_backend_names() and "wrapped-vectors" in vector_backend_names()
    assert "broken-vectors" not in vector_backend_names() and "broken-vectors" in caplog.text  # logged, skipped
    spec = graph_backend("wrapped-graph")
    assert (spec.durable, spec.single_writer, graph_dialect("wrapped-graph")) == (False, True, None)
    assert not vector_backend("wrapped-vectors").single_writer
    settings = _settings(tmp_path)
    store = open_graph_store(settings)
    assert type(store).__name__ == "WrappedGraph"
    # what the backend declares, not its name, places a collection and drops it
    people = placed(settings, "people")
    assert people.graph.database == "hopgraph-people"
    assert settings.graph_identity == f"wrapped-graph:{settings.graph_dir.resolve()}/hopgraph"
    drop_database(people)
    assert sys.modules[MODULE].DROPPED == ["hopgraph-people"]  # type: ignore[attr-defined]
    vectors = open_vector_store(settings)
    assert type(vectors).__name__ == "QdrantClientVectorStore"  # the qdrant-client store in memory
    vectors.close()


@pytest.mark.parametrize("role", SCENARIOS)
def test_the_plugin_graph_passes_every_role_scenario(plugin: object, role: str, tmp_path: Path) -> None:
    expected = SCENARIOS[role](MemoryGraphStore())
    store = open_graph_store(_settings(tmp_path))
    try:
        assert SCENARIOS[role](store) == expected
    finally:
        store.close()


def test_hopgraph_ingests_and_answers_through_the_plugin_backends(plugin: object, tmp_path: Path) -> None:
    with Platform(_settings(tmp_path), embedder=HashEmbedder()) as p:
        report = p.ingest_records(RECORDS, collection="people")
        assert report.documents_ingested == 2 and p._store is sys.modules[MODULE].OPENED[-1]  # type: ignore[attr-defined]
        assert [r.citation.source for r in p.query("Who worked at Bletchley Park?", mode="bm25",
                                                   top_k=1).results] == ["people#alan"]
        assert p.query("Who worked at Bletchley Park?", mode="graph", top_k=1).results[0].citation.source \
            == "people#alan"
    assert not (tmp_path / "index").exists()  # neither backend is durable: no index state is persisted


def test_without_the_package_its_names_are_unknown() -> None:
    assert "wrapped-graph" not in graph_backend_names() and "wrapped-vectors" not in vector_backend_names()
