"""Composed community vectors (``communities.vectors = "composed"``): a community's vector is the
direction of the sum of its key entities' vectors (the members its title and summary name, already in
the vector store when communities are built), so no community text is embedded.

The alternative, and the default, is ``"text"``: the title and the start of the summary embedded
(``ingest.communities.embed_text``). Composing skips that embedding, most of the communities stage of
an ingest, at the price of a few points of recall either way in the modes that read community vectors
(``global``, and ``hybrid`` and ``mix`` through it): ``benchmarks/RESULTS.md``, "Composed community
vectors", and the ingest times in "Ingest, freshness and scale". A community none of whose key
entities has a vector gets its text embedded instead.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hopgraph.core.linalg import unit
from hopgraph.core.records import Community
from hopgraph.ingest.relation_vectors import Lookup


def composed(communities: Sequence[Community], lookup: Lookup, dim: int) -> tuple[np.ndarray, list[int]]:
    """The composed vectors of ``communities`` and the positions of those none of whose key entities
    has a vector (their rows are zero: the caller embeds their text)."""
    entity = lookup("entities", sorted({k for c in communities for k in c.key_ids}))
    out = np.zeros((len(communities), dim), dtype=np.float32)
    missing: list[int] = []
    for k, c in enumerate(communities):
        keys = [unit(entity[e]) for e in c.key_ids if e in entity]
        if keys:
            out[k] = unit(np.sum(keys, axis=0))
        else:
            missing.append(k)
    return out, missing
