"""How many documents an ingest of some paths will read, counted before reading them: the total of
the progress bar (and its ETA). Counting is cheap: a JSONL file's non-empty lines, a CSV's rows, a
PDF's pages, one document for any other file."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from hopgraph.ingest.caller import OWNER, Caller
from hopgraph.ingest.office import CSV_EXT, PDF_EXT
from hopgraph.ingest.sources import JSONL_EXT, expand_paths


def _lines(path: Path) -> int:
    with path.open("rb") as f:
        return sum(1 for line in f if line.strip())


def _pages(path: Path) -> int:
    from pypdf import PdfReader

    try:
        return max(len(PdfReader(path).pages), 1)
    except Exception:  # a parser of untrusted bytes: the read reports it; here it counts as one
        return 1


def count_documents(paths: Iterable[Path], extensions: Sequence[str], data_dir: Path | None = None,
                    caller: Caller = OWNER) -> int:
    """The documents ``read_sources`` will yield for these paths (an unreadable file counts as one; a
    file ``caller`` may not read, none)."""
    total = 0
    for path in expand_paths(paths, extensions, data_dir, caller):
        suffix = path.suffix.lower()
        try:
            if suffix in JSONL_EXT:
                total += _lines(path)
            elif suffix in CSV_EXT:
                total += max(_lines(path) - 1, 0)  # the header
            elif suffix in PDF_EXT:
                total += _pages(path)
            else:
                total += 1
        except OSError:
            total += 1
    return total
