"""What every reader of a file produces, and the byte-level reading they share: a ``SourceText`` or a
``Skipped`` with its reason (readers never raise for bad input), size-capped reads, UTF-8 decoding
(strict, or with invalid bytes replaced and counted) and the document of a text.

``ingest.sources`` (text, Markdown, HTML, JSONL, images) and ``ingest.office`` (PDF, DOCX, CSV)
both build on it.
"""

from __future__ import annotations

import codecs
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopgraph.core.access import META_KEY, SEP
from hopgraph.core.records import Document, content_hash, document_id
from hopgraph.ingest.graph_docs import GraphRecord


@dataclass(frozen=True)
class SourceText:
    """A document and its full text (and, for a graph document, its checked graph)."""

    document: Document
    text: str
    graph: GraphRecord | None = None
    warning: str = ""  # what the report says of it (e.g. invalid UTF-8 replaced)


@dataclass(frozen=True)
class Skipped:
    """A file or record that was not ingested, and why (``file``: the file it came from; ``keep``: whether
    what earlier runs ingested from that file stays, as for a file that cannot be read now, or is
    withdrawn, as for a file whose access groups cannot be read)."""

    source: str
    reason: str
    file: str = ""
    keep: bool = True

    @property
    def origin(self) -> str:
        return self.file or self.source


def read_bytes(path: Path, max_bytes: int) -> bytes | Skipped:
    source = str(path.resolve())
    try:
        size = path.stat().st_size
    except OSError as exc:
        return Skipped(source, f"cannot stat: {exc.strerror or exc}")
    if size > max_bytes:
        return Skipped(source, f"too large: {size} bytes > ingest.max_file_bytes={max_bytes}")
    try:
        return path.read_bytes()
    except OSError as exc:
        return Skipped(source, f"cannot read: {exc.strerror or exc}")


def decode(source: str, data: bytes) -> str | Skipped:
    if b"\x00" in data[:8192]:
        return Skipped(source, "binary file (NUL bytes)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return Skipped(source, f"not valid UTF-8 (byte {exc.start})")


def _count_replaced(exc: UnicodeError) -> tuple[str, int]:
    """A codec error handler: U+FFFD for an invalid byte sequence, its length counted (per thread)."""
    assert isinstance(exc, UnicodeDecodeError)
    _replaced.n += exc.end - exc.start
    return "\ufffd", exc.end


_replaced = threading.local()
codecs.register_error("hopgraph.count-replace", _count_replaced)


def decode_replacing(data: bytes) -> tuple[str, int]:
    """UTF-8 text with each invalid byte sequence replaced by U+FFFD, and the count of replaced bytes."""
    _replaced.n = 0
    text = data.decode("utf-8-sig", errors="hopgraph.count-replace")
    return text, int(_replaced.n)


def text_document(source: str, title: str, text: str, **extra: Any) -> SourceText | Skipped:
    if not text.strip():
        return Skipped(source, "empty document")
    doc = Document(id=document_id(source), source=source, title=title, content_hash=content_hash(text), **extra)
    return SourceText(doc, text)


def grouped(item: SourceText | Skipped, groups: list[str]) -> SourceText | Skipped:
    """``item`` readable only by the access groups ``groups`` (checked: ``core.access``; none: public).
    The groups are part of the document's content hash, so a new set re-writes the document."""
    if isinstance(item, Skipped) or not groups:
        return item
    doc = item.document
    hashed = content_hash(f"{doc.content_hash}\n{META_KEY}={SEP.join(groups)}")
    changed = doc.model_copy(update={"metadata": {**doc.metadata, META_KEY: groups}, "content_hash": hashed})
    return SourceText(changed, item.text, item.graph, item.warning)


def read_text(path: Path, max_bytes: int) -> str | Skipped:
    """A file's text (UTF-8), or why it cannot be read."""
    data = read_bytes(path, max_bytes)
    return data if isinstance(data, Skipped) else decode(str(path.resolve()), data)
