"""A question-conditioned graph classifier (GATv2 over one small graph + the question's embedding ->
a binary answer), trained with focal loss: the benchmark's GNN-alone column, and the source of the
attention that ranks a graph's triples for the LLM. Runs on any torch device (CPU in CI).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import Tensor, nn

from hopgraph.gpu.gnn import focal_loss

if TYPE_CHECKING:  # PyTorch Geometric (seconds to import) is imported where it is used
    from torch_geometric.data import Batch, Data


@dataclass
class GraphExample:
    """One graph with its question: node vectors, ``edge_index`` (2, m), edge features (the relation
    type's text vector, and its one-hot: types that embed alike, "desires" and "not desires", stay
    apart), the question vector and the answer as 0/1."""

    x: np.ndarray
    edge_index: np.ndarray
    edge_attr: np.ndarray
    question: np.ndarray
    label: int

    @property
    def edge_dim(self) -> int:
        return int(self.edge_attr.shape[1])

    def data(self) -> Data:
        from torch_geometric.data import Data

        q = torch.as_tensor(self.question, dtype=torch.float32)
        x = torch.as_tensor(self.x, dtype=torch.float32)
        return Data(x=torch.cat([x, q.expand(x.shape[0], -1)], 1),  # question-aware nodes
                    edge_index=torch.as_tensor(self.edge_index, dtype=torch.long).reshape(2, -1),
                    edge_attr=torch.as_tensor(self.edge_attr, dtype=torch.float32).reshape(-1, self.edge_dim),
                    q=q[None, :], y=torch.tensor([float(self.label)]))


@dataclass(frozen=True)
class ClassifierConfig:
    hidden: int = 128
    heads: int = 4
    layers: int = 2
    dropout: float = 0.2
    epochs: int = 40
    lr: float = 1e-3
    batch_size: int = 64
    gamma: float = 2.0
    alpha: float = 0.5
    seed: int = 0


class GraphClassifier(nn.Module):
    """GATv2 layers over question-aware nodes; mean+max pooling of the nodes, mean of the edges'
    features (GATv2 lets edge features steer attention only), the question; an MLP to one logit."""

    def __init__(self, dim: int, edge_dim: int, cfg: ClassifierConfig) -> None:
        from torch_geometric.nn import GATv2Conv

        super().__init__()
        h = cfg.hidden
        self.inp = nn.Linear(2 * dim, h)
        self.convs = nn.ModuleList(GATv2Conv(h, h // cfg.heads, heads=cfg.heads, edge_dim=edge_dim,
                                             add_self_loops=True, fill_value=0.0) for _ in range(cfg.layers))
        self.edge = nn.Linear(edge_dim, h)
        self.head = nn.Sequential(nn.Linear(3 * h + dim, h), nn.ReLU(), nn.Dropout(cfg.dropout), nn.Linear(h, 1))
        self.dropout = cfg.dropout

    def forward(self, batch: Batch, attention: bool = False) -> tuple[Tensor, list[tuple[Tensor, Tensor]]]:
        from torch_geometric.nn import global_max_pool, global_mean_pool

        h = torch.relu(self.inp(batch.x))
        kept: list[tuple[Tensor, Tensor]] = []
        for conv in self.convs:
            if attention:
                out, (ei, alpha) = conv(h, batch.edge_index, batch.edge_attr, return_attention_weights=True)
                kept.append((ei, alpha))
            else:
                out = conv(h, batch.edge_index, batch.edge_attr)
            h = nn.functional.dropout(torch.relu(out) + h, self.dropout, self.training)
        graphs = batch.q.shape[0]
        edges = torch.relu(self.edge(batch.edge_attr))
        edge_pool = global_mean_pool(edges, batch.batch[batch.edge_index[0]], size=graphs)
        pooled = torch.cat([global_mean_pool(h, batch.batch, size=graphs), global_max_pool(h, batch.batch, size=graphs),
                            edge_pool, batch.q], 1)
        return self.head(pooled).squeeze(-1), kept


def _batches(items: list[Data], size: int, shuffle: bool, rng: random.Random) -> list[Batch]:
    from torch_geometric.data import Batch

    order = list(range(len(items)))
    if shuffle:
        rng.shuffle(order)
    return [Batch.from_data_list([items[i] for i in order[k:k + size]]) for k in range(0, len(order), size)]


def train_classifier(examples: list[GraphExample], cfg: ClassifierConfig, device: torch.device,
                     val: list[GraphExample] | None = None) -> GraphClassifier:
    """Fit on ``examples`` (focal loss, Adam, fixed seed: the same data gives the same model on CPU);
    with ``val``, keep the weights of the epoch with the best validation accuracy (early stopping)."""
    torch.manual_seed(cfg.seed)
    rng = random.Random(cfg.seed)
    model = GraphClassifier(examples[0].x.shape[1], examples[0].edge_dim, cfg).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=1e-4)
    data = [e.data() for e in examples]
    truth = np.array([e.label for e in val or []])
    best, best_state = -1.0, None
    for _ in range(cfg.epochs):
        model.train()
        for batch in _batches(data, cfg.batch_size, True, rng):
            batch = batch.to(device)
            opt.zero_grad()
            logits, _ = model(batch)
            focal_loss(logits, batch.y, cfg.gamma, cfg.alpha).backward()
            opt.step()
        if val:
            accuracy = float(np.mean((predict(model, val, device) >= 0.5) == truth))
            if accuracy > best:
                best, best_state = accuracy, {k: v.detach().clone() for k, v in model.state_dict().items()}
    if best_state is not None:
        model.load_state_dict(best_state)
    return model.eval()


@torch.no_grad()
def predict(model: GraphClassifier, examples: list[GraphExample], device: torch.device,
            batch_size: int = 256) -> np.ndarray:
    """P(label = 1) per example."""
    model.eval()
    out = []
    for batch in _batches([e.data() for e in examples], batch_size, False, random.Random(0)):
        logits, _ = model(batch.to(device))
        out.append(torch.sigmoid(logits).float().cpu())
    return torch.cat(out).numpy() if out else np.zeros(0)


@torch.no_grad()
def edge_attention(model: GraphClassifier, example: GraphExample, device: torch.device) -> np.ndarray:
    """Mean attention (over layers and heads) each edge of ``example`` received, by edge position."""
    m = example.edge_index.reshape(2, -1).shape[1]
    if m == 0:
        return np.zeros(0)
    from torch_geometric.data import Batch

    data = example.data()
    _, kept = model(Batch.from_data_list([data]).to(device), attention=True)
    where: dict[tuple[int, int], list[int]] = {}
    for k, (a, b) in enumerate(data.edge_index.t().tolist()):
        where.setdefault((a, b), []).append(k)
    score = torch.zeros(m)
    for ei, alpha in kept:  # GATv2Conv drops self loops and appends its own: map edges back by their ends
        mean = alpha.float().mean(-1).cpu()
        for (a, b), v in zip(ei.t().cpu().tolist(), mean.tolist(), strict=True):
            for k in where.get((a, b), ()):
                score[k] += v / len(kept)
    return score.numpy()
