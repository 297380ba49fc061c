"""Personalized PageRank over the joint entity-chunk graph (HippoRAG-style), on CPU with scipy.

Nodes are entities then chunks; edges: entity-entity relations (weighted), chunk-entity mentions
(weighted by entity specificity) and chunk-chunk title links. The walk restarts at the seeds with
probability ``1 - damping``; the mass of dangling nodes returns to the seeds.

The walk (``JointWalk``) is the snapshot's blocks and each node's inverse out-weight; power iteration
reads them assembled into one matrix, its nodes renumbered for the cache (once per walk). Two solvers of
it: ``personalized_pagerank`` (power iteration: every iteration reads the whole matrix) and
``push_pagerank`` (forward push, Andersen, Chung & Lang 2006: it touches only the nodes holding residual
mass, so its cost follows the seeds' neighbourhood, not the graph's size).
"""

from __future__ import annotations

import threading

import numpy as np
import scipy.sparse as sp

from hopgraph.core.weights import WALK_TOLERANCE
from hopgraph.retrieval.snapshot import Snapshot

#: the joint graph's edge count above which the ``auto`` solver pushes: below it 20-30 power
#: iterations cost less than a push that reaches most of the graph; above it power iteration's cost
#: grows with the edges and push's stays bounded (``python -m benchmarks.freshness --synthetic ...``)
PUSH_ABOVE_EDGES = 2_000_000
#: push's residual threshold per unit of out-degree: every score is within ``eps * out_degree`` of
#: the exact walk's (at 1e-7 the dev sets' rankings equal power iteration's to tol 1e-6)
PUSH_EPS = 1e-7


def _rows(m: sp.csr_matrix, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(entries per row, and their columns and values, row after row) of ``rows`` of ``m``."""
    first = m.indptr[rows]
    deg = m.indptr[rows + 1] - first
    starts = np.repeat(first - np.cumsum(deg) + deg, deg) + np.arange(int(deg.sum()))
    return deg, m.indices[starts], m.data[starts]


#: (out-edges per node, and for each out-edge: its target and the mass it carries)
Spread = tuple[np.ndarray, np.ndarray, np.ndarray]


class MatrixWalk:
    """A walk given as a column-stochastic matrix (``P[i, j]``: the probability to go from j to i)."""

    def __init__(self, transition: sp.spmatrix) -> None:
        self.transition = transition
        self.forward = sp.csr_matrix(transition.T) if not isinstance(transition, sp.csc_matrix) else transition.T
        self.degree = np.diff(self.forward.indptr)
        self.shape, self.nnz = transition.shape, transition.nnz

    def __matmul__(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(self.transition @ x)

    @property
    def numbered(self) -> tuple[sp.spmatrix, None]:
        """``P`` in the nodes' own numbering (see ``JointWalk.numbered``)."""
        return self.transition, None

    def spread(self, nodes: np.ndarray, mass: np.ndarray) -> Spread:
        """Where one step takes the ``mass`` of each of ``nodes`` (sorted)."""
        deg, targets, probs = _rows(self.forward, nodes)
        return deg, targets, np.repeat(mass, deg) * probs


class JointWalk:
    """The walk over the joint graph (entities, then chunks), held as the snapshot's four blocks and
    each node's inverse out-weight rather than as one matrix: ``P[i, j] = joint[j, i] / out_weight[j]``
    with ``joint = [[adjacency, m * mentioned_in], [m * incidence, l * links]]``. A snapshot's walk is
    one pass over its matrices and two vectors; power iteration reads ``P`` assembled as one matrix
    (``numbered``: about 12 bytes an edge, kept with the walk; the index state assembles it for its walk
    up to ``PUSH_ABOVE_EDGES``, else the first power iteration does). The forward push reads the blocks
    and never assembles it: the default solver pushes above ``PUSH_ABOVE_EDGES``."""

    def __init__(self, snap: Snapshot, mention_weight: float = 1.0, link_weight: float = 1.0,
                 extra_links: sp.csr_matrix | None = None) -> None:
        """``extra_links``: chunk-to-chunk edges added to the title links times ``link_weight`` (the
        session links of conversations, ``retrieval.parts.session_links``, already weighted)."""
        self.n_entities = snap.n_entities
        links = snap.links
        if extra_links is not None and extra_links.nnz:
            links, link_weight = sp.csr_matrix(snap.links * link_weight + extra_links), 1.0
        self.blocks = ((snap.adjacency, snap.mentioned_in), (snap.incidence, links))
        self.weights = ((1.0, mention_weight), (mention_weight, link_weight))
        pairs = list(zip(self.blocks, self.weights, strict=True))
        out = np.concatenate([_row_sums(a) * wa + _row_sums(b) * wb for (a, b), (wa, wb) in pairs])
        self.inv = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
        self.degree = np.concatenate([np.diff(a.indptr) * (wa != 0) + np.diff(b.indptr) * (wb != 0)
                                      for (a, b), (wa, wb) in pairs])
        self.shape = (len(out), len(out))
        self.nnz = int(self.degree.sum())
        self._numbered: tuple[sp.csr_matrix, np.ndarray] | None = None
        self._lock = threading.Lock()

    def __matmul__(self, x: np.ndarray) -> np.ndarray:
        """``P @ x``: the mass each node receives from ``x`` in one step (assembles ``numbered`` first)."""
        into, order = self.numbered
        out = np.empty(len(order))
        out[order] = into @ x[order]
        return out

    @property
    def numbered(self) -> tuple[sp.csr_matrix, np.ndarray]:
        """``P`` as one CSR matrix with the nodes renumbered, those with the most out-edges first, and
        that order (node ``order[k]`` is number k). Power iteration steps in this numbering: a product
        reads ``x`` at every out-edge of a node, and with the most-read entries side by side those reads
        stay in the cache."""
        return self._numbered or self.assemble()

    @property
    def assembled(self) -> bool:
        """Whether ``numbered`` is assembled already."""
        return self._numbered is not None

    def assemble(self) -> tuple[sp.csr_matrix, np.ndarray]:
        """Assemble ``numbered`` (once per walk: the index state does it for the walk it is built with,
        off the query path)."""
        with self._lock:  # one assembly per walk; other walks assemble theirs meanwhile
            if self._numbered is None:
                order = np.argsort(-self.degree, kind="stable")
                into = sp.csr_matrix(sp.csr_matrix(self.matrix())[order][:, order])
                into.sort_indices()
                self._numbered = (into, order)
            return self._numbered

    def spread(self, nodes: np.ndarray, mass: np.ndarray) -> Spread:
        """Where one step takes the ``mass`` of each of ``nodes`` (sorted)."""
        n_e = self.n_entities
        cut = int(np.searchsorted(nodes, n_e))
        degree, targets, amounts = np.zeros(len(nodes), dtype=np.int64), [], []
        for at, first, rows, blocks, weights in ((0, 0, nodes[:cut], self.blocks[0], self.weights[0]),
                                                 (cut, n_e, nodes[cut:] - n_e, self.blocks[1], self.weights[1])):
            per_unit = mass[at:at + len(rows)] * self.inv[rows + first]
            for m, w, offset in zip(blocks, weights, (0, n_e), strict=True):
                if w != 0:
                    deg, cols, values = _rows(m, rows)
                    degree[at:at + len(rows)] += deg
                    targets.append(cols + offset if offset else cols)
                    amounts.append(np.repeat(per_unit * w, deg) * values)
        return degree, np.concatenate(targets), np.concatenate(amounts)

    def matrix(self) -> sp.csc_matrix:
        """The walk as one column-stochastic matrix (``P[i, j]``, in CSC form, so that ``P.T`` is the CSR
        of every node's out-edges): what ``numbered`` renumbers, and the torch engine's input."""
        (adjacency, mentioned), (incidence, links) = self.blocks
        m, l_w = self.weights[0][1], self.weights[1][1]
        joint = sp.bmat([[adjacency, mentioned * m], [incidence * m, links * l_w]], format="csr")
        forward = sp.csr_matrix(sp.diags(self.inv) @ joint)
        forward.sort_indices()
        return forward.T


Walk = MatrixWalk | JointWalk


def as_walk(transition: sp.spmatrix | Walk) -> Walk:
    return transition if isinstance(transition, MatrixWalk | JointWalk) else MatrixWalk(transition)


def _row_sums(m: sp.csr_matrix) -> np.ndarray:
    return np.asarray(m.sum(axis=1)).ravel()


def _normalized(personalization: np.ndarray) -> np.ndarray | None:
    p = np.asarray(personalization, dtype=np.float64)
    total = p.sum()
    return p / total if total > 0 else None


def personalized_pagerank(transition: sp.spmatrix | Walk, personalization: np.ndarray, damping: float = 0.5,
                          iterations: int = 30, tol: float = WALK_TOLERANCE) -> np.ndarray:
    """Power iteration of ``x = damping * P x + (1 - damping) * p`` until an iteration moves less than
    ``tol`` (L1); returns x (sums to ~1)."""
    p = _normalized(personalization)
    if p is None:
        return np.zeros(len(personalization))
    into, order = as_walk(transition).numbered  # steps in the walk's numbering, x given back in the nodes'
    if order is not None:
        p = p[order]
    x, restart, work = p.copy(), (1.0 - damping) * p, np.empty_like(p)
    for _ in range(iterations):  # in place: a step allocates only the product
        nxt = np.asarray(into @ x)
        nxt *= damping
        nxt += restart
        leaked = 1.0 - nxt.sum()  # mass of dangling nodes goes back to the seeds
        nxt += np.multiply(p, leaked, out=work)
        done = np.abs(np.subtract(nxt, x, out=work), out=work).sum() < tol
        x = nxt
        if done:
            break
    if order is None:
        return x
    out = np.empty_like(x)
    out[order] = x
    return out


def push_pagerank(transition: sp.spmatrix | Walk, personalization: np.ndarray, damping: float = 0.5,
                  eps: float = PUSH_EPS, max_rounds: int = 200) -> np.ndarray:
    """The same walk by forward push, vectorized per round: every node whose residual exceeds
    ``eps * out_degree`` settles ``1 - damping`` of it and spreads the rest along its out-edges."""
    p = _normalized(personalization)
    if p is None:
        return np.zeros(len(personalization))
    walk = as_walk(transition)
    degree = walk.degree
    seeds = np.flatnonzero(p)
    residual, x = p.copy(), np.zeros_like(p)
    cand = seeds
    for _ in range(max_rounds):
        active = cand[residual[cand] > eps * np.maximum(degree[cand], 1)]
        if not active.size:
            break
        mass = residual[active]
        residual[active] = 0.0
        x[active] += (1.0 - damping) * mass
        deg, targets, amounts = walk.spread(active, damping * mass)
        dead = deg == 0
        if dead.any():  # a dead end: its walk restarts at the seeds
            residual[seeds] += damping * mass[dead].sum() * p[seeds]
        touched, inverse = np.unique(targets, return_inverse=True)
        residual[touched] += np.bincount(inverse, weights=amounts)
        cand = np.union1d(touched, seeds) if dead.any() else touched
    return x


def pushes_by_default(transition: sp.spmatrix | Walk) -> bool:
    """Whether the ``auto`` solver pushes on this walk (above ``PUSH_ABOVE_EDGES`` edges) rather than iterate."""
    return transition.nnz > PUSH_ABOVE_EDGES


def pagerank(transition: sp.spmatrix | Walk, personalization: np.ndarray, damping: float = 0.5,
             solver: str = "auto") -> np.ndarray:
    """The walk by the named solver: ``power``, ``push``, or ``auto`` (``pushes_by_default``)."""
    if solver not in ("auto", "power", "push"):
        raise ValueError(f"unknown PPR solver {solver!r}: auto, power or push")
    if solver == "push" or (solver == "auto" and pushes_by_default(transition)):
        return push_pagerank(transition, personalization, damping)
    return personalized_pagerank(transition, personalization, damping)
