"""Evaluation runs over a platform (``hopgraph eval``, ``hopgraph train-gnn``): the question embeddings
computed up front, every mode scored through ``Platform.query``, the GNN trained on the platform's
retriever."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hopgraph.app.platform import Platform
    from hopgraph.core.settings import RetrievalSettings
    from hopgraph.evaluation.evaluate import Dataset
    from hopgraph.evaluation.gnn_training import TrainingReport
    from hopgraph.evaluation.report import ModeReport
    from hopgraph.gpu.train import TrainConfig


def embed_questions(platform: Platform, texts: Sequence[str]) -> None:
    """Embed the questions and their parts (of multi-part questions) into the question embedder's cache,
    so that every mode is timed on its own work."""
    from hopgraph.retrieval.parts.decompose import split_question

    platform.question_embedder.embed(list(texts) + [part for t in texts for part in split_question(t)])


def evaluate_modes(platform: Platform, ds: Dataset, corpus_ids: dict[str, str], modes: Sequence[str],
                   base: RetrievalSettings, on_mode: Callable[[list[ModeReport]], None] | None = None,
                   ) -> list[ModeReport]:
    """``evaluation.evaluate.evaluate`` of ``modes`` through ``platform.query`` (with the chunk vectors for
    diversity, and the chunks' sections where the set judges sections), with a progress bar."""
    from hopgraph.evaluation.evaluate import evaluate

    return evaluate(lambda q, m, c: platform.query(q, mode=m, retrieval=c), corpus_ids, ds, modes, base,
                    progress=True, vectors=lambda chunk_ids: platform.vectors.vectors("chunks", chunk_ids),
                    section_of=platform.sections.chunk_sections() if ds.sections else None, on_mode=on_mode)


def train_gnn(platform: Platform, ds: Dataset, corpus_ids: dict[str, str], out: Path, cfg: TrainConfig,
              progress: Callable[[str, int, int], None] | None = None,
              on_epoch: Callable[[int, float, float], None] | None = None) -> TrainingReport:
    """Train the GNN scorer of mode ``gnn`` on ``ds`` over the platform's retriever (sizes from ``retrieval.modes.gnn``)
    and save the checkpoint at ``out`` (``evaluation.gnn_training.train_gnn``)."""
    from hopgraph.evaluation.gnn_training import train_gnn as train

    g = platform.settings.retrieval.modes.gnn
    return train(platform.retriever, ds, corpus_ids, out, cfg, g.hidden, g.heads, g.layers,
                 progress=progress, on_epoch=on_epoch)
