"""``hopgraph train-gnn``: train the GNN scorer on a BEIR-layout QA set ingested into the index.

Queries are split (seeded) into train / validation / test; a query's positives are the candidate
entities mentioned in its gold passages. Early stopping watches the validation loss; the test split
is never seen in training and is saved in the checkpoint so that ``hopgraph eval --holdout``
reports every mode on those queries only.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hopgraph.evaluation.evaluate import Dataset, metrics, ranked_documents
from hopgraph.gpu.gnn import CheckpointMeta, GnnConfig, RelevanceGNN, save_checkpoint
from hopgraph.gpu.train import Example, TrainConfig, evaluate_loss, seed_everything, train
from hopgraph.retrieval.modes.subgraph import gpu_parts
from hopgraph.retrieval.registry import REGISTRY
from hopgraph.retrieval.retriever import Retriever
from hopgraph.retrieval.run import Run

log = logging.getLogger(__name__)


@dataclass
class TrainingReport:
    path: Path
    examples: dict[str, int]
    train_loss: list[float]
    val_loss: list[float]
    best_epoch: int
    test_loss: float
    untrained_val_loss: float
    skipped_queries: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def split_queries(ids: list[str], seed: int, val: float = 0.2, test: float = 0.2) -> dict[str, list[str]]:
    """A seeded split of query ids into train / val / test."""
    order = sorted(ids)
    random.Random(seed).shuffle(order)
    n_test, n_val = round(len(order) * test), round(len(order) * val)
    return {"test": sorted(order[:n_test]), "val": sorted(order[n_test : n_test + n_val]),
            "train": sorted(order[n_test + n_val :])}


#: fusion weights of the GNN signal tried on the validation split (graph's own signal weighs 1)
WEIGHTS = (0.25, 0.5, 1.0)


def weight_sweep(retriever: Retriever, ds: Dataset, corpus_ids: dict[str, str], queries: list[str], path: Path
                 ) -> dict[str, dict[str, float]]:
    """R@2 / R@5 of mode gnn on ``queries`` for each weight in ``WEIGHTS`` (and graph mode, as "0")."""
    res = retriever.res
    trained = Retriever(res.graph, res.vectors, res.embedder, retriever.cfg, keeper=retriever.keeper, clip=res.clip,
                        gpu=res.gpu, gnn_checkpoint=path)  # the same stores and index state, this GNN
    out: dict[str, dict[str, float]] = {}
    for w in (0.0, *WEIGHTS):
        cfg = trained.cfg.model_copy(update={"weights": {**trained.cfg.weights, "gnn": w}})
        per = [metrics(ranked_documents(trained.query(ds.queries[q], mode="gnn" if w else "graph", top_k=10,
                                                      cfg=cfg), corpus_ids), ds.qrels.get(q, {})) for q in queries]
        out[str(w)] = {k: round(100 * sum(m[k] for m in per) / max(len(per), 1), 2) for k in ("R@2", "R@5")}
    return out


def gnn_example(retriever: Retriever, text: str, gold_chunk_ids: set[str], query_id: str = "") -> Example | None:
    """The GNN training example of a query (None when no candidate entity is in a gold chunk)."""
    cfg = retriever.cfg.model_copy(update={"stage_cap_ms": None})
    run = Run(text.strip(), retriever.embedder.embed([text.strip()])[0], cfg.top_k, cfg, retriever.state())
    return REGISTRY.gnn_examples().example(run, retriever.res, gold_chunk_ids, query_id)


def train_gnn(retriever: Retriever, ds: Dataset, corpus_ids: dict[str, str], out: Path, cfg: TrainConfig,
              hidden: int, heads: int, layers: int,
              progress: Callable[[str, int, int], None] | None = None,
              on_epoch: Callable[[int, float, float], None] | None = None) -> TrainingReport:
    """Build one example per query, train with early stopping, save the checkpoint at ``out``."""
    chunks_of: dict[str, set[str]] = {}
    for chunk, doc in corpus_ids.items():
        chunks_of.setdefault(doc, set()).add(chunk)
    splits = split_queries(list(ds.queries), cfg.seed)
    examples: dict[str, list[Example]] = {}
    skipped = 0
    for name, ids in splits.items():
        examples[name] = []
        for i, qid in enumerate(ids):
            gold = set().union(*(chunks_of.get(d, set()) for d in ds.qrels.get(qid, {})))
            ex = gnn_example(retriever, ds.queries[qid], gold, qid)
            if ex is None:
                skipped += 1
            else:
                examples[name].append(ex)
            if progress:
                progress(name, i + 1, len(ids))
    device = gpu_parts(retriever.res).device
    snap = retriever.snapshot()
    pool = examples["train"] or examples["val"] or examples["test"]
    if not pool:
        raise ValueError("no query has an entity of its gold passages among its candidates: nothing to train on")
    first = pool[0]
    rel_dim = int(first.sub["entity", "related", "entity"].edge_attr.shape[1])
    model_cfg = GnnConfig(dim=int(first.sub["entity"].x.shape[1]), relation_dim=rel_dim, hidden=hidden,
                          heads=heads, layers=layers)
    seed_everything(cfg.seed)
    untrained = evaluate_loss(RelevanceGNN(model_cfg).to(device), examples["val"], cfg, device)
    result = train(examples["train"], examples["val"], model_cfg, cfg, device, on_epoch)
    test_loss = evaluate_loss(result.model, examples["test"], cfg, device)
    meta = CheckpointMeta(
        graph_version=snap.version, embedder=retriever.embedder.name, config=vars(model_cfg).copy(),
        dataset=str(ds.root), seed=cfg.seed, splits=splits,
        metrics={"best_epoch": result.best_epoch, "val_loss": result.val_loss, "train_loss": result.train_loss,
                 "test_loss": test_loss, "untrained_val_loss": untrained,
                 "examples": {k: len(v) for k, v in examples.items()},
                 "positives_per_example": float(np.mean([float(e.labels.mean()) for e in examples["train"]]))
                 if examples["train"] else 0.0})
    save_checkpoint(out, result.model, meta)
    # the GNN signal's fusion weight is a hyperparameter: chosen on the validation queries, never the test ones
    sweep = weight_sweep(retriever, ds, corpus_ids, splits["val"], out)
    meta.metrics["val_sweep"] = sweep
    meta.metrics["gnn_weight"] = max(WEIGHTS, key=lambda w: (sweep[str(w)]["R@5"], sweep[str(w)]["R@2"], -w))
    save_checkpoint(out, result.model, meta)
    gpu_parts(retriever.res).forget_scorer()
    return TrainingReport(out, {k: len(v) for k, v in examples.items()}, result.train_loss, result.val_loss,
                          result.best_epoch, test_loss, untrained, skipped,
                          extra={"gnn_weight": meta.metrics["gnn_weight"], "val_sweep": sweep})
