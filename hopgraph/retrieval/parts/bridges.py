"""Bridges: the second hop of a multi-hop question, followed the way a reader follows a link.

"Where was the performer of *Changed It* born?" finds the passage on the song; the answer is in the
passage on the performer it names, which shares no words with the question, so no similarity ranks
it. A reader follows the name. Here the best-ranked documents (``sources``) pass a share
(``weight``) of their score to the documents whose titles they name, the first ``per_source`` of
them in the order the passage names them (a passage names its most central relations first: the
performer of a song, the director of a film). A bridged document ranks just below the passage that
led to it, above weaker first-pass hits: its bridge score never exceeds its source's.

Titles are found with the snapshot's title automaton (``retrieval.index.links``: whole words, and a
capitalized title only where the text writes it with a capital). A hub, a title named by more than
``HUB_FACTOR`` (10) times the median number of chunks naming a title, passes proportionally less.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hopgraph.retrieval.index.links import titles_in
from hopgraph.retrieval.parts.fusion import ranked
from hopgraph.retrieval.snapshot import Snapshot


@dataclass
class Bridged:
    """Scores of the documents reached over a bridge (one chunk each), and the hops for --explain."""

    scores: dict[str, float] = field(default_factory=dict)
    hops: list[tuple[str, str, str]] = field(default_factory=list)  # (source chunk, title, target chunk)


def source_chunks(snap: Snapshot, order: list[str], sources: int) -> list[tuple[int, str]]:
    """(chunk row, its document's best chunk) for every ranked chunk of the first ``sources`` documents."""
    best: dict[str, str] = {}
    out: list[tuple[int, str]] = []
    for c in order:
        j = snap.chunk_index.get(c)
        if j is None:
            continue
        d = snap.chunk_docs[j]
        if d not in best:
            if len(best) == sources:
                continue
            best[d] = c
        out.append((j, best[d]))
    return out


def _target_chunk(snap: Snapshot, rows: list[int], prefer: list[dict[str, float]]) -> int:
    """The chunk of a bridged document that carries its score: the best-scored by the first signal of
    ``prefer`` that scores any of them (the fused ranking, then the walk), else the first of its
    chunks in index order."""
    for scores in prefer:
        scored = [j for j in rows if snap.chunk_ids[j] in scores]
        if scored:
            return max(scored, key=lambda j: scores[snap.chunk_ids[j]])
    return rows[0]


def hub_damping(snap: Snapshot, key: str) -> float:
    """1 for a title named by no more chunks than the hub limit; limit / named-by above it (a title
    that many passages name, "United States", leads to little in particular)."""
    named = snap.title_named_by.get(key, 0)
    return 1.0 if named <= snap.title_hub_limit else snap.title_hub_limit / named


def bridge(snap: Snapshot, scores: dict[str, float], sources: int, per_source: int, weight: float,
           prefer: list[dict[str, float]] | None = None) -> Bridged:
    """The documents the ``sources`` best documents of ``scores`` name by title, each scored
    ``weight`` times the score of the document that names it (the best such, when several do)."""
    out = Bridged()
    if weight <= 0 or sources <= 0 or per_source <= 0 or snap.title_automaton is None or not scores:
        return out
    prefer = [scores, *(prefer or [])]
    order = ranked(scores)
    for j, best in source_chunks(snap, order, sources):
        source_doc = snap.chunk_docs[j]
        taken: list[str] = []
        for key in titles_in(snap.title_automaton, snap.chunk_texts[j]):
            rows_by_doc: dict[str, list[int]] = {}
            for t in snap.title_index.get(key, []):
                if snap.chunk_docs[t] != source_doc:
                    rows_by_doc.setdefault(snap.chunk_docs[t], []).append(t)
            for doc, rows in rows_by_doc.items():
                if len(taken) == per_source:
                    break
                if doc in taken:
                    continue
                taken.append(doc)
                target = snap.chunk_ids[_target_chunk(snap, rows, prefer)]
                value = weight * scores[best] * hub_damping(snap, key)
                if value > out.scores.get(target, 0.0):
                    out.scores[target] = value
                    out.hops.append((snap.chunk_ids[j], key, target))
            if len(taken) == per_source:
                break
    return out


def apply(scores: dict[str, float], bridged: Bridged) -> dict[str, float]:
    """``scores`` with each bridged chunk raised to its bridge score (never lowered)."""
    out = dict(scores)
    for c, v in bridged.scores.items():
        if v > out.get(c, 0.0):
            out[c] = v
    return out
