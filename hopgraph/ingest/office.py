"""Documents out of PDF, DOCX and CSV files, through well-kept libraries (``pypdf``, ``python-docx``,
the standard ``csv`` module). Like every reader, they never raise for bad input: an unreadable file
is a ``Skipped`` with its reason.

- **PDF**: one document per page with text, source ``<file>#page=<n>``, so that every citation
  names its page; a page without a text layer (a scan) is skipped with that reason.
- **DOCX**: one document; headings (``Heading n`` / ``Title`` styles) are sentences of their own,
  the core ``title`` property (else the first heading, else the file name) is its title.
- **CSV**: one document per row, source ``<file>#<id>``; the text, id and title columns are
  settings (``ingest.csv``); the other columns are the document's metadata.
"""

from __future__ import annotations

import csv
import io
import logging
from collections.abc import Iterator
from pathlib import Path

from hopgraph.core.settings import CsvSettings
from hopgraph.ingest.formats import as_sentence
from hopgraph.ingest.source_text import Skipped, SourceText, read_bytes, read_text, text_document

log = logging.getLogger(__name__)

PDF_EXT = {".pdf"}
DOCX_EXT = {".docx"}
CSV_EXT = {".csv", ".tsv"}


def read_pdf(path: Path, max_bytes: int) -> Iterator[SourceText | Skipped]:
    """One document per page of a PDF."""
    from pypdf import PdfReader

    base = str(path.resolve())
    data = read_bytes(path, max_bytes)
    if isinstance(data, Skipped):
        yield data
        return
    try:
        reader = PdfReader(io.BytesIO(data))
        meta_title = str(reader.metadata.title or "").strip() if reader.metadata is not None else ""
        pages = [page.extract_text() or "" for page in reader.pages]
    except Exception as exc:  # a parser of untrusted bytes: whatever it raises means "unreadable"
        yield Skipped(base, f"unreadable PDF: {type(exc).__name__}: {exc}")
        return
    title = meta_title or path.stem
    if not any(p.strip() for p in pages):
        yield Skipped(base, "PDF has no text layer (a scan? run OCR first)")
        return
    for n, text in enumerate(pages, start=1):
        source = f"{base}#page={n}"
        if not text.strip():
            yield Skipped(source, "page has no text", base)
            continue
        item = text_document(source, title, text, metadata={"page": n, "pages": len(pages)})
        yield Skipped(item.source, item.reason, base) if isinstance(item, Skipped) else item


def read_docx(path: Path, max_bytes: int) -> SourceText | Skipped:
    """A Word document: its paragraphs and table cells, headings as sentences."""
    import docx

    source = str(path.resolve())
    data = read_bytes(path, max_bytes)
    if isinstance(data, Skipped):
        return data
    try:
        doc = docx.Document(io.BytesIO(data))
    except Exception as exc:  # a parser of untrusted bytes: whatever it raises means "unreadable"
        return Skipped(source, f"unreadable DOCX: {type(exc).__name__}: {exc}")
    lines: list[str] = []
    first_heading = ""
    for para in doc.paragraphs:
        text = " ".join(para.text.split())
        if not text:
            continue
        style = (para.style.name if para.style is not None else "") or ""
        if style.startswith(("Heading", "Title")):
            first_heading = first_heading or text
            text = as_sentence(text)
        lines.append(text)
    for table in doc.tables:
        for row in table.rows:
            cells = [" ".join(c.text.split()) for c in row.cells]
            if any(cells):
                lines.append(" | ".join(cells))
    title = (doc.core_properties.title or "").strip() or first_heading or path.stem
    return text_document(source, title, "\n".join(lines))


def read_csv(path: Path, max_bytes: int, cfg: CsvSettings) -> Iterator[SourceText | Skipped]:
    """One document per row (a ``.tsv`` file is tab-separated)."""
    base = str(path.resolve())
    raw = read_text(path, max_bytes)
    if isinstance(raw, Skipped):
        yield raw
        return
    delimiter = "\t" if path.suffix.lower() == ".tsv" else cfg.delimiter
    rows = csv.DictReader(io.StringIO(raw), delimiter=delimiter)
    if not rows.fieldnames or cfg.text_column not in rows.fieldnames:
        yield Skipped(base, f"no {cfg.text_column!r} column (ingest.csv.text_column); the columns are "
                            f"{', '.join(rows.fieldnames or []) or 'none'}")
        return
    try:
        for n, row in enumerate(rows, start=1):
            where = f"{base}:{n + 1}"
            rid = str(row.get(cfg.id_column) or "").strip() or str(n)
            text = str(row.get(cfg.text_column) or "").strip()
            if not text:
                yield Skipped(where, f"row {rid!r} has an empty {cfg.text_column!r}", base)
                continue
            title = str(row.get(cfg.title_column) or "").strip()
            meta = {k: v for k, v in row.items() if k and k not in (cfg.text_column, cfg.id_column, cfg.title_column)}
            item = text_document(f"{base}#{rid}", title, f"{as_sentence(title)}\n{text}" if title else text,
                                 metadata={"corpus_id": rid, **meta})
            yield Skipped(item.source, item.reason, base) if isinstance(item, Skipped) else item
    except csv.Error as exc:
        yield Skipped(base, f"malformed CSV: {exc}")
