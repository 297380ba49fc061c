"""Building blocks of the index state. The snapshot's sparse matrices are summed in a fixed order: the
same entries in any input order give bit-equal matrices (a delta appends rows where a fresh read
sorts them), equal to adding each position's values left to right in ascending order. A splice of
vector rows equals numpy's insert; the garbage collector pauses while states are derived."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

from hopgraph.core.text import normalize_name
from hopgraph.retrieval.index import delta, links
from hopgraph.retrieval.index.state import gc_paused
from hopgraph.retrieval.index.sums import csr as _csr
from hopgraph.retrieval.index.sums import symmetric as _symmetric


def _entries(rng: np.random.Generator, n: int, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Entries on few positions (long runs of duplicates) with values whose sums depend on their order."""
    rows, cols = rng.integers(0, n, m), rng.integers(0, n, m)
    vals = rng.choice([0.1, 0.2, 0.3, 1e16, 1.0, 3.0, 7e-3], m) * rng.integers(1, 5, m)
    return rows, cols, vals


def _reference(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, n: int) -> dict[tuple[int, int], float]:
    sums: dict[tuple[int, int], float] = {}
    for key in sorted(set(zip(rows.tolist(), cols.tolist(), strict=True))):
        total = 0.0
        for v in sorted(vals[(rows == key[0]) & (cols == key[1])].tolist()):
            total = v if total == 0.0 else total + v
        sums[key] = total
    return sums


@pytest.mark.parametrize("seed", range(5))
def test_sums_do_not_depend_on_the_input_order(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 6
    rows, cols, vals = _entries(rng, n, 300)
    first = _csr(rows, cols, vals, (n, n))
    expected = _reference(rows, cols, vals, n)
    coo = first.tocoo()
    assert dict(zip(zip(coo.row.tolist(), coo.col.tolist(), strict=True), coo.data.tolist(), strict=True)) == expected
    for _ in range(3):
        p = rng.permutation(len(rows))
        again = _csr(rows[p], cols[p], vals[p], (n, n))
        assert np.array_equal(first.indptr, again.indptr) and np.array_equal(first.indices, again.indices)
        assert np.array_equal(first.data, again.data)  # bit-equal, not close


def test_the_symmetric_matrix_equals_both_directions_summed() -> None:
    rng = np.random.default_rng(9)
    n = 8
    s, d, w = _entries(rng, n, 400)
    keep = s != d
    s, d, w = s[keep], d[keep], w[keep]
    sym = _symmetric(s, d, w, n)
    both = _csr(np.concatenate([s, d]), np.concatenate([d, s]), np.concatenate([w, w]), (n, n))
    assert sym.has_sorted_indices
    assert np.array_equal(sym.indptr, both.indptr) and np.array_equal(sym.indices, both.indices)
    assert np.array_equal(sym.data, both.data)
    p = rng.permutation(len(s))
    flipped = _symmetric(d[p], s[p], w[p], n)  # edges read the other way round, in another order
    assert np.array_equal(flipped.data, sym.data) and np.array_equal(flipped.indices, sym.indices)


def test_empty_input_gives_an_empty_matrix() -> None:
    empty = np.zeros(0, dtype=np.int64)
    m = _csr(empty, empty, np.zeros(0), (3, 4))
    assert m.shape == (3, 4) and m.nnz == 0
    assert _symmetric(empty, empty, np.zeros(0), 5).nnz == 0


def test_the_collector_pauses_while_states_are_derived_and_runs_again_after() -> None:
    assert gc.isenabled()
    inner_done, outer_may_end = threading.Event(), threading.Event()

    def other_derivation() -> None:
        with gc_paused():
            inner_done.set()
            outer_may_end.wait(10)

    with gc_paused():
        assert not gc.isenabled()
        worker = threading.Thread(target=other_derivation)
        worker.start()
        inner_done.wait(10)
    assert not gc.isenabled()  # the other derivation still runs
    outer_may_end.set()
    worker.join(10)
    assert gc.isenabled()
    gc.disable()  # an application that runs without the collector keeps it off
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("max_runs", [20_000, 1])  # run by run, and numpy's insert past the run limit
def test_a_splice_equals_numpy_insert(monkeypatch: pytest.MonkeyPatch, max_runs: int) -> None:
    monkeypatch.setattr(delta, "_MAX_RUNS", max_runs)
    rng = np.random.default_rng(4)
    for _ in range(500):
        n = int(rng.integers(0, 30))
        old = rng.standard_normal((n, 3)).astype(np.float32)
        keep = rng.random(n) < rng.random()
        m = int(rng.integers(0, 6))
        at = np.sort(rng.integers(0, int(keep.sum()) + 1, m))
        new = rng.standard_normal((m, 3)).astype(np.float32)
        assert np.array_equal(delta.splice(old, keep, at, new), np.insert(old[keep], at, new, axis=0))


@pytest.mark.parametrize("seed", range(4))
def test_a_moved_title_index_equals_one_built_again(seed: int) -> None:
    """Chunk rows removed and inserted (monotone moves): the previous title index, moved, with the new
    rows added, is the index of the new rows' titles (short titles left out, rows sorted)."""
    rng = np.random.default_rng(seed)
    pool = ["Ada Lovelace", "London", "Byron", "Oz", "Paris", "Analytical Engine"]
    old_titles = rng.choice(pool, 40).tolist()
    keep = rng.random(40) > 0.2
    n_new = int(keep.sum()) + 9
    inserted = np.sort(rng.choice(n_new, 9, replace=False))
    row_map = np.full(40, -1)
    row_map[keep] = np.setdiff1d(np.arange(n_new), inserted)
    new_titles = [""] * n_new
    for old_row, new_row in zip(np.flatnonzero(keep).tolist(), row_map[keep].tolist(), strict=True):
        new_titles[new_row] = old_titles[old_row]
    for row in inserted.tolist():
        new_titles[row] = str(rng.choice(pool))
    keys = {t: normalize_name(t) for t in pool}
    want = links.title_index(new_titles, keys)
    got = links.moved_title_index(links.title_index(old_titles, keys), row_map, new_titles, keys)
    assert got == want and all(rows == sorted(rows) for rows in got.values())
