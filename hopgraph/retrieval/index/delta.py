"""Patch the index state's tables with the committed changes since their version.

Only what the change touched is read back: the chunks of the changed documents, the mentions of
those chunks (and of merged entities), the touched entities (those the old and new chunks mention,
and the entities a change names), the edges among them (all edges of the named ones), their
memberships and their vectors. The
result holds the same rows, in the same order, as ``fetch_all`` at the same version.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from hopgraph.core.text import normalize_name
from hopgraph.graphdb.protocols import IndexSource
from hopgraph.graphdb.records import GraphChange
from hopgraph.retrieval.index.carry import identity
from hopgraph.retrieval.index.tables import (
    CHUNK_COLUMNS,
    Tables,
    chunk_columns,
    edge_columns,
    grouped_chunks,
    member_columns,
    mention_columns,
    rows_of,
    strings,
    typed_rows,
    unit_rows,
    vector_dtype,
)
from hopgraph.vectors.store import VectorStore


@dataclass(frozen=True)
class Patch:
    """What a delta changed, for a derivation that carries the rest of the previous state over: the
    old rows' new places, and which rows may differ (everything else is equal, row for row)."""

    entity_map: np.ndarray     # int64: old entity row -> new row, -1 where removed
    chunk_map: np.ndarray      # int64: old chunk row -> new row, -1 where removed
    entities: np.ndarray       # bool over new entity rows: inserted, or touched (mentions, edges, name, vector)
    chunks: np.ndarray         # bool over new chunk rows: inserted, or whose mentions changed
    titles_kept: bool = False  # no chunk row moved and every chunk has the title its row had
    titles_same: bool = False  # the chunks' titles are the previous ones, as a multiset (rows may move)


class NeedsRebuild(Exception):
    """A delta cannot give what a fresh build would: the state must be read again."""


@dataclass(frozen=True)
class Merged:
    """Sorted ids after removing some rows and inserting others, and where the old rows went."""

    ids: np.ndarray
    old_to_new: np.ndarray    # int64, -1 for removed rows
    new_rows: np.ndarray      # the rows of the inserted ids


def merge_sorted(ids: np.ndarray, keep: np.ndarray, added: list[str]) -> Merged:
    """Remove the rows where ``keep`` is False and insert ``added`` (not present), keeping the order."""
    kept = ids[keep]
    new = strings(sorted(set(added)))
    pos = np.searchsorted(kept, new) if len(kept) else np.zeros(len(new), dtype=np.int64)
    shift = np.cumsum(np.bincount(pos, minlength=len(kept) + 1))[: len(kept)] if len(new) else 0
    old_to_new = np.full(len(ids), -1, dtype=np.int64)
    old_to_new[keep] = np.arange(len(kept)) + shift
    return Merged(np.insert(kept, pos, new), old_to_new, pos + np.arange(len(new)))


#: above this many runs a splice copies with numpy's insert (two passes) instead of run by run
_MAX_RUNS = 20_000


def splice(old: np.ndarray, keep: np.ndarray, at: np.ndarray, new: np.ndarray) -> np.ndarray:
    """``np.insert(old[keep], at, new, axis=0)`` (``at`` sorted) in one pass of run copies: the
    vectors (1M x 384 at scale, perhaps memory-mapped) are copied once, not gathered and then
    copied again around the inserts."""
    kept = np.flatnonzero(keep)
    gaps = np.flatnonzero(np.diff(kept) != 1) + 1
    cuts = np.unique(np.concatenate([[0], gaps, at[(at > 0) & (at < len(kept))], [len(kept)]]))
    if len(cuts) > _MAX_RUNS:
        return np.insert(old[keep], at, new, axis=0)
    out = np.empty((len(kept) + len(new), *old.shape[1:]), dtype=old.dtype)
    out[at + np.arange(len(new))] = new
    for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True):
        if b > a:
            shift = int(np.searchsorted(at, a, side="right"))  # rows inserted before kept row a
            out[a + shift : b + shift] = old[kept[a] : kept[a] + b - a]
    return out


def row_changes(old_ids: np.ndarray, old_values: np.ndarray, new_ids: np.ndarray, new_values: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """How sorted rows with values became others: (``keep``: the old rows still there with the same
    value, ``at``: insert positions, ``rows``: the new rows inserted there), so that
    ``np.insert(old_values[keep], at, new_values[rows])`` equals ``new_values``."""
    pos = rows_of(old_ids, new_ids.tolist())
    found = pos >= 0
    same = np.zeros(len(new_ids), dtype=bool)
    same[found] = old_values[pos[found]] == new_values[found]
    keep = np.zeros(len(old_ids), dtype=bool)
    keep[pos[same]] = True
    rows = np.flatnonzero(~same)
    return keep, rows - np.arange(len(rows)), rows


def _remap(rows: np.ndarray, mapping: np.ndarray) -> np.ndarray:
    return mapping[rows] if len(rows) else rows.astype(np.int64)


def _concat(*parts: np.ndarray) -> np.ndarray:
    return np.concatenate(parts)


def kept_then(old: np.ndarray, keep: np.ndarray, kept: int, new: np.ndarray) -> np.ndarray:
    """``np.concatenate([old[keep], new])`` (``kept``: how many ``keep`` holds) in one pass over ``old``
    (the edge columns hold 10M rows at scale)."""
    out = np.empty(kept + len(new), dtype=old.dtype)
    np.compress(keep, old, out=out[:kept])
    out[kept:] = new
    return out


def _isin(values: np.ndarray, among: Collection[str]) -> np.ndarray:
    """Which of ``values`` (strings) are in ``among``: a hash lookup each, where ``np.isin`` would sort
    both sides of object arrays."""
    return np.fromiter((v in among for v in values.tolist()), dtype=bool, count=len(values))


def titles_carried(t: Tables, dropped: np.ndarray, chunks: Merged, titles: np.ndarray) -> tuple[bool, bool]:
    """(kept: the changed documents' chunks came back to the rows they left, with the same titles;
    same: the chunks that came back have the titles of those that left, whatever their rows): edited
    documents, whose title derivations carry over (their rows moved when their chunk ids changed)."""
    gone = np.flatnonzero(dropped)
    same = sorted(t.chunks["title"][gone].tolist()) == sorted(titles[chunks.new_rows].tolist())
    kept = same and np.array_equal(chunks.new_rows, gone) and np.array_equal(titles[gone], t.chunks["title"][gone])
    return bool(kept), same


def apply_delta(tables: Tables, changes: Sequence[GraphChange], graph: IndexSource,
                vectors: VectorStore) -> tuple[Tables, Patch]:
    """``tables`` brought to the last change's version (``changes`` not empty), and what changed."""
    docs = sorted({d for c in changes for d in c.documents})
    named = sorted({e for c in changes for e in c.entities})
    # an incremental community update names the entities whose memberships changed; a rebuild does not
    regrouped = sorted({e for c in changes if c.communities for e in c.regrouped or ()})
    every_member = any(c.communities and c.regrouped is None for c in changes)
    t = tables

    # chunks: the changed documents' rows go, their complete chunks come back
    fetched = graph.snapshot_chunks(docs) if docs else []
    new_ids, new_cols = chunk_columns(fetched)
    drop_chunk = _isin(t.chunks["document_id"], set(docs)) if docs else np.zeros(len(t.chunk_ids), bool)
    chunks = merge_sorted(t.chunk_ids, ~drop_chunk, new_ids.tolist())
    cols = {name: np.insert(t.chunks[name][~drop_chunk], chunks.new_rows - np.arange(len(new_ids)),
                            new_cols[name]) for name in CHUNK_COLUMNS}
    cvec = splice(t.chunk_vectors, ~drop_chunk, chunks.new_rows - np.arange(len(new_ids)),
                  unit_rows(new_ids.tolist(), vectors, t.dim, "chunks"))
    new_mentions = graph.snapshot_mentions(chunk_ids=new_ids.tolist()) if len(new_ids) else []

    # touched entities: those the old and the new chunks mention, and those a change names
    gone_rows = np.isin(t.mention_chunk, np.nonzero(drop_chunk)[0])
    touched = sorted({*t.entity_ids[t.mention_entity[gone_rows]].tolist(), *(m[1] for m in new_mentions), *named})
    rows = {r[0]: r for r in graph.snapshot_entities(touched)} if touched else {}
    t_rows = rows_of(t.entity_ids, touched)
    keep_entity = np.ones(len(t.entity_ids), dtype=bool)
    keep_entity[t_rows[(t_rows >= 0) & ~_isin(strings(touched), rows)]] = False
    added = [e for e, r in zip(touched, t_rows.tolist(), strict=True) if r < 0 and e in rows]
    ents = merge_sorted(t.entity_ids, keep_entity, added)
    ins = ents.new_rows - np.arange(len(added))
    added_rows = [rows[e] for e in sorted(added)]

    def insert(old: np.ndarray, values: list[str]) -> np.ndarray:
        return np.insert(old[keep_entity], ins, strings(values))

    names = insert(t.entity_names, [r[1] for r in added_rows])
    types = insert(t.entity_types, [r[2] for r in added_rows])
    keys = insert(t.entity_keys, [normalize_name(r[1]) for r in added_rows])
    if rows:  # a touched entity's name or type may have been written again
        at = rows_of(ents.ids, list(rows))
        names[at] = strings([r[1] for r in rows.values()])
        types[at] = strings([r[2] for r in rows.values()])
        keys[at] = strings([normalize_name(r[1]) for r in rows.values()])
    kept = sorted(set(rows) - set(added))  # a touched entity may have been deleted and written again since
    reread = unit_rows(kept, vectors, t.dim)
    same_rows = identity(ents.old_to_new, len(t.entity_ids))  # no entity row removed or moved
    if not added and same_rows and np.array_equal(
            t.entity_vectors[rows_of(t.entity_ids, kept)], reread.astype(t.entity_vectors.dtype)):
        evec = t.entity_vectors  # no row moved, no vector changed: shared (never written), not copied
    else:
        evec = splice(t.entity_vectors, keep_entity, ins, unit_rows(sorted(added), vectors, t.dim))
        if kept:
            evec[rows_of(ents.ids, kept)] = reread
    if evec.dtype != (want := vector_dtype(len(ents.ids))):
        if want is not np.float16:  # float16 rows cannot become the float32 rows a fresh read gives
            raise NeedsRebuild(f"{len(ents.ids)} entities: vectors back to float32")
        evec = evec.astype(want)

    # mentions: rows of dropped chunks and of named (merged) entities go; the fetched ones come back
    again = graph.snapshot_mentions(entity_ids=named) if named else []
    drop_m = gone_rows | np.isin(t.mention_entity, rows_of(t.entity_ids, named))
    m_chunk = _remap(t.mention_chunk[~drop_m], chunks.old_to_new)
    m_entity = _remap(t.mention_entity[~drop_m], ents.old_to_new)
    live = (m_chunk >= 0) & (m_entity >= 0)
    # (a dropped chunk's or named entity's mention comes back only from the reads above: no duplicates)
    fresh = mention_columns(list({(m[0], m[1]): m for m in [*new_mentions, *again]}.values()),
                            chunks.ids, ents.ids)

    # edges: a relation's support is the chunks stating it, which mention both its ends, so a changed
    # chunk changes only edges among touched entities; a merge rewires every edge of the entities it names
    t_touched = rows_of(t.entity_ids, touched)
    in_touched = np.zeros(len(t.entity_ids), dtype=bool)
    in_touched[t_touched[t_touched >= 0]] = True
    t_named = rows_of(t.entity_ids, named)
    in_named = np.zeros(len(t.entity_ids), dtype=bool)
    in_named[t_named[t_named >= 0]] = True
    drop_e = in_touched[t.edge_source] & in_touched[t.edge_target]
    if named:
        drop_e |= in_named[t.edge_source] | in_named[t.edge_target]
    removed = ents.old_to_new < 0
    if removed.any():  # an edge to a removed entity goes too
        drop_e |= removed[t.edge_source] | removed[t.edge_target]
    e_keep = ~drop_e  # (each column compressed once: 10M rows at scale)
    read = {e.id: e for e in [*(graph.snapshot_edges(touched, within=True) if touched else []),
                              *(graph.snapshot_edges(named) if named else [])]}
    edges = edge_columns(list(read.values()), ents.ids, t.edge_type_names, grouped_chunks(chunks.ids, cols["groups"]))
    n_keep = int(np.count_nonzero(e_keep))
    s_keep = e_keep[t.support_edge]  # the support of a kept edge stays (its chunks were not changed)
    s_rows = (np.cumsum(e_keep) - 1)[t.support_edge[s_keep]] if s_keep.any() else np.zeros(0, dtype=np.int32)
    id_keep = e_keep[typed_rows(t)]  # (edge_id holds the typed rows' ids)

    to_new = None if same_rows else ents.old_to_new.astype(np.int32)  # (kept edges reach no removed row)

    def ends(old: np.ndarray, new: np.ndarray) -> np.ndarray:  # entity rows, moved when rows moved
        out = kept_then(old, e_keep, n_keep, new)
        if to_new is not None:
            np.take(to_new, out[:n_keep], out=out[:n_keep])
        return out

    if every_member:
        members = member_columns(graph.snapshot_memberships(), ents.ids)
    else:  # a touched entity may have been deleted (with its memberships) and written again
        again_ids = sorted({*rows, *regrouped})
        t_regrouped = rows_of(t.entity_ids, regrouped)
        redo = in_touched.copy()
        redo[t_regrouped[t_regrouped >= 0]] = True
        m_e = _remap(t.member_entity, ents.old_to_new)
        stay = (m_e >= 0) & ~redo[t.member_entity]
        again_m = member_columns(graph.snapshot_memberships(again_ids) if again_ids else [], ents.ids)
        members = {"member_entity": _concat(m_e[stay], again_m["member_entity"]).astype(np.int32),
                   "member_community": _concat(t.member_community[stay], again_m["member_community"])}

    dirty_chunks = np.zeros(len(chunks.ids), dtype=bool)
    dirty_chunks[chunks.new_rows] = True
    moved = _remap(t.mention_chunk[drop_m], chunks.old_to_new)
    dirty_chunks[moved[moved >= 0]] = True
    dirty_entities = np.zeros(len(ents.ids), dtype=bool)
    now = rows_of(ents.ids, touched)
    dirty_entities[now[now >= 0]] = True
    patch = Patch(ents.old_to_new, chunks.old_to_new, dirty_entities, dirty_chunks,
                  *titles_carried(t, drop_chunk, chunks, cols["title"]))
    return Tables(
        version=changes[-1].version, entity_ids=ents.ids, entity_names=names, entity_types=types, entity_keys=keys,
        entity_vectors=evec, chunk_ids=chunks.ids, chunks=cols, chunk_vectors=cvec,
        mention_chunk=_concat(m_chunk[live], fresh["mention_chunk"]).astype(np.int32),
        mention_entity=_concat(m_entity[live], fresh["mention_entity"]).astype(np.int32),
        mention_count=_concat(t.mention_count[~drop_m][live], fresh["mention_count"]).astype(np.float64),
        mention_label=_concat(t.mention_label[~drop_m][live], fresh["mention_label"]),
        edge_source=ends(t.edge_source, edges["edge_source"]), edge_target=ends(t.edge_target, edges["edge_target"]),
        edge_type=kept_then(t.edge_type, e_keep, n_keep, edges["edge_type"]),
        edge_weight=kept_then(t.edge_weight, e_keep, n_keep, edges["edge_weight"].astype(np.float64)),
        edge_id=kept_then(t.edge_id, id_keep, int(np.count_nonzero(id_keep)), edges["edge_id"]),
        edge_type_names=edges["edge_type_names"],
        support_edge=_concat(s_rows, edges["support_edge"] + n_keep).astype(np.int32),
        support_groups=_concat(t.support_groups[s_keep], edges["support_groups"]),
        support_count=_concat(t.support_count[s_keep], edges["support_count"]).astype(np.int32),
        **members,
    ), patch
