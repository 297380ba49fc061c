"""The classic baselines: dense (chunk vectors), BM25 (keywords) and their reciprocal-rank fusion."""

from __future__ import annotations

import time

from retrieval import signals
from retrieval.fusion import ranked, rrf
from retrieval.resources import Resources
from retrieval.run import Run


def dense(run: Run, res: Resources) -> dict[str, float]:
    """Chunk vectors nearest to the query."""
    t = time.perf_counter()
    out = run.keep_known(signals.dense(res.vectors, run.qvec, max(run.k, run.cfg.candidate_k)))
    run.stage("dense", t)
    run.signals["dense"] = out
    return out


def bm25(run: Run, res: Resources) -> dict[str, float]:
    """BM25 over chunk texts."""
    t = time.perf_counter()
    out = signals.keyword(run.snap, res.keyword(run.state), run.text, max(run.k, run.cfg.candidate_k))
    run.stage("bm25", t)
    run.signals["bm25"] = out
    return out


class DenseMode:
    def run(self, run: Run, res: Resources) -> dict[str, float]:
        return dense(run, res)


class Bm25Mode:
    def run(self, run: Run, res: Resources) -> dict[str, float]:
        return bm25(run, res)


class RrfMode:
    def run(self, run: Run, res: Resources) -> dict[str, float]:
        d, b = dense(run, res), bm25(run, res)
        return rrf({"dense": ranked(d), "bm25": ranked(b)}, k=run.cfg.rrf_k)
