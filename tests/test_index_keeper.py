"""The index keeper: a gap in the change log, the persisted state (loaded, corrupt, another graph's),
the BM25 counts saved with it, float16 vectors past the threshold, and a server's heap grown ahead
of its refreshes (the in-memory store of ``test_index_state.py``)."""

from __future__ import annotations

import platform
from pathlib import Path

import numpy as np
import pytest

from hopgraph.core import memory
from hopgraph.core.linalg import unit
from hopgraph.retrieval.index import persist
from hopgraph.retrieval.index import tables as tables_module
from hopgraph.retrieval.index.keeper import IndexKeeper
from hopgraph.retrieval.index.state import IndexRecipe, IndexState
from hopgraph.retrieval.index.tables import fetch_all
from hopgraph.retrieval.parts import keyword as keyword_module
from hopgraph.retrieval.parts import ppr as ppr_module
from hopgraph.retrieval.parts.signals import entity_similarity
from hopgraph.testing import MemoryGraphStore
from tests.test_index_state import DIM, NAMES, EntityVectors, _eid, assert_same, delete, put


def test_a_gap_in_the_change_log_rebuilds() -> None:
    graph, vecs = MemoryGraphStore(), EntityVectors()
    keeper = IndexKeeper(graph, vecs, IndexRecipe(), DIM)  # type: ignore[arg-type]
    put(graph, vecs, 1, 0, [[0, 1]])
    keeper.refresh()
    put(graph, vecs, 2, 2, [[2, 3]])
    graph.change_log.clear()  # pruned
    state = keeper.refresh()
    assert keeper.freshness().last_refresh_kind == "rebuild" and state.snapshot.n_chunks == 2


def test_a_state_assembles_its_walk_for_power_iteration_and_counts_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The state's walk is assembled as one matrix with the state, off the query path, on a graph the
    default solver walks by power iteration (not above ``PUSH_ABOVE_EDGES``, where it pushes), and the
    state's bytes count that matrix."""
    graph, vecs = MemoryGraphStore(), EntityVectors()
    put(graph, vecs, 1, 0, [[0, 1, 2], [1, 3]])
    tables = fetch_all(graph, vecs, DIM)  # type: ignore[arg-type]
    state = IndexState.of(tables, IndexRecipe())
    walk = state.walk(IndexRecipe().link_weight)
    assert walk.assembled
    into, order = walk.numbered
    monkeypatch.setattr(ppr_module, "PUSH_ABOVE_EDGES", 0)
    pushed = IndexState.of(tables, IndexRecipe())
    assert not pushed.walk(IndexRecipe().link_weight).assembled
    matrix_bytes = into.data.nbytes + into.indices.nbytes + into.indptr.nbytes + order.nbytes
    assert matrix_bytes > 0 and state.nbytes() - pushed.nbytes() == matrix_bytes


def test_persisted_state_is_loaded_and_a_corrupt_one_rebuilt(tmp_path: Path) -> None:
    graph, vecs = MemoryGraphStore(), EntityVectors()
    put(graph, vecs, 1, 0, [[0, 1], [1, 2]])
    folder = tmp_path / "index"
    first = IndexKeeper(graph, vecs, IndexRecipe(), DIM, folder=folder)  # type: ignore[arg-type]
    built = first.refresh()
    first.save()  # the refresh writes on a background thread: wait for it
    assert first.freshness().last_refresh_kind == "rebuild" and (folder / persist.MANIFEST).is_file()
    put(graph, vecs, 2, 3, [[3, 4]])
    other = IndexRecipe(typed_weight=3.0, link_weight=5.0)  # raw tables: any weighting can load them
    again = IndexKeeper(graph, vecs, other, DIM, folder=folder)  # type: ignore[arg-type]
    state = again.refresh()  # loads v1 from disk, then applies the one change since
    assert again.freshness().last_refresh_kind == "load+delta" and state.version == built.version + 1
    assert_same(state, IndexState.of(fetch_all(graph, vecs, DIM), other))  # type: ignore[arg-type]
    with (folder / "edge_weight.npy").open("r+b") as f:  # flip bytes inside the file
        f.seek(-4, 2)
        f.write(b"\xff\xff\xff\xff")
    assert persist.load(folder) is None
    third = IndexKeeper(graph, vecs, IndexRecipe(), DIM, folder=folder)  # type: ignore[arg-type]
    assert third.refresh().version == graph.version() and third.freshness().last_refresh_kind == "rebuild"
    third.save()
    assert persist.load(folder) is not None  # the rebuild wrote a good file again
    # a state read from another graph (another database in the same folder) is never patched as ours
    assert persist.load(folder, owner="arcadedb:/elsewhere/other") is None
    fourth = IndexKeeper(graph, vecs, IndexRecipe(), DIM, folder=folder, owner="arcadedb:/elsewhere/other")  # type: ignore[arg-type]
    assert fourth.refresh().version == graph.version() and fourth.freshness().last_refresh_kind == "rebuild"


def test_a_restart_loads_the_keyword_index_saved_with_the_tables(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The BM25 term counts are written beside the tables and loaded, not re-tokenized; a delta (after
    a load too) tokenizes only the changed chunks; a damaged BM25 file rejects the whole saved state."""
    tokenized: list[str] = []
    real = keyword_module._tokenize
    monkeypatch.setattr(keyword_module, "_tokenize",
                        lambda texts, stemmer: (tokenized.extend(texts), real(texts, stemmer))[1])
    graph, vecs = MemoryGraphStore(), EntityVectors()
    put(graph, vecs, 1, 0, [[0, 1], [1, 2]])
    put(graph, vecs, 2, 3, [[3, 4]])
    folder = tmp_path / "index"
    first = IndexKeeper(graph, vecs, IndexRecipe(), DIM, folder=folder)  # type: ignore[arg-type]
    first.refresh()
    first.save()
    assert len(tokenized) == 3 and (folder / persist.KEYWORD / "terms.json").is_file()
    again = IndexKeeper(graph, vecs, IndexRecipe(), DIM, folder=folder)  # type: ignore[arg-type]
    loaded = again.refresh()
    assert again.freshness().last_refresh_kind == "load" and len(tokenized) == 3  # read from the file
    assert_same(loaded, IndexState.of(fetch_all(graph, vecs, DIM), IndexRecipe()))  # type: ignore[arg-type]
    tokenized.clear()
    put(graph, vecs, 3, 5, [[5, 6]])
    patched = again.refresh()
    assert again.freshness().last_refresh_kind == "delta" and tokenized == ["Byron and Paris."]
    tokenized.clear()
    assert_same(patched, IndexState.of(fetch_all(graph, vecs, DIM), IndexRecipe()))  # type: ignore[arg-type]
    tokenized.clear()
    put(graph, vecs, 2, 1, [[1, 7]])  # a restart behind the graph: the saved index, patched
    third = IndexKeeper(graph, vecs, IndexRecipe(), DIM, folder=folder)  # type: ignore[arg-type]
    restarted = third.refresh()  # the saved state is the one before doc3: docs 3 and 2 changed since
    assert third.freshness().last_refresh_kind == "load+delta"
    assert sorted(tokenized) == ["Byron and Paris.", "Charles Babbage and Mary Somerville."]
    assert_same(restarted, IndexState.of(fetch_all(graph, vecs, DIM), IndexRecipe()))  # type: ignore[arg-type]
    with (folder / persist.KEYWORD / "tf_indices.npy").open("r+b") as f:
        f.seek(-4, 2)
        f.write(b"\xff\xff\xff\xff")
    assert persist.load(folder) is None


def test_a_keyword_index_saved_with_another_stemmer_is_rebuilt_and_saved_again(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A store saved before stemming (or with another stemmer) loads its tables, rebuilds the BM25 index
    with the configured stemmer and saves it; the next restart loads that one."""
    tokenized: list[tuple[str, str]] = []
    real = keyword_module._tokenize
    monkeypatch.setattr(keyword_module, "_tokenize",
                        lambda texts, stemmer: (tokenized.extend((t, stemmer) for t in texts), real(texts, stemmer))[1])
    graph, vecs = MemoryGraphStore(), EntityVectors()
    put(graph, vecs, 1, 0, [[0, 1], [1, 2]])
    folder = tmp_path / "index"
    exact = IndexKeeper(graph, vecs, IndexRecipe(stemmer=""), DIM, folder=folder)  # type: ignore[arg-type]
    exact.refresh()
    exact.save()
    tokenized.clear()
    english = IndexRecipe(stemmer="english")
    again = IndexKeeper(graph, vecs, english, DIM, folder=folder)  # type: ignore[arg-type]
    state = again.refresh()
    assert again.freshness().last_refresh_kind == "load" and state.keyword.stemmer == "english"
    assert {s for _, s in tokenized} == {"english"} and len(tokenized) == 2  # both chunks, stemmed
    assert_same(state, IndexState.of(fetch_all(graph, vecs, DIM), english))  # type: ignore[arg-type]
    again.save()
    tokenized.clear()
    third = IndexKeeper(graph, vecs, english, DIM, folder=folder)  # type: ignore[arg-type]
    assert third.refresh().keyword.stemmer == "english" and tokenized == []  # loaded, not rebuilt


def test_vectors_turn_half_precision_above_the_threshold(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Past ``HALF_ABOVE`` entities the vectors are float16, patched exactly as a fresh read casts them,
    persisted as such; falling back below it rebuilds (float16 rows cannot give float32's bits back)."""
    monkeypatch.setattr(tables_module, "HALF_ABOVE", 3)
    graph, vecs = MemoryGraphStore(), EntityVectors()
    keeper = IndexKeeper(graph, vecs, IndexRecipe(), DIM, folder=tmp_path / "index")  # type: ignore[arg-type]
    put(graph, vecs, 1, 0, [[0, 1]])
    assert keeper.refresh().tables.entity_vectors.dtype == np.float32
    put(graph, vecs, 2, 2, [[2, 3], [4]])
    state = keeper.refresh()
    assert keeper.freshness().last_refresh_kind == "delta" and state.tables.entity_vectors.dtype == np.float16
    fresh = IndexState.of(fetch_all(graph, vecs, DIM), IndexRecipe())  # type: ignore[arg-type]
    assert_same(state, fresh)
    q = np.asarray(vecs.rows[_eid(NAMES[3])], dtype=np.float32)
    sims = entity_similarity(state.snapshot, q / np.linalg.norm(q))
    exact = unit(np.stack([vecs.rows[i] for i in state.snapshot.entity_ids])) @ (q / np.linalg.norm(q))
    assert sims.dtype == np.float32 and np.abs(sims - exact).max() < 2e-3
    assert int(np.argmax(sims)) == state.snapshot.entity_ids.index(_eid(NAMES[3]))
    keeper.save()
    loaded = persist.load(tmp_path / "index")
    assert loaded is not None and loaded.entity_vectors.dtype == np.float16
    delete(graph, 2)
    assert keeper.refresh().tables.entity_vectors.dtype == np.float32
    assert keeper.freshness().last_refresh_kind == "rebuild"


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the heap is kept with glibc's mallopt")
def test_a_polling_keeper_grows_the_heap_for_its_state_and_a_reading_one_does_not(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert memory.keep_freed_memory() is True
    monkeypatch.setattr(memory, "_grown", 0)
    graph, vecs = MemoryGraphStore(), EntityVectors()
    put(graph, vecs, 1, 0, [[0, 1, 2]])
    reader = IndexKeeper(graph, vecs, IndexRecipe(), DIM)  # type: ignore[arg-type]
    reader.refresh()
    assert reader._grower is None and memory._grown == 0  # (the CLI's keeper: no polling, no growing)
    server = IndexKeeper(graph, vecs, IndexRecipe(), DIM)  # type: ignore[arg-type]
    state = server.refresh()
    server.start_polling(60.0, pregrow=2.0)
    try:
        assert server._grower is not None
        server._grower.join(timeout=30)
        assert state.nbytes() > 0 and memory._grown == int(state.nbytes() * 2.0)
    finally:
        server.stop_polling()
