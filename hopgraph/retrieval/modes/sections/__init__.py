"""Mode ``sections``: find the documents first, then the sections that answer, with a confidence.

1. Candidate documents: each document scores its best chunk's cosine with the query (dense chunk
   search); documents whose title matches ``sections.exclude_titles`` ("List of ...") are left out;
   the best ``sections.documents`` remain.
2. Their sections are ranked by their vectors (the mean of their chunks'), or by the configured
   reranker over their text when ``rerank`` is on.
3. The top ``sections.top_m`` scores become the confidence distribution (``retrieval.parts.confidence``,
   turned on for this mode by its registry flag): each result carries its probability, the query its
   entropy, and the top-p and abstention cuts apply.

Each section is answered by its chunk most similar to the query, which carries the section's path
(``ModeOutput.chunk_fields``: the result's ``section``).
"""

from __future__ import annotations

import re
import time
from typing import Any

from hopgraph.core.linalg import unit
from hopgraph.retrieval.index.state import IndexState
from hopgraph.retrieval.parts.fusion import normalize, ranked
from hopgraph.retrieval.parts.signals import dense_of
from hopgraph.retrieval.registry import ModeOutput, QueryError
from hopgraph.retrieval.resources import Resources
from hopgraph.retrieval.run import Run
from hopgraph.retrieval.trace import Trace

NO_SECTIONS = ("this store has no section vectors yet: run any ingest (it writes the vectors of sections "
               "that have none) and query again")


def document_titles(state: IndexState) -> dict[str, str]:
    """Document id -> its normalized title (from the state's title index; memoized per state)."""
    def make() -> dict[str, str]:
        snap = state.snapshot
        return {snap.chunk_docs[j]: title for title, chunks in snap.title_index.items() for j in chunks}

    return state.memo("document-titles", make)


def candidate_documents(run: Run, chunk_scores: dict[str, float], trace: Trace) -> list[str]:
    """Documents by their best chunk, those with an excluded title left out (listed in ``trace``)."""
    snap = run.snap
    best: dict[str, float] = {}
    for c, s in chunk_scores.items():
        d = snap.chunk_docs[snap.chunk_index[c]]
        best[d] = max(best.get(d, -1.0), s)
    pattern = run.cfg.modes.sections.exclude_titles
    titles = document_titles(run.state) if pattern else {}
    excluded = re.compile(pattern, re.IGNORECASE) if pattern else None
    keep = [d for d in ranked(best) if excluded is None or not excluded.search(titles.get(d, ""))]
    trace.explain["excluded_documents"] = [d for d in best if d not in keep]
    return keep[: run.cfg.modes.sections.documents]


def sections(run: Run, res: Resources) -> ModeOutput:
    cfg = run.cfg.modes.sections
    trace = Trace()
    chunk_scores = dense_of(run, res, trace)
    t = time.perf_counter()
    docs = candidate_documents(run, chunk_scores, trace)
    hits = res.vectors.search("sections", run.qvec, limit=cfg.top_m, where={"document_id": docs}) if docs else []
    if docs and not hits and res.vectors.count("sections") == 0:
        raise QueryError(NO_SECTIONS)
    snap = run.snap
    members = {h.id: [c for c in h.payload.get("chunks") or [] if c in snap.chunk_index] for h in hits}
    scores = {h.id: h.score for h in hits if members[h.id]}
    if run.cfg.rerank and scores:
        texts = [" ".join(snap.chunk_texts[snap.chunk_index[c]] for c in members[s]) for s in scores]
        scores = normalize(dict(zip(scores, res.reranker(run.cfg.reranker).score(run.text, texts), strict=True)))
    own = res.vectors.vectors("chunks", [c for s in scores for c in members[s]]) if scores else {}
    q = unit(run.qvec)
    out: dict[str, float] = {}
    fields: dict[str, dict[str, Any]] = {}
    paths = {h.id: str(h.payload.get("path") or h.payload.get("title") or "") for h in hits}
    for s in ranked(scores):
        chunk = max(members[s], key=lambda c: float(own[c] @ q) if c in own else -1.0)
        if chunk not in out:
            out[chunk] = scores[s]
            fields[chunk] = {"section": paths[s]}
    trace.explain["sections"] = [{"section": s, "document": next((h.payload.get("document_id") for h in hits
                                                                  if h.id == s), None),
                                  "path": paths[s], "score": round(scores[s], 4)} for s in ranked(scores)]
    trace.stage("sections", t)
    return trace.output(trace.signal("sections", out), chunk_fields=fields)


class SectionsMode:
    def run(self, run: Run, res: Resources) -> ModeOutput:
        return sections(run, res)
