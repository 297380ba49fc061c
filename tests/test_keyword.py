"""The patchable BM25 index answers exactly as bm25s indexing the same texts from scratch (with and
without a stemmer), after any sequence of removed, inserted and edited texts; its files round-trip and
refuse another corpus or another stemmer."""

from __future__ import annotations

import random
from pathlib import Path

import bm25s
import numpy as np
import pytest
import Stemmer

from hopgraph.retrieval.index.delta import row_changes
from hopgraph.retrieval.index.tables import strings
from hopgraph.retrieval.parts.keyword import KeywordIndex

WORDS = ["graph", "retrieval", "entity", "relation", "community", "chunk", "vector", "keyword", "london", "paris",
         "ada", "lovelace", "engine", "analytical", "society", "byron", "poem", "mathematics", "machine", "the",
         "of", "and", "a", "in", "graphs", "engines", "camped", "camping", "retrieved"]
QUERIES = ["ada lovelace", "graph retrieval of entity", "the", "london paris engine engine", "zebra", "machine poem",
           "camp", "retrieving graphs"]


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12)))


def _reference(texts: list[str], query: str, k: int, stemmer: str = "") -> tuple[list[int], list[float]]:
    stem = Stemmer.Stemmer(stemmer) if stemmer else None
    ref = bm25s.BM25()
    ref.index(bm25s.tokenize(texts, stopwords="en", stemmer=stem, show_progress=False), show_progress=False)
    tokens = bm25s.tokenize([query], stopwords="en", stemmer=stem, show_progress=False)
    if not tokens.vocab:
        return [], []
    idx, scores = ref.retrieve(tokens, k=min(k, len(texts)), show_progress=False, n_threads=1)
    keep = scores[0] > 0
    return idx[0][keep].tolist(), scores[0][keep].astype(np.float64).tolist()


def _same_as_reference(index: KeywordIndex, texts: list[str]) -> None:
    assert index.size == len(texts)
    for query in QUERIES:
        rows, scores = index.search(query, 7)
        assert (rows.tolist(), scores.tolist()) == _reference(texts, query, 7, index.stemmer), query


@pytest.mark.parametrize("stemmer", ["", "english"])
@pytest.mark.parametrize("seed", range(6))
def test_a_patched_index_equals_bm25s_built_from_scratch(seed: int, stemmer: str) -> None:
    rng = random.Random(seed)
    texts = [_text(rng) for _ in range(rng.randint(5, 40))]
    index = KeywordIndex(texts, stemmer)
    _same_as_reference(index, texts)
    for _ in range(8):
        keep = np.array([rng.random() > 0.3 for _ in texts], dtype=bool)
        kept = [t for t, k in zip(texts, keep.tolist(), strict=True) if k]
        new = [_text(rng) for _ in range(rng.randint(0, 6))]
        at = np.sort(np.array([rng.randint(0, len(kept)) for _ in new], dtype=np.int64))
        index = index.patched(keep, at, new)
        texts = np.insert(strings(kept), at, strings(new)).tolist()
        if texts:
            _same_as_reference(index, texts)


def test_row_changes_keeps_only_unchanged_rows_and_inserts_the_rest() -> None:
    old_ids, old_texts = strings(["a", "b", "c", "d"]), strings(["A", "B", "C", "D"])
    new_ids, new_texts = strings(["a", "b2", "c", "d", "e"]), strings(["A", "B2", "C changed", "D", "E"])
    keep, at, rows = row_changes(old_ids, old_texts, new_ids, new_texts)
    assert keep.tolist() == [True, False, False, True]
    assert np.insert(old_texts[keep], at, new_texts[rows]).tolist() == new_texts.tolist()
    assert rows.tolist() == [1, 2, 4]


def test_dead_terms_are_renumbered_and_queries_still_match() -> None:
    index = KeywordIndex(["alpha beta", "gamma delta", "epsilon zeta"])
    index = index.patched(np.array([True, False, True]), np.array([1]), ["alpha eta"])
    assert len(index._vocab) == 7  # gamma and delta are in no text, but only 2 of 7 terms
    _same_as_reference(index, ["alpha beta", "alpha eta", "epsilon zeta"])
    index = index.patched(np.array([False, False, True]), np.array([1]), ["theta"])
    assert sorted(index._vocab) == ["epsilon", "theta", "zeta"]  # 5 of 8 terms were dead: renumbered
    _same_as_reference(index, ["epsilon zeta", "theta"])
    assert index.search("gamma", 3)[0].tolist() == []


def test_the_saved_index_round_trips_and_refuses_another_corpus(tmp_path: Path) -> None:
    texts = ["Ada Lovelace wrote notes", "Babbage built the engine", "London"]
    KeywordIndex(texts).save(tmp_path / "bm25")
    loaded = KeywordIndex.load(tmp_path / "bm25", 3)
    assert loaded is not None
    _same_as_reference(loaded, texts)
    assert KeywordIndex.load(tmp_path / "bm25", 4) is None  # another number of texts
    assert KeywordIndex.load(tmp_path / "nothing", 3) is None
    (tmp_path / "bm25" / "terms.json").write_text("not json", encoding="utf-8")
    assert KeywordIndex.load(tmp_path / "bm25", 3) is None


def test_a_stemmed_index_finds_other_forms_of_a_word_and_keeps_its_stemmer(tmp_path: Path) -> None:
    texts = ["We went camping in the mountains", "Melanie painted a sunrise", "Nothing here"]
    exact, stemmed = KeywordIndex(texts), KeywordIndex(texts, "english")
    assert exact.search("Where has Melanie camped?", 3)[0].tolist() == [1]  # only her name matches
    assert stemmed.search("Where has Melanie camped?", 3)[0].tolist()[:2] in ([0, 1], [1, 0])
    assert stemmed.search("paintings", 3)[0].tolist() == [1]
    patched = stemmed.patched(np.array([True, True, False]), np.array([2]), ["Two campers"])
    assert patched.stemmer == "english" and patched.search("camper", 3)[0].tolist() == [2]
    stemmed.save(tmp_path / "bm25")
    assert KeywordIndex.load(tmp_path / "bm25", 3) is None  # saved stemmed, wanted as written: rebuilt
    loaded = KeywordIndex.load(tmp_path / "bm25", 3, "english")
    assert loaded is not None and loaded.stemmer == "english"
    _same_as_reference(loaded, texts)


def test_an_empty_index_finds_nothing_and_grows_by_patches() -> None:
    empty = KeywordIndex([])
    assert empty.search("anything", 3)[0].tolist() == []
    grown = empty.patched(np.zeros(0, dtype=bool), np.array([0]), ["Ada Lovelace"])
    _same_as_reference(grown, ["Ada Lovelace"])
