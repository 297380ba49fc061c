"""Sums of sparse entries in a fixed order: equal entries in any input order give bit-equal matrices
(a delta appends rows where a fresh read sorts them)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def canonical(key: np.ndarray, vals: np.ndarray) -> np.ndarray:
    """The order of entries by ``key``, ties by value: a fixed order whatever the input order, so sums
    of equal keys come out bit-equal. One sort of the keys; only the (few) repeated keys are ordered
    by value afterwards (a two-key sort of every entry took twice as long)."""
    order = np.argsort(key)
    k = key[order]
    dup = np.nonzero(k[1:] == k[:-1])[0]
    if len(dup):
        at = np.unique(np.concatenate([dup, dup + 1]))
        order[at] = order[at][np.lexsort((vals[order[at]], k[at]))]
    return order


def csr(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, shape: tuple[int, int]) -> sp.csr_matrix:
    """A CSR matrix whose duplicates are summed in a fixed order (by row, column, then value)."""
    width = max(shape[1], 1)
    key = rows.astype(np.int64) * width + cols
    if not len(key):
        return sp.csr_matrix(shape, dtype=np.float64)
    order = canonical(key, vals)
    k, v = key[order], vals[order].astype(np.float64)
    first = np.flatnonzero(np.concatenate([[True], k[1:] != k[:-1]]))
    sums = _sequential_sums(v, first)
    unique = k[first]
    indptr = np.zeros(shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(unique // width, minlength=shape[0]), out=indptr[1:])
    index_type = np.int32 if max(shape[1], len(unique)) < 2**31 else np.int64
    return sp.csr_matrix((sums, (unique % width).astype(index_type), indptr.astype(index_type)), shape=shape)


def _sequential_sums(v: np.ndarray, first: np.ndarray) -> np.ndarray:
    """The sum of each run ``v[first[i]:first[i + 1]]``, added left to right (numpy's reductions add
    pairwise, which rounds differently for three terms or more)."""
    sums = v[first].copy()
    length = np.diff(np.append(first, len(v)))
    runs = np.flatnonzero(length > 1)
    step = 1
    while len(runs):
        sums[runs] += v[first[runs] + step]
        step += 1
        runs = runs[length[runs] > step]
    return sums


def symmetric(s: np.ndarray, d: np.ndarray, w: np.ndarray, n: int) -> sp.csr_matrix:
    """The symmetric matrix of undirected weighted edges (no self loops): the upper triangle summed
    in a fixed order, plus its transpose (half the entries to sort)."""
    upper = csr(np.minimum(s, d), np.maximum(s, d), w, (n, n))
    both = sp.csr_matrix(upper + upper.T.tocsr())
    both.sort_indices()
    return both
