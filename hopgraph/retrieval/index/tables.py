"""The index state's raw tables: what the graph and the vector store export, column by column.

Entities and chunks are sorted by id, so that a state patched by deltas and one built from scratch
hold the same rows in the same order (and so answer queries identically). Mentions and edges refer
to entity and chunk rows; their order does not matter (``build`` canonicalises what it sums).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from hopgraph.core.access import SEP, groups_of
from hopgraph.core.linalg import unit
from hopgraph.core.records import CO_OCCURS
from hopgraph.core.text import normalize_name
from hopgraph.graphdb.protocols import IndexSource
from hopgraph.graphdb.records import EdgeRow
from hopgraph.vectors.store import VectorStore

#: chunk columns, in the order ``IndexSource.snapshot_chunks`` names them (``corpus_id`` and ``groups``, the
#: document's access groups joined by ``core.access.SEP``, come from the document's metadata)
CHUNK_COLUMNS = ("text", "document_id", "source", "title", "corpus_id", "kind", "uri", "chat", "groups")
_FROM_METADATA = ("corpus_id", "groups")
#: entity vectors of a graph with more entities are held as float16: half the memory (1M entities:
#: 0.73 GB, not 1.46 GB), cosines within 1e-4 of float32's (``retrieval.parts.signals.entity_similarity``)
HALF_ABOVE = 262_144
#: the edge type whose ids are not kept (nothing at query time names a co-occurrence; most edges are one)


def strings(values: Any) -> np.ndarray:
    """A 1-d object array of Python strings (numpy's fixed-width strings would pad every row)."""
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return out


def shared(values: Any) -> np.ndarray:
    """``strings`` where equal values are one Python object: for the columns that repeat a few values
    (edge and entity types, community ids, a document's title on each of its chunks), whose rows
    would otherwise each hold a copy (a string object per row, where one reference per row suffices)."""
    pool: dict[str, str] = {}
    return strings([pool.setdefault(v, v) for v in values])


def _metadata(meta: Any) -> dict[str, Any]:
    try:
        found = json.loads(meta or "{}")
    except (TypeError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


@dataclass(frozen=True)
class Tables:
    """Columns of one committed graph version (never mutated: a delta makes a new ``Tables``)."""

    version: int
    entity_ids: np.ndarray                 # object, sorted
    entity_names: np.ndarray               # object
    entity_types: np.ndarray               # object
    entity_keys: np.ndarray                # object: normalized names
    entity_vectors: np.ndarray             # (n_entities, dim) unit rows, zero where missing: vector_dtype
    chunk_ids: np.ndarray                  # object, sorted
    chunks: dict[str, np.ndarray]          # CHUNK_COLUMNS -> object arrays aligned with chunk_ids
    chunk_vectors: np.ndarray              # float32 (n_chunks, dim), unit rows, zero where missing
    mention_chunk: np.ndarray              # int32 chunk rows
    mention_entity: np.ndarray             # int32 entity rows
    mention_count: np.ndarray              # float64
    mention_label: np.ndarray              # object: the mention's voted label ("" when none)
    edge_source: np.ndarray                # int32 entity rows
    edge_target: np.ndarray                # int32 entity rows
    edge_type: np.ndarray                  # int16 codes into edge_type_names (0: a co-occurrence)
    edge_weight: np.ndarray                # float64 (support)
    edge_id: np.ndarray                    # object: the relation ids of the typed edges (code > 0), in row order
    edge_type_names: np.ndarray            # object: the edge types' names, CO_OCCURS first
    support_edge: np.ndarray               # int32 edge rows: with the next two, how many of an edge's supporting
    support_groups: np.ndarray             # object   chunks carry each set of access groups (chunks without
    support_count: np.ndarray              # int32    groups are not listed: they are the rest of its weight)
    member_entity: np.ndarray              # int32 entity rows
    member_community: np.ndarray           # object community ids

    @property
    def dim(self) -> int:
        return int(self.entity_vectors.shape[1])


def vector_dtype(rows: int) -> type[np.floating[Any]]:
    """The dtype of a table of ``rows`` entity vectors (float16 above ``HALF_ABOVE``)."""
    return np.float16 if rows > HALF_ABOVE else np.float32


def unit_rows(ids: list[str], vectors: VectorStore, dim: int, collection: str = "entities") -> np.ndarray:
    """The vectors of ``ids`` in ``collection`` as unit float32 rows (zero rows for ids without one)."""
    out = np.zeros((len(ids), dim), dtype=np.float32)
    found = vectors.vectors(collection, ids) if ids else {}
    have = [k for k, eid in enumerate(ids) if eid in found]
    if have:
        out[have] = unit(np.stack([found[ids[k]] for k in have]))
    return out


def chunk_columns(rows: list[dict[str, Any]]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Chunk rows sorted by id, as columns."""
    rows = sorted({r["id"]: r for r in rows}.values(), key=lambda r: r["id"])
    cols = {name: (strings if name == "text" else shared)([str(r.get(name) or ("text" if name == "kind" else ""))
                                                           for r in rows])
            for name in CHUNK_COLUMNS if name not in _FROM_METADATA}
    metas = [_metadata(r.get("metadata")) for r in rows]
    cols["corpus_id"] = shared([str(m.get("corpus_id", "")) for m in metas])
    cols["groups"] = shared([SEP.join(groups_of(m)) for m in metas])
    return strings([r["id"] for r in rows]), cols


def rows_of(sorted_ids: np.ndarray, ids: list[str]) -> np.ndarray:
    """The rows of ``ids`` in ``sorted_ids`` (-1 where absent), by binary search."""
    if not len(ids):
        return np.zeros(0, dtype=np.int64)
    query = strings(ids)
    if not len(sorted_ids):
        return np.full(len(ids), -1, dtype=np.int64)
    pos = np.searchsorted(sorted_ids, query)
    pos = np.minimum(pos, len(sorted_ids) - 1)
    return np.where(sorted_ids[pos] == query, pos, -1).astype(np.int64)


def grouped_chunks(chunk_ids: np.ndarray, groups: np.ndarray) -> dict[str, str]:
    """Chunk id -> its access groups (``core.access.SEP``-joined), for the chunks that have some."""
    rows = np.flatnonzero(groups != "")
    return dict(zip(chunk_ids[rows].tolist(), groups[rows].tolist(), strict=True))


def edge_columns(edges: list[EdgeRow], entity_ids: np.ndarray, type_names: np.ndarray | None = None,
                 grouped: dict[str, str] | None = None) -> dict[str, np.ndarray]:
    """Edge rows whose endpoints are both known entities, as columns. Types are coded against
    ``type_names`` (a previous version's), extended by the types it lacks. Edge types are columns of
    small integers and only typed edges keep an id: a delta copies these 10M-row columns (at scale)
    without touching a Python object per row. ``grouped`` (``grouped_chunks``) gives the support
    columns: each edge's supporting chunks with access groups, counted per set of groups."""
    src = rows_of(entity_ids, [e.source for e in edges])
    dst = rows_of(entity_ids, [e.target for e in edges])
    keep = (src >= 0) & (dst >= 0)
    kept = [e for e, k in zip(edges, keep.tolist(), strict=True) if k]
    names = [CO_OCCURS] if type_names is None else type_names.tolist()
    code = {name: k for k, name in enumerate(names)}
    for e in kept:
        code.setdefault(e.type, len(code))
    if len(code) > np.iinfo(np.int16).max:
        raise ValueError(f"{len(code)} edge types: more than an int16 code holds")
    support: dict[tuple[int, str], int] = {}
    if grouped:
        for row, e in enumerate(kept):
            for c in e.chunk_ids:
                if (g := grouped.get(c)) is not None:
                    support[(row, g)] = support.get((row, g), 0) + 1
    return {"edge_source": src[keep].astype(np.int32), "edge_target": dst[keep].astype(np.int32),
            "edge_type": np.asarray([code[e.type] for e in kept], dtype=np.int16),
            "edge_weight": np.asarray([e.weight for e in kept], dtype=np.float64),
            "edge_id": strings([e.id for e in kept if e.type != CO_OCCURS]),
            "edge_type_names": strings(list(code)),
            "support_edge": np.asarray([k[0] for k in support], dtype=np.int32),
            "support_groups": shared([k[1] for k in support]),
            "support_count": np.asarray(list(support.values()), dtype=np.int32)}


def typed_rows(t: Tables) -> np.ndarray:
    """The rows of the typed edges (type code > 0), ascending: ``t.edge_id[k]`` is the relation id of
    row ``typed_rows(t)[k]``."""
    return np.flatnonzero(t.edge_type != 0)


def edge_rows(t: Tables) -> tuple[list[str], list[str]]:
    """Each edge's type name and relation id ("" for co-occurrences), row by row (for reading them out)."""
    ids = [""] * len(t.edge_type)
    for row, rid in zip(typed_rows(t).tolist(), t.edge_id.tolist(), strict=True):
        ids[row] = rid
    return t.edge_type_names[t.edge_type].tolist(), ids


def mention_columns(mentions: list[tuple[str, str, int, str]], chunk_ids: np.ndarray,
                    entity_ids: np.ndarray) -> dict[str, np.ndarray]:
    """Mentions of known chunks and entities, as columns."""
    c = rows_of(chunk_ids, [m[0] for m in mentions])
    e = rows_of(entity_ids, [m[1] for m in mentions])
    keep = (c >= 0) & (e >= 0)
    counts = np.asarray([m[2] for m in mentions], dtype=np.float64)
    return {"mention_chunk": c[keep].astype(np.int32), "mention_entity": e[keep].astype(np.int32),
            "mention_count": counts[keep] if len(counts) else np.zeros(0),
            "mention_label": shared([m[3] for m, k in zip(mentions, keep.tolist(), strict=True) if k])}


def member_columns(memberships: list[tuple[str, str]], entity_ids: np.ndarray) -> dict[str, np.ndarray]:
    e = rows_of(entity_ids, [m[0] for m in memberships])
    keep = e >= 0
    return {"member_entity": e[keep].astype(np.int32),
            "member_community": shared([m[1] for m, k in zip(memberships, keep.tolist(), strict=True) if k])}


def exported_rows(sorted_ids: np.ndarray, vectors: VectorStore, collection: str, dim: int) -> np.ndarray:
    """Every vector of ``collection`` as unit float32 rows aligned with ``sorted_ids`` (zero rows for ids
    without one; vectors of ids not in ``sorted_ids`` are skipped)."""
    ids, mat = vectors.export(collection)
    out = np.zeros((len(sorted_ids), mat.shape[1] if mat.size else dim), dtype=np.float32)
    rows = rows_of(sorted_ids, list(ids))
    found = rows >= 0
    if found.any():
        out[rows[found]] = unit(np.asarray(mat)[found])
    return out


def fetch_all(graph: IndexSource, vectors: VectorStore, dim: int) -> Tables:
    """Every table from scratch (the version is read first: later writes come again as deltas)."""
    version = graph.version()
    ents = sorted(graph.snapshot_entities(), key=lambda r: r[0])
    entity_ids = strings([r[0] for r in ents])
    chunk_ids, cols = chunk_columns(graph.snapshot_chunks())
    return Tables(
        version=version, entity_ids=entity_ids, entity_names=strings([r[1] for r in ents]),
        entity_types=shared([r[2] for r in ents]), entity_keys=strings([normalize_name(r[1]) for r in ents]),
        entity_vectors=exported_rows(entity_ids, vectors, "entities", dim).astype(vector_dtype(len(entity_ids)),
                                                                                 copy=False),
        chunk_ids=chunk_ids, chunks=cols,
        chunk_vectors=exported_rows(chunk_ids, vectors, "chunks", dim),
        **mention_columns(graph.snapshot_mentions(), chunk_ids, entity_ids),
        **edge_columns(graph.snapshot_edges(), entity_ids, grouped=grouped_chunks(chunk_ids, cols["groups"])),
        **member_columns(graph.snapshot_memberships(), entity_ids),
    )
