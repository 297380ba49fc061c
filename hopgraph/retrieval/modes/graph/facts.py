"""Fact hops: from an entity the question names along the typed relations whose verb the question uses,
to the chunks that state them. "What has Melanie painted?" names Melanie and uses "paint": the chunks
where Melanie -paint-> something was said (in a chat, "Melanie: I painted a lake sunrise", see
``extraction.speaker_facts``) score by how many such facts they state. A verb matches a question word
that is it or it with a short ending ("painted", "reads"); light verbs (be, have, do, get, …) never do."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from hopgraph.core.records import CO_OCCURS
from hopgraph.retrieval.run import Run

_WORD = re.compile(r"[a-z]+")
_LIGHT = frozenset({"be", "have", "do", "get", "make", "let", "say", "tell", "think", "know", "want", "feel", "see",
                    "look", "take", "give", "come", "use", "like", "mean", "seem", "go", "can", "will"})
#: a question word matches a verb it starts with and exceeds by at most this many letters ("paint" -> "painted")
_ENDING = 3


@dataclass(frozen=True)
class TypedOut:
    """Typed relations by source entity: rows ``ptr[i]:ptr[i + 1]`` of ``targets`` and ``verbs``."""

    ptr: np.ndarray
    targets: np.ndarray
    verbs: np.ndarray   # object: the relation type's verb ("go_to" -> "go")

    @classmethod
    def of(cls, source: np.ndarray, target: np.ndarray, code: np.ndarray, names: np.ndarray, n: int) -> TypedOut:
        typed = np.flatnonzero(names[code] != CO_OCCURS) if len(code) else np.zeros(0, dtype=np.int64)
        order = typed[np.argsort(source[typed], kind="stable")]
        verbs = np.array([str(t).split("_", 1)[0] for t in names], dtype=object)
        ptr = np.searchsorted(source[order], np.arange(n + 1))
        return cls(ptr, target[order].astype(np.int64), verbs[code[order]])


def typed_out(run: Run) -> TypedOut:
    """The typed relations of the run's index state by source entity (derived once per state)."""
    t = run.state.tables
    return run.state.memo("typed-out", lambda: TypedOut.of(t.edge_source, t.edge_target, t.edge_type,
                                                            t.edge_type_names, len(t.entity_ids)))


def verb_matches(verb: str, words: set[str]) -> bool:
    """Whether the question uses ``verb`` (as written or with a short ending)."""
    if len(verb) < 3 or verb in _LIGHT:
        return False
    return any(w.startswith(verb) and len(w) - len(verb) <= _ENDING for w in words)


def fact_chunks(run: Run, named: list[int]) -> dict[str, float]:
    """Chunk id -> how many facts of the ``named`` entities, with a verb the question uses, it states
    (mentions both ends of)."""
    if not named:
        return {}
    words = set(_WORD.findall(run.text.lower()))
    out_edges, snap = typed_out(run), run.snap
    ptr, rows = snap.mentioned_in.indptr, snap.mentioned_in.indices
    found: dict[int, float] = {}
    for e in named:
        lo, hi = int(out_edges.ptr[e]), int(out_edges.ptr[e + 1])
        if lo == hi:
            continue
        verbs = out_edges.verbs[lo:hi]
        used = [v for v in set(verbs.tolist()) if verb_matches(v, words)]  # a few distinct verbs per entity
        if not used:
            continue
        said = rows[ptr[e]:ptr[e + 1]]
        for target in out_edges.targets[lo:hi][np.isin(verbs, used)].tolist():
            for j in np.intersect1d(said, rows[ptr[target]:ptr[target + 1]], assume_unique=True).tolist():
                found[j] = found.get(j, 0.0) + 1.0
    return {snap.chunk_ids[j]: s for j, s in found.items()}
