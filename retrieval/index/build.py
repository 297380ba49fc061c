"""Derive the query-time ``Snapshot`` from the index state's tables, with array operations only.

Edge weights (see ``retrieval.snapshot``): typed relations ``typed_weight`` x support; co-occurrences
positive PMI over chunks times support; chunk -> entity mention counts damped by specificity, plus
``about_weight`` for the entity a chunk's document is about (its title names it); title links.
Whatever is summed is summed in a canonical order, so equal tables give bit-equal arrays.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import scipy.sparse as sp

from hopgraph.core.records import CONCEPT
from hopgraph.core.text import normalize_name
from hopgraph.core.weights import specificity
from retrieval.index import links
from retrieval.index.tables import CO_OCCURS, Tables
from retrieval.snapshot import Snapshot

log = logging.getLogger(__name__)


def _canonical(key: np.ndarray, vals: np.ndarray) -> np.ndarray:
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


def _csr(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, shape: tuple[int, int]) -> sp.csr_matrix:
    """A CSR matrix whose duplicates are summed in a fixed order (by row, column, then value)."""
    width = max(shape[1], 1)
    key = rows.astype(np.int64) * width + cols
    if not len(key):
        return sp.csr_matrix(shape, dtype=np.float64)
    order = _canonical(key, vals)
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


def _symmetric(s: np.ndarray, d: np.ndarray, w: np.ndarray, n: int) -> sp.csr_matrix:
    """The symmetric matrix of undirected weighted edges (no self loops): the upper triangle summed
    in a fixed order, plus its transpose (half the entries to sort)."""
    upper = _csr(np.minimum(s, d), np.maximum(s, d), w, (n, n))
    both = sp.csr_matrix(upper + upper.T.tocsr())
    both.sort_indices()
    return both


def _about(titles: list[str], title_keys: dict[str, str], name_index: dict[str, list[int]]
           ) -> tuple[np.ndarray, np.ndarray]:
    """(chunk rows, entity rows): the entity each chunk's document title names (the smallest id of
    the entities with that normalized name)."""
    hits = [(j, name_index.get(title_keys[title])) for j, title in enumerate(titles)]
    pairs = np.asarray([(j, e[0]) for j, e in hits if e is not None], dtype=np.int64).reshape(-1, 2)
    return pairs[:, 0], pairs[:, 1]


def _name_index(keys: list[str]) -> dict[str, list[int]]:
    """Normalized name -> the entity rows with it, in row order."""
    index: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        index.setdefault(key, []).append(i)
    return index


def build(t: Tables, typed_weight: float = 2.0, about_weight: float = 2.0) -> Snapshot:
    """The snapshot of ``t``'s version."""
    t0 = time.perf_counter()
    n_e, n_c = len(t.entity_ids), len(t.chunk_ids)
    titles = t.chunks["title"].tolist()
    title_keys = {title: normalize_name(title) for title in dict.fromkeys(titles)}  # a title per chunk
    name_index = _name_index(t.entity_keys.tolist())
    m_chunk = t.mention_chunk.astype(np.int64)
    m_entity = t.mention_entity.astype(np.int64)
    cf = np.bincount(m_entity, weights=t.mention_count, minlength=n_e).astype(np.float64)
    rows, cols, vals = m_chunk, m_entity, t.mention_count.astype(np.float64)
    if about_weight > 0:
        a_rows, a_cols = _about(titles, title_keys, name_index)
        rows, cols = np.concatenate([rows, a_rows]), np.concatenate([cols, a_cols])
        vals = np.concatenate([vals, np.full(len(a_rows), float(about_weight))])
    raw = _csr(rows, cols, vals, (n_c, n_e))
    df = np.bincount(raw.indices, weights=(raw.data > 0).astype(np.float64), minlength=n_e).astype(np.float64)
    incidence = sp.csr_matrix(raw.multiply(specificity(df)[None, :]))
    incidence.sort_indices()

    s, d = t.edge_source.astype(np.int64), t.edge_target.astype(np.int64)
    w = t.edge_weight.astype(np.float64)
    co = t.edge_type == CO_OCCURS
    pmi = np.log(max(n_c, 1) * np.maximum(w, 1.0) / np.maximum(df[s] * df[d], 1.0)) if len(s) else w
    weight = np.where(co, np.maximum(pmi, 0.0) * w, typed_weight * w)
    keep = (s != d) & (weight > 0)
    s, d, weight = s[keep], d[keep], weight[keep]
    adjacency = _symmetric(s, d, weight, n_e)

    typed = np.nonzero(~co & (t.edge_source != t.edge_target))[0]
    pair_key = t.edge_source[typed].astype(np.int64) * max(n_e, 1) + t.edge_target[typed]
    order = typed[_canonical(pair_key, t.edge_id[typed])]  # by source, target, then relation id
    pairs = list(zip(t.edge_source[order].tolist(), t.edge_target[order].tolist(), strict=True))
    edge_types = dict(zip(pairs, t.edge_type[order].tolist(), strict=True))
    relation_ids = dict(zip(pairs, t.edge_id[order].tolist(), strict=True))

    members: dict[str, np.ndarray] = {}
    if len(t.member_entity):
        by = np.lexsort((t.member_entity, t.member_community.astype(str)))
        comm, ents = t.member_community[by], t.member_entity[by].astype(np.int64)
        cuts = np.nonzero(comm[1:] != comm[:-1])[0] + 1
        for part_c, part_e in zip(np.split(comm, cuts), np.split(ents, cuts), strict=True):
            members[str(part_c[0])] = np.unique(part_e)

    texts = t.chunks["text"].tolist()
    docs = t.chunks["document_id"].tolist()
    by_title = links.title_index(titles, title_keys)
    auto = links.automaton(by_title, links.cased_titles(titles, title_keys))
    chunk_ids = t.chunk_ids.tolist()
    title_links, named_by = links.title_links(texts, by_title, docs, auto)
    title_links = links.damp_hubs(title_links, by_title, named_by)
    snap = Snapshot(
        version=t.version, entity_ids=t.entity_ids.tolist(), entity_names=t.entity_names.tolist(),
        entity_types=t.entity_types.tolist(), entity_vectors=t.entity_vectors, chunk_ids=chunk_ids,
        chunk_texts=texts, chunk_docs=docs, chunk_sources=t.chunks["source"].tolist(),
        chunk_corpus_ids=t.chunks["corpus_id"].tolist(), chunk_kinds=t.chunks["kind"].tolist(),
        chunk_uris=t.chunks["uri"].tolist(), chunk_vectors=t.chunk_vectors, entity_df=df, entity_cf=cf,
        incidence=incidence, mentioned_in=incidence.T.tocsr(),
        adjacency=adjacency, links=title_links, edge_types=edge_types,
        relation_ids=relation_ids, entity_index={e: i for i, e in enumerate(t.entity_ids.tolist())},
        chunk_index={c: j for j, c in enumerate(chunk_ids)}, name_index=name_index, title_index=by_title,
        title_automaton=auto, title_named_by=named_by, title_hub_limit=links.hub_limit(list(named_by.values())),
        entity_hub_limit=(limit := links.hub_limit(df[df > 0])),
        generic=(t.entity_types == CONCEPT) & (df > limit),
        community_members=members,
    )
    snap.build_seconds = time.perf_counter() - t0
    log.info("index v%d: %d entities, %d chunks, %d mentions, %d edges derived in %.2fs", t.version, n_e, n_c,
             len(t.mention_count), adjacency.nnz // 2, snap.build_seconds)
    return snap
