"""What the Bolt adapter's mixins (``index_reads``, ``community_edits``, ``tree_edits``,
``section_edits``, ``entity_types``) need from ``BoltGraphStore``: its statement runners, declared as
the self-type of their methods (``def f(self: Bolt, …)``), so mypy checks each mixin against the
adapter it is mixed into without stub methods."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

import neo4j

from hopgraph.core.settings import GraphSettings
from hopgraph.graphdb.bolt.batches import batches

T = TypeVar("T")


class Bolt(Protocol):
    """The Bolt adapter as its mixins see it."""

    cfg: GraphSettings

    def read(self, query: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]: ...

    def _write(self, work: Callable[[neo4j.ManagedTransaction], T]) -> T: ...

    def _session(self, read: bool = False) -> neo4j.Session: ...

    def _write_rows(self, query: str, rows: Sequence[dict[str, Any]]) -> None: ...

    def _write_ids(self, query: str, ids: Sequence[str]) -> None: ...

    def version(self) -> int: ...

    def commit(self, documents: Sequence[str] = (), entities: Sequence[str] = (), communities: bool = False,
               statuses: Sequence[tuple[str, str, str]] = (), regrouped: Sequence[str] | None = None,
               types: Mapping[str, str] | None = None) -> int: ...


def read_ids(db: Bolt, query: str, ids: Sequence[str]) -> list[dict[str, Any]]:
    """``query`` (which UNWINDs ``$ids``) over distinct ``ids`` in batches."""
    out: list[dict[str, Any]] = []
    for batch in batches(list(dict.fromkeys(ids)), db.cfg.batch_size):
        out += db.read(query, {"ids": batch})
    return out
