"""The RAPTOR tree of chunk-cluster summaries (mode ``raptor``), built and kept up to date at ingest.

The tree is a forest: chunks are partitioned into branches of about ``raptor.branch_size`` (k-means
over chunk vectors); inside a branch, RAPTOR's recursion runs (``ingest.raptor_cluster``: UMAP +
Gaussian mixture, soft membership) and every cluster is summarised (``ingest.raptor_summary``), the
summaries embedded and clustered again, until a level has one node: the branch's root. Node ids are
hashes of their children and a branch's id the hash of its chunks, so a branch is a pure function
of its chunks.

After an ingest or a deletion, ``TreeBuilder.update`` rebuilds only the branches that lost a chunk
or gained one (a new chunk joins the branch with the nearest centroid; a branch grown past
``branch_max`` is split); every other branch is left as it is. Writes go vectors first, then the
graph with each root last, so a killed update leaves branches the next update sees as incomplete and
rebuilds; summary vectors of branches the graph does not have are swept.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from hopgraph.core.linalg import unit
from hopgraph.core.records import SummaryNode
from hopgraph.core.summary_settings import RaptorSettings
from hopgraph.graphdb.tree_protocol import TreeBranch, TreeStore
from hopgraph.ingest.raptor_cluster import centrality, partition, soft_clusters
from hopgraph.ingest.raptor_summary import LlmSummarizer, extractive
from hopgraph.vectors.embedders import Embedder
from hopgraph.vectors.store import VectorPoint, VectorStore

log = logging.getLogger(__name__)


def _digest(prefix: str, parts: Sequence[str]) -> str:
    return prefix + hashlib.sha1("\x1f".join(parts).encode()).hexdigest()[:20]


def branch_id(leaves: Sequence[str]) -> str:
    """A branch's id: the hash of its chunk ids."""
    return _digest("br_", sorted(leaves))


def summary_id(level: int, children: Sequence[str]) -> str:
    """A summary's id: the hash of its level and children."""
    return _digest(f"sum{level}_", sorted(children))


@dataclass
class Built:
    """One branch's summaries and their vectors."""

    nodes: list[SummaryNode]
    vectors: np.ndarray


@dataclass
class TreeReport:
    """What one tree update did."""

    branches: int = 0
    built: int = 0
    dropped: int = 0
    unchanged: int = 0
    summaries_written: int = 0
    full: bool = False
    seconds: float = 0.0
    laps: dict[str, float] = field(default_factory=dict)


class TreeBuilder:
    """Builds branches of the tree and brings the stored forest up to date with the chunks."""

    def __init__(self, graph: TreeStore, vectors: VectorStore, embedder: Embedder, cfg: RaptorSettings,
                 llm: LlmSummarizer | None = None) -> None:
        self.graph = graph
        self.vectors = vectors
        self.embedder = embedder
        self.cfg = cfg
        self.llm = llm

    # -- one branch (pure apart from the embedder and the optional LLM) ---------------------------
    def summarize(self, groups: Sequence[Sequence[str]]) -> list[str]:
        """A summary per group of child texts: the LLM's where configured and answered, else extractive."""
        cfg = self.cfg
        written = self.llm.summarize(groups) if self.llm is not None else [None] * len(groups)
        return [w or extractive(g, cfg.summary_sentences, cfg.summary_chars) for g, w in zip(groups, written,
                                                                                               strict=True)]

    def build_branch(self, leaves: Sequence[str], vectors: np.ndarray, texts: Sequence[str]) -> Built:
        """The summaries of one branch over its chunks (``vectors`` and ``texts`` aligned with ``leaves``),
        level by level up to a single root."""
        order = sorted(range(len(leaves)), key=lambda i: leaves[i])
        ids = [leaves[i] for i in order]
        leaf_vecs = unit(np.asarray(vectors)[order])
        branch = branch_id(ids)
        row = {c: i for i, c in enumerate(ids)}
        under: dict[str, list[str]] = {c: [c] for c in ids}  # chunks under each node
        cur_ids, cur_vecs, cur_texts = ids, leaf_vecs, [texts[i] for i in order]
        nodes: list[SummaryNode] = []
        node_vecs: list[np.ndarray] = []
        level = 0
        while True:
            level += 1
            clusters = soft_clusters(cur_vecs, self.cfg) if level < self.cfg.max_levels else [
                list(range(len(cur_ids)))]
            if level > 1 and len(clusters) == len(cur_ids):  # no grouping left: one root above them
                clusters = [list(range(len(cur_ids)))]
            made = []
            for members in clusters:
                children = sorted(cur_ids[i] for i in members)
                chunks = sorted({c for ch in children for c in under[ch]})
                central = centrality(leaf_vecs[[row[c] for c in chunks]])
                ranked = [chunks[i] for i in np.argsort(-central, kind="stable")[: self.cfg.expand_leaves]]
                node = SummaryNode(id=summary_id(level, children), branch=branch, level=level,
                                   children=children, size=len(chunks), central=ranked)
                under[node.id] = chunks
                made.append((node, [cur_texts[i] for i in sorted(members, key=lambda i: cur_ids[i])]))
            for (node, _), text in zip(made, self.summarize([t for _, t in made]), strict=True):
                node.text = text
            nodes += [n for n, _ in made]
            cur_ids = [n.id for n, _ in made]
            cur_texts = [n.text for n, _ in made]
            cur_vecs = unit(self.embedder.embed(cur_texts))
            node_vecs.append(cur_vecs)
            if len(made) == 1:
                root = made[0][0]
                root.root, root.leaves = True, ids
                root.centroid = [round(float(x), 6) for x in unit(leaf_vecs.mean(axis=0, keepdims=True))[0]]
                return Built(nodes, np.concatenate(node_vecs))

    # -- the stored forest ------------------------------------------------------------------------
    def update(self, rebuild: bool = False, progress: Callable[[int, int], None] | None = None) -> TreeReport:
        """Bring the stored tree up to date with the chunks (see the module docstring)."""
        t0 = time.perf_counter()
        report = TreeReport()
        branches = {b.id: b for b in self.graph.tree_branches()}
        current = set(self.graph.chunk_ids())
        under = {c for b in branches.values() for c in b.leaves}
        new = sorted(current - under)
        gone = under - current
        touched = {b.id for b in branches.values() if gone.intersection(b.leaves)}
        changed = len(new) + len(gone)
        report.full = (rebuild or not branches
                       or changed > self.cfg.incremental_max_fraction * max(len(current), 1))
        if report.full:
            groups = self._groups(sorted(current))
            drop = set(branches) - {branch_id(g) for g in groups}
            todo = [g for g in groups if branch_id(g) not in branches]
        else:
            groups = self._regroup(branches, touched, new, current)
            drop = touched
            todo = groups
        report.laps["plan"] = time.perf_counter() - t0
        built: list[Built] = []
        for i, leaves in enumerate(todo):
            vecs = self.vectors.vectors("chunks", leaves)
            texts = self.graph.chunk_texts(leaves)
            have = [c for c in leaves if c in vecs and c in texts]
            if have:
                built.append(self.build_branch(have, np.stack([vecs[c] for c in have]), [texts[c] for c in have]))
            if progress is not None:
                progress(i + 1, len(todo))
        report.laps["build"] = time.perf_counter() - t0 - report.laps["plan"]
        self._write(built, drop)
        report.built, report.dropped = len(built), len(drop)
        report.branches = len(branches) - len(drop) + len(built)
        report.unchanged = len(branches) - len(drop)
        report.summaries_written = sum(len(b.nodes) for b in built)
        report.seconds = time.perf_counter() - t0
        if built or drop:
            log.info("tree: %d branch(es); %d built (%d summaries), %d dropped, %d unchanged%s (%.1fs)",
                     report.branches, report.built, report.summaries_written, report.dropped, report.unchanged,
                     ", full rebuild" if report.full else "", report.seconds)
        return report

    def _groups(self, chunk_ids: list[str]) -> list[list[str]]:
        """Every chunk into branches of about ``branch_size``."""
        vecs = self.vectors.vectors("chunks", chunk_ids)
        ids = [c for c in chunk_ids if c in vecs]
        if not ids:
            return []
        parts = partition(np.stack([vecs[c] for c in ids]), self.cfg.branch_size, self.cfg.seed)
        return [sorted(ids[i] for i in p) for p in parts]

    def _regroup(self, branches: dict[str, TreeBranch], touched: set[str], new: list[str],
                 current: set[str]) -> list[list[str]]:
        """The new chunk sets of the branches a change touches: what they keep, plus the new chunks
        nearest their centroid; one grown past ``branch_max`` is split."""
        members = {b: [c for c in branches[b].leaves if c in current] for b in touched}
        if new:
            vecs = self.vectors.vectors("chunks", new)
            known = [c for c in new if c in vecs]
            ids = sorted(branches)
            if known:
                cents = unit(np.array([branches[b].centroid for b in ids], dtype=np.float32))
                nearest = (unit(np.stack([vecs[c] for c in known])) @ cents.T).argmax(axis=1)
                for chunk, j in zip(known, nearest.tolist(), strict=True):
                    if ids[j] not in members:
                        members[ids[j]] = [c for c in branches[ids[j]].leaves if c in current]
                    members[ids[j]].append(chunk)
                    touched.add(ids[j])
        out: list[list[str]] = []
        for b in sorted(members):
            leaves = sorted(members[b])
            out += self._groups(leaves) if len(leaves) > self.cfg.branch_max else [leaves] if leaves else []
        return out

    def _write(self, built: list[Built], drop: set[str]) -> None:
        """Vectors first, the new branches' before the dropped ones go (a query served meanwhile never
        finds the tree empty), then the graph (each root last); then sweep vectors of unknown branches.
        A branch rebuilt with its id (the same leaves) is rewritten, not deleted."""
        for b in built:
            self.vectors.upsert("summaries", [
                VectorPoint(n.id, v, {"branch": n.branch, "level": n.level, "size": n.size, "text": n.text,
                                      "chunks": n.central, "root": int(n.root)})
                for n, v in zip(b.nodes, b.vectors, strict=True)])
        gone = drop - {n.branch for b in built for n in b.nodes}
        if gone:
            self.vectors.delete_where("summaries", {"branch": sorted(gone)})
        if drop:
            self.graph.drop_branches(sorted(drop))
        for b in built:
            self.graph.write_branch(b.nodes)
        if built or drop:  # a killed update leaves work for the next one, which sweeps then
            self.vectors.flush()
            self._sweep()

    def _sweep(self) -> None:
        """Delete summary vectors of branches the graph does not hold (left by a killed update)."""
        known = {b.id for b in self.graph.tree_branches()}
        orphans: set[str] = set()
        offset = None
        while True:
            page, offset = self.vectors.scroll("summaries", limit=1000, offset=offset)
            orphans.update(str(h.payload.get("branch")) for h in page if h.payload.get("branch") not in known)
            if offset is None:
                break
        if orphans:
            log.info("tree: removing summary vectors of %d branch(es) the graph does not hold", len(orphans))
            self.vectors.delete_where("summaries", {"branch": sorted(orphans)})
