"""LightRAG's modes over the snapshot: ``local`` (entities and their neighbourhood), ``global``
(relationship and community vectors), ``hybrid`` (both) and ``mix`` (hybrid + dense)."""

from __future__ import annotations

import time

import numpy as np

from hopgraph.retrieval.parts import signals
from hopgraph.retrieval.parts.first_pass import first_pass_weights, state_homogeneity
from hopgraph.retrieval.parts.fusion import ranked, rrf, weighted
from hopgraph.retrieval.registry import ModeOutput
from hopgraph.retrieval.resources import Resources
from hopgraph.retrieval.run import Run
from hopgraph.retrieval.trace import Trace

#: members of a community hit that join global mode's weights (the first by entity id: a spread sample;
#: every member of a large community floods the ranking and lowers recall)
COMMUNITY_MEMBERS = 200


def local(run: Run, res: Resources, trace: Trace) -> ModeOutput:
    """The seeds and their neighbourhood (at half strength) score the chunks that mention them."""
    seeds, _ = signals.seeds_of(run, trace)
    lines = signals.explain_seeds(run.snap, seeds, trace)
    t = time.perf_counter()
    weights = {e: w * signals.specificity(run.snap, e) for e, w in seeds.weights.items()}
    adj = run.snap.adjacency
    for e, w in list(weights.items()):  # the neighbourhood, at half strength
        row = slice(adj.indptr[e], adj.indptr[e + 1])
        if adj.indptr[e + 1] > adj.indptr[e]:
            wmax = float(adj.data[row].max())
            for n, a in zip(adj.indices[row], adj.data[row], strict=True):
                weights[int(n)] = max(weights.get(int(n), 0.0), 0.5 * w * float(a) / wmax)
    out = signals.direct_scores(run.snap, weights)
    trace.stage("local", t)
    return trace.output(trace.signal("local", out), entities=lines, seed_weights=seeds.weights)


def global_(run: Run, res: Resources, trace: Trace) -> ModeOutput:
    """The entities of the relations and community reports nearest to the query score their chunks."""
    snap = run.snap
    t = time.perf_counter()
    weights: dict[int, float] = {}
    relations: list[str] = []
    communities: list[str] = []
    for h in res.vectors.search("relationships", run.qvec, limit=run.cfg.entity_k):
        src = snap.entity_index.get(str(h.payload.get("source_id")))
        dst = snap.entity_index.get(str(h.payload.get("target_id")))
        if src is None or dst is None:
            continue
        shown = h.payload.get("label") or str(h.payload.get("type", "")).replace("_", " ")
        relations.append(f"{snap.entity_names[src]} {shown} {snap.entity_names[dst]} ({h.score:.2f})")
        for e in (src, dst):
            weights[e] = max(weights.get(e, 0.0), h.score)
    for h in res.vectors.search("communities", run.qvec, limit=5):
        communities.append(f"{h.payload.get('title', '')} (level {h.payload.get('level')}, {h.score:.2f})")
        members = snap.community_members.get(str(h.id), np.zeros(0, dtype=np.int64))
        for member in members[:COMMUNITY_MEMBERS].tolist():
            weights[member] = max(weights.get(member, 0.0), 0.5 * h.score)
    entities = [snap.entity_names[e] for e in sorted(weights, key=lambda e: -weights[e])[:12]]
    out = signals.specific_scores(snap, weights)
    trace.stage("global", t)
    return trace.output(trace.signal("global", out), entities=entities, relations=relations, communities=communities)


def hybrid(run: Run, res: Resources, trace: Trace) -> ModeOutput:
    """local and global fused by rank; the context lists global's entities, relations and communities,
    and a result's "via" entities are local's seeds."""
    near, far = local(run, res, trace), global_(run, res, trace)
    return trace.output(rrf({"local": ranked(near.scores), "global": ranked(far.scores)}, k=run.cfg.rrf_k),
                      entities=far.entities, relations=far.relations, communities=far.communities,
                      seed_weights=near.seed_weights)


class LocalMode:
    def run(self, run: Run, res: Resources) -> ModeOutput:
        return local(run, res, Trace())


class GlobalMode:
    def run(self, run: Run, res: Resources) -> ModeOutput:
        return global_(run, res, Trace())


class HybridMode:
    def run(self, run: Run, res: Resources) -> ModeOutput:
        return hybrid(run, res, Trace())


class MixMode:
    """LightRAG's mix: the knowledge graph's chunks (hybrid) beside the chunk search, here graph mode's first
    pass (dense and BM25 by their weights, adapted to the corpus: ``retrieval.parts.first_pass``), fused as
    normalized scores with the graph's list at ``weights["hybrid"]``."""

    def run(self, run: Run, res: Resources) -> ModeOutput:
        trace = Trace()
        graph = hybrid(run, res, trace)
        lists = {"hybrid": graph.scores, "dense": signals.dense_of(run, res, trace),
                 "bm25": signals.bm25_of(run, res, trace)}
        graph.scores = weighted(lists, first_pass_weights(run.cfg, state_homogeneity(run.state), run.snap.n_chunks))
        return graph
