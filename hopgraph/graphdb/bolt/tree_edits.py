"""The Bolt adapter's part of the RAPTOR tree: branches, chunk texts, and branch replacement."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hopgraph.core.records import SummaryNode
from hopgraph.graphdb.bolt.access import Bolt, read_ids
from hopgraph.graphdb.bolt.cypher import tree as q
from hopgraph.graphdb.tree_protocol import TreeBranch


class TreeEditsMixin:
    """RAPTOR tree reads and writes, for ``BoltGraphStore``."""

    def tree_branches(self: Bolt) -> list[TreeBranch]:
        return [TreeBranch(r["id"], tuple(r["leaves"] or ()), tuple(float(x) for x in r["centroid"] or ()))
                for r in self.read(q.BRANCHES)]

    def chunk_ids(self: Bolt) -> list[str]:
        return [r["id"] for r in self.read(q.CHUNK_IDS)]

    def chunk_texts(self: Bolt, ids: Sequence[str]) -> dict[str, str]:
        return {r["id"]: r["text"] or "" for r in read_ids(self, q.CHUNK_TEXTS, ids)}

    def drop_branches(self: Bolt, ids: Sequence[str]) -> None:
        self._write_ids(q.DROP_BRANCHES, sorted(set(ids)))

    def write_branch(self: Bolt, nodes: Sequence[SummaryNode]) -> None:
        def props(n: SummaryNode) -> dict[str, Any]:
            p: dict[str, Any] = {"branch": n.branch, "level": n.level, "text": n.text, "size": n.size,
                                 "central": n.central, "root": n.root}
            if n.root:
                p |= {"leaves": n.leaves, "centroid": n.centroid}
            return p

        for group in ([n for n in nodes if not n.root], [n for n in nodes if n.root]):  # the root last
            self._write_rows(q.UPSERT_SUMMARIES, [{"id": n.id, "props": props(n)} for n in group])
            self._write_rows(q.LINK_CHUNKS, [{"parent": n.id, "child": c} for n in group if n.level == 1
                                             for c in n.children])
            self._write_rows(q.LINK_SUMMARIES, [{"parent": n.id, "child": c} for n in group if n.level > 1
                                                for c in n.children])

    def summary_nodes(self: Bolt, ids: Sequence[str]) -> list[SummaryNode]:
        return [SummaryNode(id=r["id"], branch=r["branch"], level=int(r["level"]), text=r["text"] or "",
                            size=int(r["size"] or 0), central=list(r["central"] or []), root=bool(r["root"]),
                            children=sorted(r["children"] or [])) for r in read_ids(self, q.NODES, ids)]
