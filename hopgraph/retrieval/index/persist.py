"""The index state on disk: its tables as ``.npy`` arrays (entity and chunk vectors memory-mapped on load) and
strings as JSON, under a manifest naming the graph version and a CRC of every file. The tables are
what the stores hold, before any weighting, so one file serves every retrieval setting; the BM25 index of
their chunk texts (settings-free too) is saved beside them.

A write goes to a new folder that replaces the old one by rename, so a crash leaves the previous
state whole. A load that finds a missing, corrupt or other-format file returns None: the caller
rebuilds (and says why in the log).
"""

from __future__ import annotations

import json
import logging
import shutil
import zlib
from dataclasses import fields
from pathlib import Path

import numpy as np

from hopgraph.retrieval.index.tables import CHUNK_COLUMNS, Tables, shared, strings
from hopgraph.retrieval.parts.keyword import KeywordIndex

log = logging.getLogger(__name__)
FORMAT = 7  # 2: chunk vectors; 3: edge types as codes, ids of typed edges only; 4: BM25 splits handles;
#  5: the chunks' chat context; 6: the chunks' access groups; 7: mention labels, edges' support per groups
MANIFEST = "manifest.json"
KEYWORD = "bm25"  # the sub-folder of the BM25 term counts (optional: re-tokenized when absent)
_STRINGS = ("entity_ids", "entity_names", "entity_types", "entity_keys", "chunk_ids", "edge_id", "edge_type_names",
            "member_community", "mention_label", "support_groups")
_ARRAYS = ("entity_vectors", "chunk_vectors", "mention_chunk", "mention_entity", "mention_count", "edge_source",
           "edge_target", "edge_type", "edge_weight", "member_entity", "support_edge", "support_count")

_MAPPED = ("entity_vectors", "chunk_vectors")
#: string columns that repeat a few values (loaded as one object per distinct value)
_SHARED = ("entity_types", "member_community", "mention_label", "support_groups",
           *(f"chunk.{c}" for c in CHUNK_COLUMNS if c != "text"))


def _crc(path: Path) -> int:
    crc = 0
    with path.open("rb") as f:
        while block := f.read(1 << 22):
            crc = zlib.crc32(block, crc)
    return crc


def save(tables: Tables, folder: Path, owner: str = "", keyword: KeywordIndex | None = None) -> None:
    """Write ``tables`` to ``folder`` (atomically replacing what was there); ``owner`` names the graph
    they were read from, so that another graph's state is never patched as if it were its own;
    ``keyword``: the BM25 index of their chunk texts, saved with them (a restart loads, not rebuilds it)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.with_name(folder.name + ".writing")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    for name in _ARRAYS:
        np.save(tmp / f"{name}.npy", getattr(tables, name), allow_pickle=False)
    text = {name: getattr(tables, name).tolist() for name in _STRINGS}
    text.update({f"chunk.{c}": tables.chunks[c].tolist() for c in CHUNK_COLUMNS})
    (tmp / "strings.json").write_text(json.dumps(text), encoding="utf-8")
    if keyword is not None:
        keyword.save(tmp / KEYWORD)
    files = {p.relative_to(tmp).as_posix(): _crc(p) for p in sorted(tmp.rglob("*")) if p.is_file()}
    manifest = {"format": FORMAT, "version": tables.version, "owner": owner, "files": files}
    (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    old = folder.with_name(folder.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        folder.rename(old)
    tmp.rename(folder)
    shutil.rmtree(old, ignore_errors=True)


def load(folder: Path, owner: str = "") -> Tables | None:
    """The tables saved in ``folder`` from graph ``owner``, or None (with the reason logged) when they
    cannot be used."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("index state in %s unreadable (%s): rebuilding", folder, exc)
        return None
    if manifest.get("format") != FORMAT:
        log.info("index state in %s has another format: rebuilding", folder)
        return None
    if manifest.get("owner", "") != owner:
        log.warning("index state in %s was read from graph %r, not %r: rebuilding", folder,
                    manifest.get("owner", ""), owner)
        return None
    files = manifest.get("files", {})
    for name, crc in files.items():
        path = folder / name
        if not path.is_file() or _crc(path) != crc:
            log.warning("index state file %s is missing or corrupt: rebuilding", path)
            return None
    try:
        text = json.loads((folder / "strings.json").read_text(encoding="utf-8"))
        arrays = {name: np.load(folder / f"{name}.npy", allow_pickle=False,
                                mmap_mode="r" if name in _MAPPED else None) for name in _ARRAYS}
        text = {name: (shared if name in _SHARED else strings)(values) for name, values in text.items()}
        values = {**arrays, **{name: text[name] for name in _STRINGS}}
        chunks = {c: text[f"chunk.{c}"] for c in CHUNK_COLUMNS}
        known = {f.name for f in fields(Tables)} - {"version", "chunks"}
        return Tables(version=int(manifest["version"]), chunks=chunks, **{k: values[k] for k in known})
    except (OSError, ValueError, KeyError) as exc:
        log.warning("index state in %s unreadable (%s): rebuilding", folder, exc)
        return None


def load_keyword(folder: Path, tables: Tables, stemmer: str) -> KeywordIndex | None:
    """The BM25 index saved with ``tables`` (just loaded from ``folder``, which verified its files), or
    None when the folder has none or one stemmed otherwise than by ``stemmer``."""
    return KeywordIndex.load(folder / KEYWORD, len(tables.chunk_ids), stemmer)


def saved_version(folder: Path) -> int | None:
    """The graph version of the state saved in ``folder`` (its manifest only; not verified)."""
    try:
        return int(json.loads((folder / MANIFEST).read_text(encoding="utf-8"))["version"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
