"""The Bolt adapter's part of tagging stored vectors with access groups (``graphdb.access_protocol``)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from hopgraph.core.access import groups_of
from hopgraph.graphdb.bolt.access import Bolt
from hopgraph.graphdb.bolt.cypher import access as q


class AccessEditsMixin:
    """The marks of documents whose vectors need their access groups, for ``BoltGraphStore``."""

    def untagged_documents(self: Bolt, limit: int = 1000) -> dict[str, list[str]]:
        return {r["id"]: groups_of(json.loads(r["metadata_json"] or "{}"))
                for r in self.read(q.UNTAGGED_DOCUMENTS, {"limit": limit})}

    def mark_tagged(self: Bolt, ids: Sequence[str]) -> None:
        self._write_ids(q.MARK_TAGGED, sorted(set(ids)))
