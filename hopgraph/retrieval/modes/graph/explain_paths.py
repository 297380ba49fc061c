"""``--explain``'s expansion paths: for each top passage, the way the walk most plausibly reached it
from the query's seeds (a seed it mentions, or a seed one relation away from an entity it mentions,
whichever carries more walk mass; else its entity with the most mass, reached by the walk at large).
Each path also comes as data (``entities``, the ``relations`` between them, the walk ``weight``) for
the explorer's drawing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

import numpy as np

from hopgraph.retrieval.snapshot import Snapshot


def _label(snap: Snapshot, a: int, b: int) -> str:
    label = snap.edge_types.get((a, b)) or snap.edge_types.get((b, a)) or "co-occurs with"
    return label.replace("_", " ")


def expansion_paths(snap: Snapshot, chunk_ids: Sequence[str], seeds: Mapping[int, float], mass: np.ndarray,
                    damping: float = 0.5) -> list[dict[str, Any]]:
    """One path per passage of ``chunk_ids`` that mentions an entity, in their order: ``path`` reads
    ``seed -[relation]-> entity => passage``; ``hops`` counts the relations walked (0: a seed it
    mentions). The path with the most walk mass wins: a seed's weight, times ``damping`` per hop."""
    out: list[dict[str, Any]] = []
    for cid in chunk_ids:
        j = snap.chunk_index.get(cid)
        if j is None or not len(snap.incidence[j].indices):
            continue
        best: tuple[float, list[int]] = (0.0, [])
        for e in (int(i) for i in snap.incidence[j].indices):
            if seeds.get(e, 0.0) > best[0]:
                best = (seeds[e], [e])
            row = snap.adjacency[e]
            for s in (int(i) for i in row.indices):
                if seeds.get(s, 0.0) * damping > best[0]:
                    best = (seeds[s] * damping, [s, e])
        nodes = best[1]
        how = ""
        if not nodes:  # no seed within one relation: the entity the walk gave the most mass
            mentioned = snap.incidence[j].indices
            nodes = [int(max(mentioned, key=lambda i: (float(mass[i]) if mass.size else 0.0, -int(i))))]
            how = " (reached by the walk, no seed within one relation)"
        text = snap.entity_names[nodes[0]]
        relations = []
        for a, b in pairwise(nodes):
            relations.append(_label(snap, a, b))
            text += f" -[{relations[-1]}]-> " + snap.entity_names[b]
        out.append({"chunk": cid, "document": snap.chunk_docs[j], "hops": len(nodes) - 1,
                    "path": f"{text} => passage{how}", "entities": [snap.entity_names[e] for e in nodes],
                    "relations": relations, "weight": round(best[0], 4)})
    return out
