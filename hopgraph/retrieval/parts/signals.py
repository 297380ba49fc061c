"""The parts retrieval modes are built from; each returns ``{chunk_id: score}`` or entity weights.

``dense_of``, ``bm25_of`` and ``seeds_of`` are the signals several modes share, computed for one query's
``Run`` (timed as a stage of the mode's ``Trace`` and, for chunk scores, kept in its signals for ``--explain``)."""

from __future__ import annotations

import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from hopgraph.core.records import CO_OCCURS, CONCEPT, IDENTIFIER
from hopgraph.core.text import WORD, ngrams, normalize_name, with_handles_split
from hopgraph.core.weights import corpus_share_damping, seed_specificity
from hopgraph.retrieval.index.links import titles_in
from hopgraph.retrieval.parts.keyword import KeywordIndex
from hopgraph.retrieval.parts.ppr import JointWalk, pagerank
from hopgraph.retrieval.snapshot import Snapshot
from hopgraph.vectors.store import Filter, VectorStore

_BLOCK = 16_384  # entity rows widened to float32 at a time (numpy has no fast float16 product)

if TYPE_CHECKING:
    from hopgraph.gpu.ppr import TorchPPR
    from hopgraph.retrieval.resources import Resources
    from hopgraph.retrieval.run import Run
    from hopgraph.retrieval.trace import Trace

#: the origin of a seed the query names (``Seeds.origin``)
NAMED = "named in query"


@dataclass
class Seeds:
    """Entity weights (index -> weight) and where each came from, for --explain."""

    weights: dict[int, float] = field(default_factory=dict)
    origin: dict[int, str] = field(default_factory=dict)

    def add(self, i: int, w: float, why: str) -> None:
        if w > self.weights.get(i, 0.0):
            self.weights[i] = w
            self.origin[i] = why


def dense(vectors: VectorStore, qvec: np.ndarray, k: int, where: Filter | None = None) -> dict[str, float]:
    """Chunk vectors nearest to the query (among those ``where`` keeps, filtered inside the engine)."""
    return {h.id: h.score for h in vectors.search("chunks", qvec, limit=k, where=where)}


def keyword(snap: Snapshot, index: KeywordIndex, query: str, k: int) -> dict[str, float]:
    """BM25 over chunk texts."""
    idx, scores = index.search(query, k)
    return {snap.chunk_ids[int(i)]: float(s) for i, s in zip(idx, scores, strict=True)}


def dense_of(run: Run, res: Resources, trace: Trace) -> dict[str, float]:
    """The query's dense signal: chunk vectors nearest to it (the snapshot's chunks only)."""
    t = time.perf_counter()
    out = run.keep_known(dense(res.vectors, run.qvec, max(run.k, run.cfg.candidate_k), run.vector_filter))
    trace.stage("dense", t)
    return trace.signal("dense", out)


def bm25_of(run: Run, res: Resources, trace: Trace) -> dict[str, float]:
    """The query's BM25 signal over chunk texts."""
    t = time.perf_counter()
    out = keyword(run.snap, res.keyword(run.state), run.text, max(run.k, run.cfg.candidate_k))
    trace.stage("bm25", t)
    return trace.signal("bm25", out)


def seeds_of(run: Run, trace: Trace) -> tuple[Seeds, np.ndarray]:
    """Entities named in or similar to the query, and the query's cosine with every entity."""
    t = time.perf_counter()
    sims = entity_similarity(run.snap, run.qvec)
    seeds = seed_entities(run.snap, run.text, sims, run.cfg.entity_k, run.cfg.min_entity_score, run.cfg.cased_names)
    trace.stage("seeds", t)
    return seeds, sims


def explain_seeds(snap: Snapshot, seeds: Seeds, trace: Trace) -> list[str]:
    """``--explain``'s seed list (the strongest seeds, kept in ``trace``); returns the context's lines for them."""
    top = sorted(seeds.weights.items(), key=lambda kv: -kv[1])[:15]
    trace.explain["seeds"] = [{"entity": snap.entity_names[e], "weight": round(w, 4), "why": seeds.origin[e]}
                              for e, w in top]
    return [f"{snap.entity_names[e]} ({snap.entity_types[e]})" for e, _ in top]


def entity_similarity(snap: Snapshot, qvec: np.ndarray) -> np.ndarray:
    """Cosine of the query with every entity name (in memory), as float32. Where torch is loaded (a
    server, an evaluation) the product of float32 or float16 vectors is torch's, faster than numpy's
    matrix-vector product on the CPU (float16 in half precision); a process without it (a cold ``hopgraph
    query``) uses numpy, widening float16 vectors block by block, rather than import torch."""
    if snap.n_entities == 0:
        return np.zeros(0)
    vectors = snap.entity_vectors
    half = vectors.dtype == np.float16
    if "torch" not in sys.modules or vectors.dtype not in (np.float16, np.float32):
        return widened_product(vectors, qvec) if half else vectors @ np.asarray(qvec, dtype=np.float32)
    import torch

    with warnings.catch_warnings():  # a memory-mapped state is read-only, and torch only reads it
        warnings.simplefilter("ignore", UserWarning)
        rows = torch.from_numpy(np.asarray(vectors))
    q = torch.from_numpy(np.asarray(qvec, dtype=np.float16 if half else np.float32))
    return (rows @ q).float().numpy()


def load_torch_for(snap: Snapshot) -> None:
    """Import torch where ``snap``'s entity vectors are float16 (``index.tables.vector_dtype``), so that a
    long-lived process without the embedding model (the MCP server) takes torch's half product in
    ``entity_similarity``, many times faster than numpy's widening; a one-shot process (a cold ``hopgraph
    query``) keeps numpy rather than pay the import."""
    if snap.n_entities and snap.entity_vectors.dtype == np.float16:
        import torch  # noqa: F401


def widened_product(vectors: np.ndarray, qvec: np.ndarray) -> np.ndarray:
    """``vectors @ qvec`` in float32 for float16 ``vectors``, widened ``_BLOCK`` rows at a time."""
    q32 = np.asarray(qvec, dtype=np.float32)
    return np.concatenate([np.asarray(vectors[i:i + _BLOCK], dtype=np.float32) @ q32
                           for i in range(0, len(vectors), _BLOCK)] or [np.zeros(0, dtype=np.float32)])


def seed_entities(snap: Snapshot, query: str, sims: np.ndarray, k: int, min_sim: float, cased: bool = True) -> Seeds:
    """Entities named in the query (n-gram match on normalized names; with ``cased``, no single word the
    query writes in lower case, see ``common_words``) and the nearest entity vectors."""
    seeds = Seeds()
    words = WORD.findall(with_handles_split(query))  # "LiHua" also names Li Hua
    plain = common_words(words) if cased else set()
    for n, gram in ngrams(words, 5):
        for e in snap.name_index.get(gram, []):
            kind = snap.entity_types[e]
            if n > 1 or kind == IDENTIFIER or (kind != CONCEPT and gram not in plain):
                seeds.add(e, 1.0, NAMED)
    if sims.size:
        top = np.argpartition(-sims, k - 1)[:k] if k < sims.size else np.arange(sims.size)
        for e in top[np.lexsort((top, -sims[top]))]:
            if sims[e] >= min_sim:
                seeds.add(int(e), float(sims[e]), "similar to query")
    return seeds


def common_words(words: list[str]) -> set[str]:
    """The words a query writes in lower case only, where it capitalises some names (a query all in
    lower case names any): "service" or "record" there is a common noun, whatever type an entity of
    that name got elsewhere, and never a name the query gives."""
    if not any(w[:1].isupper() for w in words[1:]):
        return set()
    cased = {normalize_name(w) for w in words if not w.islower()}
    return {key for key in (normalize_name(w) for w in words if w.islower()) if key not in cased}


def drop_generic(snap: Snapshot, seeds: Seeds) -> list[str]:
    """Remove the corpus's generic concepts from the seeds ("film", "year", "country": concepts that
    more chunks mention than ``Snapshot.entity_hub_limit``, a stop list the corpus itself gives);
    returns the names removed."""
    gone = [e for e in seeds.weights if e < len(snap.generic) and snap.generic[e]]
    for e in gone:
        del seeds.weights[e]
        del seeds.origin[e]
    return [snap.entity_names[e] for e in gone]


def titles_in_query(snap: Snapshot, query: str) -> list[int]:
    """Chunks of the documents whose title the query names ("Who is older, Sid Haig or ..."). A query
    that uses capitals names a capitalized title only with a capital ("the place of birth of" is not
    the page "Place of birth"); an all-lower-case query names any."""
    keys = titles_in(snap.title_automaton, query, case=query != query.lower())
    return list(dict.fromkeys(j for key in keys for j in snap.title_index[key]))


def enrich(snap: Snapshot, seeds: Seeds, first_pass: list[str], sims: np.ndarray, per_chunk: int,
           weight: float) -> None:
    """Query enrichment: entities of the first cheap retrieval's top chunks, weighted by their
    similarity to the query, join the seeds (the plan's "related entities enrich the query")."""
    for cid in first_pass:
        j = snap.chunk_index.get(cid)
        if j is None:
            continue
        ents = sorted(snap.chunk_entities(j), key=lambda e: -sims[e] if sims.size else 0)[:per_chunk]
        for e in ents:
            s = float(sims[e]) if sims.size else 0.5
            if s > 0:
                seeds.add(int(e), weight * s, f"enrichment from {cid}")


def specificity(snap: Snapshot, e: int) -> float:
    """The damping of a seed entity's weight: ``seed_specificity`` of its chunk count, times the share of
    the corpus that does not mention it (``corpus_share_damping``)."""
    df = snap.entity_df[e]
    return float(seed_specificity(df) * corpus_share_damping(df, snap.n_chunks))


def ppr_scores(snap: Snapshot, walk: JointWalk, seeds: Seeds, chunk_seeds: dict[str, float],
               passage_weight: float, damping: float, engine: TorchPPR | None = None, solver: str = "auto"
               ) -> tuple[dict[str, float], np.ndarray]:
    """HippoRAG-style PPR from entity seeds (times specificity) and chunk seeds: chunk scores = mass,
    and the entities' mass (the expansion candidates of the pcst and gnn modes). ``engine`` runs it
    in torch (gpu/) instead of scipy; ``solver`` picks the scipy one (``retrieval.parts.ppr.pagerank``)."""
    n_e = snap.n_entities
    p = np.zeros(n_e + snap.n_chunks)
    for e, w in seeds.weights.items():
        p[e] = w * specificity(snap, e)
    if chunk_seeds:
        top = max(chunk_seeds.values())
        for cid, s in chunk_seeds.items():
            j = snap.chunk_index.get(cid)
            if j is not None:
                p[n_e + j] = passage_weight * s / max(top, 1e-9)
    if engine is not None:
        x = engine.run(p.astype(np.float32), damping=damping).cpu().numpy().astype(np.float64)
    else:
        x = pagerank(walk, p, damping=damping, solver=solver)
    mass = x[n_e:]
    nz = np.nonzero(mass)[0]
    return dict(zip([snap.chunk_ids[j] for j in nz.tolist()], mass[nz].tolist(), strict=True)), x[:n_e]


def direct_scores(snap: Snapshot, weights: dict[int, float]) -> dict[str, float]:
    """0 hops: chunks scored by the seed entities they mention (incidence x weights)."""
    if not weights:
        return {}
    w = np.zeros(snap.n_entities)
    for e, v in weights.items():
        w[e] = v
    s = snap.incidence @ w
    return {snap.chunk_ids[j]: float(s[j]) for j in np.nonzero(s)[0]}


def specific_scores(snap: Snapshot, weights: dict[int, float]) -> dict[str, float]:
    """Chunk scores of entity weights, each weight scaled by the entity's specificity first."""
    return direct_scores(snap, {e: w * specificity(snap, e) for e, w in weights.items()})


@dataclass
class BeamResult:
    scores: dict[int, float]
    paths: list[list[int]]
    truncated: bool


def beam_expand(snap: Snapshot, seeds: dict[int, float], hops: int, beam: int, decay: float,
                type_weights: dict[str, float], deadline: float) -> BeamResult:
    """Beam search over entity relations: each hop keeps the ``beam`` best frontier entities, scores
    decay per hop and are scaled per edge type; stops at the deadline with what it found."""
    scores = dict(seeds)
    frontier = sorted(seeds.items(), key=lambda kv: -kv[1])[:beam]
    paths: dict[int, list[int]] = {e: [e] for e in seeds}
    adj = snap.adjacency
    truncated = False
    for _ in range(hops):
        cand: dict[int, float] = {}
        for e, s in frontier:
            if time.perf_counter() > deadline:
                truncated = True
                break
            row = slice(adj.indptr[e], adj.indptr[e + 1])
            nbrs, ws = adj.indices[row], adj.data[row]
            if not len(nbrs):
                continue
            wmax = float(ws.max())
            for n, w in zip(nbrs, ws, strict=True):
                t = snap.edge_types.get((e, int(n))) or snap.edge_types.get((int(n), e)) or CO_OCCURS
                v = s * decay * float(w) / wmax * type_weights.get(t, type_weights.get("*", 1.0))
                if v > cand.get(int(n), 0.0) and v > scores.get(int(n), 0.0):
                    cand[int(n)] = v
                    paths[int(n)] = [*paths.get(e, [e]), int(n)]
        if truncated or not cand:
            break
        frontier = sorted(cand.items(), key=lambda kv: -kv[1])[:beam]
        for n, v in frontier:
            scores[n] = max(scores.get(n, 0.0), v)
    long_paths = sorted((p for p in paths.values() if len(p) > 1), key=lambda p: -scores.get(p[-1], 0.0))[:10]
    return BeamResult(scores, long_paths, truncated)
