"""Which documents a user means: by document id, by the path of a file or directory they came from,
or by a glob over those paths (``notes/**/*.md``). A file's documents include its records and pages
(``corpus.jsonl#r1``, ``report.pdf#page=2``); a directory's, everything under it."""

from __future__ import annotations

import fnmatch
import glob
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from hopgraph.graphdb.records import DocumentState


class DocumentLookup(Protocol):
    def documents_under(self, prefix: str) -> list[DocumentState]: ...

    def document_states(self, ids: Sequence[str]) -> dict[str, DocumentState]: ...


def static_root(pattern: str) -> str:
    """The directory part of a glob before its first wildcard."""
    parts: list[str] = []
    for part in Path(pattern).parts:
        if glob.has_magic(part):
            break
        parts.append(part)
    return str(Path(*parts)) if parts else "/"


def matches(source_file: str, pattern: str) -> bool:
    """Whether a source file matches a glob (``**/`` also matching no directory at all)."""
    return fnmatch.fnmatch(source_file, pattern) or fnmatch.fnmatch(source_file, pattern.replace("**/", ""))


def source_file(source: str) -> str:
    """The file a document's source names (without a record or page suffix)."""
    return source.split("#", 1)[0]


def select_documents(store: DocumentLookup, targets: Sequence[str]) -> dict[str, list[str]]:
    """Target -> the ids of the documents it names (empty when it names none), in source order."""
    out: dict[str, list[str]] = {}
    for target in targets:
        if target.startswith("doc_") and not Path(target).exists():
            out[target] = [target] if target in store.document_states([target]) else []
            continue
        if glob.has_magic(target):
            pattern = str(Path(target).expanduser().absolute())
            docs = [d for d in store.documents_under(static_root(pattern))
                    if d.source and matches(source_file(d.source), pattern)]
        else:
            path = str(Path(target).expanduser().absolute())
            docs = [d for d in store.documents_under(path) if d.source and (
                source_file(d.source) == path or d.source.startswith(path.rstrip("/") + "/"))]
        out[target] = [d.id for d in sorted(docs, key=lambda d: d.source or "")]
    return out
