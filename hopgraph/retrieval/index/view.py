"""What a reader with access groups may read of an index state: a state of its own, derived from the
readable rows alone, so that the first pass, the seeds, the walk and the bridges of every query it
makes never touch a document it may not read.

The view keeps the chunks of the documents the reader may read (``core.access.readable``) and the
entities they mention; every other entity is gone. Each relation (typed or a co-occurrence) weighs
what a store of the readable documents would give it: the number of its supporting chunks the reader
may read (``Tables.support_*``); one with none is gone. The type of an entity that a hidden chunk
mentions is voted again over its readable mentions (``core.records.majority_label``, the rule of
ingest's vote). Community memberships are left out (communities are clustered over every document).
Title links are derived again from the kept chunks. A reader that may read every chunk gets the
state itself.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from hopgraph.core.access import readable
from hopgraph.core.records import majority_labels
from hopgraph.core.text import normalize_name
from hopgraph.retrieval.index.state import IndexState
from hopgraph.retrieval.index.tables import Tables, strings, typed_rows


def hidden_chunks(t: Tables, reader: frozenset[str] | None) -> np.ndarray:
    """A boolean mask of the chunks ``reader`` may not read."""
    if reader is None:
        return np.zeros(len(t.chunk_ids), dtype=bool)
    verdict = {g: not readable(g, reader) for g in set(t.chunks["groups"].tolist())}
    return np.fromiter((verdict[g] for g in t.chunks["groups"].tolist()), dtype=bool, count=len(t.chunk_ids))


def _visible_support(t: Tables, hidden: np.ndarray) -> np.ndarray:
    """Each edge's weight counted over the supporting chunks not ``hidden``: its weight less its support
    with groups of no kept chunk (support groups no kept chunk carries are hidden: it fails closed)."""
    seen = set(t.chunks["groups"][~hidden].tolist())
    verdict = {g: g not in seen for g in set(t.support_groups.tolist())}
    gone = np.fromiter((verdict[g] for g in t.support_groups.tolist()), dtype=bool, count=len(t.support_groups))
    less = np.bincount(t.support_edge[gone], weights=t.support_count[gone], minlength=len(t.edge_weight))
    return np.asarray(t.edge_weight - less, dtype=np.float64)


def _voted_types(t: Tables, keep_mention: np.ndarray, again: np.ndarray) -> np.ndarray:
    """The entity types with those of the ``again`` entities (a dropped mention names them) voted again over
    their kept mentions (an entity without a labelled kept mention keeps its type)."""
    types = t.entity_types.copy()
    rows = np.flatnonzero(keep_mention & again[t.mention_entity])
    for e, label in majority_labels(t.mention_entity[rows], t.mention_label[rows], t.mention_count[rows]).items():
        types[e] = label
    return types


def _as_written(name: str, key: str, texts: list[str]) -> str | None:
    """``name`` as the first of ``texts`` that holds it writes it (ignoring case; else its normalized form
    ``key``, words apart by any space), or None where none does."""
    joined = "\n".join(texts)  # (one search each over every text, the first text's match first)
    lower = joined.lower()
    if len(lower) == len(joined):  # (lower-casing kept every offset: find, not a regular expression)
        for part in (name.strip().lower(), key):
            if part and (at := lower.find(part)) >= 0:
                return joined[at : at + len(part)]
    words = key.split()
    if not words or not all(w in lower for w in words):
        return None
    found = re.search(r"\s+".join(map(re.escape, words)), joined, re.IGNORECASE)
    return found.group(0) if found else None


def _readable_names(t: Tables, keep_mention: np.ndarray, again: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The entity names (and keys) with those of the ``again`` entities (a dropped mention names them) taken
    from the kept chunks that mention them: the name as the first such chunk (by id) writes it, so that no
    spelling only a hidden chunk holds is shown (a store of the readable documents keeps the first
    spelling it ingested, an order the tables do not hold)."""
    names, keys = t.entity_names.copy(), t.entity_keys.copy()
    rows = np.flatnonzero(keep_mention & again[t.mention_entity])
    order = np.lexsort((t.mention_chunk[rows], t.mention_entity[rows]))
    ents, chunks = t.mention_entity[rows][order], t.mention_chunk[rows][order]
    if not len(ents):
        return names, keys
    starts = np.flatnonzero(np.r_[True, ents[1:] != ents[:-1]])
    text = t.chunks["text"]
    for e, a, b in zip(ents[starts].tolist(), starts.tolist(), [*starts[1:].tolist(), len(ents)], strict=True):
        name = str(names[e])
        texts = [str(text[c]) for c in chunks[a:b].tolist()]
        if any(name in x for x in texts):
            continue  # a readable chunk writes it so
        if (written := _as_written(name, str(keys[e]), texts)) is not None:
            names[e], keys[e] = written, normalize_name(written)
    return names, keys


def visible_tables(t: Tables, hidden: np.ndarray) -> Tables:
    """``t`` without the ``hidden`` chunks and everything only they support (see the module's doc)."""
    keep_chunk = ~hidden
    keep_mention = keep_chunk[t.mention_chunk] if len(t.mention_chunk) else np.zeros(0, dtype=bool)
    keep_entity = np.zeros(len(t.entity_ids), dtype=bool)
    keep_entity[t.mention_entity[keep_mention]] = True
    chunk_row = np.cumsum(keep_chunk) - 1
    entity_row = np.cumsum(keep_entity) - 1

    weight = _visible_support(t, hidden)
    keep_edge = (weight > 0) & keep_entity[t.edge_source] & keep_entity[t.edge_target]
    rows = np.flatnonzero(keep_edge)
    edge_row = np.cumsum(keep_edge) - 1
    keep_support = keep_edge[t.support_edge]
    again = np.zeros(len(t.entity_ids), dtype=bool)  # the entities a dropped mention names
    again[t.mention_entity[~keep_mention]] = True
    names, keys = _readable_names(t, keep_mention, again)
    return replace(
        t,
        entity_ids=t.entity_ids[keep_entity], entity_names=names[keep_entity],
        entity_types=_voted_types(t, keep_mention, again)[keep_entity], entity_keys=keys[keep_entity],
        entity_vectors=t.entity_vectors[keep_entity],
        chunk_ids=t.chunk_ids[keep_chunk], chunks={k: v[keep_chunk] for k, v in t.chunks.items()},
        chunk_vectors=t.chunk_vectors[keep_chunk],
        mention_chunk=chunk_row[t.mention_chunk[keep_mention]].astype(np.int32),
        mention_entity=entity_row[t.mention_entity[keep_mention]].astype(np.int32),
        mention_count=t.mention_count[keep_mention], mention_label=t.mention_label[keep_mention],
        edge_source=entity_row[t.edge_source[rows]].astype(np.int32),
        edge_target=entity_row[t.edge_target[rows]].astype(np.int32),
        edge_type=t.edge_type[rows], edge_weight=weight[rows],
        edge_id=t.edge_id[keep_edge[typed_rows(t)]],
        support_edge=edge_row[t.support_edge[keep_support]].astype(np.int32),
        support_groups=t.support_groups[keep_support], support_count=t.support_count[keep_support],
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
