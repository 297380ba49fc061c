"""Carry a sparse matrix over to the next version: keep the entries a delta did not touch, move them
by the delta's row maps, and add what was computed again. Rows only move by monotone maps (sorted ids
with some removed and some inserted), so carried entries stay in order: nothing is sorted again.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def carried(m: sp.csr_matrix, keep_rows: np.ndarray, keep_cols: np.ndarray | None, row_map: np.ndarray,
            col_map: np.ndarray | None, shape: tuple[int, int]) -> sp.csr_matrix:
    """The entries of ``m`` in rows where ``keep_rows`` (and columns where ``keep_cols``), moved to
    rows ``row_map[r]`` and columns ``col_map[c]`` (monotone; kept rows and columns map to >= 0)."""
    counts = np.diff(m.indptr)
    keep = np.repeat(keep_rows, counts)
    if keep_cols is not None:
        keep &= keep_cols[m.indices]
        running = np.zeros(len(keep) + 1, dtype=np.int64)
        np.cumsum(keep, out=running[1:])
        per_row = running[m.indptr[1:]] - running[m.indptr[:-1]]
    else:
        per_row = np.where(keep_rows, counts, 0)
    indices = m.indices[keep]
    if col_map is not None and not identity(col_map, shape[1]):
        indices = col_map[indices]
        if len(indices) and int(indices.min()) < 0:
            raise ValueError("a carried entry points to a removed row")
    moved = np.flatnonzero(keep_rows)
    if identity(row_map, shape[0]):
        new_counts = per_row
    else:
        new_counts = np.zeros(shape[0], dtype=np.int64)
        new_counts[row_map[moved]] = per_row[moved]
    index_type = np.int32 if max(shape[1], int(new_counts.sum())) < 2**31 else np.int64
    indptr = np.zeros(shape[0] + 1, dtype=index_type)
    np.cumsum(new_counts, out=indptr[1:])
    return sp.csr_matrix((m.data[keep], indices.astype(index_type, copy=False), indptr), shape=shape)


def spliced(old: sp.csr_matrix, row_map: np.ndarray, col_map: np.ndarray, fresh: sp.csr_matrix,
            fresh_rows: np.ndarray) -> sp.csr_matrix:
    """The matrix whose rows ``fresh_rows`` (a mask over the new rows) are ``fresh``'s (sorted, empty
    elsewhere) and whose other rows are ``old``'s, moved by ``row_map`` and their columns by ``col_map``
    (both monotone; every new row not fresh comes from an old row). ``carried`` then ``joined`` give
    the same matrix entry by entry; this copies runs of rows instead of masking every entry."""
    n = fresh.shape[0]
    source = np.full(n, -1, dtype=np.int64)  # the old row of each carried new row
    carry = row_map >= 0
    carry[carry] = ~fresh_rows[row_map[carry]]
    source[row_map[carry]] = np.flatnonzero(carry)
    if ((source < 0) & ~fresh_rows).any():
        raise ValueError("a new row is neither fresh nor carried")
    # runs: fresh rows, or carried rows whose old rows follow on one another
    step = np.ones(n, dtype=bool)
    step[1:] = (source[1:] < 0) != (source[:-1] < 0)
    step[1:] |= (source[1:] >= 0) & (source[1:] != source[:-1] + 1)
    starts = np.flatnonzero(step)
    ends = np.append(starts[1:], n).astype(np.int64)
    counts = np.diff(fresh.indptr)
    counts[source >= 0] = np.diff(old.indptr)[source[source >= 0]]
    index_type = np.int32 if max(fresh.shape[1], int(counts.sum())) < 2**31 else np.int64
    old_indices = old.indices
    if not fixed(col_map, old.shape[1]):  # (else no carried entry moves: the 20M+ indices are not gathered)
        old_indices = col_map.astype(index_type)[old_indices]
    # each run's slice of its source's arrays, in the order of the new rows
    first = source[starts]
    from_fresh = first < 0
    first = np.maximum(first, 0)
    lo = np.where(from_fresh, fresh.indptr[starts], old.indptr[first])
    hi = np.where(from_fresh, fresh.indptr[ends], old.indptr[np.minimum(first + ends - starts, len(old.indptr) - 1)])
    runs = zip(from_fresh.tolist(), lo.tolist(), hi.tolist(), strict=True)
    pieces = [(fresh if f else old, f, a, b) for f, a, b in runs if b > a]
    indices = _joined([(m.indices if f else old_indices)[a:b] for m, f, a, b in pieces], index_type)
    if len(indices) and int(indices.min()) < 0:
        raise ValueError("a carried entry points to a removed row")
    indptr = np.zeros(n + 1, dtype=index_type)
    np.cumsum(counts, out=indptr[1:])
    out = sp.csr_matrix((_joined([m.data[a:b] for m, _, a, b in pieces], np.float64), indices, indptr),
                        shape=fresh.shape)
    out.has_sorted_indices = True
    return out


def _joined(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)


def identity(row_map: np.ndarray, n: int) -> bool:
    """Whether a map of old rows moves none."""
    return len(row_map) == n and bool((row_map == np.arange(n)).all())


def fixed(row_map: np.ndarray, n: int) -> bool:
    """Whether a map of old rows moves none of those that stay (removed ones map to -1). A carried
    entry never points to a removed row (its row would have been computed again), so such a map
    leaves every carried entry where it is: a row removed and inserted again at the same place (a
    changed document's chunk) moves nothing."""
    return len(row_map) == n and bool(((row_map == np.arange(n)) | (row_map < 0)).all())


def joined(carried_part: sp.csr_matrix, fresh: sp.csr_matrix) -> sp.csr_matrix:
    """Two matrices with no entry in common, as one (sorted indices, as ``build`` leaves them)."""
    out = carried_part if fresh.nnz == 0 else sp.csr_matrix(carried_part + fresh)
    out.sort_indices()
    return out


def entries_in_rows(m: sp.csr_matrix, rows: np.ndarray) -> np.ndarray:
    """A bool mask over the columns of ``m``: those with an entry in one of ``rows`` (a row mask)."""
    out = np.zeros(m.shape[1], dtype=bool)
    picked = np.flatnonzero(rows)
    if len(picked):
        out[m[picked].indices] = True
    return out
