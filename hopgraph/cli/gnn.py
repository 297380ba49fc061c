"""The evaluation index settings shared by ``hopgraph eval`` and ``hopgraph train-gnn``, and the
``train-gnn`` command."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from hopgraph.cli.common import console, load_settings, reported
from hopgraph.core.settings import Settings


def eval_settings(s: Settings, dataset: Path, n_queries: int) -> Settings:
    """The settings of a dataset's evaluation index: its own graph database, vector folder and GNN
    checkpoint and index state under ``<data_dir>/eval/<slug>/``, passages kept whole, every query
    embedding cached."""
    slug = re.sub(r"[^a-z0-9]+", "_", dataset.resolve().name.lower()).strip("_") or "dataset"
    return s.model_copy(update={
        "graph": s.graph.model_copy(update={"database": f"eval_{slug}"}),
        "vectors": s.vectors.model_copy(update={"path": s.data_dir / "eval" / slug / "vectors"}),
        "index": s.index.model_copy(update={"path": s.data_dir / "eval" / slug / "index"}),
        "chunking": s.chunking.model_copy(update={"max_tokens": 256, "overlap_tokens": 32}),
        "embedder": s.embedder.model_copy(update={"cache_size": max(s.embedder.cache_size, n_queries + 64)}),
        **s.with_gnn_checkpoint(s.retrieval.modes.gnn.checkpoint or s.data_dir / "eval" / slug / "gnn.pt"),
    })


def holdout_queries(s: Settings) -> set[str]:
    """The test split saved in the GNN checkpoint (queries never used in training)."""
    import torch

    from hopgraph.gpu.gnn import read_checkpoint

    _, meta = read_checkpoint(s.gnn_checkpoint_path, torch.device("cpu"))
    return set(meta.splits.get("test", []))


def train_gnn(
    dataset: Annotated[Path, typer.Argument(help="A BEIR-layout QA folder (corpus, queries, qrels).")],
    epochs: Annotated[int, typer.Option(min=1, help="Most epochs (early stopping may end sooner).")] = 60,
    patience: Annotated[int, typer.Option(min=1, help="Epochs without a better validation loss.")] = 8,
    lr: Annotated[float, typer.Option(help="AdamW learning rate.")] = 2e-3,
    seed: Annotated[int, typer.Option(help="Seed of the split, the weights and the shuffling.")] = 42,
    out: Annotated[Path | None, typer.Option(help="Checkpoint file (default: the eval index's gnn.pt).")
                   ] = None,
) -> None:
    """Train the GNN scorer of mode `gnn` on a BEIR-layout QA set: the corpus is ingested (as by
    `hopgraph eval`), queries are split 60/20/20 (seeded), entities of gold passages are the
    positives; focal loss, AdamW, early stopping on the validation split. The test split is
    saved in the checkpoint: `hopgraph eval DATASET --holdout` scores every mode on it."""
    from rich.progress import Progress

    from hopgraph.app.eval_runs import train_gnn as train
    from hopgraph.app.platform import Platform
    from hopgraph.evaluation.evaluate import load_dataset
    from hopgraph.gpu.train import TrainConfig

    with reported():
        ds = load_dataset(dataset)
    s = eval_settings(load_settings(), dataset, len(ds.queries))
    path = out or s.gnn_checkpoint_path
    with reported(), Platform(s) as p:
        p.ingest([ds.corpus], progress=True)
        ids = p.corpus_ids()
        with Progress(console=console) as bar:
            task = bar.add_task("building examples", total=len(ds.queries))
            done = {"n": 0}

            def step(split: str, i: int, n: int) -> None:
                done["n"] += 1
                bar.update(task, completed=done["n"], description=f"examples ({split})")

            def epoch(e: int, tr: float, va: float) -> None:
                console.print(f"epoch {e:3d}  train loss {tr:.4f}  val loss {va:.4f}")

            rep = train(p, ds, ids, path, TrainConfig(epochs=epochs, patience=patience, lr=lr, seed=seed),
                        progress=step, on_epoch=epoch)
    console.print(f"examples {rep.examples} ({rep.skipped_queries} queries without a gold entity among "
                  f"their candidates); best epoch {rep.best_epoch}: val loss {min(rep.val_loss):.4f} "
                  f"(untrained {rep.untrained_val_loss:.4f}), test loss {rep.test_loss:.4f}")
    sweep = ", ".join(f"{'graph' if w == '0.0' else 'w=' + w}: R@2 {m['R@2']:.1f} R@5 {m['R@5']:.1f}"
                      for w, m in rep.extra["val_sweep"].items())
    console.print(f"validation queries: {sweep}; fusion weight chosen: {rep.extra['gnn_weight']}")
    console.print(f"checkpoint: {rep.path}")
