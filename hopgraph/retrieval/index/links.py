"""Title links: a chunk that names another document's title links to that document's chunks, the way
a hyperlink would. Titles are found with one Aho-Corasick automaton over the normalized text, not by
looking up every n-gram of every chunk.

A title counts where it stands as whole words: what precedes it back to the previous space, and
what follows it up to the next, may only be punctuation (or a possessive "'s"), which is what
``hopgraph.core.text.normalize_name`` strips from a run of words. A title written with capitals
("Place of birth", "Changed It") counts only where the text writes it with a capital too: "the
place of birth" is a phrase, not a link to that page; a title in lower case links anywhere.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence

import ahocorasick
import numpy as np
import scipy.sparse as sp

from hopgraph.core.text import normalize_name

#: titles shorter than this (normalized) match too much; longer than MAX_WORDS words are not titles
MIN_CHARS = 4
MAX_WORDS = 8
_LEFT = re.compile(r"[\W_]*")
_RIGHT = re.compile(r"(?:['\u2019]s|[\W_]*)")


def title_index(titles: Sequence[str], keys: Mapping[str, str] | None = None) -> dict[str, list[int]]:
    """Normalized title -> the chunks of documents with that title (short ones left out; ``keys``:
    titles already normalized)."""
    by_title: dict[str, list[int]] = {}
    for j, t in enumerate(titles):
        key = keys[t] if keys is not None else normalize_name(t)
        if len(key) >= MIN_CHARS:
            by_title.setdefault(key, []).append(j)
    return by_title


def moved_title_index(old: dict[str, list[int]], row_map: np.ndarray, titles: Sequence[str],
                      keys: Mapping[str, str]) -> dict[str, list[int]]:
    """``title_index(titles, keys)`` from the previous version's ``old``: its rows moved by ``row_map``
    (old row -> new, -1 where removed; monotone, so each list stays sorted) and the new rows (no old
    row's) added under their titles."""
    to = row_map.tolist()
    out: dict[str, list[int]] = {}
    for key, rows in old.items():
        moved = [to[r] for r in rows if to[r] >= 0]
        if moved:
            out[key] = moved
    new = np.ones(len(titles), dtype=bool)
    new[row_map[row_map >= 0]] = False
    grown: set[str] = set()
    for j in np.flatnonzero(new).tolist():
        key = keys[titles[j]]
        if len(key) >= MIN_CHARS:
            out.setdefault(key, []).append(j)
            grown.add(key)
    for key in grown:
        out[key].sort()
    return out


def cased_titles(titles: Iterable[str], keys: Mapping[str, str] | None = None) -> set[str]:
    """The normalized titles that some document writes with a capital letter (``keys``: titles already
    normalized)."""
    return {keys[t] if keys is not None else normalize_name(t) for t in titles if t != t.lower()}


def automaton(keys: Iterable[str], cased: set[str] | frozenset[str] = frozenset()) -> ahocorasick.Automaton | None:
    """An automaton of the title keys (None when there are none); each key carries whether it is
    in ``cased`` (a mention must then show a capital)."""
    auto = ahocorasick.Automaton()
    for key in keys:
        if len(key.split()) <= MAX_WORDS:
            auto.add_word(key, (key, key in cased))
    if len(auto) == 0:
        return None
    auto.make_automaton()
    return auto


def titles_in(auto: ahocorasick.Automaton | None, text: str, case: bool = True) -> list[str]:
    """The title keys that ``text`` names as whole words, in the order it first names them (``case``:
    a capitalized title counts only where the text writes it with a capital)."""
    if auto is None or not text:
        return []
    flat = unicodedata.normalize("NFKC", " ".join(text.split()))
    low = flat.casefold()
    aligned = len(low) == len(flat)  # casefolding can lengthen a text ("ß" -> "ss"): no case test then
    found: dict[str, int] = {}
    for end, (key, cased) in auto.iter(low):
        start = end - len(key) + 1
        left = low.rfind(" ", 0, start) + 1
        right = low.find(" ", end + 1)
        right = len(low) if right < 0 else right
        if key in found or not (_LEFT.fullmatch(low, left, start) and _RIGHT.fullmatch(low, end + 1, right)):
            continue
        if case and cased and aligned and flat[start:end + 1] == low[start:end + 1]:
            continue  # written in lower case: a phrase, not the name of that page
        found[key] = start
    return sorted(found, key=found.__getitem__)


#: a title named by more than this many times the median number of chunks naming a title is a hub
HUB_FACTOR = 10.0


def named_titles(texts: Sequence[str], auto: ahocorasick.Automaton | None) -> list[tuple[str, ...]]:
    """The title keys each text names (``titles_in``)."""
    return [tuple(titles_in(auto, text)) for text in texts]


def title_links(named: Sequence[Sequence[str]], by_title: dict[str, list[int]], docs: Sequence[str]
                ) -> tuple[sp.csr_matrix, dict[str, int]]:
    """Symmetric chunk-chunk matrix of the title links of the chunks naming the titles ``named`` (a
    chunk never links within its own document), and how many chunks name each title named."""
    rows: list[int] = []
    cols: list[int] = []
    named_by: dict[str, int] = {}
    for i, keys in enumerate(named):
        if not keys:
            continue
        targets: set[int] = set()
        for key in keys:
            found = {j for j in by_title[key] if docs[j] != docs[i]}
            if found:
                named_by[key] = named_by.get(key, 0) + 1
                targets |= found
        rows += [i] * len(targets)
        cols += targets
    n = len(named)
    r = np.asarray(rows + cols, dtype=np.int32)
    c = np.asarray(cols + rows, dtype=np.int32)
    m = sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(n, n), dtype=np.float64)
    m.sum_duplicates()
    m.data[:] = 1.0  # duplicates collapse to one link
    return m, named_by


def damp_hubs(matrix: sp.csr_matrix, by_title: dict[str, list[int]], named_by: dict[str, int]) -> sp.csr_matrix:
    """Title links into a hub (a title named by more than ``hub_limit`` chunks) weigh limit / named-by,
    so the walk does not pile mass on a page that everything names; a link keeps the smaller weight of
    its two ends (the matrix stays symmetric)."""
    limit = hub_limit(list(named_by.values()))
    damp = np.ones(matrix.shape[0])
    for key, n in named_by.items():
        if n > limit:
            damp[by_title[key]] = limit / n
    if matrix.nnz == 0 or (damp == 1.0).all():
        return matrix
    coo = matrix.tocoo()
    weights = coo.data * np.minimum(damp[coo.row], damp[coo.col])
    return sp.csr_matrix((weights, (coo.row, coo.col)), shape=matrix.shape)


def hub_limit(counts: Sequence[float] | np.ndarray) -> float:
    """How many naming (or mentioning) chunks make a title (or an entity) a hub: ``HUB_FACTOR`` times the
    median of ``counts`` (inf without any)."""
    return HUB_FACTOR * float(np.median(counts)) if len(counts) else float("inf")
