"""Keyword search over chunk texts: BM25 (bm25s' Lucene variant, English stop words, words reduced to their
Snowball stem where a stemmer is named: with 'english', "camped" finds "camping") whose index is patched
when texts change instead of rebuilt.

bm25s stores one precomputed score per (text, term), which depends on every text (the term's document
frequency, the mean text length). This index keeps what does not: the term counts of each text (a CSR
matrix, rows aligned with the texts). A patch drops and inserts rows of it, tokenizing only the new
texts; the score matrix is then recomputed from the counts with array operations, exactly as bm25s
computes it (float32, same formulas, same order), and handed to a ``bm25s.BM25`` whose own code
answers queries. So a patched index answers as one built from scratch over the same texts, bit for
bit, at a cost that grows with the change (the recomputation is a pass over the counts).
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from hopgraph.core.text import with_handles_split

log = logging.getLogger(__name__)

#: bm25s' defaults (method "lucene")
K1, B = 1.5, 0.75
#: terms that no text holds any more, above this fraction of the vocabulary: renumber the terms
_DEAD_TERMS = 0.5
_FILES = ("tf_data.npy", "tf_indices.npy", "tf_indptr.npy", "terms.json", "tokens.json")


def tokenize(texts: list[str], stemmer: str) -> Any:
    """bm25s' tokens of ``texts`` (lower case, English stop words dropped), each reduced to its stem by
    the Snowball ``stemmer`` ("" keeps the words as written). A stemmer per call: PyStemmer's objects
    are not thread-safe, and queries run on several threads."""
    import bm25s

    stem = None
    if stemmer:
        import Stemmer

        stem = Stemmer.Stemmer(stemmer)
    return bm25s.tokenize([with_handles_split(t) for t in texts], stopwords="en", stemmer=stem,
                          show_progress=False)


def _tokenize(texts: list[str], stemmer: str) -> tuple[list[list[int]], dict[str, int]]:
    """The token ids of the texts to index and their vocabulary (``tokenize``)."""
    tokens = tokenize(texts, stemmer)
    return tokens.ids, tokens.vocab


class KeywordIndex:
    """A BM25 index of a list of texts, their words reduced by the Snowball ``stemmer`` ("" = none);
    ``search`` returns (row indices, scores)."""

    def __init__(self, texts: list[str], stemmer: str = "") -> None:
        self._terms: list[str] = []
        self._vocab: dict[str, int] = {}
        self.stemmer = stemmer
        self._tf = self._counts(texts)
        self._derive()

    @property
    def size(self) -> int:
        return int(self._tf.shape[0])

    # -- building ------------------------------------------------------------------------------
    def _counts(self, texts: list[str]) -> sp.csr_matrix:
        """The term counts of ``texts`` (one row each), adding their new terms to the vocabulary."""
        if not texts:
            return sp.csr_matrix((0, len(self._terms)), dtype=np.float32)
        ids, local = _tokenize(texts, self.stemmer)
        to_global = np.empty(len(local), dtype=np.int64)
        for term, i in sorted(local.items(), key=lambda kv: kv[1]):
            g = self._vocab.get(term)
            if g is None:
                g = self._vocab[term] = len(self._terms)
                self._terms.append(term)
            to_global[i] = g
        lengths = np.fromiter((len(d) for d in ids), dtype=np.int64, count=len(ids))
        flat = np.fromiter((t for d in ids for t in d), dtype=np.int64, count=int(lengths.sum()))
        indptr = np.concatenate([[0], np.cumsum(lengths)])
        tf = sp.csr_matrix((np.ones(len(flat), dtype=np.float32), to_global[flat], indptr),
                           shape=(len(texts), len(self._terms)))
        tf.sum_duplicates()
        return tf

    def _derive(self) -> None:
        """The bm25s retriever of the current counts (see the module docstring for the formulas)."""
        import bm25s

        tf = self._tf
        n_docs = tf.shape[0]
        retriever = bm25s.BM25()
        retriever.nonoccurrence_array = None  # what bm25s' own index sets for the Lucene variant
        self._bm25 = retriever
        if not n_docs:
            return
        df = np.bincount(tf.indices, minlength=len(self._terms))
        doc_len = np.asarray(tf.sum(axis=1), dtype=np.float64).ravel()
        avg = doc_len.astype(np.int64).mean()  # bm25s: the mean of the integer lengths
        # idf: math.log, as bm25s computes it (per distinct document frequency)
        values, inverse = np.unique(df, return_inverse=True)
        logs = np.asarray([math.log(1 + (n_docs - df + 0.5) / (df + 0.5)) if df else 0.0 for df in values.tolist()])
        idf = logs[inverse].astype(np.float32)
        rows = np.repeat(np.arange(n_docs), np.diff(tf.indptr))
        norm = (K1 * ((1 - B) + B * doc_len / avg)).astype(np.float32)
        scores = idf[tf.indices] * (tf.data / (norm[rows] + tf.data))
        csc = sp.csr_matrix((scores, tf.indices, tf.indptr), shape=tf.shape).tocsc()
        retriever.scores = {"data": csc.data, "indices": csc.indices, "indptr": csc.indptr, "num_docs": n_docs}
        retriever.vocab_dict = dict(self._vocab)

    # -- patching ------------------------------------------------------------------------------
    def patched(self, keep: np.ndarray, at: np.ndarray, texts: list[str]) -> KeywordIndex:
        """The index of ``np.insert(old_texts[keep], at, texts)``: kept rows keep their counts, only
        ``texts`` are tokenized (this index is not changed)."""
        out = KeywordIndex.__new__(KeywordIndex)
        out._terms, out._vocab, out.stemmer = list(self._terms), dict(self._vocab), self.stemmer
        kept = self._tf[np.asarray(keep, dtype=bool)]
        new = out._counts(texts)
        width = len(out._terms)
        kept = sp.csr_matrix((kept.data, kept.indices, kept.indptr), shape=(kept.shape[0], width))
        new = sp.csr_matrix((new.data, new.indices, new.indptr), shape=(new.shape[0], width))
        total = kept.shape[0] + new.shape[0]
        fresh = np.asarray(at, dtype=np.int64) + np.arange(len(texts))  # the rows of the new texts
        order = np.empty(total, dtype=np.int64)
        old_rows = np.ones(total, dtype=bool)
        old_rows[fresh] = False
        order[old_rows] = np.arange(kept.shape[0])
        order[fresh] = kept.shape[0] + np.arange(new.shape[0])
        out._tf = sp.csr_matrix(sp.vstack([kept, new], format="csr")[order])
        out._compact()
        out._derive()
        return out

    def _compact(self) -> None:
        """Renumber the terms when more than half of them are in no text any more."""
        alive = np.bincount(self._tf.indices, minlength=len(self._terms)) > 0
        if len(alive) and (~alive).sum() <= _DEAD_TERMS * len(alive):
            return
        new_id = np.cumsum(alive) - 1
        self._terms = [t for t, a in zip(self._terms, alive.tolist(), strict=True) if a]
        self._vocab = {t: i for i, t in enumerate(self._terms)}
        tf = self._tf
        self._tf = sp.csr_matrix((tf.data, new_id[tf.indices].astype(tf.indices.dtype), tf.indptr),
                                 shape=(tf.shape[0], len(self._terms)))

    # -- persistence ---------------------------------------------------------------------------
    def save(self, folder: Path) -> None:
        """Write the term counts and the vocabulary to ``folder`` (nothing for an empty index)."""
        if not self.size:
            return
        folder.mkdir(parents=True, exist_ok=True)
        for name, array in (("tf_data", self._tf.data), ("tf_indices", self._tf.indices),
                            ("tf_indptr", self._tf.indptr)):
            np.save(folder / f"{name}.npy", array, allow_pickle=False)
        (folder / "terms.json").write_text(json.dumps(self._terms), encoding="utf-8")
        (folder / "tokens.json").write_text(json.dumps({"stemmer": self.stemmer}), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path, size: int, stemmer: str = "") -> KeywordIndex | None:
        """The index saved in ``folder`` for ``size`` texts stemmed by ``stemmer``, or None when there is
        none (or one in an older format), it indexes another number of texts or its words were stemmed
        otherwise."""
        if not size or not all((folder / name).is_file() for name in _FILES):
            return None
        try:
            saved = json.loads((folder / "tokens.json").read_text(encoding="utf-8")).get("stemmer")
            if saved != stemmer:
                log.info("keyword index in %s was built with stemmer %r, not %r: rebuilding it", folder, saved,
                         stemmer)
                return None
            terms = json.loads((folder / "terms.json").read_text(encoding="utf-8"))
            parts: dict[str, Any] = {n: np.load(folder / f"{n}.npy", allow_pickle=False)
                                     for n in ("tf_data", "tf_indices", "tf_indptr")}
            tf = sp.csr_matrix((parts["tf_data"], parts["tf_indices"], parts["tf_indptr"]),
                               shape=(len(parts["tf_indptr"]) - 1, len(terms)))
        except (OSError, ValueError, AttributeError) as exc:
            log.warning("keyword index in %s unreadable (%s): rebuilding it", folder, exc)
            return None
        if tf.shape[0] != size:
            log.warning("keyword index in %s indexes another corpus: rebuilding it", folder)
            return None
        loaded = cls.__new__(cls)
        loaded._terms, loaded._vocab, loaded._tf = terms, {t: i for i, t in enumerate(terms)}, tf
        loaded.stemmer = stemmer
        loaded._derive()
        return loaded

    # -- searching -----------------------------------------------------------------------------
    def search(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        if self.size == 0 or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        tokens = tokenize([query], self.stemmer)
        if not tokens.vocab:  # only stop words
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        idx, scores = self._bm25.retrieve(tokens, k=min(k, self.size), show_progress=False, n_threads=1)
        keep = scores[0] > 0
        return idx[0][keep].astype(np.int64), scores[0][keep].astype(np.float64)
