"""Entity types by vote: an entity's type is the majority label of its mentions
(``hopgraph.core.records.majority_label``), so it never depends on which mention was read first."""

from __future__ import annotations

from collections.abc import Iterable

from hopgraph.core.records import majority_label
from hopgraph.graphdb.records import LabelVote


def voted_types(votes: Iterable[LabelVote]) -> dict[str, str]:
    """Entity id -> the majority label of its labelled mentions, for the entities whose label differs
    from their current type (one without labelled mentions keeps its type), in id order."""
    tally: dict[str, dict[str, int]] = {}
    types: dict[str, str] = {}
    for v in votes:
        labels = tally.setdefault(v.entity_id, {})
        labels[v.label] = labels.get(v.label, 0) + v.count
        types[v.entity_id] = v.type
    return {e: t for e, labels in sorted(tally.items()) if (t := majority_label(labels)) and t != types[e]}
