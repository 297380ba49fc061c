"""Incremental community update: re-cluster around the entities whose neighbourhood changed.

Reads only the chains of the changed entities, the members of the leaves they dissolve and the
edges among them; re-clusters that region (Leiden, warm-started from the old leaves); writes the
new leaves and the membership edits of their ancestors (see ``ingest.community_plan``). Ancestors
keep their ids; one is re-described only when its summary may quote removed text, a key entity
it names left it, or a large share of its members changed. Only new or re-described communities
are embedded.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any, Protocol

from hopgraph.core.records import Community
from hopgraph.core.settings import CommunitySettings
from hopgraph.graphdb.community_protocol import CommunityGraph
from hopgraph.graphdb.records import EdgeRow, RelationRef, Topology
from hopgraph.ingest.community_plan import CommunityReport, Placement, Region, leaves_of, place, region_of
from hopgraph.vectors.store import VectorStore

log = logging.getLogger(__name__)


class Builder(Protocol):
    """What an update uses of ``ingest.communities.CommunityBuilder``, which runs it: the stores, the
    settings, and the steps a full build runs too (edge weights, Leiden, descriptions, vectors)."""

    graph: CommunityGraph
    vectors: VectorStore
    cfg: CommunitySettings

    def weighted_edges(self, topo: Topology) -> list[tuple[str, str, float]]: ...

    def leiden(self, gn: Any, edges: list[tuple[str, str, float]], start: dict[str, int] | None) -> list[Any]: ...

    def describe(self, topo: Topology, communities: list[Community]) -> None: ...

    def embed(self, communities: Sequence[Community]) -> None: ...


def topology_of(entities: Sequence[tuple[str, str, str]], edges: Sequence[EdgeRow]) -> Topology:
    """A Topology over some entities ((id, name, type) rows) and the edges among them."""
    ids = sorted({e[0] for e in entities})
    rows = {e[0]: e for e in entities}
    index = {e: i for i, e in enumerate(ids)}
    inside = [e for e in edges if e.source in index and e.target in index]
    return Topology(version=0, entity_ids=ids, names=[rows[i][1] for i in ids], types=[rows[i][2] for i in ids],
                    sources=[index[e.source] for e in inside], targets=[index[e.target] for e in inside],
                    edge_ids=[e.id for e in inside], edge_types=[e.type for e in inside],
                    weights=[e.weight for e in inside],
                    edge_labels=[e.label or e.type.replace("_", " ") for e in inside])


class IncrementalUpdate:
    """One incremental update of the communities, around ``dirty`` entities."""

    def __init__(self, builder: Builder, dirty: Sequence[str]) -> None:
        self.b = builder
        self.graph = builder.graph
        self.cfg = builder.cfg
        self.dirty = list(dirty)

    def region(self) -> Region:
        links = self.graph.community_chains(self.dirty)
        members = self.graph.community_members(sorted(leaves_of(self.dirty, links)))
        return region_of(self.dirty, links, members)

    def cluster(self, region: Region, topo: Topology) -> list[list[str]]:
        """The region's finest Leiden clusters, warm-started from the leaves it dissolved."""
        import graspologic_native as gn

        edges = self.b.weighted_edges(topo)
        if not edges:
            return []
        nodes = sorted({n for a, b, _ in edges for n in (a, b)})
        labels: dict[str, int] = {}
        start = {n: labels.setdefault(region.start.get(n, n), len(labels)) for n in nodes}
        deepest: dict[str, tuple[int, str]] = {}
        for hc in self.b.leiden(gn, edges, start):
            key = (int(hc.level), str(hc.cluster))
            if str(hc.node) not in deepest or key[0] > deepest[str(hc.node)][0]:
                deepest[str(hc.node)] = key
        groups: dict[tuple[int, str], list[str]] = {}
        for node, key in deepest.items():
            groups.setdefault(key, []).append(node)
        return [sorted(m) for _, m in sorted(groups.items())]

    def redescribe(self, plan: Placement, texts: list[Community], stale: set[str]) -> list[Community]:
        """Existing communities whose text must be written again (see the module docstring)."""
        changed: dict[str, int] = {}
        left: dict[str, set[str]] = {}
        for _, c in [*plan.add, *plan.remove]:
            changed[c] = changed.get(c, 0) + 1
        for e, c in plan.remove:
            left.setdefault(c, set()).add(e)
        keys = sorted({k for t in texts for k in t.key_ids})
        alive = {r[0] for r in self.graph.snapshot_entities(keys)} if keys else set()
        refs = {r: RelationRef(*r.split(" ")) for t in texts if t.id in stale for r in t.quoted}
        now = self.graph.relation_descriptions(list(refs.values())) if refs else {}
        redo: list[Community] = []
        for t in texts:
            moved = changed.get(t.id, 0) >= self.cfg.redescribe_change * max(t.size, 1)
            lost_key = any(k not in alive or k in left.get(t.id, ()) for k in t.key_ids)
            quotes_gone = t.id in stale and (not t.key_ids or any(
                not now.get(refs[r].id) or f'"{now[refs[r].id]}"' not in t.summary for r in t.quoted))
            if moved or lost_key or quotes_gone:
                log.debug("re-describing community %s (size %d): moved %s, lost a key entity %s, quotes gone %s",
                          t.id, t.size, moved, lost_key, quotes_gone)
                redo.append(t)
        return redo

    def describe_existing(self, communities: list[Community]) -> None:
        """Title and summary of existing communities, from their current members."""
        members = self.graph.community_members([c.id for c in communities])
        everyone = sorted({m for ms in members.values() for m in ms})
        topo = topology_of(self.graph.snapshot_entities(everyone), self.graph.snapshot_edges(everyone, within=True))
        for c in communities:
            c.member_ids = members.get(c.id, [])
            c.size = len(c.member_ids)
        self.b.describe(topo, [c for c in communities if c.member_ids])

    def run(self) -> CommunityReport:
        t0 = last = time.perf_counter()
        laps: dict[str, float] = {}

        def lap(name: str) -> None:
            nonlocal last
            now = time.perf_counter()
            laps[name], last = laps.get(name, 0.0) + now - last, now

        region = self.region()
        entities = self.graph.snapshot_entities(region.entities)
        topo = topology_of(entities, self.graph.snapshot_edges([e[0] for e in entities], within=True))
        lap("read")
        plan = place(region, self.cluster(region, topo), self.cfg.min_size)
        lap("leiden")
        self.b.describe(topo, plan.new)
        lap("describe")
        # Order for a killed update (its marks stay, so the rerun redoes it): vectors before the graph
        # nodes they belong to (a leaf found again is kept, never re-embedded), and new leaves before
        # the old ones go (a member is never left without a leaf the rerun would dissolve). A leaf
        # written again under a new parent keeps its id: it alone is deleted first.
        written = {c.id for c in plan.new}
        moved = [c for c in plan.deleted if c in written]
        if moved:
            self.b.vectors.delete("communities", moved)
            self.graph.delete_communities(moved)
        self.b.embed(plan.new)
        lap("embed")
        self.graph.upsert_communities(plan.new)
        self.graph.edit_memberships(plan.add, plan.remove)
        rest = [c for c in plan.deleted if c not in written]
        if rest:
            self.b.vectors.delete("communities", rest)
            self.graph.delete_communities(rest)
        self.graph.refresh_communities(sorted(plan.ancestors))  # sizes; emptied ones go
        stale = self.graph.stale_summaries()
        texts = self.graph.community_texts(sorted(plan.ancestors | stale))
        gone = sorted(plan.ancestors - {t.id for t in texts})
        if gone:
            self.b.vectors.delete("communities", gone)
        lap("write")
        redo = self.redescribe(plan, texts, stale)
        lap("check")
        if redo:
            self.describe_existing(redo)
            lap("describe")
            self.b.embed([c for c in redo if c.member_ids])
            lap("embed")
            self.graph.upsert_communities([c for c in redo if c.member_ids])
        if stale:  # the others were checked above and found still true to the graph
            self.graph.clear_stale_summaries(sorted(stale - {c.id for c in redo}))
        lap("write")
        report = CommunityReport(written=len(plan.new) + len(redo), deleted=len(plan.deleted),
                                 unchanged=len(plan.kept), seconds=time.perf_counter() - t0,
                                 regrouped=region.entities)
        log.info("communities updated around %d changed entities (region %d): %d leaves written, %d kept, "
                 "%d deleted, %d ancestors re-described, %d membership edits (%.1fs: %s)", len(self.dirty),
                 len(region.entities), len(plan.new), len(plan.kept), len(plan.deleted), len(redo),
                 len(plan.add) + len(plan.remove), report.seconds, ", ".join(f"{k} {v:.2f}s" for k, v in laps.items()))
        return report
