"""What a reader with access groups may read of an index state: a state of its own, derived from the
readable rows alone, so that the first pass, the seeds, the walk and the bridges of every query it
makes never touch a document it may not read.

The view keeps the chunks of the documents the reader may read (``core.access.readable``) and the
entities they mention; every other entity is gone. Typed relations are left out (the store does not
say which chunk each was read from); a co-occurrence link stays between two kept entities that a
kept chunk mentions together, weighted by no more than the count of such chunks. Community
memberships are left out (communities are clustered over every document). Title links are derived
again from the kept chunks. A reader that may read every chunk gets the state itself.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from hopgraph.core.access import readable
from hopgraph.retrieval.index.state import IndexState
from hopgraph.retrieval.index.tables import Tables, strings


def hidden_chunks(t: Tables, reader: frozenset[str] | None) -> np.ndarray:
    """A boolean mask of the chunks ``reader`` may not read."""
    if reader is None:
        return np.zeros(len(t.chunk_ids), dtype=bool)
    verdict = {g: not readable(g, reader) for g in set(t.chunks["groups"].tolist())}
    return np.fromiter((verdict[g] for g in t.chunks["groups"].tolist()), dtype=bool, count=len(t.chunk_ids))


def _co_mentions(t: Tables, keep_mention: np.ndarray) -> sp.csr_matrix:
    """Entity x entity: the number of kept chunks that mention both."""
    rows, cols = t.mention_chunk[keep_mention], t.mention_entity[keep_mention]
    m = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(t.chunk_ids), len(t.entity_ids)))
    m.data[:] = 1.0
    return sp.csr_matrix(m.T @ m)


def visible_tables(t: Tables, hidden: np.ndarray) -> Tables:
    """``t`` without the ``hidden`` chunks and everything only they support (see the module's doc)."""
    keep_chunk = ~hidden
    keep_mention = keep_chunk[t.mention_chunk] if len(t.mention_chunk) else np.zeros(0, dtype=bool)
    keep_entity = np.zeros(len(t.entity_ids), dtype=bool)
    keep_entity[t.mention_entity[keep_mention]] = True
    chunk_row = np.cumsum(keep_chunk) - 1
    entity_row = np.cumsum(keep_entity) - 1

    links = (t.edge_type == 0) & keep_entity[t.edge_source] & keep_entity[t.edge_target]
    support = np.zeros(0)
    if links.any():
        co = _co_mentions(t, keep_mention)
        support = np.asarray(co[t.edge_source[links], t.edge_target[links]]).ravel()
    rows = np.flatnonzero(links)[support > 0]
    weight = np.minimum(t.edge_weight[rows], support[support > 0])
    return replace(
        t,
        entity_ids=t.entity_ids[keep_entity], entity_names=t.entity_names[keep_entity],
        entity_types=t.entity_types[keep_entity], entity_keys=t.entity_keys[keep_entity],
        entity_vectors=t.entity_vectors[keep_entity],
        chunk_ids=t.chunk_ids[keep_chunk], chunks={k: v[keep_chunk] for k, v in t.chunks.items()},
        chunk_vectors=t.chunk_vectors[keep_chunk],
        mention_chunk=chunk_row[t.mention_chunk[keep_mention]].astype(np.int32),
        mention_entity=entity_row[t.mention_entity[keep_mention]].astype(np.int32),
        mention_count=t.mention_count[keep_mention],
        edge_source=entity_row[t.edge_source[rows]].astype(np.int32),
        edge_target=entity_row[t.edge_target[rows]].astype(np.int32),
        edge_type=np.zeros(len(rows), dtype=np.int16), edge_weight=weight.astype(np.float64),
        edge_id=strings([]), edge_type_names=t.edge_type_names[:1],
        member_entity=np.zeros(0, dtype=np.int32), member_community=strings([]),
    )


def _hidden(state: IndexState, reader: frozenset[str]) -> np.ndarray:
    """``hidden_chunks`` of ``state`` for ``reader``, computed once per state and reader."""
    return state.memo(("hidden", reader), lambda: hidden_chunks(state.tables, reader))


def view_of(state: IndexState, reader: frozenset[str] | None) -> IndexState:
    """The state ``reader`` may query: ``state`` itself when it may read every chunk, else the state of
    the readable rows (derived once per state and reader)."""
    if reader is None:
        return state
    hidden = _hidden(state, reader)
    if not hidden.any():
        return state
    return state.memo(("view", reader), lambda: IndexState.of(visible_tables(state.tables, hidden),
                                                              state.settings))


def readable_documents(state: IndexState, reader: frozenset[str]) -> list[str]:
    """The ids of the documents in ``state`` that ``reader`` may read, in id order."""
    return sorted(set(state.tables.chunks["document_id"][~_hidden(state, reader)].tolist()))
