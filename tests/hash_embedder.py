"""A deterministic stand-in encoder for tests whose vectors need not mean anything (community and
summary vectors written next to the in-memory graph, a platform on the in-memory stores): vectors from
the text's hash, through the real cache; tokens are words."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from hopgraph.vectors.cached import CachedEmbedder


class HashEmbedder(CachedEmbedder):
    """Eight dimensions from the SHA-256 of the text."""

    name, dim = "hash", 8

    def __init__(self) -> None:
        super().__init__(batch_size=None, cache_size=0)

    def _encode(self, texts: list[str]) -> np.ndarray:
        return np.stack([np.frombuffer(hashlib.sha256(t.encode()).digest()[:8], dtype=np.uint8).astype(np.float32)
                         + 1.0 for t in texts])

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [len(t.split()) for t in texts]
