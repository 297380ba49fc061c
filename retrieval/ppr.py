"""Personalized PageRank over the joint entity-chunk graph (HippoRAG-style), on CPU with scipy.

Nodes are entities then chunks; edges: entity-entity relations (weighted), chunk-entity mentions
(weighted by entity specificity) and chunk-chunk title links. The walk restarts at the seeds with
probability ``1 - damping``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from retrieval.snapshot import Snapshot


def joint_transition(snap: Snapshot, mention_weight: float = 1.0, link_weight: float = 1.0) -> sp.csr_matrix:
    """Column-stochastic transition matrix of the joint graph (dangling nodes keep their mass)."""
    inc = snap.incidence * mention_weight
    joint = sp.bmat([[snap.adjacency, inc.T], [inc, snap.links * link_weight]], format="csr")
    out = np.asarray(joint.sum(axis=1)).ravel()
    inv = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
    # P[i, j] = probability to go from j to i  ->  (D^-1 A)^T
    return sp.csr_matrix(sp.diags(inv) @ joint).T.tocsr()


def personalized_pagerank(transition: sp.csr_matrix, personalization: np.ndarray, damping: float = 0.5,
                          iterations: int = 30, tol: float = 1e-6) -> np.ndarray:
    """Power iteration of ``x = damping * P x + (1 - damping) * p``; returns x (sums to ~1)."""
    p = np.asarray(personalization, dtype=np.float64)
    total = p.sum()
    if total <= 0:
        return np.zeros_like(p)
    p = p / total
    x = p.copy()
    for _ in range(iterations):
        nxt = damping * (transition @ x) + (1.0 - damping) * p
        leaked = 1.0 - nxt.sum()  # mass of dangling nodes goes back to the seeds
        nxt += leaked * p
        if np.abs(nxt - x).sum() < tol:
            return nxt
        x = nxt
    return x
