"""The generated tables of ``benchmarks.freshness_scale`` (and ``benchmarks.memory``) carry every chunk
column, so that a delta over them patches the index state as it does a real store's."""

from __future__ import annotations

import numpy as np

from benchmarks.freshness_scale import SyntheticGraph, SyntheticVectors, generate
from hopgraph.retrieval.index.delta import apply_delta
from hopgraph.retrieval.index.state import IndexRecipe, IndexState
from hopgraph.retrieval.index.tables import CHUNK_COLUMNS
from tests.test_index_state import assert_same


def test_a_delta_over_generated_tables_patches_the_state_as_a_fresh_build() -> None:
    tables = generate(300, 3_000, 12_000)
    assert set(tables.chunks) == set(CHUNK_COLUMNS)
    state = IndexState.of(tables, IndexRecipe())
    for moving in (False, True):
        changed = np.random.default_rng(3).choice(300, 20, replace=False).tolist()
        graph = SyntheticGraph(state.tables, changed, moving=moving)
        patched, patch = apply_delta(state.tables, graph.changes_since(state.version), graph,  # type: ignore[arg-type]
                                     SyntheticVectors())  # type: ignore[arg-type]
        state = IndexState.of(patched, IndexRecipe(), base=(state, patch))
        assert_same(state, IndexState.of(patched, IndexRecipe()))
