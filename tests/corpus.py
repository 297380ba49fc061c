"""Helpers for tests that ingest small JSONL corpora of one chunk per passage."""

from __future__ import annotations

from hopgraph.app.platform import Platform


def chunk_of(p: Platform) -> dict[str, str]:
    """corpus id -> chunk id (one chunk per passage)."""
    return {d: c for c, d in p.corpus_ids().items()}
