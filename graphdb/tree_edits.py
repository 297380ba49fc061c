"""The Bolt adapter's part of the RAPTOR tree: branches, chunk texts, and branch replacement."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphdb import cypher_tree as q
from graphdb.bolt_access import BoltAccess
from graphdb.tree_protocol import TreeBranch
from hopgraph.core.records import SummaryNode


class TreeEditsMixin(BoltAccess):
    """RAPTOR tree reads and writes, for ``BoltGraphStore``."""

    def tree_branches(self) -> list[TreeBranch]:
        return [TreeBranch(r["id"], tuple(r["leaves"] or ()), tuple(float(x) for x in r["centroid"] or ()))
                for r in self.read(q.BRANCHES)]

    def chunk_ids(self) -> list[str]:
        return [r["id"] for r in self.read(q.CHUNK_IDS)]

    def chunk_texts(self, ids: Sequence[str]) -> dict[str, str]:
        return {r["id"]: r["text"] or "" for r in self._read_ids(q.CHUNK_TEXTS, ids)}

    def drop_branches(self, ids: Sequence[str]) -> None:
        self._write_ids(q.DROP_BRANCHES, sorted(set(ids)))

    def write_branch(self, nodes: Sequence[SummaryNode]) -> None:
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
