"""Keyword search over chunk texts with bm25s (English stop words, Snowball-free tokenization)."""

from __future__ import annotations

import numpy as np


class KeywordIndex:
    """A BM25 index of a list of texts; ``search`` returns (row indices, scores)."""

    def __init__(self, texts: list[str]) -> None:
        import bm25s

        self._bm25s = bm25s
        self.size = len(texts)
        self._index = bm25s.BM25()
        if texts:
            self._index.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)

    def search(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        if self.size == 0 or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        tokens = self._bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not tokens.vocab:  # only stop words
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        idx, scores = self._index.retrieve(tokens, k=min(k, self.size), show_progress=False, n_threads=1)
        keep = scores[0] > 0
        return idx[0][keep].astype(np.int64), scores[0][keep].astype(np.float64)
