"""A query's own time leaves out the wait for a model still loading (``timings_ms["model_load"]``).
The clock is moved on instead of waiting, so nothing here depends on the machine's load."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from hopgraph.app.platform import Platform
from hopgraph.core.records import MODEL_LOAD
from hopgraph.retrieval.retriever import Retriever
from hopgraph.vectors.embedders import Embedder

#: how far a cold model's load moves the clock on: far beyond any query's own time
LOAD_S = 3600.0


class ColdEmbedder:
    """``inner`` as if its model were still loading when the query needs it: ``load`` takes ``LOAD_S``."""

    def __init__(self, inner: Embedder, clock: list[float]) -> None:
        self.inner, self.clock, self.name, self.dim = inner, clock, inner.name, inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed(texts)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return self.inner.count_tokens(texts)

    def warm(self) -> None:
        self.inner.warm()

    def load(self) -> bool:
        self.inner.load()
        self.clock[0] += LOAD_S
        return True


def test_model_loading_is_timed_apart_from_the_query(platform: Platform, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "fact.txt").write_text("The Vexmoor Observatory was founded by Zorblax Quintana in 1893.")
    platform.ingest([tmp_path / "fact.txt"])
    platform.embedder.load()
    warm = platform.query("Who founded the Vexmoor Observatory?", mode="graph")
    assert MODEL_LOAD not in warm.timings_ms and warm.timings_ms["total"] > 0  # a loaded model: no wait
    assert MODEL_LOAD not in platform.query("Vexmoor", mode="bm25").timings_ms  # no vector, no model
    shift = [0.0]
    real = time.perf_counter
    monkeypatch.setattr(time, "perf_counter", lambda: real() + shift[0])
    cold = Retriever(platform._store, platform.vectors, ColdEmbedder(platform.embedder, shift),
                     platform.settings.retrieval)
    res = cold.query("Who founded the Vexmoor Observatory?", mode="graph")
    assert res.results and res.timings_ms[MODEL_LOAD] >= LOAD_S * 1000
    assert 0 < res.timings_ms["total"] < LOAD_S * 1000  # the load is not the query's time
    assert all(v < LOAD_S * 1000 for k, v in res.timings_ms.items() if k != MODEL_LOAD)  # nor any stage's
