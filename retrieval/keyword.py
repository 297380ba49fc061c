"""Keyword search over chunk texts with bm25s (English stop words, Snowball-free tokenization)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)


class KeywordIndex:
    """A BM25 index of a list of texts; ``search`` returns (row indices, scores)."""

    def __init__(self, texts: list[str]) -> None:
        import bm25s

        self._bm25s = bm25s
        self.size = len(texts)
        self._index = bm25s.BM25()
        if texts:
            self._index.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)

    def save(self, folder: Path) -> None:
        """Write the index to ``folder`` (bm25s' own files; nothing for an empty index)."""
        if self.size:
            self._index.save(str(folder), show_progress=False)

    @classmethod
    def load(cls, folder: Path, size: int) -> KeywordIndex | None:
        """The index saved in ``folder`` for ``size`` texts (its arrays memory-mapped), or None when there
        is none or it indexes another number of texts."""
        import bm25s

        if not size or not folder.is_dir():
            return None
        try:
            index = bm25s.BM25.load(str(folder), mmap=True, show_progress=False)
        except (OSError, ValueError, KeyError) as exc:
            log.warning("keyword index in %s unreadable (%s): rebuilding it", folder, exc)
            return None
        if index.scores.get("num_docs") != size:
            log.warning("keyword index in %s indexes another corpus: rebuilding it", folder)
            return None
        loaded = cls.__new__(cls)
        loaded._bm25s, loaded.size, loaded._index = bm25s, size, index
        return loaded

    def search(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        if self.size == 0 or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        tokens = self._bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not tokens.vocab:  # only stop words
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        idx, scores = self._index.retrieve(tokens, k=min(k, self.size), show_progress=False, n_threads=1)
        keep = scores[0] > 0
        return idx[0][keep].astype(np.int64), scores[0][keep].astype(np.float64)
