"""The in-memory query-time graph: entities, chunks, their incidence and entity-entity edges.

Built from the graph store's exports and the vector store's entity vectors, tagged with the graph
version and rebuilt when it changes. Expansion, PPR and keyword search run here, not hop by hop
in Cypher. Edge weights:

- typed relations: ``typed_weight`` x support (chunks stating them);
- co-occurrences: positive PMI over chunks, ``log(N * n_ab / (df_a * df_b))``, times support;
- chunk -> entity: mention count, damped by the entity's specificity ``1 / log(1 + df)``, plus
  ``about_weight`` when the entity is what the chunk's document is about (its title names it);
- chunk -> chunk: a chunk whose text names another document's title links to that document's
  chunks (``link_weight``), the way a hyperlink would.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from graphdb.store import GraphStore
from hopgraph.core.text import ngrams, normalize_name
from hopgraph.core.weights import specificity
from vectors.store import VectorStore

log = logging.getLogger(__name__)


@dataclass
class Snapshot:
    """Arrays for one graph version. Entity index i, chunk index j."""

    version: int
    entity_ids: list[str]
    entity_names: list[str]
    entity_types: list[str]
    entity_vectors: np.ndarray           # (n_entities, dim), unit rows; zero rows if missing
    chunk_ids: list[str]
    chunk_texts: list[str]
    chunk_docs: list[str]
    chunk_sources: list[str]
    chunk_corpus_ids: list[str]
    chunk_kinds: list[str]               # 'text' or 'image' (of the chunk's document)
    chunk_uris: list[str]                # the image path/URI of image documents
    entity_df: np.ndarray                # chunks mentioning each entity (document frequency)
    entity_cf: np.ndarray                # mentions of each entity over all chunks (collection frequency)
    incidence: sp.csr_matrix             # (n_chunks, n_entities) mention weights
    adjacency: sp.csr_matrix             # (n_entities, n_entities) symmetric relation weights
    links: sp.csr_matrix                 # (n_chunks, n_chunks) symmetric title links
    edge_types: dict[tuple[int, int], str] = field(default_factory=dict)
    relation_ids: dict[tuple[int, int], str] = field(default_factory=dict)  # typed pair -> relation id
    entity_index: dict[str, int] = field(default_factory=dict)
    chunk_index: dict[str, int] = field(default_factory=dict)
    name_index: dict[str, list[int]] = field(default_factory=dict)
    title_index: dict[str, list[int]] = field(default_factory=dict)  # normalized title -> chunks
    community_members: dict[str, np.ndarray] = field(default_factory=dict)  # community id -> entity indices
    build_seconds: float = 0.0

    @property
    def n_entities(self) -> int:
        return len(self.entity_ids)

    @property
    def n_chunks(self) -> int:
        return len(self.chunk_ids)


def title_index(titles: list[str]) -> dict[str, list[int]]:
    """Normalized document title -> the chunks of documents with that title (titles under 4
    characters are left out: they match too much)."""
    by_title: dict[str, list[int]] = {}
    for j, t in enumerate(titles):
        key = normalize_name(t)
        if len(key) >= 4:
            by_title.setdefault(key, []).append(j)
    return by_title


def title_links(texts: list[str], by_title: dict[str, list[int]], docs: list[str],
                max_words: int = 8) -> sp.csr_matrix:
    """Symmetric chunk-chunk matrix: chunk i names the title of chunk j's document (j in another
    document); ``by_title`` is the chunks' ``title_index``."""
    rows, cols = [], []
    for i, text in enumerate(texts):
        found: set[int] = set()
        for _, gram in ngrams(text.split(), max_words):
            hit = by_title.get(gram)
            if hit:
                found.update(j for j in hit if docs[j] != docs[i])
        for j in found:
            rows += [i, j]
            cols += [j, i]
    n_c = len(texts)
    m = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_c, n_c), dtype=np.float64)
    m.data[:] = 1.0  # duplicates collapse to one link
    return m


def build_snapshot(graph: GraphStore, vectors: VectorStore, typed_weight: float = 2.0,
                   about_weight: float = 2.0) -> Snapshot:
    """Export the graph and entity vectors into a Snapshot."""
    t0 = time.perf_counter()
    topo = graph.topology()
    chunks = graph.snapshot_chunks()
    mentions = graph.snapshot_mentions()
    e_index = {e: i for i, e in enumerate(topo.entity_ids)}
    c_index = {r["id"]: j for j, r in enumerate(chunks)}
    n_e, n_c = len(topo.entity_ids), len(chunks)

    rows, cols, vals = [], [], []
    for cid, eid, count in mentions:
        if cid in c_index and eid in e_index:
            rows.append(c_index[cid])
            cols.append(e_index[eid])
            vals.append(float(count))
    cf = np.bincount(np.asarray(cols, dtype=np.int64), weights=np.asarray(vals), minlength=n_e)  # mentions
    names: dict[str, int] = {}
    for i, name in enumerate(topo.names):
        names.setdefault(normalize_name(name), i)
    for j, r in enumerate(chunks):  # the entity a document is about: its title
        e = names.get(normalize_name(r.get("title") or ""))
        if e is not None and about_weight > 0:
            rows.append(j)
            cols.append(e)
            vals.append(about_weight)
    raw = sp.csr_matrix((vals, (rows, cols)), shape=(n_c, n_e), dtype=np.float64)  # duplicates add up
    df = np.asarray((raw > 0).sum(axis=0)).ravel().astype(np.float64)  # chunks mentioning each entity
    incidence = sp.csr_matrix(raw.multiply(specificity(df)[None, :]))

    a_rows, a_cols, a_vals = [], [], []
    edge_types: dict[tuple[int, int], str] = {}
    relation_ids: dict[tuple[int, int], str] = {}
    n = max(n_c, 1)
    for s, t, typ, w, rid in zip(topo.sources, topo.targets, topo.edge_types, topo.weights, topo.edge_ids,
                                 strict=True):
        if s == t:
            continue
        if typ == "co_occurs":
            pmi = math.log(n * max(w, 1.0) / max(df[s] * df[t], 1.0))
            weight = max(pmi, 0.0) * w
        else:
            weight = typed_weight * w
            edge_types[(s, t)] = typ
            relation_ids[(s, t)] = rid
        if weight > 0:
            a_rows += [s, t]
            a_cols += [t, s]
            a_vals += [weight, weight]
    adjacency = sp.csr_matrix((a_vals, (a_rows, a_cols)), shape=(n_e, n_e), dtype=np.float64)

    ids, mat = vectors.export("entities")
    dim = mat.shape[1] if mat.size else 384
    evec = np.zeros((n_e, dim), dtype=np.float32)
    for k, eid in enumerate(ids):
        row = e_index.get(eid)
        if row is not None:
            v = mat[k]
            evec[row] = v / max(float(np.linalg.norm(v)), 1e-12)

    name_index: dict[str, list[int]] = {}
    for i, name in enumerate(topo.names):
        name_index.setdefault(normalize_name(name), []).append(i)

    def corpus_id(meta: Any) -> str:
        try:
            return str(json.loads(meta or "{}").get("corpus_id", ""))
        except (TypeError, ValueError):
            return ""

    members: dict[str, list[int]] = {}
    for eid, cid in graph.snapshot_memberships():
        e = e_index.get(eid)
        if e is not None:
            members.setdefault(cid, []).append(e)
    by_title = title_index([r.get("title") or "" for r in chunks])
    snap = Snapshot(
        version=topo.version, entity_ids=topo.entity_ids, entity_names=topo.names, entity_types=topo.types,
        entity_vectors=evec, chunk_ids=[r["id"] for r in chunks], chunk_texts=[r["text"] or "" for r in chunks],
        chunk_docs=[r["document_id"] for r in chunks], chunk_sources=[r["source"] or "" for r in chunks],
        chunk_corpus_ids=[corpus_id(r.get("metadata")) for r in chunks], entity_df=df, entity_cf=cf,
        incidence=incidence,
        chunk_kinds=[r.get("kind") or "text" for r in chunks], chunk_uris=[r.get("uri") or "" for r in chunks],
        adjacency=adjacency,
        links=title_links([r["text"] or "" for r in chunks], by_title, [r["document_id"] for r in chunks]),
        edge_types=edge_types, relation_ids=relation_ids, entity_index=e_index, chunk_index=c_index,
        name_index=name_index, title_index=by_title,
        community_members={c: np.asarray(sorted(m), dtype=np.int64) for c, m in members.items()},
    )
    snap.build_seconds = time.perf_counter() - t0
    log.info("graph snapshot v%d: %d entities, %d chunks, %d mentions, %d edges in %.1fs", snap.version, n_e, n_c,
             len(vals), adjacency.nnz // 2, snap.build_seconds)
    return snap


class SnapshotCache:
    """One snapshot per graph version, rebuilt after writes (thread-safe)."""

    def __init__(self, graph: GraphStore, vectors: VectorStore, typed_weight: float = 2.0,
                 about_weight: float = 2.0) -> None:
        self.graph = graph
        self.vectors = vectors
        self.typed_weight = typed_weight
        self.about_weight = about_weight
        self._snap: Snapshot | None = None
        self._lock = threading.Lock()

    def get(self) -> Snapshot:
        version = self.graph.version()
        with self._lock:
            if self._snap is None or self._snap.version != version:
                self._snap = build_snapshot(self.graph, self.vectors, self.typed_weight, self.about_weight)
            return self._snap
