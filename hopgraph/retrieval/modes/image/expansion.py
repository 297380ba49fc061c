"""Mode ``image`` (text -> images), entity-centric: images are documents, not graph nodes.

1. Caption scores: similarity of the query to the image's captions embedded together (its chunk
   vector), to its best-matching single caption (one vector per caption), and to the image (CLIP
   image vectors, when configured).
2. Seeds: entities named in or similar to the query, enriched with the entities of the top caption
   hits (pseudo-relevance feedback).
3. Expansion over the entity graph, one hop along two kinds of degree-capped edges: semantic
   similarity (top-k cosine neighbours in embedding space) and co-occurrence (PMI-weighted
   relations of the snapshot). An expanded entity inherits ``expand_weight`` of its seed's score.
4. KG score of an image: ``sum(score_e / sqrt(df_e))`` over the entities its captions mention.
5. Fusion: weighted sum of max-normalized scores (or RRF).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from hopgraph.core.settings import ImageRetrievalSettings
from hopgraph.core.weights import caption_specificity
from hopgraph.retrieval.parts.fusion import ranked, rrf, weighted
from hopgraph.retrieval.snapshot import Snapshot


@dataclass(frozen=True)
class EntityEdges:
    """Degree-capped entity-entity edges for expansion (rows: from, cols: to, values: weight in [0, 1])."""

    similar: sp.csr_matrix
    cooccur: sp.csr_matrix


def top_k_rows(m: sp.csr_matrix, k: int) -> sp.csr_matrix:
    """Keep the ``k`` largest entries of each row (the degree cap)."""
    m = m.tocsr()
    rows, cols, vals = [], [], []
    for i in range(m.shape[0]):
        lo, hi = m.indptr[i], m.indptr[i + 1]
        if hi == lo:
            continue
        data = m.data[lo:hi]
        keep = np.argsort(-data)[:k]
        rows.extend([i] * len(keep))
        cols.extend(m.indices[lo:hi][keep].tolist())
        vals.extend(data[keep].tolist())
    return sp.csr_matrix((vals, (rows, cols)), shape=m.shape)


def similarity_matrix(vectors: np.ndarray, k: int, min_sim: float) -> sp.csr_matrix:
    """Each entity's top-``k`` cosine neighbours above ``min_sim`` (unit rows), as a sparse matrix
    (``gpu.export.similarity_edges`` on the CPU)."""
    n = vectors.shape[0]
    import torch

    from hopgraph.gpu.export import similarity_edges  # torch: imported on first use

    src, dst, cos = similarity_edges(torch.from_numpy(np.ascontiguousarray(vectors, dtype=np.float32)),
                                     torch.arange(n), k, min_sim)
    return sp.csr_matrix((cos.double().numpy(), (src.numpy(), dst.numpy())), shape=(n, n))


def entity_edges(snap: Snapshot, cfg: ImageRetrievalSettings) -> EntityEdges:
    similar = similarity_matrix(snap.entity_vectors, cfg.similar_k, cfg.similar_min)
    cooc = top_k_rows(snap.adjacency, cfg.cooccur_k) if cfg.cooccur_k else sp.csr_matrix(snap.adjacency.shape)
    if cooc.nnz:  # per-row max-normalized so weights are comparable with cosines
        row_max = np.maximum(cooc.max(axis=1).toarray().ravel(), 1e-12)
        cooc = sp.diags(1.0 / row_max) @ cooc
    return EntityEdges(similar.tocsr(), cooc.tocsr())


def expand(seeds: dict[int, float], edges: EntityEdges, n: int, weight: float) -> np.ndarray:
    """Entity scores after one hop: a neighbour gets ``weight * edge * seed`` (max over paths)."""
    scores = np.zeros(n)
    if not seeds:
        return scores
    idx = np.fromiter(seeds.keys(), dtype=np.int64)
    vals = np.fromiter(seeds.values(), dtype=np.float64)
    scores[idx] = vals
    for m in (edges.similar, edges.cooccur):
        if m.nnz == 0:
            continue
        hop = sp.diags(vals) @ m[idx]  # rows: seeds, cols: neighbours
        reached = weight * np.asarray(hop.max(axis=0).toarray()).ravel()
        scores = np.maximum(scores, reached)
    return scores


def kg_scores(snap: Snapshot, entity_scores: np.ndarray, image_rows: np.ndarray) -> np.ndarray:
    """``sum(score_e / sqrt(df_e))`` over the entities each chunk mentions."""
    weights = entity_scores * caption_specificity(snap.entity_df)
    mentions = snap.incidence[image_rows]
    mentions.data = np.ones_like(mentions.data)
    return np.asarray(mentions @ weights).ravel()


def fuse(signals: dict[str, dict[str, float]], weights: dict[str, float], fusion: str, rrf_k: int
         ) -> dict[str, float]:
    """Visual (caption, CLIP) and KG scores of candidate images into one score: visual scores
    min-max normalized, the KG score divided by its maximum (no matching entity: 0)."""
    if fusion == "rrf":
        return rrf({name: ranked(s) for name, s in signals.items()}, k=rrf_k, weights=weights)
    items = set().union(*signals.values()) if signals else set()
    return {**dict.fromkeys(items, 0.0), **weighted(signals, weights, floors={"kg": 0.0})}


@dataclass(frozen=True)
class ImageIndex:
    """The image chunks of a snapshot: their rows, and the chunk of each image document."""

    rows: np.ndarray
    chunk_of: dict[str, str]

    @staticmethod
    def of(snap: Snapshot) -> ImageIndex:
        rows = np.fromiter((j for j, k in enumerate(snap.chunk_kinds) if k == "image"), dtype=np.int64)
        chunk_of: dict[str, str] = {}
        for j in rows:
            chunk_of.setdefault(snap.chunk_docs[int(j)], snap.chunk_ids[int(j)])
        return ImageIndex(rows, chunk_of)
