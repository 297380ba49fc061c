"""Batching and an LRU cache around an embedding function (``CachedEmbedder``), shared by the embedders."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence

import numpy as np

from hopgraph.core.linalg import unit


def length_batches(texts: list[str], batch_size: int, max_batch: int = 1024,
                   tokens: Sequence[int] | None = None) -> Iterator[list[str]]:
    """Texts grouped by length, longest first, under a budget of ``batch_size`` x 128 padded tokens.

    A batch is padded to its longest text, so mixing a 200-token passage with 5-token names
    wastes most of the work; texts of similar lengths are grouped instead, and short texts form
    larger batches (entity names: up to ``max_batch``). ``tokens``: each text's word-piece count, where
    the tokenizer is at hand (names of rare words split into many pieces); otherwise about four
    characters a word piece. ``python -m benchmarks.embed`` measures the throughput."""
    budget = batch_size * 128
    if tokens is None:
        tokens = [len(t) // 4 for t in texts]
    order = sorted(range(len(texts)), key=lambda k: (-tokens[k], -len(texts[k])))
    i = 0
    while i < len(order):
        longest = min(tokens[order[i]], 256) + 2  # models truncate; the special tokens around
        n = max(1, min(max_batch, budget // longest))
        yield [texts[k] for k in order[i : i + n]]
        i += n


#: default batch sizes (in units of 128 padded tokens, see ``length_batches``). On a CPU small batches
#: stay in cache and embed faster than large ones (``python -m benchmarks.embed`` compares batch sizes);
#: a GPU wants large ones
CPU_BATCH = 8
GPU_BATCH = 128


class CachedEmbedder:
    """LRU cache and batching around a ``_encode`` implementation. The cache is shared by the API's
    request threads and the writer thread: every read and write of it holds a lock (encoding does not)."""

    name: str
    dim: int

    def __init__(self, batch_size: int | None, cache_size: int) -> None:
        self._batch_size = batch_size
        self.cache_size = cache_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def _encode(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def warm(self) -> None:
        """Loaded at construction: nothing to start."""

    def load(self) -> bool:
        """Loaded at construction: nothing to wait for."""
        return False

    @property
    def batch_size(self) -> int:
        """The configured batch size, else ``CPU_BATCH`` (``GPU_BATCH`` for a model on a GPU)."""
        return self._batch_size or (GPU_BATCH if self._on_gpu() else CPU_BATCH)

    def _on_gpu(self) -> bool:
        return False

    def _token_counts(self, texts: list[str]) -> list[int] | None:
        """Word-piece counts for batching (None: estimated from characters)."""
        return None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        todo: dict[str, list[int]] = {}
        with self._lock:
            for i, t in enumerate(texts):
                hit = self._cache.get(t)
                if hit is not None:
                    self._cache.move_to_end(t)
                    out[i] = hit
                else:
                    todo.setdefault(t, []).append(i)
        fresh = list(todo)
        for batch in length_batches(fresh, self.batch_size, tokens=self._token_counts(fresh)):
            vecs = unit(self._encode(batch))
            for t, v in zip(batch, vecs, strict=True):
                for i in todo[t]:
                    out[i] = v
            if self.cache_size:
                with self._lock:
                    for t, v in zip(batch, vecs, strict=True):
                        self._cache[t] = v
                        self._cache.move_to_end(t)
                    while len(self._cache) > self.cache_size:
                        self._cache.popitem(last=False)
        return out
