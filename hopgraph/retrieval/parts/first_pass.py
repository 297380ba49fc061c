"""How much the first pass trusts its dense signal on this corpus.

A chunk vector tells chunks apart only as far as the corpus's texts differ to the embedder. In a chat
log every text has the same speakers, greetings and form, and two random chunks are about as similar
as a question and its answer; in encyclopaedic text two random passages are unrelated. The corpus's
*homogeneity*, the mean cosine between the chunks of a fixed sample, is computed once per index state;
in a corpus of at least ``homogeneity_min_chunks`` chunks (a few texts are alike by topic, not by form)
and above ``homogeneity_floor``, the dense signal's share of the first pass falls (down to
``homogeneity_min_share`` of it) and BM25's rises, their total weight unchanged. A corpus of unrelated
texts keeps the configured weights exactly.
"""

from __future__ import annotations

import numpy as np

from hopgraph.core.settings import RetrievalSettings
from hopgraph.retrieval.index.state import IndexState

#: chunks sampled for the homogeneity (a fixed, seeded sample: the same state always gives the same value)
SAMPLE = 512


def homogeneity(vectors: np.ndarray) -> float:
    """Mean cosine between distinct unit rows of a seeded sample of ``vectors`` (0 below two rows)."""
    n = vectors.shape[0]
    if n < 2:
        return 0.0
    rows = np.sort(np.random.default_rng(0).choice(n, size=min(SAMPLE, n), replace=False))
    x = np.asarray(vectors[rows], dtype=np.float32)
    total = float((x.sum(axis=0) @ x.sum(axis=0)) - (x * x).sum())  # the sum over distinct pairs, twice
    return total / (len(rows) * (len(rows) - 1))


def state_homogeneity(state: IndexState) -> float:
    """The homogeneity of the state's chunk vectors (computed once per state)."""
    snap = state.snapshot
    return state.memo("homogeneity", lambda: homogeneity(snap.chunk_vectors) if snap.n_chunks else 0.0)


def first_pass_weights(cfg: RetrievalSettings, corpus_homogeneity: float, n_chunks: int) -> dict[str, float]:
    """The fusion weights with the dense/BM25 split adapted to a corpus of ``n_chunks`` chunks (see the module
    docstring); a corpus under ``homogeneity_min_chunks`` keeps the configured weights."""
    weights = dict(cfg.weights)
    if n_chunks < cfg.homogeneity_min_chunks:
        return weights
    excess = corpus_homogeneity - cfg.homogeneity_floor
    if cfg.homogeneity_slope <= 0 or excess <= 0:
        return weights
    dense, bm25 = weights.get("dense", 0.0), weights.get("bm25", 0.0)
    keep = max(cfg.homogeneity_min_share, 1.0 - cfg.homogeneity_slope * excess)
    weights["dense"] = dense * keep
    weights["bm25"] = bm25 + dense * (1.0 - keep)
    return weights


def first_pass_scales(cfg: RetrievalSettings, corpus_homogeneity: float, n_chunks: int) -> dict[str, float]:
    """How much ``first_pass_weights`` scales the dense and BM25 weights on this corpus (1 and 1 where it
    keeps the configured ones): the weights of a rank fusion of the two that should lean as the first pass."""
    adapted = first_pass_weights(cfg, corpus_homogeneity, n_chunks)
    return {name: adapted[name] / cfg.weights[name] if cfg.weights.get(name) else 1.0 for name in ("dense", "bm25")}
