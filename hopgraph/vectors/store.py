"""The VectorStore protocol and the records it exchanges."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

import numpy as np

from hopgraph.core.access import VECTOR_FIELD
from hopgraph.core.errors import StoreUnavailableError

#: a payload filter: field -> exact value, or a list of values (any of them)
Filter = Mapping[str, str | int | Sequence[str] | Sequence[int]]
FieldKind = Literal["keyword", "integer"]

_F = TypeVar("_F", covariant=True)
_NS = uuid.UUID("6f1d3c1e-5b0a-4d47-9a51-2b7f1f2a9c11")

#: collections of hopgraph and the payload fields filtered on (indexed when a collection is opened). The
#: collections of one document's vectors (``DOCUMENT_COLLECTIONS``) carry its access groups in ``groups``
#: (``core.access.vector_groups``), which a reader's searches filter on inside the engine.
COLLECTIONS: dict[str, dict[str, FieldKind]] = {
    "chunks": {"id": "keyword", "document_id": "keyword", VECTOR_FIELD: "keyword"},
    "entities": {"id": "keyword", "type": "keyword"},
    "relationships": {"id": "keyword", "type": "keyword", "source_id": "keyword", "target_id": "keyword"},
    "communities": {"id": "keyword", "level": "integer"},
    "images": {"id": "keyword", "document_id": "keyword", VECTOR_FIELD: "keyword"},
    "summaries": {"id": "keyword", "branch": "keyword", "level": "integer"},
    "sections": {"id": "keyword", "document_id": "keyword", VECTOR_FIELD: "keyword"},
    # one point per caption of an image document
    "captions": {"id": "keyword", "document_id": "keyword", VECTOR_FIELD: "keyword"},
}
#: the collections whose points each belong to one document (payload ``document_id``) and carry its groups
DOCUMENT_COLLECTIONS = tuple(c for c, fields in COLLECTIONS.items() if VECTOR_FIELD in fields)


class VectorStoreError(StoreUnavailableError):
    """A vector store cannot be opened or used as asked."""


def point_uuid(item_id: str) -> str:
    """Qdrant needs UUID or int point ids: derive a stable UUID from the hopgraph id."""
    return str(uuid.uuid5(_NS, item_id))


@dataclass(frozen=True)
class VectorPoint:
    """A vector with its hopgraph id and payload."""

    id: str
    vector: np.ndarray | Sequence[float]
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Hit:
    """A search result."""

    id: str
    score: float
    payload: dict[str, Any]


@dataclass(frozen=True)
class CollectionSpec:
    """What the collections hold: dimension and the embedder that produced their vectors; the
    ``images`` collection may hold another space (CLIP image vectors)."""

    dim: int
    model: str
    image_dim: int | None = None
    image_model: str | None = None

    def of(self, collection: str) -> tuple[int, str]:
        """(dimension, model) of one collection."""
        if collection == "images" and self.image_dim is not None:
            return self.image_dim, self.image_model or "image"
        return self.dim, self.model


class VectorStore(Protocol):
    """Named collections of vectors with payloads."""

    def ensure_collections(self, spec: CollectionSpec) -> None:
        """Create missing collections; refuse ones made with another embedder."""
        ...

    def upsert(self, collection: str, points: Sequence[VectorPoint]) -> None: ...

    def search(self, collection: str, vector: np.ndarray, limit: int,
               where: Filter | None = None) -> list[Hit]: ...

    def search_many(self, collection: str, vectors: np.ndarray, limit: int) -> list[list[Hit]]:
        """One search per row of ``vectors``, planned as one batch."""
        ...

    def delete(self, collection: str, ids: Sequence[str]) -> None: ...

    def delete_where(self, collection: str, where: Filter) -> None: ...

    def set_payload_where(self, collection: str, where: Filter, payload: Mapping[str, Any]) -> None:
        """Set these payload fields (others kept) on every point ``where`` matches."""
        ...

    def count(self, collection: str) -> int: ...

    def scroll(self, collection: str, where: Filter | None = None, limit: int = 256,
               offset: str | None = None) -> tuple[list[Hit], str | None]: ...

    def export(self, collection: str, batch: int = 2048) -> tuple[list[str], np.ndarray]:
        """Every id and vector of a collection (for in-memory snapshots)."""
        ...

    def vectors(self, collection: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of these ids (ids without a point are absent from the result)."""
        ...

    def optimize(self) -> None:
        """Build indexes after bulk loads."""
        ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


class FilterModels(Protocol[_F]):
    """The payload-filter classes that ``qdrant_edge`` and ``qdrant_client.models`` both offer, taking the
    same keywords; ``_F`` is the package's ``Filter``."""

    def Filter(self, *, must: list[Any]) -> _F: ...

    def FieldCondition(self, *, key: str, match: Any) -> Any: ...

    def MatchAny(self, *, any: list[Any]) -> Any: ...

    def MatchValue(self, *, value: Any) -> Any: ...


def qdrant_filter(where: Filter | None, models: FilterModels[_F]) -> _F | None:
    """hopgraph's dict filter as a Filter of ``models`` (the ``qdrant_edge`` module or ``qdrant_client.models``),
    or None when it is empty: every condition must hold; a list or tuple matches any of its items, any other
    value matches itself."""
    if not where:
        return None
    return models.Filter(must=[models.FieldCondition(key=k, match=models.MatchAny(any=list(v))
                                                     if isinstance(v, list | tuple) else models.MatchValue(value=v))
                               for k, v in where.items()])
