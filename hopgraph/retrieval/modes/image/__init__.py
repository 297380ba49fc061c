"""Mode ``image`` (text -> images) and image queries (image -> images, needs CLIP): a visual score
(the captions embedded together, the best-matching single caption, CLIP) fused with a score from the
entity graph (see ``retrieval.modes.image.expansion``; settings ``retrieval.modes.image``)."""

from __future__ import annotations

import time

import numpy as np

from hopgraph.core.settings import ImageRetrievalSettings
from hopgraph.retrieval.index.state import IndexState
from hopgraph.retrieval.modes.image import expansion as image
from hopgraph.retrieval.modes.image.expansion import EntityEdges, expand, similarity_matrix, top_k_rows
from hopgraph.retrieval.parts import signals
from hopgraph.retrieval.parts.fusion import ranked
from hopgraph.retrieval.registry import ModeOutput
from hopgraph.retrieval.resources import Resources
from hopgraph.retrieval.run import Run
from hopgraph.retrieval.trace import Trace

__all__ = ["EntityEdges", "ImageMode", "expand", "similarity_matrix", "top_k_rows"]

#: caption hits searched per candidate image (Flickr-style images have about five captions)
CAPTIONS_PER_IMAGE = 4


def image_index(state: IndexState) -> image.ImageIndex:
    """The image chunks of the state (kept with the state)."""
    return state.memo("images", lambda: image.ImageIndex.of(state.snapshot))


def image_edges(state: IndexState, cfg: ImageRetrievalSettings) -> image.EntityEdges:
    """The expansion edges between entities, per state and edge settings (kept with the state)."""
    return state.memo(("image-edges", cfg.similar_k, cfg.similar_min, cfg.cooccur_k),
                      lambda: image.entity_edges(state.snapshot, cfg))


def clip_scores(res: Resources, index: image.ImageIndex, vector: np.ndarray, k: int) -> dict[str, float]:
    """Image chunks by CLIP similarity of their image to ``vector``."""
    hits = res.vectors.search("images", vector, limit=k)
    return {index.chunk_of[str(h.payload.get("document_id"))]: h.score for h in hits
            if str(h.payload.get("document_id")) in index.chunk_of}


def best_captions(res: Resources, index: image.ImageIndex, qvec: np.ndarray, limit: int) -> dict[str, float]:
    """Image chunks by the similarity of their best-matching caption to the query (one vector per
    caption: a query that paraphrases one caption need not match the image's captions together)."""
    out: dict[str, float] = {}
    for h in res.vectors.search("captions", qvec, limit=limit):
        chunk = index.chunk_of.get(str(h.payload.get("document_id")))
        if chunk is not None and h.score > out.get(chunk, -1.0):
            out[chunk] = h.score
    return out


def fuse_with_kg(run: Run, res: Resources, index: image.ImageIndex, visual: dict[str, dict[str, float]],
                 first: list[str], seeds_from_query: bool, trace: Trace) -> ModeOutput:
    """The KG score of the candidate images (seeds expanded one hop), fused with the visual scores; the
    seeds are the context's entities, and the entities that contributed a score the "via" entities."""
    cfg, snap, icfg = run.cfg, run.snap, run.cfg.modes.image
    t = time.perf_counter()
    if seeds_from_query:
        seeds, sims = signals.seeds_of(run, trace)
    else:  # an image query has no words: the nearest images' entities are the seeds
        seeds, sims = signals.Seeds(), np.zeros(0)
    if icfg.enrich_images:
        signals.enrich(snap, seeds, first[: icfg.enrich_images], sims, icfg.enrich_entities_per_chunk,
                       icfg.enrich_weight)
    lines = signals.explain_seeds(snap, seeds, trace)
    scores = image.expand(seeds.weights, image_edges(run.state, icfg), snap.n_entities, icfg.expand_weight)
    contributing = {int(e): float(scores[e]) for e in np.flatnonzero(scores)}
    trace.explain["entity_stats"] = [
        {"entity": snap.entity_names[e], "score": round(float(scores[e]), 4), "df": int(snap.entity_df[e]),
         "cf": int(snap.entity_cf[e])} for e in np.argsort(-scores)[:10] if scores[e] > 0]
    per_row = image.kg_scores(snap, scores, index.rows)
    top = np.argsort(-per_row)[: icfg.candidate_k]
    kg = {snap.chunk_ids[int(index.rows[i])]: float(per_row[i]) for i in top if per_row[i] > 0}
    weights = {"caption": 1.0, "best_caption": icfg.best_caption_weight, "clip": icfg.clip_weight,
               "kg": icfg.kg_weight}
    if trace.over_cap(cfg.stage_cap_ms, "kg", t, "caption similarity"):
        return trace.output(image.fuse(visual, weights, icfg.fusion, cfg.rrf_k), entities=lines,
                            seed_weights=contributing)
    trace.signal("kg", kg)
    return trace.output(image.fuse({**visual, "kg": kg}, weights, icfg.fusion, cfg.rrf_k), entities=lines,
                        seed_weights=contributing)


class ImageMode:
    """Text -> images: caption similarity (and CLIP text -> image similarity when configured) fused
    with the entity-graph score."""

    def run(self, run: Run, res: Resources) -> ModeOutput:
        snap, icfg = run.snap, run.cfg.modes.image
        index = image_index(run.state)
        trace = Trace()
        if not index.rows.size:
            trace.notes.append("no image documents in the graph")
            return trace.output({})
        t = time.perf_counter()
        hits = signals.dense(res.vectors, run.qvec, max(run.k, icfg.candidate_k) * 2)
        visual = {"caption": {c: s for c, s in hits.items() if c in snap.chunk_index
                              and snap.chunk_kinds[snap.chunk_index[c]] == "image"}}
        if icfg.best_caption_weight > 0:
            visual["best_caption"] = best_captions(res, index, run.qvec, icfg.candidate_k * CAPTIONS_PER_IMAGE)
        if res.clip is not None:
            visual["clip"] = clip_scores(res, index, res.clip.embed_texts([run.text])[0], icfg.candidate_k)
        trace.stage("caption", t)
        trace.signals.update(visual)
        first = ranked(visual.get("clip") or visual["caption"])
        return fuse_with_kg(run, res, index, visual, first, True, trace)

    def run_image(self, run: Run, res: Resources, vector: np.ndarray) -> ModeOutput:
        """Image -> images (an image's CLIP ``vector``): CLIP image similarity fused with the KG score of
        the entities of the nearest images."""
        index = image_index(run.state)
        visual = {"clip": clip_scores(res, index, vector, run.cfg.modes.image.candidate_k)}
        trace = Trace(signals=dict(visual))
        return fuse_with_kg(run, res, index, visual, ranked(visual["clip"]), False, trace)
