"""Small helpers over extracted relations shared by the pipeline and entity resolution."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from hopgraph.core.records import Relation
from hopgraph.vectors.store import VectorPoint


def merge_relations(relations: Sequence[Relation]) -> list[Relation]:
    """One relation per id, its support the union of the chunks that stated it (``Relation.merged``)."""
    merged: dict[str, Relation] = {}
    for r in relations:
        old = merged.get(r.id)
        merged[r.id] = r if old is None else old.merged(r)
    return list(merged.values())


def relation_text(r: Relation, names: Mapping[str, str], max_words: int) -> str:
    """What a relationship embedding encodes: "{source} {type} {target}: {description}" (the
    supporting sentence, cut at ``max_words``: the chunk vector already holds the whole of it)."""
    src, dst = names.get(r.source_id, r.source_id), names.get(r.target_id, r.target_id)
    words = r.description.split()
    desc = " ".join(words[:max_words]) + (" ..." if len(words) > max_words else "")
    return f"{src} {r.type.replace('_', ' ')} {dst}: {desc}"


def relation_point(r: Relation, vector: np.ndarray) -> VectorPoint:
    """The relationship vector of a relation, with the payload retrieval filters and reads."""
    return VectorPoint(r.id, vector, {"source_id": r.source_id, "target_id": r.target_id, "type": r.type,
                                      "label": r.shown})
