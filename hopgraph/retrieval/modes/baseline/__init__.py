"""The classic baselines: dense (chunk vectors), BM25 (keywords) and their reciprocal-rank fusion."""

from __future__ import annotations

from hopgraph.retrieval.parts.fusion import ranked, rrf
from hopgraph.retrieval.parts.signals import bm25_of, dense_of
from hopgraph.retrieval.registry import ModeOutput
from hopgraph.retrieval.resources import Resources
from hopgraph.retrieval.run import Run
from hopgraph.retrieval.trace import Trace


class DenseMode:
    def run(self, run: Run, res: Resources) -> ModeOutput:
        trace = Trace()
        return trace.output(dense_of(run, res, trace))


class Bm25Mode:
    def run(self, run: Run, res: Resources) -> ModeOutput:
        trace = Trace()
        return trace.output(bm25_of(run, res, trace))


class RrfMode:
    def run(self, run: Run, res: Resources) -> ModeOutput:
        trace = Trace()
        d, b = dense_of(run, res, trace), bm25_of(run, res, trace)
        return trace.output(rrf({"dense": ranked(d), "bm25": ranked(b)}, k=run.cfg.rrf_k))
