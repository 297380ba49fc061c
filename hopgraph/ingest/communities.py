"""Hierarchical communities of the entity graph (graspologic's Leiden), with extractive summaries.

Clustering runs graspologic's native hierarchical Leiden (``graspologic_native``, the engine behind
``graspologic.partition.hierarchical_leiden``, called directly to skip the slow import of the
Python wrapper's scientific stack) over the weighted entity graph: typed relations count
``typed_weight`` per supporting chunk, co-occurrences 1.

After an ingest, ``CommunityBuilder.update`` re-clusters only around the entities whose
neighbourhood changed (``ingest.community_update``): the cost follows the change, and every other
community keeps its id. A full re-clustering (``rebuild``; ``hopgraph communities --rebuild``) is
warm-started from the previous level-0 assignment (seeded), so it too keeps most communities;
community ids are hashes of their member sets, and only communities whose membership changed are
described, written and re-embedded, vanished ones deleted. The price: communities depend on the
ingest history, not only on the final graph (``warm_start = false`` and ``incremental = false``
make them a pure function of the graph).
"""

from __future__ import annotations

import logging
import re
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from hopgraph.core.records import CO_OCCURS, Community
from hopgraph.core.settings import CommunitySettings
from hopgraph.graphdb.community_protocol import CommunityGraph
from hopgraph.graphdb.records import RelationRef, Topology
from hopgraph.ingest.community_plan import CommunityReport, community_id
from hopgraph.ingest.community_update import IncrementalUpdate
from hopgraph.ingest.community_vectors import composed
from hopgraph.ingest.llm_reports import LlmReporter
from hopgraph.vectors.embedders import Embedder
from hopgraph.vectors.store import VectorPoint, VectorStore

log = logging.getLogger(__name__)
_TYPE_TAG = re.compile(r" \([A-Z_]+\)")


def embed_text(c: Community, max_chars: int) -> str:
    """What a community vector encodes: its title and the start of its summary without the entity
    type tags (the title repeats the first key entities; tags cost tokens and say little)."""
    return f"{c.title}. {_TYPE_TAG.sub('', c.summary)[:max_chars]}"


class CommunityBuilder:
    """Computes communities from the graph's topology and writes the difference."""

    def __init__(self, graph: CommunityGraph, vectors: VectorStore, embedder: Embedder, cfg: CommunitySettings,
                 reporter: LlmReporter | None = None, max_concurrency: int = 4) -> None:
        self.reporter = reporter
        self.max_concurrency = max_concurrency
        self.graph = graph
        self.vectors = vectors
        self.embedder = embedder
        self.cfg = cfg

    def weighted_edges(self, topo: Topology) -> list[tuple[str, str, float]]:
        weights: dict[tuple[str, str], float] = defaultdict(float)
        for s, t, typ, w in zip(topo.sources, topo.targets, topo.edge_types, topo.weights, strict=True):
            if s == t:
                continue
            a, b = sorted((topo.entity_ids[s], topo.entity_ids[t]))
            weights[(a, b)] += w * (1.0 if typ == CO_OCCURS else self.cfg.typed_weight)
        return [(a, b, w) for (a, b), w in sorted(weights.items())]

    def leiden(self, gn: Any, edges: list[tuple[str, str, float]], start: dict[str, int] | None) -> list[Any]:
        def run(starting: dict[str, int] | None) -> list[Any]:
            return list(gn.hierarchical_leiden(
                edges=edges, starting_communities=starting, resolution=self.cfg.resolution, randomness=0.001,
                iterations=1, use_modularity=True, max_cluster_size=self.cfg.max_cluster_size, seed=self.cfg.seed))

        if start is None:
            return run(None)
        try:
            return run(start)
        except BaseException as exc:  # graspologic-native panics (index out of bounds) on some warm starts
            if type(exc).__name__ != "PanicException":
                raise
            log.warning("warm-started Leiden failed (%s); clustering from scratch", str(exc).splitlines()[0])
            return run(None)

    def cluster(self, topo: Topology) -> list[Community]:
        """Communities at every level (0 = coarsest), with parents and members."""
        import graspologic_native as gn

        edges = self.weighted_edges(topo)
        if not edges:
            return []
        nodes = {n for a, b, _ in edges for n in (a, b)}
        start: dict[str, int] | None = None
        previous = self.graph.level0_membership() if self.cfg.warm_start else {}
        if previous:
            # labels must be dense over the nodes clustered now (graspologic indexes by label), so
            # only communities that still have a node here get one; new nodes get their own
            kept = sorted({previous[n] for n in nodes if n in previous})
            labels = {c: i for i, c in enumerate(kept)}
            nxt = len(labels)
            start = {}
            for n in sorted(nodes):
                if n in previous:
                    start[n] = labels[previous[n]]
                else:
                    start[n] = nxt
                    nxt += 1
        clusters = self.leiden(gn, edges, start)
        members: dict[tuple[int, str], set[str]] = defaultdict(set)
        parent: dict[tuple[int, str], tuple[int, str] | None] = {}
        for hc in clusters:
            key = (int(hc.level), str(hc.cluster))
            members[key].add(str(hc.node))
            parent[key] = (int(hc.level) - 1, str(hc.parent_cluster)) if hc.parent_cluster is not None else None
        # a parent holds its children's members too
        for key in sorted(members, key=lambda k: -k[0]):
            p = parent.get(key)
            if p is not None:
                members[p] |= members[key]
        ids = {key: community_id(key[0], sorted(m)) for key, m in members.items()}
        out = []
        for key, m in members.items():
            if len(m) < self.cfg.min_size:
                continue
            p = parent.get(key)
            out.append(Community(id=ids[key], level=key[0], size=len(m), member_ids=sorted(m),
                                 parent_id=ids[p] if p is not None and p in ids else None))
        return out

    def describe(self, topo: Topology, communities: list[Community]) -> None:
        """Title (top entities by in-community degree) and an extractive summary (key entities, key
        relations with the sentence that supports the strongest ones)."""
        index = {e: i for i, e in enumerate(topo.entity_ids)}
        by_node: dict[int, list[int]] = defaultdict(list)
        for k, (s, t) in enumerate(zip(topo.sources, topo.targets, strict=True)):
            by_node[s].append(k)
            by_node[t].append(k)
        wanted: dict[str, RelationRef] = {}
        tops: dict[str, list[int]] = {}
        for c in communities:
            inside = {index[m] for m in c.member_ids if m in index}
            edges = {k for n in inside for k in by_node[n] if topo.sources[k] in inside and topo.targets[k] in inside}
            degree: Counter[int] = Counter()
            for k in edges:
                degree[topo.sources[k]] += 1
                degree[topo.targets[k]] += 1
            key_nodes = [n for n, _ in degree.most_common(8)] or sorted(inside)[:8]
            c.key_ids = [topo.entity_ids[n] for n in key_nodes]
            c.title = ", ".join(topo.names[n] for n in key_nodes[:3])
            typed = sorted((k for k in edges if topo.edge_types[k] != CO_OCCURS),
                           key=lambda k: (-topo.weights[k], topo.edge_ids[k]))[: self.cfg.summary_relations]
            tops[c.id] = typed
            for k in typed if self.reporter else typed[:2]:  # the LLM report reads every key relation
                ref = RelationRef(topo.edge_ids[k], topo.entity_ids[topo.sources[k]], topo.entity_ids[topo.targets[k]])
                wanted[ref.id] = ref
            c.summary = "Key entities: " + ", ".join(f"{topo.names[n]} ({topo.types[n]})" for n in key_nodes) + "."
        descriptions = self.graph.relation_descriptions(list(wanted.values())) if wanted else {}
        for c in communities:
            rels = list(dict.fromkeys(f"{topo.names[topo.sources[k]]} {topo.shown(k)} {topo.names[topo.targets[k]]}"
                                      for k in tops[c.id]))
            if rels:
                c.summary += " Key relations: " + "; ".join(rels) + "."
            quoted, quotes = [], []  # two relations stated by one sentence: that sentence once
            for k in tops[c.id][:2]:
                said = descriptions.get(topo.edge_ids[k])
                if said and said not in quotes:
                    quoted.append(k)
                    quotes.append(said)
            c.quoted = [f"{topo.edge_ids[k]} {topo.entity_ids[topo.sources[k]]} {topo.entity_ids[topo.targets[k]]}"
                        for k in quoted]
            if quotes:
                c.summary += " " + " ".join(f'"{q}"' for q in quotes)
        if self.reporter is not None:
            contexts = {c.id: ([f"{topo.names[index[m]]} ({topo.types[index[m]]})" for m in c.member_ids[:30]
                                if m in index],
                               [f"{topo.names[topo.sources[k]]}, {topo.shown(k)}, "
                                f"{topo.names[topo.targets[k]]}: {descriptions.get(topo.edge_ids[k], '')}"
                                for k in tops[c.id]]) for c in communities}
            self.reporter.describe(communities, contexts, self.max_concurrency)

    def _vector_ids(self) -> set[str]:
        ids: set[str] = set()
        offset = None
        while True:
            page, offset = self.vectors.scroll("communities", limit=1000, offset=offset)
            ids.update(h.id for h in page)
            if offset is None:
                return ids

    def embed(self, communities: Sequence[Community]) -> None:
        """Write the vectors of these (described) communities, as ``cfg.vectors`` says
        (``ingest.community_vectors``)."""
        if not communities:
            return
        if self.cfg.vectors == "text":
            vecs = self.embedder.embed([embed_text(c, self.cfg.embed_chars) for c in communities])
        else:
            vecs, missing = composed(communities, self.vectors.vectors, self.embedder.dim)
            if missing:
                vecs[missing] = self.embedder.embed([embed_text(communities[k], self.cfg.embed_chars) for k in missing])
        self.vectors.upsert("communities", [
            VectorPoint(c.id, v, {"level": c.level, "title": c.title, "size": c.size})
            for c, v in zip(communities, vecs, strict=True)])

    def update(self, rebuild: bool = False) -> CommunityReport:
        """Bring the communities up to date with the graph: re-cluster only around the entities whose
        neighbourhood changed (``ingest.community_update``), or everything when ``rebuild`` is asked
        for, when there are no communities yet, or when more than ``incremental_max_fraction`` of
        the entities changed. Clears the change marks it consumed."""
        dirty = self.graph.unclustered_entities()
        total = self.graph.counts().get("Entity", 0)
        full = (rebuild or not self.cfg.incremental or not self.graph.community_ids()
                or len(dirty) > self.cfg.incremental_max_fraction * max(total, 1))
        if full:
            report = self.rebuild()
            self.graph.mark_clustered(None)
        else:
            report = IncrementalUpdate(self, dirty).run()
            self.graph.mark_clustered(dirty)
            levels = self.graph.community_ids()
            report.communities, report.levels = len(levels), len(set(levels.values()))
        return report

    def rebuild(self) -> CommunityReport:
        """Recompute all communities and write only what changed."""
        t0 = time.perf_counter()
        laps: dict[str, float] = {}
        last = t0

        def lap(name: str) -> None:
            nonlocal last
            now = time.perf_counter()
            laps[name], last = now - last, now

        topo = self.graph.topology()
        lap("topology")
        communities = self.cluster(topo)
        lap("leiden")
        existing = self.graph.community_ids()
        # unchanged communities whose members lost chunks: their summaries may quote removed text
        stale_summaries = self.graph.stale_summaries()
        new = [c for c in communities if c.id not in existing or c.id in stale_summaries]
        keep = {c.id for c in communities}
        stale = sorted(set(existing) - keep)
        # a document deletion may already have removed emptied communities from the graph
        stale_vectors = sorted(self._vector_ids() - keep)
        if new:
            self.describe(topo, new)
            lap("describe")
            # parents of new communities may be unchanged ones: the PARENT link needs both ends
            self.graph.upsert_communities(new)
            lap("write")
            self.embed(new)
            lap("embed")
        if stale_vectors:
            self.vectors.delete("communities", stale_vectors)
        if stale:
            self.graph.delete_communities(stale)
        report = CommunityReport(communities=len(communities), levels=len({c.level for c in communities}),
                                 written=len(new), deleted=len(stale), unchanged=len(communities) - len(new),
                                 seconds=time.perf_counter() - t0)
        lap("cleanup")
        log.info("communities: %d in %d level(s); %d written, %d deleted, %d unchanged (%.1fs: %s)",
                 report.communities, report.levels, report.written, report.deleted, report.unchanged,
                 report.seconds, ", ".join(f"{k} {v:.1f}s" for k, v in laps.items()))
        return report
