"""A query-conditioned heterogeneous GNN that scores entity relevance, and its checkpoints.

Input per entity: its embedding, the query embedding, their product and a few scalar features the
retrieval computes (``FEATURES``). Layers: ``HeteroConv`` with one ``GATv2Conv`` per edge type
(relation embeddings / weights as edge features), summed, with residuals. Output: one logit per
entity. ``forward(..., attention=True)`` also returns every layer's attention per edge type, which
``gpu.verbalize`` turns into ranked triples.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor, nn

from hopgraph.core.errors import BadInputError
from hopgraph.gpu.device import autocast
from hopgraph.gpu.export import EDGE_TYPES, ENTITY, RELATED

if TYPE_CHECKING:  # PyTorch Geometric (seconds to import) is imported where a model is built
    from torch_geometric.data import HeteroData
    from torch_geometric.nn import GATv2Conv

#: scalar features per candidate entity, in this order (see retrieval.modes.subgraph.candidates.features)
FEATURES = ("ppr", "seed", "similarity", "specificity", "log_df")

#: edges of a subgraph from which ``GnnScorer`` runs bf16 autocast (when asked to). Below, inference is
#: bound by kernel launches and Python, and autocast's casts only add to it; around this size the two
#: broke even on an H100
MIXED_PRECISION_MIN_EDGES = 2_000_000

EdgeType = tuple[str, str, str]
Attention = dict[EdgeType, list[tuple[Tensor, Tensor]]]


class CheckpointError(BadInputError):
    """A GNN checkpoint is missing, unreadable or does not fit the current graph and embedder."""


@dataclass
class GnnConfig:
    dim: int
    relation_dim: int
    hidden: int = 64
    heads: int = 2
    layers: int = 2
    features: int = len(FEATURES)


class RelevanceGNN(nn.Module):
    """Scores the entities of a candidate subgraph for one query."""

    def __init__(self, cfg: GnnConfig) -> None:
        from torch_geometric.nn import GATv2Conv, HeteroConv

        super().__init__()
        self.cfg = cfg
        h = cfg.hidden
        self.inp = nn.Sequential(nn.Linear(3 * cfg.dim + cfg.features, h), nn.GELU())
        edge_dims = {et: (cfg.relation_dim if et == RELATED else 1) for et in EDGE_TYPES}
        self.convs = nn.ModuleList([
            HeteroConv({et: GATv2Conv(h, h // cfg.heads, heads=cfg.heads, edge_dim=edge_dims[et],
                                      add_self_loops=False) for et in EDGE_TYPES}, aggr="sum")
            for _ in range(cfg.layers)])
        self.norms = nn.ModuleList([nn.LayerNorm(h) for _ in range(cfg.layers)])
        self.out = nn.Sequential(nn.Linear(h, h), nn.GELU(), nn.Linear(h, 1))

    def forward(self, sub: HeteroData, query: Tensor, scalars: Tensor, attention: bool = False
                ) -> tuple[Tensor, Attention]:
        """Logits ``(n,)`` of the subgraph's entities; with ``attention``, each layer's
        ``(edge_index, alpha)`` per edge type."""
        x = sub[ENTITY].x.float()
        q = query.float().to(x.device)[None, :].expand_as(x)
        h = self.inp(torch.cat([x, q, x * q, scalars.float().to(x.device)], dim=-1))
        edge_index = {et: sub[et].edge_index for et in EDGE_TYPES if et in sub.edge_types}
        edge_attr = {et: sub[et].edge_attr.float() for et in edge_index}
        attn: Attention = {}
        for conv, norm in zip(self.convs, self.norms, strict=True):
            if attention:  # HeteroConv's own loop, keeping each GATv2Conv's attention
                out = torch.zeros_like(h)
                for et, ei in edge_index.items():
                    gat: GATv2Conv = conv.convs[et]  # type: ignore[index]
                    y, (aei, alpha) = gat(h, ei, edge_attr[et], return_attention_weights=True)
                    out = out + y
                    attn.setdefault(et, []).append((aei, alpha))
            else:
                out = conv({ENTITY: h}, edge_index, edge_attr_dict=edge_attr)[ENTITY]
            h = norm(h + torch.nn.functional.gelu(out))
        return self.out(h).squeeze(-1), attn


def focal_loss(logits: Tensor, labels: Tensor, gamma: float = 2.0, alpha: float = 0.75) -> Tensor:
    """Binary focal loss (Lin et al. 2017): rare positives among many candidates weigh more."""
    ce = nn.functional.binary_cross_entropy_with_logits(logits, labels, reduction="none")
    p = torch.sigmoid(logits)
    p_t = p * labels + (1 - p) * (1 - labels)
    a_t = alpha * labels + (1 - alpha) * (1 - labels)
    return (a_t * ce * (1 - p_t) ** gamma).mean()


@dataclass
class CheckpointMeta:
    """What a checkpoint was trained for; loading refuses a mismatch."""

    graph_version: int
    embedder: str
    config: dict[str, int]
    dataset: str = ""
    seed: int = 0
    trained_at: float = field(default_factory=time.time)
    metrics: dict[str, Any] = field(default_factory=dict)
    splits: dict[str, list[str]] = field(default_factory=dict)


def save_checkpoint(path: Path, model: RelevanceGNN, meta: CheckpointMeta) -> None:
    """Write the weights and their metadata (atomically: a crash leaves the old file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save({"meta": asdict(meta), "state": model.state_dict()}, tmp)
    tmp.replace(path)


def read_checkpoint(path: Path, device: torch.device) -> tuple[dict[str, Any], CheckpointMeta]:
    """The raw contents and metadata of a checkpoint file (clear errors for a missing or foreign file)."""
    if not path.is_file():
        raise CheckpointError(f"no GNN checkpoint at {path}: train one with `hopgraph train-gnn DATASET_DIR`")
    try:
        blob = torch.load(path, map_location=device, weights_only=True)
        return blob, CheckpointMeta(**blob["meta"])
    except Exception as exc:
        raise CheckpointError(f"{path} is not a hopgraph GNN checkpoint ({exc})") from exc


def load_checkpoint(path: Path, device: torch.device, graph_version: int | None, embedder: str,
                    allow_stale: bool = False) -> tuple[RelevanceGNN, CheckpointMeta]:
    """The model of ``path`` on ``device``; refuses one trained for another embedder or (unless
    ``allow_stale``) another graph version."""
    blob, meta = read_checkpoint(path, device)
    if meta.embedder != embedder:
        raise CheckpointError(f"{path} was trained for embedder {meta.embedder!r}, but the index uses {embedder!r}; "
                              "retrain with `hopgraph train-gnn`")
    if graph_version is not None and meta.graph_version != graph_version and not allow_stale:
        raise CheckpointError(f"{path} was trained on graph version {meta.graph_version}, but the graph is now at "
                              f"version {graph_version}; retrain with `hopgraph train-gnn` (or set "
                              "retrieval.modes.gnn.allow_stale_checkpoint)")
    model = RelevanceGNN(GnnConfig(**meta.config)).to(device)
    try:
        model.load_state_dict(blob["state"])
    except RuntimeError as exc:
        raise CheckpointError(f"{path} does not fit the GNN architecture: {exc}") from exc
    model.eval()
    return model, meta


class GnnScorer:
    """Inference with a trained model: probabilities and attention for one candidate subgraph."""

    def __init__(self, model: RelevanceGNN, meta: CheckpointMeta, device: torch.device,
                 mixed_precision: bool = True) -> None:
        self.model = model.to(device).eval()
        self.meta = meta
        self.device = device
        self.mixed_precision = mixed_precision

    @torch.no_grad()
    def score(self, sub: HeteroData, query: Tensor, scalars: Tensor, attention: bool = False
              ) -> tuple[Tensor, Attention]:
        edges = sum(int(sub[et].edge_index.shape[1]) for et in sub.edge_types)
        with autocast(self.device, self.mixed_precision and edges >= MIXED_PRECISION_MIN_EDGES):
            logits, attn = self.model(sub.to(self.device), query.to(self.device), scalars.to(self.device), attention)
        return torch.sigmoid(logits.float()), attn
