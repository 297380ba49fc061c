"""Mode ``raptor``: RAPTOR's collapsed-tree retrieval over the chunks and the tree's summaries
(``ingest.raptor``), summaries expanded to their most central chunks.

Chunks and summaries are searched side by side (the collapsed tree: every level at once). A summary
hit stands for its central chunks, each scored by the mean of the summary's cosine with the query and
its own. ``retrieval.modes.raptor.fusion`` says how those meet the chunk hits: ``lift`` (default) keeps the
higher of a chunk's own cosine and that mean, so a passage rises when the cluster it belongs to
matches the question as a whole; ``rrf`` fuses the two rankings; ``tree`` keeps the summaries'
chunks alone (an ablation). The best three matching summaries go to the context (``ModeOutput.context``).
"""

from __future__ import annotations

import time

from hopgraph.core.linalg import unit
from hopgraph.retrieval.parts.fusion import ranked, rrf
from hopgraph.retrieval.parts.signals import dense_of
from hopgraph.retrieval.registry import ModeOutput, QueryError
from hopgraph.retrieval.resources import Resources
from hopgraph.retrieval.run import Run
from hopgraph.retrieval.trace import Trace

NO_TREE = ("mode raptor needs the RAPTOR tree, which this store does not have yet: run `hopgraph tree` "
           "(or set raptor.enabled = true and ingest)")


def raptor(run: Run, res: Resources) -> ModeOutput:
    trace = Trace()
    direct = dense_of(run, res, trace)
    t = time.perf_counter()
    hits = res.vectors.search("summaries", run.qvec, limit=run.cfg.modes.raptor.k)
    if not hits and res.vectors.count("summaries") == 0:
        raise QueryError(NO_TREE)
    members = {h.id: [str(c) for c in h.payload.get("chunks") or []] for h in hits}
    wanted = sorted({c for cs in members.values() for c in cs if c in run.snap.chunk_index})
    vecs = res.vectors.vectors("chunks", wanted) if wanted else {}
    q = unit(run.qvec)
    own = {c: float(unit(v) @ q) for c, v in vecs.items()}
    lifted: dict[str, float] = {}
    via: dict[str, str] = {}
    for h in hits:
        for c in members[h.id]:
            if c in own and (s := (h.score + own[c]) / 2) > lifted.get(c, -1.0):
                lifted[c], via[c] = s, h.id
    if run.cfg.modes.raptor.fusion == "tree":
        out = dict(lifted)
    elif run.cfg.modes.raptor.fusion == "rrf":
        out = rrf({"dense": ranked(direct), "tree": ranked(lifted)}, k=run.cfg.rrf_k)
    else:
        out = dict(direct)
        for c, s in lifted.items():
            if s > out.get(c, -1.0):
                out[c] = s
    trace.stage("tree", t)
    trace.signal("tree", lifted)
    summaries = [f"{h.payload.get('text', '')}".strip() or f"(summary {h.id})" for h in hits[:3]]
    trace.explain["tree"] = [{"summary": h.id, "level": h.payload.get("level"), "score": round(h.score, 4),
                              "chunks": len(members[h.id]),
                              "lifted": sorted((c for c, v in via.items() if v == h.id), key=lambda c: -lifted[c])[:5]}
                             for h in hits]
    return trace.output(run.keep_known(out), context={"Summaries": summaries} if summaries else {})


class RaptorMode:
    def run(self, run: Run, res: Resources) -> ModeOutput:
        return raptor(run, res)
