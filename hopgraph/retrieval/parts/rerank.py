"""Rerankers: a cross-encoder by model name or path, and one that works with the shipped MiniLM."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from hopgraph.vectors.embedders import Embedder, EmbedderError, pick_device

_SENT = re.compile(r"(?<=[.!?])\s+")


class Reranker(Protocol):
    """Scores candidate passages against a query (higher is better)."""

    def score(self, query: str, passages: Sequence[str]) -> list[float]: ...


class MaxSimReranker:
    """Best sentence match: each passage scores the highest cosine between the query and one of its
    sentences (blended with the whole-passage cosine). Uses the embedder already loaded."""

    def __init__(self, embedder: Embedder, sentence_weight: float = 0.5) -> None:
        self.embedder = embedder
        self.sentence_weight = sentence_weight

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        q = self.embedder.embed([query])[0]
        whole = self.embedder.embed(list(passages)) @ q
        sents = [[s for s in _SENT.split(p) if s.strip()] or [p] for p in passages]
        flat = self.embedder.embed([s for ss in sents for s in ss]) @ q
        out, i = [], 0
        for p_idx, ss in enumerate(sents):
            best = float(np.max(flat[i : i + len(ss)]))
            i += len(ss)
            out.append(self.sentence_weight * best + (1 - self.sentence_weight) * float(whole[p_idx]))
        return out


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder by hub name or local path."""

    def __init__(self, model: str, device: str = "auto", batch_size: int = 32) -> None:
        from sentence_transformers import CrossEncoder

        try:
            self._model = CrossEncoder(model, device=pick_device(device))
        except (OSError, ValueError) as exc:
            raise EmbedderError(f"cannot load cross-encoder {model!r}: {exc}") from exc
        self.batch_size = batch_size

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        pred = self._model.predict([(query, p) for p in passages], batch_size=self.batch_size,
                                   show_progress_bar=False)
        arr = np.asarray(pred, dtype=np.float64)
        return (arr if arr.ndim == 1 else arr[:, -1]).tolist()


def make_reranker(name: str, embedder: Embedder) -> Reranker:
    """'minilm-maxsim' (default, offline) or a cross-encoder name/path."""
    if name == "minilm-maxsim":
        return MaxSimReranker(embedder)
    return CrossEncoderReranker(name)
