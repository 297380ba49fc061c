"""Entity bridges: the second hop where no title links two passages.

"What is the name of the waterfall in the country where the Bubye River is found?" The best passage
(on the Bubye River) says it is in Zimbabwe; the answer is in a passage on Victoria Falls that also
mentions Zimbabwe and names neither the river nor a title the first passage names, so neither title
bridges (``retrieval.parts.bridges``) nor similarity alone rank it. A reader follows the entity: of the
passages that mention what the best passage mentions, they read the one closest to the question.

Here each of the ``sources`` best documents passes ``weight`` times its score to one chunk: of the
chunks of other documents that share a named entity with it (not a noun-phrase concept, and not an
entity the query itself names: the question's own entities lead back to what the first pass found),
the one whose vector is most similar to the query, that similarity scaled by the entity's hub
damping. An entity mentioned by more chunks than ``Snapshot.entity_hub_limit`` (``HUB_FACTOR`` times
the median) damps both the choice and the passed score by limit / mentions: "United States" leads
to little in particular. A near copy of the source (cosine >= ``DUPLICATE_COSINE``) is no bridge.
Like a title bridge, the bridged chunk ranks just below its source.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from hopgraph.core.records import CONCEPT
from hopgraph.retrieval.parts.bridges import Bridged, source_chunks
from hopgraph.retrieval.parts.fusion import ranked
from hopgraph.retrieval.snapshot import Snapshot

#: a candidate this similar to its source is a copy of it (the same passage ingested twice), which
#: shares every entity and says nothing new
DUPLICATE_COSINE = 0.95


def _damping(snap: Snapshot, entities: np.ndarray) -> np.ndarray:
    df = snap.entity_df[entities]
    limit = snap.entity_hub_limit
    return np.where(df <= limit, 1.0, limit / np.maximum(df, 1.0))


def candidates(snap: Snapshot, row: int, skip: Collection[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(chunk rows, the entity that leads to each, its damping) for the chunks of other documents that
    share a named entity with chunk ``row``, not counting the entities in ``skip``; a chunk reached over
    several entities keeps the least damped."""
    inc = snap.incidence
    ents = inc.indices[inc.indptr[row]:inc.indptr[row + 1]]
    # a noun-phrase concept ("dry season", "mirror") is too generic to bridge on
    ents = np.asarray([e for e in ents.tolist() if e not in skip and snap.entity_types[e] != CONCEPT],
                      dtype=np.int64)
    if not len(ents):
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    by = snap.mentioned_in
    counts = by.indptr[ents + 1] - by.indptr[ents]
    chunks = np.concatenate([by.indices[by.indptr[e]:by.indptr[e + 1]] for e in ents.tolist()]).astype(np.int64)
    via = np.repeat(ents, counts)
    damp = np.repeat(_damping(snap, ents), counts)
    source_doc = snap.chunk_docs[row]
    other = np.asarray([snap.chunk_docs[c] != source_doc for c in chunks.tolist()], dtype=bool)
    chunks, via, damp = chunks[other], via[other], damp[other]
    order = np.lexsort((via, -damp, chunks))  # per chunk: the least damped entity first, then the smallest row
    chunks, via, damp = chunks[order], via[order], damp[order]
    first = np.ones(len(chunks), dtype=bool)
    first[1:] = chunks[1:] != chunks[:-1]
    return chunks[first], via[first], damp[first]


def entity_bridge(snap: Snapshot, scores: dict[str, float], qvec: np.ndarray, sources: int, weight: float,
                  skip: Collection[int] = ()) -> Bridged:
    """The chunk each of the ``sources`` best documents of ``scores`` leads to over a shared entity (see
    the module), scored ``weight`` times that document's score and the entity's damping."""
    out = Bridged()
    if weight <= 0 or sources <= 0 or not scores or snap.chunk_vectors.shape[0] != snap.n_chunks:
        return out
    q = np.asarray(qvec, dtype=np.float32)
    for best in dict.fromkeys(b for _, b in source_chunks(snap, ranked(scores), sources)):  # one per document
        row = snap.chunk_index[best]
        rows, via, damp = candidates(snap, row, skip)
        copy = snap.chunk_vectors[rows] @ snap.chunk_vectors[row] >= DUPLICATE_COSINE
        rows, via, damp = rows[~copy], via[~copy], damp[~copy]
        if not len(rows):
            continue
        pick = int(np.argmax((snap.chunk_vectors[rows] @ q) * damp))
        target = snap.chunk_ids[int(rows[pick])]
        value = weight * scores[best] * float(damp[pick])
        if value > out.scores.get(target, 0.0):
            out.scores[target] = value
            out.hops.append((best, snap.entity_names[int(via[pick])], target))
    return out
