"""A second backend written role by role (``hopgraph.testing.networkx_source``): a read-only NetworkX
snapshot with the ``IndexSource`` and ``GraphAdmin`` roles only. The contract scenarios of those roles
(``tests/store_scenarios.py``) hold on it, with every read served by a snapshot copied from the in-memory
store the scenario writes to; a name registered for it is chosen by the settings alone; and the retrieval
index built from it ranks as the one built from the store it was copied from."""

from __future__ import annotations

import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from hopgraph import Platform
from hopgraph.core.errors import BadInputError, NotFoundError
from hopgraph.core.settings import GraphSettings, RetrievalSettings, Settings, VectorSettings
from hopgraph.graphdb.factory import open_graph_store
from hopgraph.graphdb.protocols import (
    CommunityStore,
    CypherConsole,
    DocumentReader,
    EntityEditor,
    GraphAdmin,
    GraphBrowser,
    IndexSource,
    IngestWriter,
    RunLog,
    SectionStore,
    TreeStore,
)
from hopgraph.graphdb.registry import GRAPH_BACKENDS, register_graph_backend
from hopgraph.retrieval.retriever import Retriever
from hopgraph.testing import MemoryGraphStore, memory_settings
from hopgraph.testing.networkx_source import NetworkxSource
from tests.hash_embedder import HashEmbedder
from tests.store_scenarios import SCENARIOS, Browsable, load

#: the roles the snapshot implements (the rest of ``graphdb.protocols`` it does not)
IMPLEMENTED = {"IndexSource": IndexSource, "GraphAdmin": GraphAdmin}
NOT_IMPLEMENTED = {"IngestWriter": IngestWriter, "DocumentReader": DocumentReader, "EntityEditor": EntityEditor,
                   "CommunityStore": CommunityStore, "TreeStore": TreeStore, "SectionStore": SectionStore,
                   "RunLog": RunLog, "GraphBrowser": GraphBrowser, "CypherConsole": CypherConsole}
NAME = "networkx-snapshot"
NO_CAPS = RetrievalSettings(stage_cap_ms=None)
RECORDS = [
    {"id": "ada", "title": "Ada", "text": "Ada Lovelace wrote the first program for the Analytical Engine."},
    {"id": "babbage", "title": "Babbage", "text": "Charles Babbage designed the Analytical Engine in London."},
    {"id": "alan", "title": "Alan", "text": "Alan Turing worked at Bletchley Park during the war."},
    {"id": "park", "title": "Park", "text": "Bletchley Park was the home of the codebreakers in the war."},
    {"id": "london", "title": "London", "text": "Ada Lovelace and Charles Babbage met in London."},
]


def members(role: type) -> set[str]:
    """The public methods a role protocol names, its bases' included."""
    return {n for cls in role.__mro__ if cls not in (typing.Protocol, typing.Generic, object)
            for n in vars(cls) if not n.startswith("_")}


class ReadsFromCopy:
    """A scenario's store: writes go to the in-memory store; every method of the ``reads`` roles is
    that of a snapshot copied (through its JSON file, when ``folder``) at the moment it is called."""

    def __init__(self, reads: set[str], folder: Path | None = None) -> None:
        self.memory, self.reads, self.folder, self.copies = MemoryGraphStore(), reads, folder, 0

    def copy(self) -> NetworkxSource:
        self.copies += 1
        source = NetworkxSource.copy_of(self.memory)
        if self.folder is None:
            return source
        path = self.folder / f"snapshot{self.copies}.json"
        source.save(path)
        return NetworkxSource.load(path)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.copy() if name in self.reads else self.memory, name)


@pytest.fixture
def registered() -> Iterator[str]:
    """The snapshot's opener registered as ``networkx-snapshot`` for the test (removed after)."""
    register_graph_backend(NAME, "hopgraph.testing.networkx_source:open_networkx_snapshot", durable=False)
    yield NAME
    GRAPH_BACKENDS.unregister(NAME)


def test_it_has_every_method_of_its_roles_and_none_of_the_others() -> None:
    for role, protocol in IMPLEMENTED.items():
        assert members(protocol) <= set(dir(NetworkxSource)), role
    for role, protocol in NOT_IMPLEMENTED.items():
        assert members(protocol) - set(dir(NetworkxSource)), role  # each lacks at least one method
    assert not hasattr(NetworkxSource, "commit") and not hasattr(NetworkxSource, "upsert_chunks")


@pytest.mark.parametrize("through_file", [False, True], ids=["copy", "json"])
@pytest.mark.parametrize("role", IMPLEMENTED)
def test_the_contract_scenarios_of_its_roles_hold_on_a_copy(role: str, through_file: bool,
                                                             tmp_path: Path) -> None:
    """The role's scenario, its reads answered by snapshots of the store it writes to, leaves the same
    observable state as the scenario on the in-memory store alone."""
    expected = SCENARIOS[role](MemoryGraphStore())
    store = ReadsFromCopy(members(IMPLEMENTED[role]), tmp_path if through_file else None)
    assert SCENARIOS[role](cast(Browsable, store)) == expected
    assert store.copies > 0


def test_its_version_is_fixed_and_its_log_is_the_source_s() -> None:
    memory = MemoryGraphStore()
    load(memory)
    v1 = memory.commit(documents=["doc_1", "doc_2"])
    memory.commit(entities=["b"])
    snap = NetworkxSource.copy_of(memory)
    memory.commit(documents=["doc_1"])  # after the copy: not seen
    assert snap.version() == v1 + 1 and snap.changes_since(v1 + 1) == []
    assert snap.changes_since(v1) == memory.changes_since(v1)[:1]  # type: ignore[index]
    late = NetworkxSource.copy_of(MemoryGraphStore(graph_version=7))  # versions from before any log
    assert late.changes_since(7) == [] and late.changes_since(3) is None  # the reader rebuilds


def test_a_registered_name_opens_the_snapshot_by_settings_alone(registered: str, tmp_path: Path) -> None:
    memory = MemoryGraphStore()
    load(memory)
    memory.commit(documents=["doc_1", "doc_2"])
    path = tmp_path / "graph.json"
    NetworkxSource.copy_of(memory).save(path)
    settings = Settings(data_dir=tmp_path, graph=GraphSettings(backend=registered, uri=path.as_uri()),
                        vectors=VectorSettings(backend="memory"), retrieval=NO_CAPS)
    opened = open_graph_store(settings)  # migrated (nothing to do) as every backend is
    assert isinstance(opened, NetworkxSource) and opened.version() == memory.version()
    assert sorted(opened.snapshot_mentions()) == sorted(memory.snapshot_mentions())
    plain = open_graph_store(settings.model_copy(update={"graph": GraphSettings(backend=registered, uri=str(path))}))
    assert plain.counts() == opened.counts()  # a path works as well as a file: URI
    with Platform(settings, embedder=HashEmbedder()) as p:  # status reads the GraphAdmin role only
        assert isinstance(p._store, NetworkxSource) and p.status()["graph"] == opened.counts()
        assert p.status()["graph_version"] == memory.version()
    with pytest.raises(BadInputError, match=r"graph\.uri"):
        open_graph_store(Settings(data_dir=tmp_path, graph=GraphSettings(backend=registered)))
    with pytest.raises(NotFoundError, match="no NetworkX snapshot"):
        open_graph_store(Settings(data_dir=tmp_path, graph=GraphSettings(backend=registered,
                                                                         uri=str(tmp_path / "none.json"))))


def _ranking(retriever: Retriever | Platform, query: str, mode: str) -> tuple[list[str], list[float]]:
    results = retriever.query(query, mode=mode, top_k=5).results
    return [r.citation.chunk_id for r in results], [r.score for r in results]


def test_the_retrieval_index_ranks_as_over_the_store_it_was_copied_from(tmp_path: Path) -> None:
    with Platform(memory_settings(tmp_path, retrieval=NO_CAPS), embedder=HashEmbedder()) as p:
        p.ingest_records(RECORDS, collection="people")
        copy = NetworkxSource.copy_of(p._store)
        path = tmp_path / "graph.json"
        copy.save(path)
        over_copy = Retriever(NetworkxSource.load(path), p.vectors, p.question_embedder, p.settings.retrieval)
        assert over_copy.state().version == p.retriever.state().version
        for query in ("Who designed the Analytical Engine?", "Where did the codebreakers work in the war?"):
            for mode in ("bm25", "graph"):
                ids, scores = _ranking(p, query, mode)
                got_ids, got_scores = _ranking(over_copy, query, mode)
                assert len(ids) >= 2 and got_ids == ids, (query, mode)
                assert got_scores == pytest.approx(scores, rel=1e-5), (query, mode)  # as two indexes of one store do
