"""The ``parts`` signal: a question with several parts (``retrieval.modes.graph.decompose``) is searched part by part
(dense + BM25, fused by reciprocal rank, leaning to BM25 where the first pass does: see
``retrieval.parts.first_pass``), and each chunk scores its best part's normalized score, so the passages of
every side of "did X happen before Y?" reach the fused top."""

from __future__ import annotations

import time

from hopgraph.retrieval.parts import signals
from hopgraph.retrieval.parts.decompose import split_question
from hopgraph.retrieval.parts.first_pass import first_pass_scales, state_homogeneity
from hopgraph.retrieval.parts.fusion import normalize, ranked, rrf
from hopgraph.retrieval.resources import Resources
from hopgraph.retrieval.run import Run
from hopgraph.retrieval.trace import Trace


def part_scores(run: Run, res: Resources, trace: Trace) -> dict[str, float]:
    """Chunk -> its best part's normalized first-pass score; {} for a question of one part."""
    parts = split_question(run.text) if run.cfg.modes.graph.decompose else []
    if not parts:
        return {}
    t = time.perf_counter()
    k = max(run.k, run.cfg.candidate_k)
    keyword = res.keyword(run.state)
    scales = first_pass_scales(run.cfg, state_homogeneity(run.state), run.snap.n_chunks)
    out: dict[str, float] = {}
    for part, vec in zip(parts, res.embedder.embed(parts), strict=True):
        d = run.keep_known(signals.dense(res.vectors, vec, k, run.vector_filter))
        b = signals.keyword(run.snap, keyword, part, k)
        for c, s in normalize(rrf({"dense": ranked(d), "bm25": ranked(b)}, k=run.cfg.rrf_k, weights=scales)).items():
            out[c] = max(out.get(c, 0.0), s)
    trace.explain["parts"] = parts
    trace.stage("parts", t)
    return trace.signal("parts", out)
