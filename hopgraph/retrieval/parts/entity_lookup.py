"""Find entities by name in the served index state: exactly as written, by normalized name
(``hopgraph.core.text.normalize_name``: case, articles, possessives, punctuation), or by normalized
prefix; the best known first (most chunks mention them)."""

from __future__ import annotations

import bisect
from typing import Literal

from hopgraph.core.text import normalize_name
from hopgraph.retrieval.index.state import IndexState

NameMatch = Literal["exact", "normalized", "prefix"]


def find_entities(state: IndexState, name: str, match: NameMatch = "normalized", limit: int = 20) -> list[int]:
    """Entity rows of ``state``'s snapshot whose name matches ``name``, most mentioned first, then by name."""
    snap = state.snapshot
    key = normalize_name(name)
    if not key:
        return []
    if match == "exact":
        rows = [e for e in snap.name_index.get(key, []) if snap.entity_names[e] == name.strip()]
    elif match == "normalized":
        rows = list(snap.name_index.get(key, []))
    else:
        keys: list[str] = state.memo(("sorted names",), lambda: sorted(snap.name_index))  # once per state
        rows = []
        for k in keys[bisect.bisect_left(keys, key):]:
            if not k.startswith(key):
                break
            rows += snap.name_index[k]
    rows.sort(key=lambda e: (-float(snap.entity_df[e]), snap.entity_names[e], snap.entity_ids[e]))
    return rows[:limit]
