"""Batched personalized PageRank and k-hop expansion as sparse torch operations (cpu or cuda).

Several queries run at once: the personalization is an ``(n, B)`` matrix and every iteration is one
sparse-dense product ``P @ X``, so the transition matrix is read once per iteration for the whole
batch. The walk is the one of ``retrieval.parts.ppr`` (restart at the seeds with probability
``1 - damping``; the mass of dangling nodes returns to the seeds).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
import torch

from hopgraph.core.weights import WALK_TOLERANCE


def sparse_tensor(matrix: sp.spmatrix, device: torch.device, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """A scipy matrix as a torch sparse CSR tensor on ``device``."""
    csr = sp.csr_matrix(matrix)
    with warnings.catch_warnings():  # "sparse CSR support is in beta": it is what we measured
        warnings.simplefilter("ignore", UserWarning)
        return torch.sparse_csr_tensor(
            torch.from_numpy(csr.indptr.astype(np.int64)), torch.from_numpy(csr.indices.astype(np.int64)),
            torch.from_numpy(csr.data.astype(np.float32)), size=csr.shape, dtype=dtype,
            check_invariants=False).to(device)


class TorchPPR:
    """Personalized PageRank over a column-stochastic transition matrix, batched.

    ``run`` is exact power iteration (every iteration reads the whole matrix once per batch: the
    choice for graphs up to a few million edges, and on a GPU). ``push`` is the local forward-push
    approximation (Andersen, Chung & Lang 2006), vectorized over (node, query) pairs: it only touches
    nodes holding residual mass above ``eps * out_degree``, so its cost does not grow with the graph;
    every entry is within ``eps * out_degree`` of the exact value.

    ``fused`` (default: on cuda) runs each power iteration as one sparse ``addmm``, the restart and the
    mass lost at dead ends folded into its input (the latter is known before the product: ``w x``, ``w``
    the column sums of ``P``); the same walk in fewer passes over the ``(n, B)`` iterate, which on a GPU
    cost about as much as the product itself.
    """

    def __init__(self, transition: sp.spmatrix, device: torch.device, fused: bool | None = None) -> None:
        self.device = device
        self.n = transition.shape[0]
        self.P = sparse_tensor(transition, device)
        self.fused = device.type == "cuda" if fused is None else fused
        out = sp.csr_matrix(transition).T.tocsr()  # row u: where the walk goes from u, with probability
        self._out_mass = torch.from_numpy(np.asarray(out.sum(axis=1), dtype=np.float32).reshape(1, -1)).to(device)
        self._indptr = torch.from_numpy(out.indptr.astype(np.int64)).to(device)
        self._targets = torch.from_numpy(out.indices.astype(np.int64)).to(device)
        self._probs = torch.from_numpy(out.data.astype(np.float32)).to(device)
        self._degree = (self._indptr[1:] - self._indptr[:-1])

    @torch.no_grad()
    def run(self, personalization: np.ndarray | torch.Tensor, damping: float = 0.5, iterations: int = 30,
            tol: float = WALK_TOLERANCE) -> torch.Tensor:
        """``x = damping * P x + (1 - damping) * p`` per column; returns ``(n, B)`` (or ``(n,)`` for
        a vector), each column summing to 1 (all zeros for an all-zero personalization)."""
        p = torch.as_tensor(personalization, dtype=torch.float32, device=self.device)
        vector = p.dim() == 1
        if vector:
            p = p[:, None]
        total = p.sum(0, keepdim=True)
        p = torch.where(total > 0, p / total.clamp_min(1e-30), torch.zeros_like(p))
        live = (total > 0).to(p.dtype)
        x = p.clone()
        for _ in range(iterations):
            if self.fused:
                restart = (1.0 - damping) + damping * (live - self._out_mass @ x)
                nxt = torch.addmm(restart * p, self.P, x, alpha=damping)
            else:
                nxt = damping * (self.P @ x) + (1.0 - damping) * p
                leaked = live - nxt.sum(0, keepdim=True)  # dangling mass goes back to the seeds
                nxt = nxt + leaked * p
            done = float((nxt - x).abs().sum(0).max()) < tol
            x = nxt
            if done:
                break
        return x[:, 0] if vector else x

    @torch.no_grad()
    def push(self, personalization: np.ndarray | torch.Tensor, damping: float = 0.5, eps: float = 1e-5,
             max_rounds: int = 200) -> torch.Tensor:
        """Approximate PPR by forward push, batched; same walk and output shape as ``run``."""
        p = torch.as_tensor(personalization, dtype=torch.float32, device=self.device)
        vector = p.dim() == 1
        if vector:
            p = p[:, None]
        n, b = p.shape
        total = p.sum(0, keepdim=True)
        p = torch.where(total > 0, p / total.clamp_min(1e-30), torch.zeros_like(p))
        flat_p = p.reshape(-1)                       # key = node * b + column
        residual = flat_p.clone()
        x = torch.zeros_like(residual)
        threshold = eps * self._degree.clamp_min(1).to(torch.float32)
        seed_keys = torch.nonzero(flat_p > 0).ravel()
        cand = seed_keys
        for _ in range(max_rounds):
            nodes = torch.div(cand, b, rounding_mode="floor")
            active = cand[residual[cand] > threshold[nodes]]
            if active.numel() == 0:
                break
            nodes, cols = torch.div(active, b, rounding_mode="floor"), active % b
            mass = residual[active]
            residual[active] = 0.0
            x[active] += (1.0 - damping) * mass
            deg = self._degree[nodes]
            dangling = deg == 0
            any_dangling = bool(dangling.any())
            if any_dangling:  # a dead end: its walk restarts at the column's seeds
                back = torch.zeros(b, device=self.device).index_add_(0, cols[dangling], damping * mass[dangling])
                residual += (back[None, :] * p).reshape(-1)
            pairs = int(deg.sum())  # one sync: repeat_interleave needs no other
            reps = torch.repeat_interleave(torch.arange(nodes.numel(), device=self.device), deg, output_size=pairs)
            edge = (self._indptr[nodes] - torch.cumsum(deg, 0) + deg)[reps] + torch.arange(pairs, device=self.device)
            keys = self._targets[edge] * b + cols[reps]
            residual.index_add_(0, keys, damping * mass[reps] * self._probs[edge])
            cand = torch.unique(torch.cat([keys, seed_keys]) if any_dangling else keys)
        x = x.reshape(n, b)
        return x[:, 0] if vector else x


@torch.no_grad()
def k_hop(adjacency: torch.Tensor, seeds: torch.Tensor, hops: int) -> torch.Tensor:
    """Hop distance from each column's seeds (``(n, B)`` bool) over a sparse adjacency; -1 = not
    reached within ``hops``. Batched like ``TorchPPR``."""
    if seeds.dim() == 1:
        seeds = seeds[:, None]
    dist = torch.full(seeds.shape, -1, dtype=torch.long, device=seeds.device)
    dist[seeds] = 0
    frontier = seeds.to(torch.float32)
    for h in range(1, hops + 1):
        reached = (adjacency @ frontier) > 0
        new = reached & (dist < 0)
        if not bool(new.any()):
            break
        dist[new] = h
        frontier = new.to(torch.float32)
    return dist
