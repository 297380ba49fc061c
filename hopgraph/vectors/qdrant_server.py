"""VectorStore on ``qdrant-client``: a Qdrant server by URL, or ``:memory:`` for small tests.

``:memory:`` is qdrant-client's local mode, a brute-force Python implementation: use it for a
few hundred points only. The embedder that produced a collection is kept in its metadata.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

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
    filter_terms,
    point_uuid,
)

#: how long a collection's point count decides between exact and HNSW search on a shared server
COUNT_TTL_S = 60.0
_KINDS = {"keyword": qm.PayloadSchemaType.KEYWORD, "integer": qm.PayloadSchemaType.INTEGER}


def to_client_filter(where: Filter | None) -> qm.Filter | None:
    """Convert hopgraph's dict filter to a qdrant-client Filter."""
    if not where:
        return None
    return qm.Filter(must=[qm.FieldCondition(key=key, match=qm.MatchAny(any=value) if any_of
                                             else qm.MatchValue(value=value))
                           for key, value, any_of in filter_terms(where)])


class QdrantClientVectorStore:
    """Collections on a Qdrant server (or in memory), named ``<prefix><collection>``."""

    def __init__(self, client: QdrantClient, prefix: str = "hopgraph_", upsert_batch: int = 512,
                 exact_below: int = 0) -> None:
        self.client = client
        self.prefix = prefix
        self.upsert_batch = upsert_batch
        #: collections of fewer points are searched exactly (see ``VectorSettings.exact_below``)
        self.exact_below = exact_below
        self._dirty: set[str] = set()
        self._counts: dict[str, tuple[float | None, int]] = {}  # collection -> (when counted, points)

    @classmethod
    def connect(cls, url: str | None, api_key: str | None, prefix: str, upsert_batch: int,
                timeout_s: float, exact_below: int = 0) -> QdrantClientVectorStore:
        if url in (None, ":memory:"):  # local mode searches exactly anyway
            return cls(QdrantClient(location=":memory:"), prefix, upsert_batch)
        return cls(QdrantClient(url=url, api_key=api_key, timeout=int(timeout_s)), prefix, upsert_batch, exact_below)

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
                continue
            self.client.create_collection(
                full, vectors_config=qm.VectorParams(size=want_dim, distance=qm.Distance.COSINE),
                metadata={"model": want_model, "dim": want_dim},
            )
            for field_name, kind in fields.items():
                self.client.create_payload_index(full, field_name, field_schema=_KINDS[kind])

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
            query_filter=to_client_filter(where), with_payload=True, search_params=self._params(collection),
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
        flt = to_client_filter(where)
        if flt is None:
            raise VectorStoreError("delete_where needs a non-empty filter")
        self.client.delete(self._name(collection), qm.FilterSelector(filter=flt), wait=True)
        self._counts.pop(collection, None)

    def count(self, collection: str) -> int:
        return int(self.client.count(self._name(collection), exact=True).count)

    def scroll(self, collection: str, where: Filter | None = None, limit: int = 256,
               offset: str | None = None) -> tuple[list[Hit], str | None]:
        records, nxt = self.client.scroll(self._name(collection), scroll_filter=to_client_filter(where),
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
        return ids, np.asarray(rows, dtype=np.float32).reshape(len(rows), -1)

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
