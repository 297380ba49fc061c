"""The graph store's part that document sections and image captions need (``ingest.pipeline``), in the
Bolt adapter's ``graphdb.section_edits``: ``(:Document)-[:HAS_SECTION]->(:Section)-[:HAS_CHUNK]->(:Chunk)``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from hopgraph.core.records import Section


class SectionStore(Protocol):
    """Writes and reads of sections (a role of ``graphdb.protocols``)."""

    def replace_sections(self, document_ids: Sequence[str], sections: Sequence[Section]) -> None:
        """Delete every section of these documents, then write ``sections`` (chunks written before)."""
        ...

    def sections_of(self, document_ids: Sequence[str]) -> list[Section]:
        """The sections of these documents, in document order."""
        ...

    def unembedded_sections(self, limit: int = 1000) -> list[Section]:
        """Sections whose vector was never written (given by a migration to older documents)."""
        ...

    def mark_sections_embedded(self, ids: Sequence[str]) -> None: ...

    def uncaptioned_images(self, limit: int = 500) -> dict[str, str]:
        """Image documents whose captions have no vectors (marked by a migration): id -> their text."""
        ...

    def mark_captions_embedded(self, ids: Sequence[str]) -> None: ...

    def chunk_sections(self) -> dict[str, int]:
        """Every chunk's section number in its document (for evaluation)."""
        ...
