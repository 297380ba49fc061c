"""The PPR transition of a patched snapshot from the previous version's: a node's row of the walk (its
out-edges over its out-weight) changes only when one of its edges did, so only those rows are
computed again (as ``retrieval.ppr.joint_transition`` computes them); the others are carried over.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from retrieval.index.carry import carried, entries_in_rows, spliced
from retrieval.index.delta import Patch
from retrieval.index.relations import old_rows
from retrieval.snapshot import Snapshot


def _moved(old_mask: np.ndarray, row_map: np.ndarray, n: int) -> np.ndarray:
    """``old_mask``'s rows that stay, as a mask over the new rows."""
    out = np.zeros(n, dtype=bool)
    out[row_map[old_mask & (row_map >= 0)]] = True
    return out


def _changed_rows(prev: Snapshot, snap: Snapshot, patch: Patch, changed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(entity rows, chunk rows) of the joint graph whose out-edges may differ from the previous
    version's (a superset: rows outside it are equal, entry for entry)."""
    n_e, n_c = snap.n_entities, snap.n_chunks
    emap, cmap = patch.entity_map, patch.chunk_map
    gone_e = old_rows(changed, emap)
    about = np.full(n_c, -2, dtype=np.int64)  # the previous title targets, moved (-2: a new chunk)
    stays = cmap >= 0
    old_about = prev.chunk_about[stays]
    about[cmap[stays]] = np.where(old_about >= 0, emap[np.maximum(old_about, 0)], -1)
    chunks = patch.chunks | (about != snap.chunk_about)
    chunks |= entries_in_rows(snap.mentioned_in, changed)  # a weight (specificity) or an entity moved
    chunks |= _moved(entries_in_rows(prev.mentioned_in, gone_e), cmap, n_c)
    links = carried(prev.links, stays, stays, cmap, cmap, (n_c, n_c))
    diff = sp.csr_matrix(snap.links != links)
    chunks |= np.diff(diff.indptr) > 0
    chunks |= _moved(entries_in_rows(prev.links, ~stays), cmap, n_c)

    entities = changed | entries_in_rows(snap.adjacency, changed)
    entities |= _moved(entries_in_rows(prev.adjacency, gone_e), emap, n_e)
    entities |= entries_in_rows(snap.incidence, chunks)
    entities |= _moved(entries_in_rows(prev.incidence, old_rows(chunks, cmap)), emap, n_e)
    return entities, chunks


def _rows(snap: Snapshot, entities: np.ndarray, chunks: np.ndarray, mention_weight: float,
          link_weight: float) -> sp.csr_matrix:
    """The walk's rows of ``entities`` and ``chunks`` (masks), every other row empty."""
    n_e, n = snap.n_entities, snap.n_entities + snap.n_chunks
    e, c = np.flatnonzero(entities), np.flatnonzero(chunks)
    top = sp.hstack([snap.adjacency[e], snap.mentioned_in[e] * mention_weight], format="csr")
    bottom = sp.hstack([snap.incidence[c] * mention_weight, snap.links[c] * link_weight], format="csr")
    block = sp.csr_matrix(sp.vstack([top, bottom], format="csr"))
    out = np.asarray(block.sum(axis=1)).ravel()
    inv = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
    block = sp.csr_matrix(sp.diags(inv) @ block)
    block.sort_indices()
    counts = np.zeros(n, dtype=np.int64)
    counts[np.concatenate([e, c + n_e])] = np.diff(block.indptr)
    indptr = np.zeros(n + 1, dtype=block.indptr.dtype)
    np.cumsum(counts, out=indptr[1:])
    return sp.csr_matrix((block.data, block.indices, indptr), shape=(n, n))


def patched_transition(old: sp.csc_matrix, prev: Snapshot, snap: Snapshot, patch: Patch,
                       mention_weight: float = 1.0, link_weight: float = 1.0) -> sp.csc_matrix | None:
    """``joint_transition(snap, ...)`` from ``old``, the previous version's (None when ``snap``'s
    relations were derived whole: every row may differ)."""
    if snap.changed is None:
        return None
    entities, chunks = _changed_rows(prev, snap, patch, snap.changed)
    n_e = snap.n_entities
    joint_map = np.concatenate([patch.entity_map, np.where(patch.chunk_map >= 0, patch.chunk_map + n_e, -1)])
    fresh = _rows(snap, entities, chunks, mention_weight, link_weight)
    return spliced(sp.csr_matrix(old.T), joint_map, joint_map, fresh, np.concatenate([entities, chunks])).T
