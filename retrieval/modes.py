"""Query modes, composed from the parts in ``signals``:

- ``naive`` / ``dense``: chunk vectors.            - ``bm25``: keyword search.
- ``rrf``: reciprocal-rank fusion of dense and BM25 (the strongest classic baseline).
- ``local``: entities (named in or similar to the query) -> the chunks that mention them and their neighbours.
- ``global``: relationship and community vectors -> the chunks behind them.
- ``hybrid``: local + global.                      - ``mix``: hybrid + dense.
- ``graph``: dense + BM25 first pass, query enrichment, expansion over the entity graph (PPR by
  default, or beam search), fused with the first pass - the strongest mode.
- ``pcst``: graph's expansion candidates -> a prize-collecting Steiner tree (G-Retriever) -> the
  chunks behind its entities, fused with graph's signals; the tree's triples go to the context.
- ``gnn``: graph's expansion candidates rescored by the trained GNN (``hopgraph train-gnn``).

Every mode runs on the in-memory snapshot (no Cypher per hop) and degrades to a cheaper mode
when a stage overruns ``stage_cap_ms``, saying so in ``notes``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import numpy as np
import torch

from gpu.device import resolve as resolve_device
from gpu.train import Example
from graphdb.store import GraphStore
from hopgraph.core.records import Citation, QueryFilters, QueryResult, RetrievedChunk
from hopgraph.core.settings import GpuSettings, RetrievalSettings
from retrieval import image, signals, subgraph, subgraph_modes
from retrieval.context import build_context
from retrieval.fusion import normalize, ranked, rrf, weighted
from retrieval.keyword import KeywordIndex
from retrieval.ppr import joint_transition
from retrieval.rerank import Reranker, make_reranker
from retrieval.snapshot import Snapshot, SnapshotCache
from vectors.clip import ClipEmbedder
from vectors.embedders import Embedder
from vectors.store import VectorStore

Mode = Literal["naive", "dense", "bm25", "rrf", "local", "global", "hybrid", "mix", "graph", "pcst", "gnn", "image"]
MODES: tuple[str, ...] = get_args(Mode)


class QueryError(ValueError):
    """A query cannot be answered as asked (bad mode, empty text...)."""


@dataclass
class GraphPass:
    """graph mode's intermediate signals, which the pcst and gnn modes build on."""

    dense: dict[str, float]
    bm25: dict[str, float]
    first: list[str]                               # the RRF first pass, best first
    seeds: signals.Seeds = field(default_factory=signals.Seeds)
    sims: np.ndarray = field(default_factory=lambda: np.zeros(0))
    entity_mass: np.ndarray = field(default_factory=lambda: np.zeros(0))
    graph: dict[str, float] | None = None          # None: degraded before expansion


def _dense_weights(n: int, weights: dict[int, float]) -> np.ndarray:
    out = np.zeros(n)
    for e, w in weights.items():
        out[e] = w
    return out


@dataclass
class Run:
    """The state of one query as it goes through the stages."""

    text: str
    qvec: np.ndarray
    k: int
    cfg: RetrievalSettings
    snap: Snapshot
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    signals: dict[str, dict[str, float]] = field(default_factory=dict)
    explain: dict[str, Any] = field(default_factory=dict)
    entities: list[str] = field(default_factory=list)
    relations: list[str] = field(default_factory=list)
    communities: list[str] = field(default_factory=list)
    seed_weights: dict[int, float] = field(default_factory=dict)

    def stage(self, name: str, t0: float) -> float:
        ms = (time.perf_counter() - t0) * 1000
        self.timings[name] = round(self.timings.get(name, 0.0) + ms, 2)
        return ms


class Retriever:
    """Answers queries over a snapshot of the graph and the vector store."""

    def __init__(self, graph: GraphStore, vectors: VectorStore, embedder: Embedder, cfg: RetrievalSettings,
                 cache: SnapshotCache | None = None, clip: ClipEmbedder | None = None,
                 gpu: GpuSettings | None = None, gnn_checkpoint: str | None = None) -> None:
        self.graph = graph
        gcfg = gpu or GpuSettings()
        self.gpu = subgraph.GpuParts(gcfg, vectors, embedder.name, gnn_checkpoint, resolve_device(gcfg.device))
        self.clip = clip
        self.vectors = vectors
        self.embedder = embedder
        self.cfg = cfg
        self.cache = cache or SnapshotCache(graph, vectors, cfg.typed_weight, cfg.about_weight)
        self._keyword: dict[int, KeywordIndex] = {}
        # per graph version AND link weight: a query's settings may change the weight
        self._transition: dict[tuple[int, float], Any] = {}
        self._reranker: Reranker | None = None
        self._modes: dict[str, Callable[[Run], dict[str, float]]] = {
            "naive": self._dense, "dense": self._dense, "bm25": self._bm25, "rrf": self._rrf,
            "local": self._local, "global": self._global, "hybrid": self._hybrid, "mix": self._mix,
            "graph": self._graph, "pcst": self._pcst, "gnn": self._gnn, "image": self._image,
        }
        self._edges: tuple[tuple[int, int, float, int], image.EntityEdges] | None = None
        self._images: tuple[int, image.ImageIndex] | None = None

    # -- entry point ---------------------------------------------------------------------------
    def query(self, text: str, mode: str = "graph", top_k: int | None = None, explain: bool = False,
              cfg: RetrievalSettings | None = None, filters: QueryFilters | None = None) -> QueryResult:
        """Ranked, cited chunks and a cited context for a query (``filters`` restrict the documents)."""
        if not text or not text.strip():
            raise QueryError("the query text is empty")
        if mode not in self._modes:
            raise QueryError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
        cfg = cfg or self.cfg
        k = top_k or cfg.top_k
        if k < 1:
            raise QueryError("top_k must be at least 1")
        t0 = time.perf_counter()
        snap = self.cache.get()
        run = Run(text.strip(), np.zeros(0), k, cfg, snap)
        run.stage("snapshot", t0)
        t = time.perf_counter()
        run.qvec = self.embedder.embed([run.text])[0]
        run.stage("embed", t)
        if filters is not None:  # widen the candidate pools, then keep the allowed documents only
            run.cfg = cfg.model_copy(update={"candidate_k": min(cfg.candidate_k * 4, 1000)})
        scores = self._modes[mode](run)
        if filters is not None:
            scores = {c: s for c, s in scores.items() if c in snap.chunk_index and filters.allows(
                snap.chunk_docs[snap.chunk_index[c]], snap.chunk_sources[snap.chunk_index[c]])}
        order = ranked(scores)
        if cfg.rerank and order:
            t = time.perf_counter()
            order = self._rerank(run, order)
            run.stage("rerank", t)
        results = [self._result(snap, i + 1, scores.get(c, 0.0), c, run) for i, c in enumerate(order[:k])]
        context = build_context(results, run.entities[:12], run.relations[:8], run.communities[:3], cfg.token_budget)
        run.timings["total"] = round((time.perf_counter() - t0) * 1000, 2)
        if explain:
            run.explain["signals"] = {name: {c: round(v, 4) for c, v in sorted(
                normalize(sig).items(), key=lambda kv: -kv[1])[:k * 2]} for name, sig in run.signals.items()}
        return QueryResult(query=text, mode=mode, results=results, timings_ms=run.timings, notes=run.notes,
                           context=context, explain=run.explain if explain else {})

    # -- plumbing ------------------------------------------------------------------------------
    # the caches below are replaced whole, never mutated, so concurrent queries (API threads) never
    # see a half-updated one; a race costs at most one extra build
    def _keyword_of(self, snap: Snapshot) -> KeywordIndex:
        index = self._keyword.get(snap.version)
        if index is None:
            index = KeywordIndex(snap.chunk_texts)
            self._keyword = {snap.version: index}
        return index

    def _transition_of(self, snap: Snapshot, link_weight: float) -> Any:
        key = (snap.version, link_weight)
        transition = self._transition.get(key)
        if transition is None:
            transition = joint_transition(snap, link_weight=link_weight)
            self._transition = {**{k: v for k, v in self._transition.items() if k[0] == snap.version},
                                key: transition}
        return transition

    def _result(self, snap: Snapshot, rank: int, score: float, cid: str, run: Run) -> RetrievedChunk:
        j = snap.chunk_index[cid]
        row = snap.incidence.getrow(j)
        via = sorted((e for e in row.indices if e in run.seed_weights), key=lambda e: -run.seed_weights[e])[:5]
        return RetrievedChunk(rank=rank, score=round(float(score), 6), text=snap.chunk_texts[j],
                              citation=Citation(document_id=snap.chunk_docs[j], chunk_id=cid,
                                                source=snap.chunk_sources[j]),
                              entities=[snap.entity_names[e] for e in via],
                              image=snap.chunk_uris[j] or None if snap.chunk_kinds[j] == "image" else None)

    def _over_cap(self, run: Run, ms: float, stage: str, fallback: str) -> bool:
        if ms > run.cfg.stage_cap_ms:
            run.notes.append(f"degraded: {stage} took {ms:.0f} ms > stage_cap_ms={run.cfg.stage_cap_ms:.0f}; "
                             f"answered as {fallback}")
            return True
        return False

    def _keep_known(self, run: Run, scores: dict[str, float]) -> dict[str, float]:
        """Drop vector hits the snapshot does not know (a document being written or deleted)."""
        return {c: s for c, s in scores.items() if c in run.snap.chunk_index}

    # -- modes ---------------------------------------------------------------------------------
    def _dense(self, run: Run) -> dict[str, float]:
        t = time.perf_counter()
        out = self._keep_known(run, signals.dense(self.vectors, run.qvec, max(run.k, run.cfg.candidate_k)))
        run.stage("dense", t)
        run.signals["dense"] = out
        return out

    def _bm25(self, run: Run) -> dict[str, float]:
        t = time.perf_counter()
        index = self._keyword_of(run.snap)
        out = signals.keyword(run.snap, index, run.text, max(run.k, run.cfg.candidate_k))
        run.stage("bm25", t)
        run.signals["bm25"] = out
        return out

    def _rrf(self, run: Run) -> dict[str, float]:
        d, b = self._dense(run), self._bm25(run)
        return rrf({"dense": ranked(d), "bm25": ranked(b)}, k=run.cfg.rrf_k)

    def _seeds(self, run: Run) -> tuple[signals.Seeds, np.ndarray]:
        t = time.perf_counter()
        sims = signals.entity_similarity(run.snap, run.qvec)
        seeds = signals.seed_entities(run.snap, run.text, sims, run.cfg.entity_k, run.cfg.min_entity_score)
        run.stage("seeds", t)
        return seeds, sims

    def _explain_seeds(self, run: Run, seeds: signals.Seeds) -> None:
        snap = run.snap
        run.seed_weights = seeds.weights
        top = sorted(seeds.weights.items(), key=lambda kv: -kv[1])[:15]
        run.entities = [f"{snap.entity_names[e]} ({snap.entity_types[e]})" for e, _ in top]
        run.explain["seeds"] = [{"entity": snap.entity_names[e], "weight": round(w, 4), "why": seeds.origin[e]}
                                for e, w in top]

    def _local(self, run: Run) -> dict[str, float]:
        seeds, _ = self._seeds(run)
        self._explain_seeds(run, seeds)
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
        run.stage("local", t)
        run.signals["local"] = out
        return out

    def _global(self, run: Run) -> dict[str, float]:
        snap = run.snap
        t = time.perf_counter()
        weights: dict[int, float] = {}
        for h in self.vectors.search("relationships", run.qvec, limit=run.cfg.entity_k):
            src = snap.entity_index.get(str(h.payload.get("source_id")))
            dst = snap.entity_index.get(str(h.payload.get("target_id")))
            if src is None or dst is None:
                continue
            run.relations.append(f"{snap.entity_names[src]} {str(h.payload.get('type', '')).replace('_', ' ')} "
                                 f"{snap.entity_names[dst]} ({h.score:.2f})")
            for e in (src, dst):
                weights[e] = max(weights.get(e, 0.0), h.score)
        for h in self.vectors.search("communities", run.qvec, limit=5):
            run.communities.append(f"{h.payload.get('title', '')} (level {h.payload.get('level')}, {h.score:.2f})")
            for m in self.graph.community_members(str(h.id)):
                member = snap.entity_index.get(m)
                if member is not None:
                    weights[member] = max(weights.get(member, 0.0), 0.5 * h.score)
        run.entities = [snap.entity_names[e] for e in sorted(weights, key=lambda e: -weights[e])[:12]]
        out = signals.specific_scores(snap, weights)
        run.stage("global", t)
        run.signals["global"] = out
        return out

    def _hybrid(self, run: Run) -> dict[str, float]:
        return rrf({"local": ranked(self._local(run)), "global": ranked(self._global(run))}, k=run.cfg.rrf_k)

    def _mix(self, run: Run) -> dict[str, float]:
        h = self._hybrid(run)
        return rrf({"hybrid": ranked(h), "dense": ranked(self._dense(run))}, k=run.cfg.rrf_k)

    def _graph_pass(self, run: Run) -> GraphPass:
        """Dense + BM25 first pass, seeding with enrichment, expansion (PPR, beam or none)."""
        cfg, snap = run.cfg, run.snap
        dense, bm25 = self._dense(run), self._bm25(run)
        gp = GraphPass(dense, bm25, ranked(rrf({"dense": ranked(dense), "bm25": ranked(bm25)}, k=cfg.rrf_k)))
        t = time.perf_counter()
        gp.seeds, gp.sims = self._seeds(run)
        if cfg.enrichment and cfg.enrich_chunks:
            signals.enrich(snap, gp.seeds, gp.first[: cfg.enrich_chunks], gp.sims, cfg.enrich_entities_per_chunk,
                           cfg.enrich_weight)
        self._explain_seeds(run, gp.seeds)
        if self._over_cap(run, run.stage("seeding", t), "seeding", "rrf"):
            return gp
        t = time.perf_counter()
        if cfg.expansion == "ppr":
            transition = self._transition_of(snap, cfg.link_weight)
            engine = self.gpu.ppr_engine(transition)
            graph, gp.entity_mass = signals.ppr_scores(snap, transition, gp.seeds, self._passage_seeds(run, dense),
                                                       cfg.passage_weight, cfg.damping, engine)
        elif cfg.expansion == "beam":
            deadline = time.perf_counter() + cfg.stage_cap_ms / 1000
            res = signals.beam_expand(snap, gp.seeds.weights, cfg.hops, cfg.beam, cfg.decay, cfg.type_weights,
                                      deadline)
            if res.truncated:
                run.notes.append(f"degraded: beam expansion stopped at the {cfg.stage_cap_ms:.0f} ms cap; "
                                 "returning what it found")
            run.explain["paths"] = [" -> ".join(snap.entity_names[e] for e in p) for p in res.paths]
            graph = signals.specific_scores(snap, res.scores)
            gp.entity_mass = _dense_weights(snap.n_entities, res.scores)
        else:
            graph = signals.specific_scores(snap, gp.seeds.weights)
            gp.entity_mass = _dense_weights(snap.n_entities, gp.seeds.weights)
        if self._over_cap(run, run.stage("expansion", t), "expansion", "rrf"):
            return gp
        run.signals["graph"] = graph
        gp.graph = graph
        return gp

    @staticmethod
    def _passage_seeds(run: Run, dense: dict[str, float]) -> dict[str, float]:
        """PPR's passage restart: the dense scores, and ``title_weight`` times the best of them for
        the passages of documents whose title the query names (``ppr_scores`` then scales the
        restart so that its largest entry is ``passage_weight``)."""
        seeds = dict(dense)
        named = signals.titles_in_query(run.snap, run.text) if run.cfg.title_weight > 0 else []
        if named:
            top = max(seeds.values(), default=1.0) * run.cfg.title_weight
            for j in named:
                cid = run.snap.chunk_ids[j]
                seeds[cid] = max(seeds.get(cid, 0.0), top)
            run.explain["titles_in_query"] = sorted({run.snap.chunk_docs[j] for j in named})
        return seeds

    def _fuse(self, run: Run, gp: GraphPass, extra: dict[str, dict[str, float]]) -> dict[str, float]:
        """Fuse the first pass, the graph signal and ``extra`` signals over their candidate pool."""
        cfg = run.cfg
        if gp.graph is None:  # degraded before expansion
            return rrf({"dense": ranked(gp.dense), "bm25": ranked(gp.bm25)}, k=cfg.rrf_k)
        named = {"dense": gp.dense, "bm25": gp.bm25, "graph": gp.graph, **extra}
        pool = set(gp.first[: cfg.candidate_k])
        for name in ("graph", *extra):
            pool |= set(ranked(named[name])[: cfg.candidate_k])
        sig = {name: {c: s for c, s in v.items() if c in pool} for name, v in named.items()}
        weights = {**cfg.weights, "pcst": self.gpu.cfg.pcst_weight, "gnn": self.gpu.gnn_weight()}
        if cfg.fusion == "rrf":
            return rrf({name: ranked(v) for name, v in sig.items()}, k=cfg.rrf_k, weights=weights)
        return weighted(sig, weights)

    def _graph(self, run: Run) -> dict[str, float]:
        return self._fuse(run, self._graph_pass(run), {})

    def _pcst(self, run: Run) -> dict[str, float]:
        """graph mode's candidates -> a PCST subgraph (G-Retriever) -> its triples and the chunks behind them."""
        return self._on_candidates(run, "pcst", subgraph_modes.pcst_signal)

    def _gnn(self, run: Run) -> dict[str, float]:
        """graph mode's expansion candidates rescored by the trained GNN."""
        return self._on_candidates(run, "gnn", subgraph_modes.gnn_signal)

    def _on_candidates(self, run: Run, name: str,
                       signal: Callable[[Run, GraphPass, subgraph.GpuParts], dict[str, float]]) -> dict[str, float]:
        """graph's pass, then ``signal`` over its expansion candidates, fused with graph's signals."""
        gp = self._graph_pass(run)
        if gp.graph is None:
            return self._fuse(run, gp, {})
        t = time.perf_counter()
        out = signal(run, gp, self.gpu)
        if self._over_cap(run, run.stage(name, t), name, "graph"):
            return self._fuse(run, gp, {})
        run.signals[name] = out
        return self._fuse(run, gp, {name: out})

    def gnn_example(self, text: str, gold_chunk_ids: set[str], query_id: str = "") -> Example | None:
        """The GNN training example of a query (None when no candidate entity is in a gold chunk)."""
        snap = self.cache.get()
        run = Run(text.strip(), self.embedder.embed([text.strip()])[0], self.cfg.top_k,
                  self.cfg.model_copy(update={"stage_cap_ms": 1e9}), snap)
        gp = self._graph_pass(run)
        cand = self.gpu.candidates(snap, gp.entity_mass, gp.seeds, gp.sims)
        gold = [snap.chunk_index[c] for c in gold_chunk_ids if c in snap.chunk_index]
        labels = subgraph.gold_labels(snap, cand.nodes.numpy(), gold)
        if not bool(labels.any()):
            return None
        return Example(query_id, cand.sub, torch.from_numpy(run.qvec.astype(np.float32)), cand.scalars, labels)

    def _image(self, run: Run) -> dict[str, float]:
        """Text -> images: caption similarity (and CLIP text -> image similarity when configured)
        fused with the entity-graph score (see retrieval.image)."""
        snap, icfg = run.snap, run.cfg.image
        index = self._image_index(snap)
        if not index.rows.size:
            run.notes.append("no image documents in the graph")
            return {}
        t = time.perf_counter()
        hits = signals.dense(self.vectors, run.qvec, max(run.k, icfg.candidate_k) * 2)
        visual = {"caption": {c: s for c, s in hits.items() if c in snap.chunk_index
                              and snap.chunk_kinds[snap.chunk_index[c]] == "image"}}
        if self.clip is not None:
            visual["clip"] = self._clip_scores(index, self.clip.embed_texts([run.text])[0], icfg.candidate_k)
        run.stage("caption", t)
        run.signals.update(visual)
        first = ranked(visual.get("clip") or visual["caption"])
        return self._fuse_with_kg(run, index, visual, first, seeds_from_query=True)

    def query_image(self, path: str, top_k: int | None = None, cfg: RetrievalSettings | None = None
                    ) -> QueryResult:
        """Image -> images (needs CLIP): CLIP image similarity fused with the KG score of the entities
        of the nearest images."""
        if self.clip is None:
            raise QueryError("image queries need CLIP: set clip.enabled with a model and checkpoint")
        got = self.clip.embed_images([path])
        if got.errors:
            raise QueryError(next(iter(got.errors.values())))
        cfg = cfg or self.cfg
        t0 = time.perf_counter()
        run = Run(f"[image {path}]", np.zeros(0), top_k or cfg.top_k, cfg, self.cache.get())
        index = self._image_index(run.snap)
        visual = {"clip": self._clip_scores(index, got.vectors[0], cfg.image.candidate_k)}
        run.signals.update(visual)
        scores = self._fuse_with_kg(run, index, visual, ranked(visual["clip"]), seeds_from_query=False)
        results = [self._result(run.snap, i + 1, scores[c], c, run) for i, c in enumerate(ranked(scores)[:run.k])]
        run.timings["total"] = round((time.perf_counter() - t0) * 1000, 2)
        return QueryResult(query=path, mode="image", results=results, timings_ms=run.timings, notes=run.notes,
                           context=build_context(results, run.entities[:12], [], [], cfg.token_budget))

    def _image_index(self, snap: Snapshot) -> image.ImageIndex:
        if self._images is None or self._images[0] != snap.version:
            self._images = (snap.version, image.ImageIndex.of(snap))
        return self._images[1]

    def _clip_scores(self, index: image.ImageIndex, vector: np.ndarray, k: int) -> dict[str, float]:
        hits = self.vectors.search("images", vector, limit=k)
        return {index.chunk_of[str(h.payload.get("document_id"))]: h.score for h in hits
                if str(h.payload.get("document_id")) in index.chunk_of}

    def _fuse_with_kg(self, run: Run, index: image.ImageIndex, visual: dict[str, dict[str, float]],
                      first: list[str], seeds_from_query: bool) -> dict[str, float]:
        cfg, snap, icfg = run.cfg, run.snap, run.cfg.image
        t = time.perf_counter()
        if seeds_from_query:
            seeds, sims = self._seeds(run)
        else:  # an image query has no words: the nearest images' entities are the seeds
            seeds, sims = signals.Seeds(), np.zeros(0)
        if icfg.enrich_images:
            signals.enrich(snap, seeds, first[: icfg.enrich_images], sims, cfg.enrich_entities_per_chunk,
                           cfg.enrich_weight)
        self._explain_seeds(run, seeds)
        key = (snap.version, icfg.similar_k, icfg.similar_min, icfg.cooccur_k)
        if self._edges is None or self._edges[0] != key:  # per graph version and edge settings
            self._edges = (key, image.entity_edges(snap, icfg))
        scores = image.expand(seeds.weights, self._edges[1], snap.n_entities, icfg.expand_weight)
        run.seed_weights = {int(e): float(scores[e]) for e in np.flatnonzero(scores)}  # contributing entities
        run.explain["entity_stats"] = [
            {"entity": snap.entity_names[e], "score": round(float(scores[e]), 4), "df": int(snap.entity_df[e]),
             "cf": int(snap.entity_cf[e])} for e in np.argsort(-scores)[:10] if scores[e] > 0]
        per_row = image.kg_scores(snap, scores, index.rows)
        top = np.argsort(-per_row)[: icfg.candidate_k]
        kg = {snap.chunk_ids[int(index.rows[i])]: float(per_row[i]) for i in top if per_row[i] > 0}
        weights = {"caption": 1.0, "clip": run.cfg.image.clip_weight, "kg": icfg.kg_weight}
        if self._over_cap(run, run.stage("kg", t), "kg", "caption similarity"):
            return image.fuse(visual, weights, icfg.fusion, cfg.rrf_k)
        run.signals["kg"] = kg
        return image.fuse({**visual, "kg": kg}, weights, icfg.fusion, cfg.rrf_k)

    # -- rerank ----------------------------------------------------------------------------------
    def _rerank(self, run: Run, order: list[str]) -> list[str]:
        if self._reranker is None:
            self._reranker = make_reranker(run.cfg.reranker, self.embedder)
        head = order[: run.cfg.rerank_k]
        texts = [run.snap.chunk_texts[run.snap.chunk_index[c]] for c in head]
        rerank = normalize(dict(zip(head, self._reranker.score(run.text, texts), strict=True)))
        # blend with the fused order so a reranker never discards the graph's evidence outright
        mixed = {c: 0.5 * (1.0 - i / len(head)) + 0.5 * rerank[c] for i, c in enumerate(head)}
        return ranked(mixed) + order[run.cfg.rerank_k :]
