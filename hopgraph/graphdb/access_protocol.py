"""The graph store's part that tags stored vectors with their documents' access groups
(``ingest.access_tags``), in the Bolt adapter's ``graphdb.access_edits``: the documents a migration
marked, with their groups, and the mark cleared."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class VectorGroupStore(Protocol):
    """Reads and writes of the marks of documents whose vectors need their access groups (a role of
    ``graphdb.protocols``)."""

    def untagged_documents(self, limit: int = 1000) -> dict[str, list[str]]:
        """Up to ``limit`` documents marked (``vector_groups = false``): document id -> its access groups."""
        ...

    def mark_tagged(self, ids: Sequence[str]) -> None:
        """Clear the mark of these documents."""
        ...
