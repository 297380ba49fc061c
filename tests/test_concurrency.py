"""What the API's threads share, hammered from many threads at once: no exception, same answers."""

from __future__ import annotations

import hashlib
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from vectors.embedders import _CachedEmbedder


class _HashEmbedder(_CachedEmbedder):
    """A deterministic stand-in encoder (vectors from the text's hash) to drive the real cache."""

    name, dim = "hash", 8

    def _encode(self, texts: list[str]) -> np.ndarray:
        return np.stack([np.frombuffer(hashlib.sha256(t.encode()).digest()[:8], dtype=np.uint8).astype(np.float32)
                         + 1.0 for t in texts])


def test_embedder_cache_is_safe_under_16_threads() -> None:
    texts = [f"text {i % 13}" for i in range(4000)]
    expected = _HashEmbedder(batch_size=3, cache_size=0).embed(texts)
    shared = _HashEmbedder(batch_size=3, cache_size=6)  # smaller than the vocabulary: constant eviction
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: races show up at once

    def work(start: int) -> bool:
        return all(np.allclose(shared.embed(texts[i : i + 5]), expected[i : i + 5]) for i in range(start, start + 400))

    try:
        with ThreadPoolExecutor(16) as pool:
            assert all(pool.map(work, [i * 100 for i in range(32)]))
    finally:
        sys.setswitchinterval(interval)
    assert len(shared._cache) <= 6
