"""VectorStore on ``qdrant-client``: a Qdrant server by URL, or ``:memory:`` for small tests.

``:memory:`` is qdrant-client's local mode, a brute-force Python implementation: use it for a
few hundred points only. The embedder that produced a collection is kept in its metadata.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from qdrant_client import QdrantClient
from qdrant_client import models as qm

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

#: how long a collection's point count decides between exact and HNSW search on a shared server
COUNT_TTL_S = 60.0
_KINDS = {"keyword": qm.PayloadSchemaType.KEYWORD, "integer": qm.PayloadSchemaType.INTEGER}


def collection_params(dim: int, model: str, shard_number: int | None = None,
                      replication_factor: int | None = None) -> dict[str, Any]:
    """The keyword arguments of ``create_collection`` for one collection: cosine vectors of ``dim``, the
    embedder in the metadata, and the distributed layout (``vectors.shard_number``,
    ``vectors.replication_factor``) only where it is set, so that an unset one is the server's default."""
    params: dict[str, Any] = {"vectors_config": qm.VectorParams(size=dim, distance=qm.Distance.COSINE),
                              "metadata": {"model": model, "dim": dim}}
    if shard_number is not None:
        params["shard_number"] = shard_number
    if replication_factor is not None:
        params["replication_factor"] = replication_factor
    return params


class QdrantClientVectorStore:
    """Collections on a Qdrant server (or in memory), named ``<prefix><collection>``."""

    def __init__(self, client: QdrantClient, prefix: str = "hopgraph_", upsert_batch: int = 512,
                 exact_below: int = 0, shard_number: int | None = None,
                 replication_factor: int | None = None) -> None:
        self.client = client
        self.prefix = prefix
        self.upsert_batch = upsert_batch
        #: collections of fewer points are searched exactly (see ``VectorSettings.exact_below``)
        self.exact_below = exact_below
        #: the distributed layout of the collections this store creates (None: the server's default)
        self.shard_number = shard_number
        self.replication_factor = replication_factor
        self._dirty: set[str] = set()
        self._counts: dict[str, tuple[float | None, int]] = {}  # collection -> (when counted, points)

    @classmethod
    def connect(cls, url: str | None, api_key: str | None, prefix: str, upsert_batch: int,
                timeout_s: float, exact_below: int = 0, shard_number: int | None = None,
                replication_factor: int | None = None) -> QdrantClientVectorStore:
        if url in (None, ":memory:"):  # local mode searches exactly anyway (and has one shard, one copy)
            return cls(QdrantClient(location=":memory:"), prefix, upsert_batch, shard_number=shard_number,
                       replication_factor=replication_factor)
        return cls(QdrantClient(url=url, api_key=api_key, timeout=int(timeout_s)), prefix, upsert_batch, exact_below,
                   shard_number, replication_factor)

    def _params(self, collection: str) -> qm.SearchParams | None:
        """Exact search below ``exact_below`` points. Other processes write to a server too, so a count
        is trusted for ``COUNT_TTL_S`` (and dropped on this process's own writes)."""
        if not self.exact_below:
            return None
        when, count = self._counts.get(collection, (None, 0))
        if when is None or time.monotonic() - when > COUNT_TTL_S:
            count = self.count(collection)
            self._counts[collection] = (time.monotonic(), count)
        return qm.SearchParams(exact=True) if count < self.exact_below else None

    def _name(self, collection: str) -> str:
        if collection not in COLLECTIONS:
            raise VectorStoreError(f"unknown collection {collection!r}")
        return self.prefix + collection

    def ensure_collections(self, spec: CollectionSpec) -> None:
        for name, fields in COLLECTIONS.items():
            full = self._name(name)
            want_dim, want_model = spec.of(name)
            if self.client.collection_exists(full):
                info = self.client.get_collection(full)
                meta = info.config.metadata or {}
                vec = info.config.params.vectors
                dim = vec.size if isinstance(vec, qm.VectorParams) else None
                if dim != want_dim or meta.get("model", want_model) != want_model:
                    raise VectorStoreError(
                        f"collection {full} holds {dim}-d vectors of {meta.get('model')!r}, but the configured "
                        f"embedder is {want_model!r} ({want_dim}-d)"
                    )
                self._check_layout(full, info.config.params)
                for field_name in sorted(set(fields) - set(info.payload_schema or {})):  # indexed since then
                    self.client.create_payload_index(full, field_name, field_schema=_KINDS[fields[field_name]])
                continue
            self.client.create_collection(full, **collection_params(want_dim, want_model, self.shard_number,
                                                                    self.replication_factor))
            for field_name, kind in fields.items():
                self.client.create_payload_index(full, field_name, field_schema=_KINDS[kind])

    def drop_collections(self) -> None:
        """Delete this store's collections (``<prefix><collection>``) from the server."""
        for name in COLLECTIONS:
            if self.client.collection_exists(self._name(name)):
                self.client.delete_collection(self._name(name))

    def _check_layout(self, full: str, params: qm.CollectionParams) -> None:
        """The layout settings apply when a collection is created: say so when an existing one differs."""
        for name, want, have in (("shard_number", self.shard_number, params.shard_number),
                                 ("replication_factor", self.replication_factor, params.replication_factor)):
            if want is not None and have is not None and want != have:
                log.warning("collection %s has %s = %s, not the configured %s: vectors.%s applies only when "
                            "hopgraph creates a collection", full, name, have, want, name)

    def upsert(self, collection: str, points: Sequence[VectorPoint]) -> None:
        full = self._name(collection)
        for i in range(0, len(points), self.upsert_batch):
            batch = [
                qm.PointStruct(id=point_uuid(p.id), vector=np.asarray(p.vector, dtype=np.float32).tolist(),
                               payload={**p.payload, "id": p.id})
                for p in points[i : i + self.upsert_batch]
            ]
            self.client.upsert(full, batch, wait=True)
        self._counts.pop(collection, None)

    def search(self, collection: str, vector: np.ndarray, limit: int,
               where: Filter | None = None) -> list[Hit]:
        res = self.client.query_points(
            self._name(collection), query=np.asarray(vector, dtype=np.float32).tolist(), limit=limit,
            query_filter=qdrant_filter(where, qm), with_payload=True, search_params=self._params(collection),
        )
        return [Hit(str((p.payload or {})["id"]), float(p.score), dict(p.payload or {})) for p in res.points]

    def search_many(self, collection: str, vectors: np.ndarray, limit: int) -> list[list[Hit]]:
        if len(vectors) == 0:
            return []
        params = self._params(collection)
        reqs = [qm.QueryRequest(query=np.asarray(v, dtype=np.float32).tolist(), limit=limit, with_payload=True,
                                params=params) for v in vectors]
        res = self.client.query_batch_points(self._name(collection), reqs)
        return [[Hit(str((p.payload or {})["id"]), float(p.score), dict(p.payload or {})) for p in r.points]
                for r in res]

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        if ids:
            self.client.delete(self._name(collection), qm.PointIdsList(points=[point_uuid(i) for i in ids]),
                               wait=True)
            self._counts.pop(collection, None)

    def delete_where(self, collection: str, where: Filter) -> None:
        flt = qdrant_filter(where, qm)
        if flt is None:
            raise VectorStoreError("delete_where needs a non-empty filter")
        self.client.delete(self._name(collection), qm.FilterSelector(filter=flt), wait=True)
        self._counts.pop(collection, None)

    def set_payload_where(self, collection: str, where: Filter, payload: Mapping[str, Any]) -> None:
        flt = qdrant_filter(where, qm)
        if flt is None:
            raise VectorStoreError("set_payload_where needs a non-empty filter")
        self.client.set_payload(self._name(collection), dict(payload), points=qm.FilterSelector(filter=flt), wait=True)

    def count(self, collection: str) -> int:
        return int(self.client.count(self._name(collection), exact=True).count)

    def scroll(self, collection: str, where: Filter | None = None, limit: int = 256,
               offset: str | None = None) -> tuple[list[Hit], str | None]:
        records, nxt = self.client.scroll(self._name(collection), scroll_filter=qdrant_filter(where, qm),
                                          limit=limit, offset=offset, with_payload=True)
        hits = [Hit(str((r.payload or {})["id"]), 1.0, dict(r.payload or {})) for r in records]
        return hits, (str(nxt) if nxt is not None else None)

    def export(self, collection: str, batch: int = 2048) -> tuple[list[str], np.ndarray]:
        ids: list[str] = []
        rows: list[list[float]] = []
        offset = None
        while True:
            records, offset = self.client.scroll(self._name(collection), limit=batch, offset=offset,
                                                 with_payload=["id"], with_vectors=True)
            for r in records:
                ids.append(str((r.payload or {})["id"]))
                rows.append(list(r.vector))  # type: ignore[arg-type]
            if offset is None:
                break
        if rows:
            return ids, np.asarray(rows, dtype=np.float32)
        vec = self.client.get_collection(self._name(collection)).config.params.vectors
        return ids, np.zeros((0, vec.size if isinstance(vec, qm.VectorParams) else 0), dtype=np.float32)

    def vectors(self, collection: str, ids: Sequence[str], batch: int = 2048) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for i in range(0, len(ids), batch):
            records = self.client.retrieve(self._name(collection), [point_uuid(x) for x in ids[i : i + batch]],
                                           with_payload=["id"], with_vectors=True)
            for r in records:
                out[str((r.payload or {})["id"])] = np.asarray(r.vector, dtype=np.float32)
        return out

    def optimize(self) -> None:
        """A server optimizes in the background; nothing to do."""

    def flush(self) -> None:
        """Writes are acknowledged with ``wait=True``; nothing to do."""

    def close(self) -> None:
        self.client.close()
