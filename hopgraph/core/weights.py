"""The entity-weighting formulas, in one place: how much a mention of an entity counts, given the
number of chunks that mention it (its document frequency ``df``)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float64]

#: the personalized PageRank walk stops when an iteration moves less than this much mass (L1): its
#: scores are fused with others, whose top ranks do not move below it (``python -m benchmarks.ppr_tolerance``)
WALK_TOLERANCE = 1e-3


def specificity(df: Array | float) -> Array:
    """``1 / log(1 + df)`` (df floored at 1): an entity in one chunk weighs 1.44, in 100 chunks 0.22.
    Damps the chunk-entity edges of the snapshot, so hubs spread little PageRank mass."""
    return np.asarray(1.0 / np.log1p(np.maximum(df, 1.0)))


def seed_specificity(df: Array | float) -> Array:
    """``1 / (1 + log(1 + df))``, the same damping bounded by 1: scales a seed entity's weight
    (PPR restart, direct chunk scores) without ever raising it."""
    return np.asarray(1.0 / (np.log1p(np.maximum(df, 1.0)) + 1.0))


#: the least share ``corpus_share_damping`` leaves: an entity's seeds must still rank its chunks
MIN_SHARE = 0.1
#: the corpus size from which an entity's share of the chunks is read: in a handful of texts, every name
#: is in a large share of them
MIN_CHUNKS = 200


def corpus_share_damping(df: Array | float, n_chunks: int) -> Array:
    """``1 - df / n_chunks``, at least ``MIN_SHARE``, in a corpus of ``MIN_CHUNKS`` chunks or more (else 1):
    an entity in most chunks of the corpus (the owner of a chat log, named in each chat) tells few chunks
    from the others and weighs little; one in a few chunks keeps almost all its weight. A corpus of many
    subjects (an encyclopaedia) is left as it is; a corpus about the same few people is not."""
    share = np.asarray(df, dtype=np.float64) / max(n_chunks, 1)
    if n_chunks < MIN_CHUNKS:
        return np.ones_like(share)
    return np.asarray(np.clip(1.0 - share, MIN_SHARE, 1.0))


def caption_specificity(df: Array | float) -> Array:
    """``1 / sqrt(df)``: the stronger damping of the short, repetitive captions of image documents."""
    return np.asarray(1.0 / np.sqrt(np.maximum(df, 1.0)))
