"""The retriever: takes a query, runs its mode (``retrieval.registry``) on the current snapshot, and
returns ranked, cited chunks with a cited context. It knows modes only through the registry: their
implementations, flags (``needs_vector``, ``confidence``) and ``ModeOutput``, rendered generically. It
alone writes into a query's ``Run``, and keeps the query's log (``Trace``): its own stages and notes,
then the mode's timings, signals, explanation and notes as its output carries them."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from hopgraph.core.access import vector_filter
from hopgraph.core.errors import ForbiddenError
from hopgraph.core.gpu_settings import GpuSettings
from hopgraph.core.records import MODEL_LOAD, Citation, QueryFilters, QueryResult, RetrievedChunk
from hopgraph.core.settings import RetrievalSettings
from hopgraph.graphdb.protocols import IndexSource
from hopgraph.retrieval.index.keeper import IndexKeeper
from hopgraph.retrieval.index.state import IndexRecipe, IndexState
from hopgraph.retrieval.index.view import view_of
from hopgraph.retrieval.parts import confidence
from hopgraph.retrieval.parts.context import build_context
from hopgraph.retrieval.parts.diversity import mmr
from hopgraph.retrieval.parts.explain_graph import query_subgraph
from hopgraph.retrieval.parts.fusion import normalize, ranked, top
from hopgraph.retrieval.parts.nli_clusters import cluster
from hopgraph.retrieval.registry import INDEX_SETTINGS, REGISTRY, QueryError
from hopgraph.retrieval.resources import Resources
from hopgraph.retrieval.run import Run
from hopgraph.retrieval.snapshot import Snapshot
from hopgraph.retrieval.trace import Trace
from hopgraph.vectors.clip import ClipEmbedder
from hopgraph.vectors.embedders import Embedder
from hopgraph.vectors.store import VectorStore


def recipe_of(cfg: RetrievalSettings) -> IndexRecipe:
    """What the index state is built with, from the retrieval settings."""
    return IndexRecipe(typed_weight=cfg.typed_weight, about_weight=cfg.about_weight, link_weight=cfg.link_weight,
                       stemmer=cfg.keyword_stemmer)


class Retriever:
    """Answers queries over a snapshot of the graph and the vector store."""

    def __init__(self, graph: IndexSource, vectors: VectorStore, embedder: Embedder, cfg: RetrievalSettings,
                 keeper: IndexKeeper | None = None, clip: ClipEmbedder | None = None,
                 gpu: GpuSettings | None = None, gnn_checkpoint: Path | None = None) -> None:
        REGISTRY.check_options(cfg)
        self.cfg = cfg
        self.keeper = keeper or IndexKeeper(graph, vectors, recipe_of(cfg), embedder.dim)
        self.res = Resources(graph, vectors, embedder, self.keeper, gpu or GpuSettings(), gnn_checkpoint, clip)

    def state(self) -> IndexState:
        """The index state queries are answered from now."""
        return self.keeper.current()

    def snapshot(self) -> Snapshot:
        """The snapshot of the current index state."""
        return self.keeper.current().snapshot

    @property
    def embedder(self) -> Embedder:
        return self.res.embedder

    def _settings(self, cfg: RetrievalSettings | None) -> RetrievalSettings:
        """The query's settings; an override of an index setting is refused, not silently ignored."""
        if cfg is None:
            return self.cfg
        if cfg.modes != self.cfg.modes:
            REGISTRY.check_options(cfg)
        for name in INDEX_SETTINGS:
            if getattr(cfg, name) != getattr(self.cfg, name):
                raise QueryError(f"retrieval.{name} is fixed when the graph snapshot is built; it cannot be "
                                 "changed per query (set it in the settings instead)")
        if cfg.query_memory_mb > self.cfg.query_memory_mb:
            raise QueryError("retrieval.query_memory_mb is the server's bound on one query's memory; a query may "
                             f"lower it but not raise it (the server's: {self.cfg.query_memory_mb:g} MB)")
        return cfg

    def query(self, text: str = "", mode: str = "graph", top_k: int | None = None, explain: bool = False,
              cfg: RetrievalSettings | None = None, filters: QueryFilters | None = None,
              image: str | None = None, reader: frozenset[str] | None = None) -> QueryResult:
        """Ranked, cited chunks and a cited context for a query (``filters`` restrict the documents): its
        ``text``, or an ``image`` (a path) for a mode that answers queries by image (mode ``image``, with CLIP).
        ``reader``: the access groups of the one asking (None: it reads everything); the query runs over
        the documents it may read alone (``index.view``)."""
        if image is not None:
            return self._by_image(image, mode, top_k, cfg, reader)
        if not text or not text.strip():
            raise QueryError("the query text is empty")
        impl = REGISTRY.mode(mode)
        entry = REGISTRY.entries[mode]
        needs_vector = entry.needs_vector
        cfg = self._settings(cfg)
        k = top_k or cfg.top_k
        if k < 1:
            raise QueryError("top_k must be at least 1")
        if needs_vector:
            self.embedder.warm()  # the model loads while the index state opens
        t0 = time.perf_counter()
        whole = self.keeper.current()
        state = self._view(whole, mode, reader)
        snap = state.snapshot
        run = Run(text.strip(), np.zeros(0), k, cfg, state, explaining=explain,
                  vector_filter=None if state is whole else vector_filter(reader))
        log = Trace()
        log.stage("snapshot", t0)
        if needs_vector:
            t = time.perf_counter()
            if self.embedder.load():  # a cold model: the wait is counted apart (``model_load``)
                log.loaded(t)
            t = time.perf_counter()
            run.qvec = self.embedder.embed([run.text])[0]
            log.stage("embed", t)
        if filters is not None:  # widen the candidate pools, then keep the allowed documents only
            run.cfg = cfg.model_copy(update={"candidate_k": min(cfg.candidate_k * 4, 1000)})
        out = impl.run(run, self.res)
        log.merge(out)
        scores = out.scores
        if filters is not None:
            scores = {c: s for c, s in scores.items() if c in snap.chunk_index and filters.allows(
                snap.chunk_docs[snap.chunk_index[c]], snap.chunk_sources[snap.chunk_index[c]])}
        every = cfg.rerank or cfg.mmr_lambda is not None or cfg.confidence.enabled or entry.confidence
        order = ranked(scores) if every else top(scores, k)  # all of them only where a later step reads them
        if cfg.rerank and order:
            t = time.perf_counter()
            order = self._rerank(run, order)
            log.stage("rerank", t)
        if cfg.mmr_lambda is not None and len(order) > 1:
            t = time.perf_counter()
            pool = order[:max(k, cfg.mmr_pool)]
            order = mmr(pool, scores, self.res.vectors.vectors("chunks", pool), cfg.mmr_lambda, k) + order[len(pool):]
            log.stage("mmr", t)
        results = [self._result(snap, i + 1, scores.get(c, 0.0), c, out.seed_weights, out.chunk_fields.get(c, {}))
                   for i, c in enumerate(order[:k])]
        sureness = None
        if (cfg.confidence.enabled or entry.confidence) and results:
            ranked_scores = [scores.get(c, 0.0) for c in order]  # a confidence mode's: over all its answers
            top_m = len(ranked_scores) if entry.confidence else cfg.confidence.top_m
            results, sureness = self._confidence(run, log, ranked_scores[:top_m], results)
        if cfg.nli.enabled and len(results) > 1:
            t = time.perf_counter()
            self._group(run, log, results)
            log.stage("nli", t)
        context = build_context(results, out.entities[:12], out.relations[:8], out.communities[:3], cfg.token_budget,
                                out.context)
        log.timings["total"] = round((time.perf_counter() - t0) * 1000 - log.timings.get(MODEL_LOAD, 0.0), 2)
        if explain:
            log.explain["signals"] = {name: {c: round(v, 4) for c, v in sorted(
                normalize(sig).items(), key=lambda kv: -kv[1])[:k * 2]} for name, sig in log.signals.items()}
            log.explain["subgraph"] = query_subgraph(text, log.explain, results)
        return QueryResult(query=text, mode=mode, results=results, timings_ms=log.timings, notes=log.notes,
                           context=context, explain=log.explain if explain else {}, confidence=sureness,
                           extras=out.extras, **self._versions(state))

    @staticmethod
    def _view(state: IndexState, mode: str, reader: frozenset[str] | None) -> IndexState:
        """The state ``reader`` may query with ``mode``: ``state`` when it may read every chunk, else the
        state of the chunks it may read. A reader may use the modes that answer from that state alone
        (whether or not something is hidden from it: a refusal says nothing of what the collection holds)."""
        if reader is not None and not REGISTRY.entries[mode].views:
            allowed = ", ".join(REGISTRY.view_modes())
            raise ForbiddenError(f"mode {mode!r} answers from what several documents built together; with access "
                                 f"groups, use {allowed}")
        return view_of(state, reader)

    def _by_image(self, path: str, mode: str, top_k: int | None, cfg: RetrievalSettings | None,
                  reader: frozenset[str] | None = None) -> QueryResult:
        """A query by image: the answer of ``mode`` (one that answers by image) to the image's CLIP vector."""
        impl = REGISTRY.image_queries(mode)
        self._view(self.keeper.current(), mode, reader)
        clip = self.res.clip
        if clip is None:
            raise QueryError("image queries need CLIP: set clip.enabled with a model and checkpoint")
        got = clip.embed_images([path])
        if got.errors:
            raise QueryError(next(iter(got.errors.values())))
        cfg = self._settings(cfg)
        t0 = time.perf_counter()
        run = Run(f"[image {path}]", np.zeros(0), top_k or cfg.top_k, cfg, self.keeper.current())
        out = impl.run_image(run, self.res, got.vectors[0])
        log = Trace()
        log.merge(out)
        scores = out.scores
        results = [self._result(run.snap, i + 1, scores[c], c, out.seed_weights)
                   for i, c in enumerate(ranked(scores)[:run.k])]
        log.timings["total"] = round((time.perf_counter() - t0) * 1000, 2)
        return QueryResult(query=path, mode=mode, results=results, timings_ms=log.timings, notes=log.notes,
                           context=build_context(results, out.entities[:12], [], [], cfg.token_budget),
                           **self._versions(run.state))

    def _versions(self, state: IndexState) -> dict[str, int]:
        fresh = self.keeper.freshness()
        return {"index_version": state.version, "graph_version": max(fresh.graph_version, state.version)}

    def _result(self, snap: Snapshot, rank: int, score: float, cid: str, seed_weights: dict[int, float],
                fields: dict[str, Any] | None = None) -> RetrievedChunk:
        """The result for chunk ``cid``: its "via" entities are its entities among the mode's
        ``seed_weights``, and its fields those its mode gave it (``ModeOutput.chunk_fields``)."""
        j = snap.chunk_index[cid]
        via = sorted((e for e in snap.chunk_entities(j) if e in seed_weights), key=lambda e: -seed_weights[e])[:5]
        return RetrievedChunk(rank=rank, score=round(float(score), 6), text=snap.chunk_texts[j],
                              citation=Citation(document_id=snap.chunk_docs[j], chunk_id=cid,
                                                source=snap.chunk_sources[j]),
                              entities=[snap.entity_names[e] for e in via],
                              image=snap.chunk_uris[j] or None if snap.chunk_kinds[j] == "image" else None,
                              **(fields or {}))

    @staticmethod
    def _confidence(run: Run, log: Trace, top_scores: list[float], results: list[RetrievedChunk]
                    ) -> tuple[list[RetrievedChunk], float]:
        """Each result's probability under the entropy distribution of the top scores, and the
        query's confidence (1 - normalized entropy); the abstention and top-p cuts applied (``log``
        explains them)."""
        cfg = run.cfg.confidence
        probs = confidence.distribution(top_scores, cfg.temperature)
        spread = confidence.entropy(probs)
        for r, p in zip(results, probs, strict=False):
            r.confidence = round(float(p), 4)
        log.explain["confidence"] = {"entropy": round(spread, 4), "distribution": [
            {"chunk": r.citation.chunk_id, "p": r.confidence} for r in results if r.confidence is not None]}
        if cfg.max_entropy is not None and spread > cfg.max_entropy:
            log.notes.append(f"abstained: the top scores are too alike (entropy {spread:.2f} > "
                             f"confidence.max_entropy={cfg.max_entropy:g})")
            return [], round(1 - spread, 4)
        if cfg.top_p is not None:
            results = results[: confidence.top_p(probs, cfg.top_p)]
        return results, round(1 - spread, 4)

    def _group(self, run: Run, log: Trace, results: list[RetrievedChunk]) -> None:
        """NLI clusters of the top results (``retrieval.nli``): each member gets its cluster's rank."""
        cfg = run.cfg.nli
        top = results[: cfg.top_m]
        pe, pc = self.res.nli(cfg).probabilities([r.text for r in top])
        found = cluster([r.score for r in top], pe, pc, cfg)
        for rank, c in enumerate(found):
            for i in c.members:
                top[i].cluster = rank
        log.explain["nli"] = {"strategy": cfg.strategy, "clusters": [
            {"chunks": [top[i].citation.chunk_id for i in c.members], "score": round(c.score, 4),
             "cohesion": round(c.cohesion, 4)} for c in found]}

    def _rerank(self, run: Run, order: list[str]) -> list[str]:
        reranker = self.res.reranker(run.cfg.reranker)
        head = order[: run.cfg.rerank_k]
        texts = [run.snap.chunk_texts[run.snap.chunk_index[c]] for c in head]
        rerank = normalize(dict(zip(head, reranker.score(run.text, texts), strict=True)))
        # blend with the fused order so a reranker never discards the graph's evidence outright
        mixed = {c: 0.5 * (1.0 - i / len(head)) + 0.5 * rerank[c] for i, c in enumerate(head)}
        return ranked(mixed) + order[run.cfg.rerank_k :]
