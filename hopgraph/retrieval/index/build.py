"""Derive the query-time ``Snapshot`` from the index state's tables, with array operations only.

Edge weights (see ``retrieval.snapshot``): typed relations ``typed_weight`` x support; co-occurrences
positive PMI over chunks times support; chunk -> entity mention counts damped by specificity, plus
``about_weight`` for the entity a chunk's document is about (its title names it); title links.
Whatever is summed is summed in a canonical order, so equal tables give bit-equal arrays.
"""

from __future__ import annotations

import logging
import time

import ahocorasick
import numpy as np
import scipy.sparse as sp

from hopgraph.core.records import CONCEPT
from hopgraph.core.text import normalize_name
from hopgraph.core.weights import specificity
from hopgraph.retrieval.index import links, relations
from hopgraph.retrieval.index.carry import identity
from hopgraph.retrieval.index.delta import Patch
from hopgraph.retrieval.index.lookups import NameIndex, RowIndex
from hopgraph.retrieval.index.relations import old_rows
from hopgraph.retrieval.index.sums import csr
from hopgraph.retrieval.index.tables import Tables
from hopgraph.retrieval.snapshot import Snapshot

log = logging.getLogger(__name__)


def _about(titles: list[str], title_keys: dict[str, str], names: NameIndex, since: tuple[Snapshot, Patch] | None,
           renamed: set[str] | None) -> np.ndarray:
    """The entity each chunk's document title names (the smallest id of the entities with that
    normalized name), -1 where none. After a delta (``renamed``: the names whose entities changed),
    the previous version's, moved, except for the new chunks and those whose title is such a name."""
    if since is None or renamed is None:
        first = {key: names.first(key) for key in dict.fromkeys(title_keys.values())}
        return np.asarray([first[title_keys[title]] for title in titles], dtype=np.int64)
    old, patch = since
    about = np.full(len(titles), -1, dtype=np.int64)
    stays = patch.chunk_map >= 0
    before = old.chunk_about[stays]
    about[patch.chunk_map[stays]] = np.where(before >= 0, patch.entity_map[np.maximum(before, 0)], -1)
    redo = patch.chunks.copy()
    if renamed:
        redo |= np.fromiter((title_keys[title] in renamed for title in titles), dtype=bool, count=len(titles))
    for row in np.flatnonzero(redo).tolist():
        about[row] = names.first(title_keys[titles[row]])
    return about


def _name_index(t: Tables, rows: RowIndex, since: tuple[Snapshot, Patch] | None) -> tuple[NameIndex, set[str] | None]:
    """Normalized name -> the entities with it, and the names whose entities changed since the previous
    version (None when built whole): its index, patched with the names of the entities the delta
    touched or removed (the previous index itself when none changed and no row moved)."""
    names = since[0].name_index if since is not None else None
    if since is not None and isinstance(names, NameIndex):
        old, patch = since
        was = np.flatnonzero(old_rows(patch.entities, patch.entity_map))  # removed, or moved to a touched row
        gone = [(normalize_name(old.entity_names[r]), old.entity_ids[r]) for r in was.tolist()]
        now = np.flatnonzero(patch.entities)
        come = list(zip(t.entity_keys[now].tolist(), t.entity_ids[now].tolist(), strict=True))
        if identity(patch.entity_map, len(t.entity_ids)) and sorted(gone) == sorted(come):
            return names, set()
        return names.patched(gone, come, rows), {key for key, _ in (*gone, *come)}
    return NameIndex.of(t.entity_keys, t.entity_ids, rows), None


def _named(t: Tables, titles: dict[str, list[int]], cased: set[str], since: tuple[Snapshot, Patch] | None
           ) -> tuple[list[tuple[str, ...]], ahocorasick.Automaton | None]:
    """The title keys each chunk names, and the automaton that finds them: the previous version's, and
    its chunks' findings carried over, when the titles (and which are written with capitals) did not
    change; then only the delta's new chunks are read (the others' texts are unchanged)."""
    if since is not None:
        old, patch = since
        if old.title_cased == cased and old.title_index.keys() == titles.keys():
            named = np.empty(len(t.chunk_ids), dtype=object)  # (tuples as objects: moved in one pass)
            moved = np.flatnonzero(patch.chunk_map >= 0)
            before = np.fromiter(old.chunk_titles, dtype=object, count=len(old.chunk_titles))
            named[patch.chunk_map[moved]] = before[moved]
            fresh = np.flatnonzero(patch.chunks)  # (every new row that is no old row is marked)
            for row, text in zip(fresh.tolist(), t.chunks["text"][fresh].tolist(), strict=True):
                named[row] = tuple(links.titles_in(old.title_automaton, text))
            return named.tolist(), old.title_automaton
    auto = links.automaton(titles, cased)
    return links.named_titles(t.chunks["text"].tolist(), auto), auto


def incidence_of(t: Tables, about: np.ndarray, about_weight: float) -> tuple[np.ndarray, np.ndarray, sp.csr_matrix]:
    """(df, cf, incidence): chunks and mentions per entity, and the chunk -> entity weights."""
    n_e, n_c = len(t.entity_ids), len(t.chunk_ids)
    cf = np.bincount(t.mention_entity, weights=t.mention_count, minlength=n_e).astype(np.float64)
    rows, cols = t.mention_chunk.astype(np.int64), t.mention_entity.astype(np.int64)
    vals = t.mention_count.astype(np.float64)
    if about_weight > 0:
        a_rows = np.flatnonzero(about >= 0)
        rows, cols = np.concatenate([rows, a_rows]), np.concatenate([cols, about[a_rows]])
        vals = np.concatenate([vals, np.full(len(a_rows), float(about_weight))])
    raw = csr(rows, cols, vals, (n_c, n_e))
    df = np.bincount(raw.indices, weights=(raw.data > 0).astype(np.float64), minlength=n_e).astype(np.float64)
    incidence = sp.csr_matrix(raw.multiply(specificity(df)[None, :]))
    incidence.sort_indices()
    return df, cf, incidence


def build(t: Tables, typed_weight: float = 2.0, about_weight: float = 2.0,
          since: tuple[Snapshot, Patch] | None = None) -> Snapshot:
    """The snapshot of ``t``'s version (``since``: the previous version's and what the delta changed,
    whose untouched rows are carried over; the result is the same)."""
    t0 = time.perf_counter()
    n_e, n_c = len(t.entity_ids), len(t.chunk_ids)
    titles = t.chunks["title"].tolist()
    same = since[0] if since is not None and since[1].titles_same else None  # the same titles: keys, cases carry
    kept = same if since is not None and since[1].titles_kept else None  # in the same rows: all title derivations
    old_keys = since[0].title_keys if since is not None else {}
    title_keys = same.title_keys if same is not None else {
        title: old_keys.get(title) or normalize_name(title) for title in dict.fromkeys(titles)}
    entity_index = RowIndex(t.entity_ids)
    name_index, renamed = _name_index(t, entity_index, since)
    if kept is not None and name_index is kept.name_index:  # (the same titles naming the same entities)
        about = kept.chunk_about
    else:
        about = _about(titles, title_keys, name_index, since, renamed)
    df, cf, incidence = incidence_of(t, about, about_weight)
    if since is not None and since[0].n_chunks == n_c:  # (PMI's N: every co-occurrence weight moves with it)
        adjacency, edge_types, relation_ids, dirty = relations.patched(t, since, df, typed_weight)
    else:
        (adjacency, edge_types, relation_ids), dirty = relations.fresh(t, df, typed_weight), None

    members: dict[str, np.ndarray] = {}
    if len(t.member_entity):
        by = np.lexsort((t.member_entity, t.member_community.astype(str)))
        comm, ents = t.member_community[by], t.member_entity[by].astype(np.int64)
        cuts = np.nonzero(comm[1:] != comm[:-1])[0] + 1
        for part_c, part_e in zip(np.split(comm, cuts), np.split(ents, cuts), strict=True):
            members[str(part_c[0])] = np.unique(part_e)

    texts = t.chunks["text"].tolist()
    docs = t.chunks["document_id"].tolist()
    if kept is not None:
        by_title = kept.title_index
    elif same is not None and since is not None:
        by_title = links.moved_title_index(same.title_index, since[1].chunk_map, titles, title_keys)
    else:
        by_title = links.title_index(titles, title_keys)
    cased = same.title_cased if same is not None else links.cased_titles(titles, title_keys)
    named, auto = _named(t, by_title, cased, since)
    chunk_ids = t.chunk_ids.tolist()
    title_links, named_by = links.title_links(named, by_title, docs)
    title_links = links.damp_hubs(title_links, by_title, named_by)
    snap = Snapshot(
        version=t.version, entity_ids=t.entity_ids.tolist(), entity_names=t.entity_names.tolist(),
        entity_types=t.entity_types.tolist(), entity_vectors=t.entity_vectors, chunk_ids=chunk_ids,
        chunk_texts=texts, chunk_docs=docs, chunk_sources=t.chunks["source"].tolist(),
        chunk_corpus_ids=t.chunks["corpus_id"].tolist(), chunk_kinds=t.chunks["kind"].tolist(),
        chunk_uris=t.chunks["uri"].tolist(), chunk_vectors=t.chunk_vectors, entity_df=df, entity_cf=cf,
        incidence=incidence, mentioned_in=incidence.T.tocsr(),
        adjacency=adjacency, links=title_links, edge_types=edge_types,
        relation_ids=relation_ids, entity_index=entity_index,
        chunk_index=RowIndex(t.chunk_ids), name_index=name_index, title_index=by_title,
        title_automaton=auto, title_named_by=named_by, title_hub_limit=links.hub_limit(list(named_by.values())),
        entity_hub_limit=(limit := links.hub_limit(df[df > 0])),
        generic=(t.entity_types == CONCEPT) & (df > limit),
        community_members=members, title_keys=title_keys, chunk_about=about, changed=dirty,
        chunk_titles=named, title_cased=cased,
    )
    snap.build_seconds = time.perf_counter() - t0
    log.info("index v%d: %d entities, %d chunks, %d mentions, %d edges derived in %.2fs%s", t.version, n_e, n_c,
             len(t.mention_count), adjacency.nnz // 2, snap.build_seconds, " (patched)" if dirty is not None else "")
    return snap
