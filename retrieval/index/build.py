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


def _csr(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, shape: tuple[int, int]) -> sp.csr_matrix:
    """A CSR matrix whose duplicates are summed in a fixed order (sorted by row, column, value)."""
    order = np.lexsort((vals, rows.astype(np.int64) * max(shape[1], 1) + cols))
    m = sp.csr_matrix((vals[order], (rows[order], cols[order])), shape=shape, dtype=np.float64)
    m.sum_duplicates()
    return m


def _about(t: Tables) -> tuple[np.ndarray, np.ndarray]:
    """(chunk rows, entity rows): the entity each chunk's document title names (the smallest id of
    the entities with that normalized name)."""
    first: dict[str, int] = {}
    for i, key in enumerate(t.entity_keys.tolist()):
        first.setdefault(key, i)
    hits = [(j, first.get(normalize_name(title))) for j, title in enumerate(t.chunks["title"].tolist())]
    pairs = np.asarray([(j, e) for j, e in hits if e is not None], dtype=np.int64).reshape(-1, 2)
    return pairs[:, 0], pairs[:, 1]


def build(t: Tables, typed_weight: float = 2.0, about_weight: float = 2.0) -> Snapshot:
    """The snapshot of ``t``'s version."""
    t0 = time.perf_counter()
    n_e, n_c = len(t.entity_ids), len(t.chunk_ids)
    m_chunk = t.mention_chunk.astype(np.int64)
    m_entity = t.mention_entity.astype(np.int64)
    cf = np.bincount(m_entity, weights=t.mention_count, minlength=n_e).astype(np.float64)
    rows, cols, vals = m_chunk, m_entity, t.mention_count.astype(np.float64)
    if about_weight > 0:
        a_rows, a_cols = _about(t)
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
    adjacency = _csr(np.concatenate([s, d]), np.concatenate([d, s]), np.concatenate([weight, weight]), (n_e, n_e))

    typed = np.nonzero(~co & (t.edge_source != t.edge_target))[0]
    order = typed[np.lexsort((t.edge_id[typed].astype(str), t.edge_target[typed], t.edge_source[typed]))] \
        if len(typed) else typed
    pairs = list(zip(t.edge_source[order].tolist(), t.edge_target[order].tolist(), strict=True))
    edge_types = dict(zip(pairs, t.edge_type[order].tolist(), strict=True))
    relation_ids = dict(zip(pairs, t.edge_id[order].tolist(), strict=True))

    name_index: dict[str, list[int]] = {}
    for i, key in enumerate(t.entity_keys.tolist()):
        name_index.setdefault(key, []).append(i)
    members: dict[str, np.ndarray] = {}
    if len(t.member_entity):
        by = np.lexsort((t.member_entity, t.member_community.astype(str)))
        comm, ents = t.member_community[by], t.member_entity[by].astype(np.int64)
        cuts = np.nonzero(comm[1:] != comm[:-1])[0] + 1
        for part_c, part_e in zip(np.split(comm, cuts), np.split(ents, cuts), strict=True):
            members[str(part_c[0])] = np.unique(part_e)

    texts = t.chunks["text"].tolist()
    docs = t.chunks["document_id"].tolist()
    titles = t.chunks["title"].tolist()
    by_title = links.title_index(titles)
    auto = links.automaton(by_title, links.cased_titles(titles))
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
