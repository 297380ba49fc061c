"""Mode ``graph``: a dense + BM25 first pass, entity seeds (named in, similar to the query, and the
first pass's entities), expansion over the snapshot (personalized PageRank over entities and
passages, beam search, or none; on a chat log kept to the chunks of the persons a question names),
fused with the first pass and with the chunks scored by the seeds they name (``entity_weight``), then
bridges: the documents the best documents name by title follow them (``retrieval.parts.bridges``), and so
does the chunk the best document leads to over a shared entity (``retrieval.parts.entity_bridges``).
``pcst`` and ``gnn`` build on its pass."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from hopgraph.core.records import PERSON
from hopgraph.retrieval.modes.graph.chat_time import ChatTimes, time_boost
from hopgraph.retrieval.modes.graph.explain_paths import expansion_paths
from hopgraph.retrieval.modes.graph.facts import TypedOut, fact_chunks, verb_matches
from hopgraph.retrieval.modes.graph.question_parts import part_scores
from hopgraph.retrieval.modes.graph.torch_ppr import PprEngines
from hopgraph.retrieval.parts import bridges, signals
from hopgraph.retrieval.parts.entity_bridges import entity_bridge
from hopgraph.retrieval.parts.first_pass import first_pass_scales, first_pass_weights, state_homogeneity
from hopgraph.retrieval.parts.fusion import ranked, rrf, top, weighted
from hopgraph.retrieval.parts.signals import NAMED, Seeds
from hopgraph.retrieval.registry import ModeOutput
from hopgraph.retrieval.resources import Resources
from hopgraph.retrieval.run import Run
from hopgraph.retrieval.trace import Trace

__all__ = ["CandidateSignal", "ChatTimes", "GraphMode", "GraphPass", "TypedOut", "graph_pass", "on_candidates",
           "verb_matches"]


@dataclass
class GraphPass:
    """graph mode's intermediate signals, which the pcst and gnn modes build on, and the query's ``trace``."""

    dense: dict[str, float]
    bm25: dict[str, float]
    first: list[str]                               # the RRF first pass, best first
    moved: float = 0.0                             # the dense share the first pass moves to BM25 (``moved_share``)
    seeds: Seeds = field(default_factory=Seeds)
    seed_lines: list[str] = field(default_factory=list)  # the strongest seeds, for the cited context
    sims: np.ndarray = field(default_factory=lambda: np.zeros(0))
    entity_mass: np.ndarray = field(default_factory=lambda: np.zeros(0))
    graph: dict[str, float] | None = None          # None: degraded before expansion
    parts: dict[str, float] = field(default_factory=dict)  # the question's parts searched one by one ({}: one part)
    facts: dict[str, float] = field(default_factory=dict)  # chunks stating facts of named entities (``facts``)
    entities: dict[str, float] = field(default_factory=dict)  # chunks by the seeds they mention (``entity_weight``)
    trace: Trace = field(default_factory=Trace)   # what the pass says: timings, signals, explanation, notes

    def output(self, scores: dict[str, float], relations: list[str] | None = None) -> ModeOutput:
        """The mode's answer: ``scores`` with the seeds as its entities (and ``relations``, if any), and the trace."""
        return self.trace.output(scores, entities=self.seed_lines, relations=relations or [],
                                 seed_weights=self.seeds.weights)


def _dense_weights(n: int, weights: dict[int, float]) -> np.ndarray:
    out = np.zeros(n)
    for e, w in weights.items():
        out[e] = w
    return out


def graph_pass(run: Run, res: Resources) -> GraphPass:
    """Dense + BM25 first pass, seeding with enrichment, expansion (PPR, beam or none)."""
    cfg, g, snap = run.cfg, run.cfg.modes.graph, run.snap
    trace = Trace()
    d, b = signals.dense_of(run, res, trace), signals.bm25_of(run, res, trace)
    gp = GraphPass(d, b, ranked(rrf({"dense": ranked(d), "bm25": ranked(b)}, k=cfg.rrf_k)), moved_share(run),
                   parts=part_scores(run, res, trace), trace=trace)
    t = time.perf_counter()
    gp.seeds, gp.sims = signals.seeds_of(run, trace)
    if g.enrichment and g.enrich_chunks:
        signals.enrich(snap, gp.seeds, gp.first[: g.enrich_chunks], gp.sims, g.enrich_entities_per_chunk,
                       g.enrich_weight)
    if g.drop_generic:
        dropped = signals.drop_generic(snap, gp.seeds)
        if dropped:
            trace.explain["generic_concepts"] = dropped
    gp.seed_lines = signals.explain_seeds(snap, gp.seeds, trace)
    if trace.over_cap(cfg.stage_cap_ms, "seeding", t, "rrf"):
        return as_rrf(run, gp)
    t = time.perf_counter()
    if g.expansion == "ppr":
        walk = res.walk(run.state, cfg.link_weight, g.session_link_weight)
        engine = res.kept("graph.torch_ppr", lambda: PprEngines(res.gpu)).engine(walk)
        graph, gp.entity_mass = signals.ppr_scores(snap, walk, gp.seeds, passage_seeds(run, d, trace),
                                                   g.passage_weight, g.damping, engine, g.ppr_solver)
    elif g.expansion == "beam":
        deadline = time.perf_counter() + (cfg.stage_cap_ms / 1000 if cfg.stage_cap_ms is not None else float("inf"))
        found = signals.beam_expand(snap, gp.seeds.weights, g.hops, g.beam, g.decay, g.type_weights,
                                    deadline)
        if found.truncated:
            trace.notes.append(f"degraded: beam expansion stopped at the {cfg.stage_cap_ms or 0:.0f} ms cap; "
                               "returning what it found")
        trace.explain["paths"] = [" -> ".join(snap.entity_names[e] for e in p) for p in found.paths]
        graph = signals.specific_scores(snap, found.scores)
        gp.entity_mass = _dense_weights(snap.n_entities, found.scores)
    else:
        graph = signals.specific_scores(snap, gp.seeds.weights)
        gp.entity_mass = _dense_weights(snap.n_entities, gp.seeds.weights)
    if g.person_scope and g.expansion != "none":
        graph = person_scoped(run, gp, graph)
    if g.fact_weight > 0 and g.expansion != "none":  # a hop along the named entities' typed relations
        gp.facts = fact_chunks(run, [e for e, why in gp.seeds.origin.items() if why == NAMED])
        if gp.facts:
            trace.signal("facts", gp.facts)
    if seed_chunk_weight(run, gp) > 0 and g.expansion != "none":  # the walk's own start: chunks naming the seeds
        gp.entities = signals.specific_scores(snap, gp.seeds.weights)
        if gp.entities:
            trace.signal("entities", gp.entities)
    if trace.over_cap(cfg.stage_cap_ms, "expansion", t, "rrf"):
        return as_rrf(run, gp)
    gp.graph = trace.signal("graph", graph)
    return gp


def as_rrf(run: Run, gp: GraphPass) -> GraphPass:
    """``gp`` degraded before its expansion was fused (``graph`` stays None, so ``fuse`` answers as RRF
    over dense and BM25): the signals RRF does not fuse leave ``--explain``'s list."""
    for name in gp.trace.signals.keys() - {"dense", "bm25"}:
        del gp.trace.signals[name]
    return gp


def moved_share(run: Run) -> float:
    """The share of the dense weight that ``first_pass_weights`` moves to BM25 on this corpus: above 0
    where the chunks all look alike to the embedder (a chat log), 0 on a corpus of unrelated texts."""
    keep = first_pass_scales(run.cfg, state_homogeneity(run.state), run.snap.n_chunks)["dense"]
    return max(0.0, 1.0 - keep)


def seed_chunk_weight(run: Run, gp: GraphPass) -> float:
    """The fusion weight of the seed chunks: ``entity_weight`` times the pass's ``moved_share``. Where the
    chunks all look alike to the embedder, which entities a chunk names tells it apart; a corpus of
    unrelated texts keeps the walk alone."""
    return run.cfg.modes.graph.entity_weight * gp.moved


def person_scoped(run: Run, gp: GraphPass, scores: dict[str, float]) -> dict[str, float]:
    """The walk's ``scores`` of the chunks linked to a person the question names (their turns, the turns
    that mention them), on a corpus of look-alike chunks (``moved_share`` above 0); elsewhere, or where
    the question names no person, ``scores`` as they are. In a chat log every chunk shares words with
    every other, and the walk from a speaker spreads into other people's conversations."""
    snap = run.snap
    people = sorted(e for e, why in gp.seeds.origin.items() if why == NAMED and snap.entity_types[e] == PERSON)
    if not people or gp.moved <= 0:
        return scores
    m = snap.mentioned_in
    linked = {snap.chunk_ids[j] for e in people for j in m.indices[m.indptr[e]:m.indptr[e + 1]].tolist()}
    gp.trace.explain["person_scope"] = [snap.entity_names[e] for e in people]
    return {c: v for c, v in scores.items() if c in linked}


def passage_seeds(run: Run, dense_scores: dict[str, float], trace: Trace) -> dict[str, float]:
    """PPR's passage restart: the dense scores, and ``title_weight`` times the best of them for
    the passages of documents whose title the query names (``ppr_scores`` then scales the
    restart so that its largest entry is ``passage_weight``)."""
    seeds = dict(dense_scores)
    named = signals.titles_in_query(run.snap, run.text) if run.cfg.modes.graph.title_weight > 0 else []
    if named:
        top = max(seeds.values(), default=1.0) * run.cfg.modes.graph.title_weight
        for j in named:
            cid = run.snap.chunk_ids[j]
            seeds[cid] = max(seeds.get(cid, 0.0), top)
        trace.explain["titles_in_query"] = sorted({run.snap.chunk_docs[j] for j in named})
    return seeds


def fuse(run: Run, gp: GraphPass, extra: dict[str, dict[str, float]] | None = None,
         extra_weights: dict[str, float] | None = None) -> dict[str, float]:
    """Fuse the first pass, the graph signal and ``extra`` signals (weighted by ``extra_weights``) over their
    candidate pool."""
    extra = extra or {}
    cfg, g = run.cfg, run.cfg.modes.graph
    if gp.graph is None:  # degraded before expansion
        return rrf({"dense": ranked(gp.dense), "bm25": ranked(gp.bm25)}, k=cfg.rrf_k)
    named = {"dense": gp.dense, "bm25": gp.bm25, "graph": gp.graph, **extra}
    if gp.parts:
        named["parts"] = gp.parts
    if gp.facts:
        named["facts"] = gp.facts
    if gp.entities:
        named["entities"] = gp.entities
    pool = set(gp.first[: cfg.candidate_k])
    for name in named.keys() - {"dense", "bm25"}:
        pool |= set(top(named[name], cfg.candidate_k))
    sig = {name: {c: s for c, s in v.items() if c in pool} for name, v in named.items()}
    weights = {**(extra_weights or {}), "facts": g.fact_weight,
               "entities": seed_chunk_weight(run, gp),
               **first_pass_weights(cfg, state_homogeneity(run.state), run.snap.n_chunks)}
    if g.fusion == "rrf":
        fused = rrf({name: ranked(v) for name, v in sig.items()}, k=cfg.rrf_k, weights=weights)
    else:
        fused = weighted(sig, weights)
    final = time_boost(run, with_bridges(run, gp, fused), gp.trace)
    if run.explaining and g.expansion != "beam":  # beam expansion lists the paths it walked itself
        gp.trace.explain["paths"] = expansion_paths(run.snap, ranked(final)[: run.k], gp.seeds.weights,
                                                    gp.entity_mass, g.damping)
    return final


def with_bridges(run: Run, gp: GraphPass, fused: dict[str, float]) -> dict[str, float]:
    """The fused ranking with the documents its best documents name by title bridged in, then the chunk
    its best document leads to over a shared entity (``retrieval.modes.graph.entity_bridge_weight``)."""
    g = run.cfg.modes.graph
    t = time.perf_counter()
    hops: list[str] = []
    if g.bridge_weight > 0:
        found = bridges.bridge(run.snap, fused, g.bridge_sources, g.bridge_per_source, g.bridge_weight,
                               prefer=[gp.graph or {}])
        if found.scores:
            gp.trace.signal("bridge", found.scores)
            hops += [f"{src} -[{title}]-> {dst}" for src, title, dst in found.hops]
        fused = bridges.apply(fused, found)
    if g.entity_bridge_weight > 0:
        named = [e for e, why in gp.seeds.origin.items() if why == NAMED]
        found = entity_bridge(run.snap, fused, run.qvec, g.entity_bridge_sources, g.entity_bridge_weight,
                              skip=set(named))
        if found.scores:
            gp.trace.signal("entity_bridge", found.scores)
            hops += [f"{src} -[{entity} (entity)]-> {dst}" for src, entity, dst in found.hops]
        fused = bridges.apply(fused, found)
    gp.trace.stage("bridges", t)
    if hops:
        gp.trace.explain["bridges"] = hops
    return fused


#: a signal over graph mode's candidates: chunk scores, and the triples it used (for the cited context)
CandidateSignal = Callable[[Run, GraphPass, Resources], tuple[dict[str, float], list[str]]]


def on_candidates(run: Run, res: Resources, name: str, signal: CandidateSignal,
                  weight: Callable[[], float]) -> ModeOutput:
    """graph's pass, then ``signal`` over its expansion candidates, fused with graph's signals at ``weight()``
    (asked after the signal ran)."""
    gp = graph_pass(run, res)
    if gp.graph is None:
        return gp.output(fuse(run, gp))
    t = time.perf_counter()
    out, triples = signal(run, gp, res)
    if gp.trace.over_cap(run.cfg.stage_cap_ms, name, t, "graph"):
        return gp.output(fuse(run, gp), triples)
    gp.trace.signal(name, out)
    return gp.output(fuse(run, gp, {name: out}, {name: weight()}), triples)


class GraphMode:
    def run(self, run: Run, res: Resources) -> ModeOutput:
        gp = graph_pass(run, res)
        return gp.output(fuse(run, gp))
