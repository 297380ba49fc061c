"""The Bolt adapter's part of document sections and image captions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hopgraph.core.records import Section
from hopgraph.graphdb.bolt.access import Bolt, read_ids
from hopgraph.graphdb.bolt.cypher import sections as q


def _section(r: Mapping[str, Any]) -> Section:
    return Section(id=r["id"], document_id=r["document_id"], title=r["title"] or "", path=r["path"] or "",
                   level=int(r["level"] or 0), ord=int(r["ord"] or 0), chunk_ids=list(r["chunk_ids"] or []))


class SectionEditsMixin:
    """Section reads and writes, for ``BoltGraphStore``."""

    def replace_sections(self: Bolt, document_ids: Sequence[str], sections: Sequence[Section]) -> None:
        self._write_ids(q.DROP_SECTIONS, sorted(set(document_ids)))
        self._write_rows(q.UPSERT_SECTIONS, [{"id": s.id, "document_id": s.document_id, "title": s.title,
                                              "path": s.path, "level": s.level, "ord": s.ord} for s in sections])
        self._write_rows(q.LINK_CHUNKS, [{"section": s.id, "chunk": c} for s in sections for c in s.chunk_ids])

    def sections_of(self: Bolt, document_ids: Sequence[str]) -> list[Section]:
        rows = read_ids(self, q.SECTIONS_OF, document_ids)
        return sorted((_section(r) for r in rows), key=lambda s: (s.document_id, s.ord))

    def unembedded_sections(self: Bolt, limit: int = 1000) -> list[Section]:
        return [_section(r) for r in self.read(q.UNEMBEDDED, {"limit": limit})]

    def mark_sections_embedded(self: Bolt, ids: Sequence[str]) -> None:
        self._write_ids(q.MARK_EMBEDDED, sorted(set(ids)))

    def uncaptioned_images(self: Bolt, limit: int = 500) -> dict[str, str]:
        rows = self.read(q.UNCAPTIONED, {"limit": limit})
        return {r["id"]: "\n".join(t for t in r["texts"] or [] if t) for r in rows}

    def mark_captions_embedded(self: Bolt, ids: Sequence[str]) -> None:
        self._write_ids(q.MARK_CAPTIONED, sorted(set(ids)))

    def chunk_sections(self: Bolt) -> dict[str, int]:
        return {r["chunk"]: int(r["ord"] or 0) for r in self.read(q.CHUNK_SECTIONS)}
