"""The snapshot's array-backed lookups answer as the dicts they replace, and patching sparse matrices
by carrying rows over equals building them again."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from hopgraph.retrieval.index.carry import carried, joined, spliced
from hopgraph.retrieval.index.lookups import NameIndex, PairLookup, RowIndex
from hopgraph.retrieval.index.relations import spliced_adjacency
from hopgraph.retrieval.index.tables import strings


def test_row_index_answers_as_a_dict() -> None:
    ids = strings(["a", "b", "d"])
    index, plain = RowIndex(ids), {"a": 0, "b": 1, "d": 2}
    assert dict(index) == plain and len(index) == 3
    for key in ("a", "b", "c", "d", "", "zz"):
        assert (key in index) == (key in plain)
        assert index.get(key) == plain.get(key)
    assert 3 not in index and None not in index
    with pytest.raises(KeyError):
        index["c"]
    assert RowIndex(strings([])).get("a") is None


def test_pair_lookup_answers_as_a_dict() -> None:
    plain = {(0, 2): "knows", (1, 0): "born_in", (2, 2): "is"}
    keys = sorted(a * 3 + b for a, b in plain)
    lookup = PairLookup(np.asarray(keys), strings([plain[(k // 3, k % 3)] for k in keys]), 3)
    assert dict(lookup) == plain and list(lookup) == sorted(plain)
    assert lookup == plain
    for pair in [(0, 2), (2, 0), (1, 0), (5, 0), (-1, 2), (2, 2)]:
        assert lookup.get(pair) == plain.get(pair)
        assert (pair in lookup) == (pair in plain)
    assert "x" not in lookup


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n_new", [30, 40])
def test_carried_rows_equal_the_matrix_built_again(seed: int, n_new: int) -> None:
    """Drop some rows/columns, insert others (a monotone map; as many as were dropped, or more), add
    the recomputed part: the result equals the new matrix built directly."""
    rng = np.random.default_rng(seed)
    n_old = 30
    old = sp.random(n_old, n_old, density=0.2, random_state=seed, format="csr")
    old = sp.csr_matrix(old + old.T)
    keep = rng.random(n_old) > 0.2
    row_map = np.full(n_old, -1)
    inserted = np.sort(rng.choice(n_new, n_new - int(keep.sum()), replace=False))
    row_map[keep] = np.setdiff1d(np.arange(n_new), inserted)
    dirty_new = np.zeros(n_new, dtype=bool)
    dirty_new[inserted] = True
    dirty_new[rng.choice(n_new, 4)] = True
    gone = row_map < 0
    gone[~gone] = dirty_new[row_map[~gone]]
    # the "new" matrix: old entries moved, then the dirty rows and columns replaced by fresh values
    coo = old.tocoo()
    live = ~gone[coo.row] & ~gone[coo.col]
    fresh = sp.random(n_new, n_new, density=0.3, random_state=seed + 9, format="coo")
    fresh_live = dirty_new[fresh.row] | dirty_new[fresh.col]
    fresh = sp.csr_matrix((fresh.data[fresh_live], (fresh.row[fresh_live], fresh.col[fresh_live])),
                          shape=(n_new, n_new))
    want = sp.csr_matrix((coo.data[live], (row_map[coo.row[live]], row_map[coo.col[live]])),
                         shape=(n_new, n_new)) + fresh
    got = joined(carried(old, ~gone, ~gone, row_map, row_map, (n_new, n_new)), fresh)
    assert got.has_sorted_indices and (got != want).nnz == 0
    # rows only: every column of a kept row is kept
    drop = rng.random(n_old) < 0.3
    rows_only = carried(old, ~drop, None, np.arange(n_old), None, (n_old, n_old))
    assert (rows_only != sp.csr_matrix(sp.diags((~drop).astype(float)) @ old)).nnz == 0


@pytest.mark.parametrize("seed", range(4))
def test_spliced_rows_equal_carried_and_joined(seed: int) -> None:
    """The adjacency's patch: fresh rows replace some rows, the others move by a monotone map with
    rows removed and inserted; copying runs of rows gives carried + joined's arrays exactly."""
    rng = np.random.default_rng(seed)
    n_old, n_new = 40, 46
    keep = rng.random(n_old) > 0.15
    row_map = np.full(n_old, -1)
    inserted = np.sort(rng.choice(n_new, n_new - int(keep.sum()), replace=False))
    row_map[keep] = np.setdiff1d(np.arange(n_new), inserted)
    old = sp.random(n_old, n_old, density=0.2, random_state=seed, format="csr")
    old = sp.csr_matrix(old @ sp.diags(keep.astype(float)))  # no entry points to a removed row
    old.eliminate_zeros()
    old.sort_indices()  # as every matrix of a state
    fresh_rows = np.zeros(n_new, dtype=bool)
    fresh_rows[inserted] = True
    fresh_rows[rng.choice(n_new, 6)] = True
    fresh = sp.random(n_new, n_new, density=0.3, random_state=seed + 9, format="csr")
    fresh = sp.csr_matrix(sp.diags(fresh_rows.astype(float)) @ fresh)
    fresh.eliminate_zeros()
    fresh.sort_indices()
    gone = row_map < 0
    gone[~gone] = fresh_rows[row_map[~gone]]
    want = joined(carried(old, ~gone, None, row_map, row_map, (n_new, n_new)), fresh)
    got = spliced(old, row_map, row_map, fresh, fresh_rows)
    assert got.has_sorted_indices
    for a, b in ((got.indptr, want.indptr), (got.indices, want.indices), (got.data, want.data)):
        assert np.array_equal(a, b)
    old_bad = old.tolil()
    old_bad[int(np.flatnonzero(~gone)[0]), int(np.flatnonzero(~keep)[0])] = 1.0
    with pytest.raises(ValueError, match="removed row"):
        spliced(sp.csr_matrix(old_bad), row_map, row_map, fresh, fresh_rows)


def test_adjacency_patch_keeps_the_rest_of_a_row_that_gains_a_relation() -> None:
    """A relation re-derived for a dirty entity can be new to an untouched one (a PMI weight that was
    not positive before): that row keeps its other entries."""
    def sym(pairs: dict[tuple[int, int], float], n: int) -> sp.csr_matrix:
        rows = [a for a, b in pairs] + [b for a, b in pairs]
        cols = [b for a, b in pairs] + [a for a, b in pairs]
        m = sp.csr_matrix((list(pairs.values()) * 2, (rows, cols)), shape=(n, n))
        m.sort_indices()
        return m

    n = 6
    old = sym({(0, 1): 1.0, (1, 2): 2.0, (3, 4): 3.0, (4, 5): 4.0}, n)
    dirty = np.zeros(n, dtype=bool)
    dirty[2] = True
    again = sym({(1, 2): 2.5, (2, 4): 0.5}, n)  # entity 4 gains a relation with the dirty entity 2
    got = spliced_adjacency(old, dirty, dirty.copy(), np.arange(n), again)
    want = sym({(0, 1): 1.0, (1, 2): 2.5, (2, 4): 0.5, (3, 4): 3.0, (4, 5): 4.0}, n)
    assert got.has_sorted_indices and (got != want).nnz == 0


@pytest.mark.parametrize("merge_at", [0.0, 100.0])  # the top layer merged at once, or kept over the base
def test_a_patched_name_index_equals_one_built_from_the_new_rows(monkeypatch: pytest.MonkeyPatch,
                                                                 merge_at: float) -> None:
    monkeypatch.setattr(NameIndex, "MERGE_AT", merge_at)
    names = {"e1": "ada", "e3": "ada", "e5": "babbage", "e7": "lovelace"}
    ids = strings(sorted(names))
    before = NameIndex.of(strings([names[i] for i in ids.tolist()]), ids, RowIndex(ids))
    assert dict(before) == {"ada": [0, 1], "babbage": [2], "lovelace": [3]} and before.first("ada") == 0
    # e0 is inserted (every row moves), e5 is removed, e7 is renamed
    after = {"e0": "ada", "e1": "ada", "e3": "ada", "e7": "countess"}
    new_ids = strings(sorted(after))
    patched = before.patched([("babbage", "e5"), ("lovelace", "e7")], [("ada", "e0"), ("countess", "e7")],
                             RowIndex(new_ids))
    fresh = NameIndex.of(strings([after[i] for i in new_ids.tolist()]), new_ids, RowIndex(new_ids))
    assert dict(patched) == dict(fresh) == {"ada": [0, 1, 2], "countess": [3]}
    assert patched.first("ada") == 0 and patched.first("babbage") == -1 and "lovelace" not in patched
    assert len(patched) == 2 and sorted(patched) == ["ada", "countess"]
    assert bool(patched.top) == (merge_at > 1)
    assert dict(before) == {"ada": [0, 1], "babbage": [2], "lovelace": [3]}  # the previous one is unchanged
