"""The classic baselines: dense (chunk vectors), BM25 (keywords) and their reciprocal-rank fusion."""

from __future__ import annotations

from hopgraph.retrieval.fusion import ranked, rrf
from hopgraph.retrieval.resources import Resources
from hopgraph.retrieval.run import Run
from hopgraph.retrieval.signals import bm25_of, dense_of


class DenseMode:
    def run(self, run: Run, res: Resources) -> dict[str, float]:
        return dense_of(run, res)


class Bm25Mode:
    def run(self, run: Run, res: Resources) -> dict[str, float]:
        return bm25_of(run, res)


class RrfMode:
    def run(self, run: Run, res: Resources) -> dict[str, float]:
        d, b = dense_of(run, res), bm25_of(run, res)
        return rrf({"dense": ranked(d), "bm25": ranked(b)}, k=run.cfg.rrf_k)
