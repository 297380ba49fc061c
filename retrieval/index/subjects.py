"""Subjects: what a document without a title is about, so that it can be linked to and bridged to.

A titled document is about what its title names; that is what title links, bridges, query titles
and ``about_weight`` read. A document without a title (a pasted note, a transcript, a passage whose
title was lost) is titled here by its **subject**: the named entity its text opens with, within the
first few words of its first chunk ("Nicki Minaj is a rapper ...", "The Humaya River is a river
...") — the way encyclopedic, news and reference text names what it is about first. A text that
opens otherwise ("After the war, he moved to Paris") has no subject, rather than a wrong one.
Noun-chunk concepts and nationalities are never subjects: they name kinds, not a thing a document
is about.
"""

from __future__ import annotations

import re

import numpy as np

from retrieval.index.tables import Tables

#: a subject must start within this many words of the start of the text
MAX_START_WORD = 2
#: entity types that never title a document
NOT_SUBJECTS = frozenset({"CONCEPT", "NORP"})
_WORD_START = re.compile(r"\S+")


def _first_chunks(t: Tables) -> dict[str, int]:
    """Untitled document -> the row of its first chunk (lowest ``ord``)."""
    first: dict[str, tuple[int, int]] = {}
    for j, (title, doc, ord_) in enumerate(zip(t.chunks["title"].tolist(), t.chunks["document_id"].tolist(),
                                               t.chunks["ord"].tolist(), strict=True)):
        if str(title).strip():
            continue
        key = (int(ord_ or 0), j)
        if doc not in first or key < first[doc]:
            first[doc] = key
    return {doc: j for doc, (_, j) in first.items()}


def subject_of(text: str, names: list[tuple[str, str]]) -> str:
    """The name among ``names`` ((name, type) of the entities a text mentions) that the text opens
    with, the longest when several start at the same place; "" when none does."""
    starts = [m.start() for m in _WORD_START.finditer(text[:400])][: MAX_START_WORD + 1]
    if not starts:
        return ""
    low = text[: 400].casefold()
    best: tuple[int, int, str] | None = None
    for name, kind in names:
        if kind in NOT_SUBJECTS or not name.strip():
            continue
        key_name = name.casefold()
        pos = low.find(key_name)
        end = pos + len(key_name)
        inside_a_word = (pos > 0 and low[pos - 1].isalnum()) or (end < len(low) and low[end].isalnum())
        if pos < 0 or pos > starts[-1] or inside_a_word:
            continue
        key = (pos, -len(name), name)
        if best is None or key < best:
            best = key
    return best[2] if best is not None else ""


def effective_titles(t: Tables) -> list[str]:
    """Each chunk's document title, or its document's subject when the document has no title."""
    titles = [str(x) for x in t.chunks["title"].tolist()]
    first = _first_chunks(t)
    if not first:
        return titles
    rows = np.fromiter(first.values(), dtype=np.int64)
    mask = np.isin(t.mention_chunk, rows)
    names: dict[int, list[tuple[str, str]]] = {}
    for c, e in zip(t.mention_chunk[mask].tolist(), t.mention_entity[mask].tolist(), strict=True):
        names.setdefault(int(c), []).append((str(t.entity_names[e]), str(t.entity_types[e])))
    texts = t.chunks["text"]
    subject = {doc: subject_of(str(texts[j]), names.get(j, [])) for doc, j in first.items()}
    docs = t.chunks["document_id"].tolist()
    return [title if title.strip() else subject.get(doc, "") for title, doc in zip(titles, docs, strict=True)]
