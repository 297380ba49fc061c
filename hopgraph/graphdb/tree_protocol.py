"""The graph store's part that the RAPTOR tree needs (``ingest.raptor``), in the Bolt adapter's
``graphdb.tree_edits``: the branches with their chunks, the chunks, and branch replacement."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from hopgraph.core.records import SummaryNode


@dataclass(frozen=True)
class TreeBranch:
    """One branch of the stored forest: its root's id, its chunks and their mean vector."""

    id: str
    leaves: tuple[str, ...]
    centroid: tuple[float, ...]


class TreeStore(Protocol):
    """Reads and writes of the RAPTOR tree (a role of ``graphdb.protocols``)."""

    def tree_branches(self) -> list[TreeBranch]:
        """Every complete branch (one whose root was written)."""
        ...

    def chunk_ids(self) -> list[str]:
        """Every chunk id."""
        ...

    def chunk_texts(self, ids: Sequence[str]) -> dict[str, str]:
        """Texts of these chunks (missing ones left out)."""
        ...

    def drop_branches(self, ids: Sequence[str]) -> None:
        """Delete every summary of these branches."""
        ...

    def write_branch(self, nodes: Sequence[SummaryNode]) -> None:
        """Write one branch's summaries and SUMMARIZES edges; its root last (the branch is complete then)."""
        ...

    def summary_nodes(self, ids: Sequence[str]) -> list[SummaryNode]:
        """Stored summaries (without leaves and centroid)."""
        ...
