"""hopgraph: graph-database-backed retrieval.

The public Python API::

    from hopgraph import Platform, Settings
    with Platform(Settings(data_dir="./.hopgraph")) as p:
        p.ingest(["docs/"])
        print(p.query("Who founded the observatory?").results[0].citation)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hopgraph.core.errors import (
    BadInputError,
    ConflictError,
    HopgraphError,
    NotFoundError,
    StoreUnavailableError,
)
from hopgraph.core.records import (
    Chunk,
    Citation,
    Community,
    Document,
    Entity,
    IngestReport,
    Mention,
    QueryFilters,
    QueryResult,
    Relation,
    RetrievedChunk,
)
from hopgraph.core.settings import RetrievalSettings, Settings
from hopgraph.graphdb import registry as _graph_backends  # noqa: F401  (publishes what settings ask of a backend)

if TYPE_CHECKING:
    from hopgraph.app.platform import Platform

__version__ = "0.1.0"
__all__ = [
    "BadInputError", "Chunk", "Citation", "Community", "ConflictError", "Document", "Entity", "HopgraphError",
    "IngestReport", "Mention", "NotFoundError", "Platform", "QueryFilters", "QueryResult", "Relation",
    "RetrievalSettings", "RetrievedChunk", "Settings", "StoreUnavailableError",
]


def __getattr__(name: str) -> Any:
    """``Platform`` is imported on first use: it pulls in every layer, which import ``hopgraph.core``."""
    if name == "Platform":
        from hopgraph.app.platform import Platform

        return Platform
    raise AttributeError(f"module 'hopgraph' has no attribute {name!r}")
