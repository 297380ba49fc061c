"""Read source files into Documents, reporting bad files per file instead of failing the batch."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from hopgraph.models import Document, content_hash, document_id

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SourceText:
    """A document and its full text."""

    document: Document
    text: str


@dataclass(frozen=True)
class Skipped:
    """A file that was not ingested, and why."""

    source: str
    reason: str


def expand_paths(paths: Iterable[Path], extensions: Sequence[str]) -> Iterator[Path]:
    """Files named directly, and files with a known extension under named directories (sorted)."""
    exts = {e.lower() for e in extensions}
    for p in paths:
        if p.is_dir():
            yield from sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in exts
                              and not any(part.startswith(".") for part in f.relative_to(p).parts))
        else:
            yield p


def read_text_file(path: Path, max_bytes: int) -> SourceText | Skipped:
    """Read one UTF-8 text file; return Skipped with a reason for anything unusable."""
    source = str(path.resolve())
    try:
        size = path.stat().st_size
    except OSError as exc:
        return Skipped(source, f"cannot stat: {exc.strerror or exc}")
    if size > max_bytes:
        return Skipped(source, f"too large: {size} bytes > ingest.max_file_bytes={max_bytes}")
    try:
        data = path.read_bytes()
    except OSError as exc:
        return Skipped(source, f"cannot read: {exc.strerror or exc}")
    if b"\x00" in data[:8192]:
        return Skipped(source, "binary file (NUL bytes)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return Skipped(source, f"not valid UTF-8 (byte {exc.start})")
    if not text.strip():
        return Skipped(source, "empty file")
    doc = Document(id=document_id(source), source=source, title=path.stem, content_hash=content_hash(text))
    return SourceText(doc, text)
