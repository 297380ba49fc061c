"""The graph store's part that re-dating stored conversations needs (``ingest.conversations.redate``), in
the Bolt adapter's ``graphdb.chat_edits``: the chunks of documents a migration marked, their chat
contexts written again, and the mark cleared."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol


class ChatDateStore(Protocol):
    """Reads and writes of chat contexts for re-dating (a role of ``graphdb.protocols``)."""

    def undated_chats(self, limit: int = 200) -> dict[str, list[tuple[str, str, str]]]:
        """Up to ``limit`` documents marked for re-dating (``chats_dated = false``): document id -> its
        chunks as (chunk id, text, chat context JSON); a document without chunks has an empty list."""
        ...

    def write_chat_contexts(self, chats: Mapping[str, str]) -> None:
        """Set the chat context JSON of these chunks (chunk id -> JSON)."""
        ...

    def mark_chats_dated(self, ids: Sequence[str]) -> None:
        """Clear the re-dating mark of these documents."""
        ...

    def commit(self, documents: Sequence[str] = (), entities: Sequence[str] = (), communities: bool = False,
               statuses: Sequence[tuple[str, str, str]] = (), regrouped: Sequence[str] | None = None,
               types: Mapping[str, str] | None = None) -> int:
        """Record these documents as changed in the change log (the index state reads them again)."""
        ...
