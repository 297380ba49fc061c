"""The Bolt adapter's part of re-dating stored conversations (``graphdb.chat_protocol``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hopgraph.graphdb.bolt.access import Bolt
from hopgraph.graphdb.bolt.cypher import chats as q


class ChatEditsMixin:
    """Chat context reads and writes, for ``BoltGraphStore``."""

    def undated_chats(self: Bolt, limit: int = 200) -> dict[str, list[tuple[str, str, str]]]:
        out: dict[str, list[tuple[str, str, str]]] = {}
        for r in self.read(q.UNDATED_CHATS, {"limit": limit}):
            rows = out.setdefault(r["document_id"], [])
            if r["id"] is not None:
                rows.append((r["id"], r["text"] or "", r["chat"] or ""))
        return out

    def write_chat_contexts(self: Bolt, chats: Mapping[str, str]) -> None:
        self._write_rows(q.WRITE_CHAT_CONTEXTS, [{"id": c, "chat_json": j} for c, j in sorted(chats.items())])

    def mark_chats_dated(self: Bolt, ids: Sequence[str]) -> None:
        self._write_ids(q.MARK_CHATS_DATED, sorted(set(ids)))
