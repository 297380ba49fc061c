"""Access groups written into the payloads of vectors stored before vectors carried them: the documents
a migration marked (``graphdb.access_protocol``) get their groups set on every point of theirs in each
collection of one document's vectors, one filtered payload update per set of groups, then their mark
cleared. Nothing is re-embedded; a run killed midway sets the same payloads again."""

from __future__ import annotations

from collections import defaultdict

from hopgraph.core.access import VECTOR_FIELD, vector_groups
from hopgraph.graphdb.access_protocol import VectorGroupStore
from hopgraph.vectors.store import DOCUMENT_COLLECTIONS, VectorStore


def tag_stored(graph: VectorGroupStore, vectors: VectorStore, batch: int = 1000) -> int:
    """Write the access groups of the marked documents into their vectors; returns how many documents."""
    done = 0
    while todo := graph.untagged_documents(limit=batch):
        by_groups: dict[tuple[str, ...], list[str]] = defaultdict(list)
        for doc, groups in todo.items():
            by_groups[tuple(vector_groups(groups))].append(doc)
        for tagged, docs in sorted(by_groups.items()):
            for collection in DOCUMENT_COLLECTIONS:
                vectors.set_payload_where(collection, {"document_id": docs}, {VECTOR_FIELD: list(tagged)})
        graph.mark_tagged(list(todo))
        done += len(todo)
    return done
