"""hopgraph in a user's own tests, with no server: the in-memory graph store and settings that choose it
with the in-memory vector store::

    from hopgraph import Platform
    from hopgraph.testing import memory_settings

    with Platform(memory_settings(tmp_path)) as p:
        p.ingest_records([{"id": "1", "text": "Ada Lovelace met Charles Babbage."}])
        p.query("Who met Babbage?", mode="bm25")

``Settings(graph={"backend": "memory"}, vectors={"backend": "memory"})`` is the same choice. Nothing is
kept: each opened store starts empty. The embedder is the configured one (the packaged MiniLM by
default, loaded from disk); ``Platform(settings, embedder=...)`` takes another. The store itself is
``hopgraph.graphdb.memory`` (re-exported here).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hopgraph.core.settings import GraphSettings, Settings, VectorSettings
from hopgraph.graphdb.memory.backend import NAME as MEMORY_GRAPH
from hopgraph.graphdb.memory.store import MemoryGraphStore, open_memory_graph
from hopgraph.vectors.registry import MEMORY as MEMORY_VECTORS

__all__ = ["MemoryGraphStore", "memory_settings", "open_memory_graph"]


def memory_settings(data_dir: Path | str = ".hopgraph", **extra: Any) -> Settings:
    """Settings with the in-memory graph and vector stores (``extra``: other sections or keys)."""
    return Settings(data_dir=Path(data_dir), graph=GraphSettings(backend=MEMORY_GRAPH),
                    vectors=VectorSettings(backend=MEMORY_VECTORS), **extra)
