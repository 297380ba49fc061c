"""Title links: a chunk that names another document's title links to that document's chunks, the way
a hyperlink would. Titles are found with one Aho-Corasick automaton over the normalized text, not by
looking up every n-gram of every chunk.

A title counts where it stands as whole words: what precedes it back to the previous space, and
what follows it up to the next, may only be punctuation (or a possessive "'s"), which is what
``hopgraph.core.text.normalize_name`` strips from a run of words.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

import ahocorasick
import numpy as np
import scipy.sparse as sp

from hopgraph.core.text import normalize_name

#: titles shorter than this (normalized) match too much; longer than MAX_WORDS words are not titles
MIN_CHARS = 4
MAX_WORDS = 8
_LEFT = re.compile(r"[\W_]*")
_RIGHT = re.compile(r"(?:['\u2019]s|[\W_]*)")


def title_index(titles: Sequence[str]) -> dict[str, list[int]]:
    """Normalized title -> the chunks of documents with that title (short ones left out)."""
    by_title: dict[str, list[int]] = {}
    for j, t in enumerate(titles):
        key = normalize_name(t)
        if len(key) >= MIN_CHARS:
            by_title.setdefault(key, []).append(j)
    return by_title


def automaton(keys: Iterable[str]) -> ahocorasick.Automaton | None:
    """An automaton of the title keys (None when there are none)."""
    auto = ahocorasick.Automaton()
    for key in keys:
        if len(key.split()) <= MAX_WORDS:
            auto.add_word(key, key)
    if len(auto) == 0:
        return None
    auto.make_automaton()
    return auto


def normalized_text(text: str) -> str:
    """The text as ``normalize_name`` sees a run of its words: NFKC, casefolded, single spaces."""
    return unicodedata.normalize("NFKC", " ".join(text.split())).casefold()


def titles_in(auto: ahocorasick.Automaton | None, text: str) -> set[str]:
    """The title keys that ``text`` (already ``normalized_text``) names as whole words."""
    if auto is None or not text:
        return set()
    found: set[str] = set()
    for end, key in auto.iter(text):
        start = end - len(key) + 1
        left = text.rfind(" ", 0, start) + 1
        right = text.find(" ", end + 1)
        right = len(text) if right < 0 else right
        if _LEFT.fullmatch(text, left, start) and _RIGHT.fullmatch(text, end + 1, right):
            found.add(key)
    return found


def title_links(texts: Sequence[str], by_title: dict[str, list[int]], docs: Sequence[str]) -> sp.csr_matrix:
    """Symmetric chunk-chunk matrix of title links (a chunk never links within its own document)."""
    auto = automaton(by_title)
    rows: list[int] = []
    cols: list[int] = []
    for i, text in enumerate(texts):
        targets = {j for key in titles_in(auto, normalized_text(text)) for j in by_title[key] if docs[j] != docs[i]}
        rows += [i] * len(targets)
        cols += targets
    n = len(texts)
    r = np.asarray(rows + cols, dtype=np.int32)
    c = np.asarray(cols + rows, dtype=np.int32)
    m = sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(n, n), dtype=np.float64)
    m.sum_duplicates()
    m.data[:] = 1.0  # duplicates collapse to one link
    return m
