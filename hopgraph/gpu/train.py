"""Training of the GNN scorer: focal loss, AdamW, early stopping on a held-out split, seeded.

An ``Example`` is one query's candidate subgraph with its scalar features and labels (1 for
entities mentioned in the query's gold passages); retrieval builds them (``retrieval.modes.subgraph``).
"""

from __future__ import annotations

import copy
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import Tensor

from hopgraph.gpu.gnn import GnnConfig, RelevanceGNN, focal_loss

if TYPE_CHECKING:
    from torch_geometric.data import HeteroData

log = logging.getLogger(__name__)


@dataclass
class Example:
    query_id: str
    sub: HeteroData
    query: Tensor
    scalars: Tensor
    labels: Tensor


@dataclass
class TrainConfig:
    epochs: int = 60
    patience: int = 8
    lr: float = 2e-3
    weight_decay: float = 1e-4
    gamma: float = 2.0
    alpha: float = 0.75
    seed: int = 42


@dataclass
class TrainResult:
    model: RelevanceGNN
    train_loss: list[float] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    best_epoch: int = 0


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


@torch.no_grad()
def evaluate_loss(model: RelevanceGNN, examples: list[Example], cfg: TrainConfig, device: torch.device) -> float:
    """Mean focal loss over examples (eval mode)."""
    model.eval()
    losses = [float(focal_loss(model(e.sub.to(device), e.query.to(device), e.scalars.to(device))[0],
                               e.labels.to(device), cfg.gamma, cfg.alpha)) for e in examples]
    return float(np.mean(losses)) if losses else float("nan")


def train(train_set: list[Example], val_set: list[Example], model_cfg: GnnConfig, cfg: TrainConfig,
          device: torch.device, on_epoch: Callable[[int, float, float], None] | None = None) -> TrainResult:
    """Train on ``train_set``; keep the weights of the epoch with the lowest validation loss and stop
    after ``patience`` epochs without improvement."""
    if not train_set:
        raise ValueError("no training examples (no query has a gold passage among its candidates)")
    seed_everything(cfg.seed)
    model = RelevanceGNN(model_cfg).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    result = TrainResult(model)
    best, best_state, stale = float("inf"), copy.deepcopy(model.state_dict()), 0
    rng = random.Random(cfg.seed)
    order = list(range(len(train_set)))
    for epoch in range(cfg.epochs):
        model.train()
        rng.shuffle(order)
        total = 0.0
        for i in order:
            e = train_set[i]
            logits, _ = model(e.sub.to(device), e.query.to(device), e.scalars.to(device))
            loss = focal_loss(logits, e.labels.to(device), cfg.gamma, cfg.alpha)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            total += loss.item()
        result.train_loss.append(total / len(order))
        val = evaluate_loss(model, val_set, cfg, device) if val_set else result.train_loss[-1]
        result.val_loss.append(val)
        if on_epoch:
            on_epoch(epoch, result.train_loss[-1], val)
        if val < best - 1e-5:
            best, best_state, stale, result.best_epoch = val, copy.deepcopy(model.state_dict()), 0, epoch
        else:
            stale += 1
            if stale >= cfg.patience:
                log.info("early stop at epoch %d (best %d, val loss %.4f)", epoch, result.best_epoch, best)
                break
    model.load_state_dict(best_state)
    model.eval()
    return result
