"""Read sources into documents, reporting bad input per file (or per record) with a reason.

Supported: plain text (.txt), Markdown (.md), HTML (.html, text only), PDF, DOCX and CSV
(``ingest.office``), JSONL records (BEIR
``corpus.jsonl`` with ``_id``/``title``/``text``, generic ``id``/``text``, and image records with
``image`` + ``captions``, also BEIR-style under ``metadata``), images with a sidecar caption
file (``photo.jpg`` + ``photo.txt``, one caption per line), and chat exports (``ingest.chat_exports``:
Slack and Discord ``.json``, other JSON read as text; ``.mbox``). A file may set its documents' access
groups (``ingest.file_access``: Markdown front matter, a ``NAME.groups`` sidecar). Nothing here ever
raises for bad input.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from hopgraph.core.access import META_KEY, check_groups, groups_of
from hopgraph.core.errors import BadInputError, NotFoundError
from hopgraph.core.records import Document, content_hash, document_id
from hopgraph.core.settings import CsvSettings
from hopgraph.graphdb.protocols import DocumentReader
from hopgraph.ingest import chat_exports, office
from hopgraph.ingest.caller import OWNER, Caller, PathJudge
from hopgraph.ingest.file_access import (
    front_matter_groups,
    is_sidecar,
    sidecar_groups,
    sidecar_of,
    split_front_matter,
)
from hopgraph.ingest.formats import html_to_text, markdown_title, markdown_to_text
from hopgraph.ingest.graph_docs import graph_text, is_graph_record, parse_graph
from hopgraph.ingest.source_text import (
    Skipped,
    SourceText,
    decode,
    decode_replacing,
    grouped,
    read_bytes,
    read_text,
    text_document,
)

log = logging.getLogger(__name__)

TEXT_EXT = {".txt", ".text"}
MARKDOWN_EXT = {".md", ".markdown"}
HTML_EXT = {".html", ".htm"}
JSONL_EXT = {".jsonl"}
IMAGE_EXT = {".jpg", ".jpeg", ".png", ".gif", ".webp", ".bmp"}
_IMAGE_MAGIC = (b"\xff\xd8\xff", b"\x89PNG", b"GIF8", b"RIFF", b"BM")


def within(path: Path, folders: Iterable[Path]) -> bool:
    """Whether ``path`` (resolved) is one of ``folders`` or lies under one."""
    resolved = path.resolve()
    return any(resolved == f or f in resolved.parents for f in folders)


def _walk(root: Path, judge: PathJudge) -> Iterator[tuple[Path, Path, str | None]]:
    """(path, real path, why the caller may not read it) of the files under ``root`` (None: it may;
    ``ingest.caller``). Hidden files and folders are left out; a folder link the caller may not enter is
    reported and not entered, the data dir inside ``root`` is left out silently (a store that writes there
    meanwhile cannot trip the walk), and a folder reached again through a link is not walked twice. Only
    links are resolved: a plain entry's real path is its folder's and its name."""
    walked: set[Path] = set()
    todo = [(root, root.resolve())]
    while todo:
        here, real = todo.pop()
        if real in walked:
            continue
        walked.add(real)
        try:
            entries = sorted((e for e in os.scandir(here) if not e.name.startswith(".")), key=lambda e: e.name)
        except OSError:  # an unreadable folder is left out, as os.walk leaves it
            continue
        for e in entries:
            link = e.is_symlink()
            path, target = here / e.name, Path(os.path.realpath(here / e.name)) if link else real / e.name
            if e.is_dir():
                why = judge.judge(target, link)
                if why is None:
                    todo.append((path, target))
                elif link:
                    yield path, target, why
            elif e.is_file():
                yield path, target, judge.judge(target, link)


def walk_paths(paths: Iterable[Path], extensions: Sequence[str], data_dir: Path | None = None,
               caller: Caller = OWNER) -> Iterator[tuple[Path, Path, str | None]]:
    """(path, real path, why ``caller`` may not read it) of the files named directly, and of the files with a
    known extension under named directories (sorted); None: it may. Each is judged on its real path
    (``ingest.caller``): never in ``data_dir``, never outside the caller's roots. A file reached twice
    (through a link) comes once. Sidecar caption files of images are not documents of their own, nor are
    groups sidecars (``NAME.groups`` beside ``NAME``), even named directly (a shell's ``notes/*``)."""
    exts = {e.lower() for e in extensions}
    judge = PathJudge(data_dir, caller)
    came: set[Path] = set()
    for p in paths:
        real = p.resolve()
        why = judge.judge(real, real != Path(os.path.abspath(p)))
        if why is not None or not p.is_dir():
            found = [] if is_sidecar(p) else [(p, real, why)]
        else:
            files = sorted(f for f in _walk(p, judge)
                           if f[0].suffix.lower() in exts or (f[2] is not None and f[1].is_dir()))  # a folder link
            images = {f.with_suffix("") for f, _, _ in files if f.suffix.lower() in IMAGE_EXT}
            found = [f for f in files if not (f[0].suffix.lower() in TEXT_EXT and f[0].with_suffix("") in images)]
        for f, target, w in found:
            if w is None and target in came:
                continue
            came.add(target)
            yield f, target, w


def expand_paths(paths: Iterable[Path], extensions: Sequence[str], data_dir: Path | None = None,
                 caller: Caller = OWNER) -> Iterator[Path]:
    """The files of ``walk_paths`` that ``caller`` may read."""
    return (f for f, _, why in walk_paths(paths, extensions, data_dir, caller) if why is None)


def require_paths(paths: Iterable[Path]) -> None:
    """Raise NotFoundError naming every path that does not exist (as the CLI does, exit 4)."""
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise NotFoundError(f"no such file or directory: {', '.join(missing)}")


def default_groups(items: Iterable[SourceText | Skipped], groups: Sequence[str]) -> Iterable[SourceText | Skipped]:
    """``items`` with the access ``groups`` given to the documents that name none of their own (``groups``
    are checked now, before any item is read)."""
    given = check_groups(groups)
    if not given:
        return items
    return (grouped(i, given) if isinstance(i, SourceText) and not groups_of(i.document.metadata) else i
            for i in items)


def read_sources(paths: Iterable[Path], extensions: Sequence[str], max_bytes: int,
                 csv: CsvSettings | None = None, data_dir: Path | None = None,
                 strict_utf8: bool = False, caller: Caller = OWNER) -> Iterator[SourceText | Skipped]:
    """Every document of the given files and directories, in a stable order (``walk_paths``), each file
    read through its real path (a link as its target: the target's sidecars); a file or sidecar ``caller``
    may not read is skipped with the reason; ``strict_utf8``: a text file that is not valid UTF-8 is
    skipped (else its bad bytes are replaced)."""
    judge = PathJudge(data_dir, caller)
    for path, real, why in walk_paths(paths, extensions, data_dir, caller):
        if why is not None:
            yield Skipped(os.path.abspath(path), why)
            continue
        sides = [(sidecar_of(real), "groups sidecar", False)]
        sides += [(real.with_suffix(".txt"), "caption file", True)] if real.suffix.lower() in IMAGE_EXT else []
        barred = [(f"its {kind} {side.name} {w}", keep) for side, kind, keep in sides
                  if side.is_symlink() and (w := judge.refusal(side))]
        if barred:
            yield Skipped(str(real), barred[0][0], keep=barred[0][1])
            continue
        try:
            own = sidecar_groups(real)
        except BadInputError as exc:
            yield Skipped(str(real), str(exc), keep=False)
            continue
        items = _read_file(real, max_bytes, csv, strict_utf8)
        yield from default_groups(items, own) if own else items


def _read_file(path: Path, max_bytes: int, csv: CsvSettings | None, strict_utf8: bool
               ) -> Iterator[SourceText | Skipped]:
    """The documents of one file, read by its kind (its extension)."""
    suffix = path.suffix.lower()
    if suffix in JSONL_EXT:
        yield from read_jsonl(path, max_bytes)
    elif suffix in IMAGE_EXT:
        yield read_image_file(path, max_bytes)
    elif suffix in office.PDF_EXT:
        yield from office.read_pdf(path, max_bytes)
    elif suffix in office.DOCX_EXT:
        yield office.read_docx(path, max_bytes)
    elif suffix in office.CSV_EXT:
        yield from office.read_csv(path, max_bytes, csv or CsvSettings())
    elif suffix in chat_exports.JSON_EXT:  # a chat export, else (valid JSON) text as before
        yield chat_exports.read_chat_json(path, max_bytes) or read_text_file(path, max_bytes, strict_utf8)
    elif suffix in chat_exports.MBOX_EXT:
        yield chat_exports.read_mbox(path, max_bytes)
    else:
        yield read_text_file(path, max_bytes, strict_utf8)


def read_text_file(path: Path, max_bytes: int, strict_utf8: bool = True) -> SourceText | Skipped:
    """A text, Markdown or HTML file as one document; not valid UTF-8: skipped if ``strict_utf8``, else
    read with its invalid bytes replaced (U+FFFD) and a warning."""
    source = str(path.resolve())
    data = read_bytes(path, max_bytes)
    if isinstance(data, Skipped):
        return data
    raw = decode(source, data)
    warning = ""
    if isinstance(raw, Skipped):
        if strict_utf8 or raw.reason.startswith("binary"):
            return raw
        raw, replaced = decode_replacing(data)
        warning = f"not valid UTF-8: {replaced} byte(s) replaced by U+FFFD (ingest.strict_utf8 skips such files)"
    suffix = path.suffix.lower()
    title = path.stem
    own: list[str] = []
    if suffix in MARKDOWN_EXT:
        try:
            fields, raw = split_front_matter(raw)
            own = front_matter_groups(fields)
        except BadInputError as exc:
            return Skipped(source, str(exc), keep=False)
        named = fields.get("title")
        if isinstance(named, str) and named.strip() and not markdown_title(raw):
            raw = f"# {named.strip()}\n\n{raw}"  # a title is found as a first heading is
        text = markdown_to_text(raw)
        title = markdown_title(raw) or title
    elif suffix in HTML_EXT:
        page_title, text = html_to_text(raw)
        title = page_title or title
    else:
        text = raw
    doc = grouped(text_document(source, title, text), own)
    return dataclasses.replace(doc, warning=warning) if warning and isinstance(doc, SourceText) else doc


def read_jsonl(path: Path, max_bytes: int) -> Iterator[SourceText | Skipped]:
    """One document per JSON line; a malformed line is reported and the rest are read."""
    base = str(path.resolve())
    raw = read_text(path, max_bytes)
    if isinstance(raw, Skipped):
        yield raw
        return
    for lineno, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{base}:{lineno}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            # json's message may end in "at" ("Unterminated string starting at"): one "at" only
            yield Skipped(where, f"malformed JSON: {exc.msg.removesuffix(' at')} at column {exc.colno}", base)
            continue
        if not isinstance(rec, dict):
            yield Skipped(where, "a JSONL record must be an object", base)
            continue
        item = record_to_source(base, rec, where)
        yield Skipped(item.source, item.reason, base) if isinstance(item, Skipped) else item


def record_to_source(base: str, rec: dict[str, Any], where: str) -> SourceText | Skipped:
    """A BEIR / generic text record, an image record with captions, or a graph document; readable only
    by its access ``groups`` (of the record or its metadata) when it has any."""
    rid = rec.get("_id", rec.get("id"))
    if rid is None or str(rid) == "":
        return Skipped(where, "record has no '_id' or 'id'")
    meta_groups = rec["metadata"].get(META_KEY) if isinstance(rec.get("metadata"), dict) else None
    try:
        groups = check_groups(rec.get(META_KEY) or meta_groups or [])
    except BadInputError as exc:
        return Skipped(where, f"record {rid!r}: {exc}")
    return grouped(_record_source(base, rid, rec, where), groups)


def _record_source(base: str, rid: Any, rec: dict[str, Any], where: str) -> SourceText | Skipped:
    source = f"{base}#{rid}"
    meta: dict[str, Any] = rec["metadata"] if isinstance(rec.get("metadata"), dict) else {}
    if is_graph_record(rec):
        return graph_document(source, str(rid), rec, meta, where)
    image = rec.get("image") or meta.get("image")
    captions = rec.get("captions") or meta.get("captions")
    title = str(rec.get("title") or "")
    if image is not None:
        if not captions or not isinstance(captions, list) or not any(str(c).strip() for c in captions):
            return Skipped(where, f"image record {rid!r} has no captions")
        text = "\n".join(str(c).strip() for c in captions if str(c).strip())
        return text_document(source, title or str(image), text, kind="image", uri=str(image),
                              metadata={"corpus_id": str(rid), "captions": [str(c) for c in captions]})
    body = rec.get("text")
    if not isinstance(body, str):
        return Skipped(where, f"record {rid!r} has no 'text' string")
    text = f"{title}\n{body}" if title and not body.startswith(title) else body
    return text_document(source, title, text, metadata={"corpus_id": str(rid)})


def graph_document(source: str, rid: str, rec: dict[str, Any], meta: dict[str, Any],
                   where: str) -> SourceText | Skipped:
    """A graph record: its text is the graph verbalized (after its ``text``, if it has one)."""
    graph = parse_graph(rec)
    if isinstance(graph, str):
        return Skipped(where, f"record {rid!r} is {graph}")
    preface = rec.get("text") if isinstance(rec.get("text"), str) else ""
    text = graph_text(graph, str(rec.get("title") or "") + "\n" + str(preface or ""))
    meta = {**meta, "corpus_id": rid, "nodes": len(graph.nodes), "edges": len(graph.edges)}
    doc = Document(id=document_id(source), source=source, title=str(rec.get("title") or ""), kind="graph",
                   content_hash=content_hash(graph.model_dump_json() + text), metadata=meta)
    return SourceText(doc, text, graph)


def read_image_file(path: Path, max_bytes: int) -> SourceText | Skipped:
    """An image with a sidecar caption file (``name.txt``, one caption per line)."""
    source = str(path.resolve())
    data = read_bytes(path, max_bytes)
    if isinstance(data, Skipped):
        return data
    if not data.startswith(_IMAGE_MAGIC):
        return Skipped(source, "unreadable image: not a JPEG, PNG, GIF, WebP or BMP file")
    sidecar = path.with_suffix(".txt")
    if not sidecar.exists():
        return Skipped(source, f"image has no captions (expected {sidecar.name})")
    captions = [c.strip() for c in sidecar.read_text(encoding="utf-8", errors="replace").splitlines() if c.strip()]
    if not captions:
        return Skipped(source, f"image caption file {sidecar.name} is empty")
    return text_document(source, path.stem, "\n".join(captions), kind="image", uri=source,
                          metadata={"captions": captions})


def vanished(graph: DocumentReader, paths: Sequence[Path], seen: set[str], unsure: set[str],
             data_dir: Path) -> list[str]:
    """Documents previously ingested from ``paths`` that the sources no longer contain (``seen``: the
    sources read now; ``unsure``: files with unreadable parts, whose documents are kept; what a walk
    skipped, the data dir, is kept too)."""
    gone: dict[str, None] = {}
    data = str(data_dir.resolve())
    for p in paths:
        root = str(p.resolve())
        skips_data = p.is_dir() and not within(p, [Path(data)])
        for d in graph.documents_under(root):
            src = d.source or ""
            file = src.split("#", 1)[0]
            if src in seen or file in unsure or not (src == root or src.startswith((root + "/", root + "#"))):
                continue
            if skips_data and (file == data or file.startswith(data + "/")):  # stored resolved: no resolve()
                continue
            gone[d.id] = None
    return list(gone)
