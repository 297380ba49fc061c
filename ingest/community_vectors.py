"""Composed community vectors (``communities.vectors = "composed"``): no text is embedded; a
community's vector is the direction of the sum of its key entities' vectors (the members its title
and summary name, already in the vector store when communities are built).

``text`` (embedding the title and the start of the summary, ``ingest.communities.embed_text``) stays
the default. Measured by rewriting only the community vectors of fresh session-14 stores of the
three developer sets (only ``global``, and ``hybrid`` and ``mix`` through it, read them), R@2 change
against ``text`` on hotpotqa-100 / musique-100 / 2wiki-dev-500:

- composed: ``global`` +2.5 / +0.8 / -1.4, ``hybrid`` -0.5 / +2.8 / -2.0 [-3.6, -0.5],
  ``mix`` +0.5 / -1.0 / -0.2;
- adding the key relations' vectors, weighting the title's entities double, or embedding the title
  alone each lost more on 2wiki-dev-500 (``global`` -1.8 to -3.4).

It saves the community texts' embedding: 59 of the 71 s of the communities stage of the 2wiki-corpus
ingest (7,446 communities) on 2 cores. A corpus whose ingest time matters more than the last points
of ``global`` can take it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hopgraph.core.linalg import unit
from hopgraph.core.records import Community
from ingest.relation_vectors import Lookup


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
