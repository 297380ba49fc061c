"""The ``parts`` signal: a question with several parts (``retrieval.decompose``) is searched part by part
(dense + BM25, fused by reciprocal rank, as the first pass is), and each chunk scores its best part's
normalized score, so the passages of every side of "did X happen before Y?" reach the fused top."""

from __future__ import annotations

import time

from hopgraph.retrieval import signals
from hopgraph.retrieval.decompose import split_question
from hopgraph.retrieval.fusion import normalize, ranked, rrf
from hopgraph.retrieval.resources import Resources
from hopgraph.retrieval.run import Parts, Run


def part_scores(run: Run, res: Resources) -> Parts:
    """Each part's first pass; empty for a question of one part."""
    parts = split_question(run.text) if run.cfg.decompose else []
    if not parts:
        return Parts()
    t = time.perf_counter()
    k = max(run.k, run.cfg.candidate_k)
    keyword = res.keyword(run.state)
    out = Parts()
    for part, vec in zip(parts, res.embedder.embed(parts), strict=True):
        d = run.keep_known(signals.dense(res.vectors, vec, k))
        b = signals.keyword(run.snap, keyword, part, k)
        found = normalize(rrf({"dense": ranked(d), "bm25": ranked(b)}, k=run.cfg.rrf_k))
        for c, s in found.items():
            out.scores[c] = max(out.scores.get(c, 0.0), s)
        out.tops += ranked(found)[:1]
    run.explain["parts"] = parts
    run.stage("parts", t)
    run.signals["parts"] = out.scores
    return out


def cover(scores: dict[str, float], tops: list[str], slots: int) -> dict[str, float]:
    """``scores`` reordered so that each part's best chunk is among the first ``slots``: a missing one takes
    the last free place there, the others keep their order (the scores, best first, stay the same values)."""
    order = ranked(scores)
    missing = [c for c in dict.fromkeys(tops) if c in scores and c not in order[:slots]]
    if not missing or slots <= len(missing):
        return scores
    rest = [c for c in order if c not in missing]
    moved = rest[: slots - len(missing)] + missing + rest[slots - len(missing):]
    values = sorted(scores.values(), reverse=True)
    return dict(zip(moved, values, strict=True))
