"""VectorStore on qdrant-edge: the Qdrant engine in-process (HNSW, WAL on disk).

One shard per collection under ``<vectors_dir>/<collection>/``; ``meta.json`` beside the shards
records the embedder. One process owns the store: an exclusive ``flock`` on ``owner.lock``
turns a second opener's obscure WAL error into a clear message naming the owner.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any
from uuid import UUID

import numpy as np
import qdrant_edge as qe

from hopgraph.core.settings import VectorSettings
from hopgraph.vectors.store import (
    COLLECTIONS,
    CollectionSpec,
    Filter,
    Hit,
    VectorPoint,
    VectorStoreError,
    point_uuid,
    qdrant_filter,
)

log = logging.getLogger(__name__)

_KINDS = {"keyword": qe.PayloadSchemaType.Keyword, "integer": qe.PayloadSchemaType.Integer}


class EdgeVectorStore:
    """Embedded Qdrant shards, one per collection."""

    def __init__(self, root: Path, cfg: VectorSettings | None = None) -> None:
        self.root = root
        self.cfg = cfg or VectorSettings()
        self.upsert_batch = self.cfg.upsert_batch
        self._params = qe.SearchParams(hnsw_ef=self.cfg.search_ef)
        self._exact = qe.SearchParams(exact=True)
        #: points per collection, counted on the first search after a write (``exact_below``)
        self._counts: dict[str, int] = {}
        root.mkdir(parents=True, exist_ok=True)
        self._lock_fh = self._acquire(root / "owner.lock")
        self._shards: dict[str, qe.EdgeShard] = {}
        self._spec: CollectionSpec | None = None
        self._dirty: set[str] = set()

    # -- ownership ---------------------------------------------------------------------------
    @staticmethod
    def _acquire(path: Path) -> IO[str]:
        fh = open(path, "a+")  # noqa: SIM115 - held for the store's lifetime
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            owner = fh.read().strip() or "unknown"
            fh.close()
            raise VectorStoreError(
                f"the vector store {path.parent} is in use by another process (pid {owner}); "
                "one process owns an embedded store — stop it (or send the work through its API) and retry"
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        return fh

    # -- collections -------------------------------------------------------------------------
    def ensure_collections(self, spec: CollectionSpec) -> None:
        meta_path = self.root / "meta.json"
        want: dict[str, Any] = {"dim": spec.dim, "model": spec.model,
                                "images": {"dim": spec.of("images")[0], "model": spec.of("images")[1]}}
        if meta_path.exists():
            meta = json.loads(meta_path.read_text())
            images = meta.get("images", {"dim": meta["dim"], "model": meta["model"]})
            for what, have, need in (("", meta, want), ("images ", images, want["images"])):
                if (have["dim"], have["model"]) != (need["dim"], need["model"]):
                    raise VectorStoreError(
                        f"the vector store {self.root} holds {what}{have['dim']}-d vectors of {have['model']!r}, "
                        f"but the configured {what}embedder is {need['model']!r} ({need['dim']}-d); re-ingest "
                        "into a new data dir or configure the original embedder")
        else:
            meta_path.write_text(json.dumps(want))
        self._spec = spec
        for name, fields in COLLECTIONS.items():
            self._open(name, spec.of(name)[0], fields)

    def _open(self, name: str, dim: int, fields: Mapping[str, str]) -> None:
        path = self.root / name
        hnsw = qe.HnswIndexConfig(m=self.cfg.hnsw_m, ef_construct=self.cfg.hnsw_ef_construct,
                                  full_scan_threshold=10_000, payload_m=self.cfg.hnsw_payload_m)
        cfg = qe.EdgeConfig(vectors=qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine), hnsw_config=hnsw)
        ready = path / ".hopgraph-ready"
        if ready.exists():
            shard = qe.EdgeShard.load(str(path))
        else:
            if path.exists():  # creation was interrupted before any data could be written
                shutil.rmtree(path)
            shard = qe.EdgeShard.create(str(path), cfg)
            # payload indexes must exist before optimize() builds HNSW, or filtered recall collapses
            for field_name, kind in fields.items():
                shard.update(qe.UpdateOperation.create_field_index(field_name, _KINDS[kind]))
            shard.flush()
            ready.touch()
        missing = set(fields) - set(shard.info().payload_schema)
        for field_name in sorted(missing):  # a field indexed since the shard was made (access groups)
            shard.update(qe.UpdateOperation.create_field_index(field_name, _KINDS[fields[field_name]]))
        self._shards[name] = shard

    def _shard(self, name: str) -> qe.EdgeShard:
        try:
            return self._shards[name]
        except KeyError:
            raise VectorStoreError(f"unknown collection {name!r} (or ensure_collections not called)") from None

    # -- data --------------------------------------------------------------------------------
    def upsert(self, collection: str, points: Sequence[VectorPoint]) -> None:
        shard = self._shard(collection)
        for i in range(0, len(points), self.upsert_batch):
            batch = [
                qe.Point(point_uuid(p.id), np.asarray(p.vector, dtype=np.float32).tolist(),
                         {**p.payload, "id": p.id})
                for p in points[i : i + self.upsert_batch]
            ]
            shard.update(qe.UpdateOperation.upsert_points(batch))
        if points:
            self._dirty.add(collection)
            self._counts.pop(collection, None)

    def _search_params(self, collection: str) -> qe.SearchParams:
        """Exact search below ``exact_below`` points (HNSW's answer depends on how its graph happened to
        be built, and misses neighbours the exact search finds), HNSW above."""
        count = self._counts.get(collection)
        if count is None:
            count = self._counts[collection] = self.count(collection)
        return self._exact if count < self.cfg.exact_below else self._params

    def search(self, collection: str, vector: np.ndarray, limit: int,
               where: Filter | None = None) -> list[Hit]:
        req = qe.QueryRequest(
            limit=limit, query=qe.Query.Nearest(np.asarray(vector, dtype=np.float32).tolist()),
            with_payload=True, filter=qdrant_filter(where, qe), params=self._search_params(collection),
        )
        return [Hit(str((p.payload or {})["id"]), float(p.score), dict(p.payload or {}))
                for p in self._shard(collection).query(req)]

    def search_many(self, collection: str, vectors: np.ndarray, limit: int) -> list[list[Hit]]:
        if len(vectors) == 0:
            return []
        params = self._search_params(collection)
        reqs = [qe.QueryRequest(limit=limit, query=qe.Query.Nearest(np.asarray(v, dtype=np.float32).tolist()),
                                with_payload=True, params=params) for v in vectors]
        res = self._shard(collection).query_batch(qe.QueryBatchRequest(reqs))
        return [[Hit(str((p.payload or {})["id"]), float(p.score), dict(p.payload or {})) for p in r] for r in res]

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        if ids:
            self._shard(collection).update(qe.UpdateOperation.delete_points([point_uuid(i) for i in ids]))
            self._counts.pop(collection, None)

    def delete_where(self, collection: str, where: Filter) -> None:
        flt = qdrant_filter(where, qe)
        if flt is None:
            raise VectorStoreError("delete_where needs a non-empty filter")
        self._shard(collection).update(qe.UpdateOperation.delete_points_by_filter(flt))
        self._counts.pop(collection, None)

    def set_payload_where(self, collection: str, where: Filter, payload: Mapping[str, Any]) -> None:
        flt = qdrant_filter(where, qe)
        if flt is None:
            raise VectorStoreError("set_payload_where needs a non-empty filter")
        self._shard(collection).update(qe.UpdateOperation.set_payload_by_filter(flt, dict(payload)))
        self._dirty.add(collection)

    def count(self, collection: str) -> int:
        return int(self._shard(collection).count(qe.CountRequest(exact=True)))

    def scroll(self, collection: str, where: Filter | None = None, limit: int = 256,
               offset: str | None = None) -> tuple[list[Hit], str | None]:
        req = qe.ScrollRequest(offset=offset, limit=limit, filter=qdrant_filter(where, qe), with_payload=True)
        records, nxt = self._shard(collection).scroll(req)
        hits = [Hit(str((r.payload or {})["id"]), 1.0, dict(r.payload or {})) for r in records]
        return hits, (str(nxt) if nxt is not None else None)

    def export(self, collection: str, batch: int = 2048) -> tuple[list[str], np.ndarray]:
        ids: list[str] = []
        rows: list[list[float]] = []
        offset = None
        while True:
            req = qe.ScrollRequest(offset=offset, limit=batch, with_payload=["id"], with_vector=True)
            records, offset = self._shard(collection).scroll(req)
            for r in records:
                ids.append(str((r.payload or {})["id"]))
                rows.append(r.vector if isinstance(r.vector, list) else list(r.vector))  # type: ignore[arg-type]
            if offset is None:
                break
        dim = self._spec.of(collection)[0] if self._spec else 0
        return ids, (np.asarray(rows, dtype=np.float32) if rows else np.zeros((0, dim), dtype=np.float32))

    def vectors(self, collection: str, ids: Sequence[str], batch: int = 2048) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for i in range(0, len(ids), batch):
            uuids: list[int | UUID | str] = [point_uuid(x) for x in ids[i : i + batch]]
            for r in self._shard(collection).retrieve(uuids, with_payload=["id"], with_vector=True):
                out[str((r.payload or {})["id"])] = np.asarray(r.vector, dtype=np.float32)
        return out

    # -- lifecycle ---------------------------------------------------------------------------
    def optimize(self) -> None:
        for name in sorted(self._dirty):
            self._shards[name].optimize()
        self._dirty.clear()

    def flush(self) -> None:
        for shard in self._shards.values():
            shard.flush()

    def close(self) -> None:
        for shard in self._shards.values():
            with contextlib.suppress(Exception):
                shard.flush()
            shard.close()
        self._shards.clear()
        with contextlib.suppress(OSError):
            fcntl.flock(self._lock_fh, fcntl.LOCK_UN)
        self._lock_fh.close()
