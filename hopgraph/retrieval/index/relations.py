"""Entity-entity relations of a snapshot: the symmetric adjacency (typed relations ``typed_weight`` x
support, co-occurrences positive PMI over chunks x support) and the typed pairs' types and relation
ids. Derived from scratch, or patched: after a delta only the entities it touched (and those whose
chunk count moved) get their rows and columns again; the rest is carried over, bit for bit.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from hopgraph.retrieval.index.carry import carried, entries_in_rows, joined, spliced
from hopgraph.retrieval.index.delta import Patch
from hopgraph.retrieval.index.lookups import PairLookup
from hopgraph.retrieval.index.sums import canonical, symmetric
from hopgraph.retrieval.index.tables import Tables, typed_rows
from hopgraph.retrieval.snapshot import Snapshot

Relations = tuple[sp.csr_matrix, PairLookup, PairLookup]


def edge_weights(t: Tables, sel: np.ndarray | None, co: np.ndarray, df: np.ndarray, typed_weight: float
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(source rows, target rows, weights) of the edges ``sel`` (all when None; ``co``: which of them
    are co-occurrences) that weigh anything."""
    pick = (lambda a: a) if sel is None else (lambda a: a[sel])
    s, d = pick(t.edge_source).astype(np.int64), pick(t.edge_target).astype(np.int64)
    w = pick(t.edge_weight).astype(np.float64)
    n_c = len(t.chunk_ids)
    pmi = np.log(max(n_c, 1) * np.maximum(w, 1.0) / np.maximum(df[s] * df[d], 1.0)) if len(s) else w
    weight = np.where(co, np.maximum(pmi, 0.0) * w, typed_weight * w)
    keep = (s != d) & (weight > 0)
    return s[keep], d[keep], weight[keep]


def typed_pairs(t: Tables, sel: np.ndarray | None, co: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pair keys ``source * n_entities + target``, types, relation ids) of the typed relations among
    the edges ``sel`` (all when None; ``co``: which of them are co-occurrences), one per pair: the
    largest relation id's."""
    # each typed row's id (``at``: its place in edge_id, which holds the typed rows' ids in row order)
    if sel is None:
        typed = np.flatnonzero(~co)
        at = np.arange(len(typed))
    else:
        typed = sel[~co]
        at = np.searchsorted(typed_rows(t), typed)
    loop = t.edge_source[typed] == t.edge_target[typed]
    typed, at = typed[~loop], at[~loop]
    key = t.edge_source[typed].astype(np.int64) * max(len(t.entity_ids), 1) + t.edge_target[typed]
    ids = t.edge_id[at]
    order = canonical(key, ids)  # by source, target, then relation id
    k = key[order]
    last = order[np.flatnonzero(np.append(k[1:] != k[:-1], True))] if len(k) else order
    return key[last], t.edge_type_names[t.edge_type[typed[last]]], ids[last]


def fresh(t: Tables, df: np.ndarray, typed_weight: float) -> Relations:
    """(adjacency, edge types, relation ids) of every edge."""
    n_e = len(t.entity_ids)
    co = t.edge_type == 0  # (code 0: CO_OCCURS)
    s, d, weight = edge_weights(t, None, co, df, typed_weight)
    keys, types, ids = typed_pairs(t, None, co)
    return symmetric(s, d, weight, n_e), PairLookup(keys, types, n_e), PairLookup(keys, ids, n_e)


def old_rows(new_mask: np.ndarray, row_map: np.ndarray) -> np.ndarray:
    """A mask over old rows: removed, or moved to a row where ``new_mask`` is True."""
    out = row_map < 0
    out[~out] = new_mask[row_map[~out]]
    return out


def spliced_adjacency(old: sp.csr_matrix, dirty: np.ndarray, gone: np.ndarray, emap: np.ndarray,
                      again: sp.csr_matrix) -> sp.csr_matrix:
    """The adjacency whose rows and columns of the ``dirty`` rows (``gone``: the old rows removed or
    dirty) are ``again`` (their relations derived again), every other entry carried over. Rows with
    no entry in a dirty column, before or after, are copied whole (``carry.spliced``); their
    neighbours' rows are put together from both parts."""
    fresh_rows = np.diff(again.indptr) > 0
    near = entries_in_rows(old, gone)  # old rows with an entry in a gone column (symmetric), or one again
    stays = emap >= 0
    near[stays] |= fresh_rows[emap[stays]]
    near &= ~gone
    picked = np.flatnonzero(near)
    kept = carried(old[picked], np.ones(len(picked), dtype=bool), ~gone, emap[picked], emap, again.shape)
    rows = dirty | fresh_rows
    rows[emap[near]] = True
    return spliced(old, emap, emap, joined(kept, again), rows)


def patched(t: Tables, since: tuple[Snapshot, Patch], df: np.ndarray, typed_weight: float
            ) -> tuple[sp.csr_matrix, PairLookup, PairLookup, np.ndarray]:
    """``fresh``'s result from the previous version's (with the same chunk count, PMI's N), and the
    mask of entity rows whose relations were computed again."""
    old, patch = since
    n_e, emap = len(t.entity_ids), patch.entity_map
    moved = emap >= 0
    old_df = np.full(n_e, -1.0)
    old_df[emap[moved]] = old.entity_df[moved]
    dirty = patch.entities | (old_df != df)  # touched, inserted, or a chunk count (so PMI) moved
    gone = old_rows(dirty, emap)
    sel = np.flatnonzero(dirty[t.edge_source] | dirty[t.edge_target])
    co = t.edge_type[sel] == 0
    s, d, weight = edge_weights(t, sel, co, df, typed_weight)
    adjacency = spliced_adjacency(old.adjacency, dirty, gone, emap, symmetric(s, d, weight, n_e))

    old_types, old_ids = old.edge_types, old.relation_ids
    assert isinstance(old_types, PairLookup) and isinstance(old_ids, PairLookup)
    src, dst = old_types.pair_keys // old_types.width, old_types.pair_keys % old_types.width
    stay = ~gone[src] & ~gone[dst]
    keys = emap[src[stay]] * max(n_e, 1) + emap[dst[stay]]
    new_keys, new_types, new_ids = typed_pairs(t, sel, co)
    at = np.searchsorted(keys, new_keys)
    keys = np.insert(keys, at, new_keys)
    types = np.insert(old_types.strings[stay], at, new_types)
    ids = np.insert(old_ids.strings[stay], at, new_ids)
    return adjacency, PairLookup(keys, types, n_e), PairLookup(keys, ids, n_e), dirty
