"""What the Bolt adapter's mixins (``index_reads``, ``community_edits``, ``tree_edits``) call on it:
``BoltGraphStore`` defines these; the mixins inherit the declarations and the batched id read."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import neo4j

from graphdb.batches import batches
from hopgraph.core.settings import GraphSettings

T = TypeVar("T")


class BoltAccess:
    """Statement runners of the Bolt adapter, declared for its mixins."""

    cfg: GraphSettings

    def read(self, query: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        raise NotImplementedError

    def _write(self, work: Callable[[neo4j.ManagedTransaction], T]) -> T:
        raise NotImplementedError

    def _write_rows(self, query: str, rows: Sequence[dict[str, Any]]) -> None:
        raise NotImplementedError

    def _write_ids(self, query: str, ids: Sequence[str]) -> None:
        raise NotImplementedError

    def _read_ids(self, query: str, ids: Sequence[str]) -> list[dict[str, Any]]:
        """``query`` (which UNWINDs ``$ids``) over distinct ``ids`` in batches."""
        out: list[dict[str, Any]] = []
        for batch in batches(list(dict.fromkeys(ids)), self.cfg.batch_size):
            out += self.read(query, {"ids": batch})
        return out
