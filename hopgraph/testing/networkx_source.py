"""A read-only graph backend over a NetworkX snapshot: the second backend, written role by role.

``NetworkxSource`` implements two roles of ``graphdb.protocols`` and no others:

    IndexSource   what the retrieval index (``retrieval.index``) is built from: the version, the
                  change log, and the exports of chunks, mentions, entities, edges and memberships
    GraphAdmin    what opening it needs (``graphdb.factory`` migrates and closes every store) and what
                  ``Platform.status`` reads: counts, health, the version

It holds exactly what the ``IndexSource`` exports give, as one ``networkx.MultiDiGraph``: Document,
Chunk, Entity and Community nodes (keyed ``"<label>:<id>"``), HAS_CHUNK, MENTIONS, RELATED (keyed by
the relation id) and IN_COMMUNITY edges; the version and the change log are graph attributes. It is
made by ``NetworkxSource.copy_of(source)`` from any ``IndexSource`` (a live store), saved to and loaded
from node-link JSON, and opened from settings by ``open_networkx_snapshot`` (``graph.uri`` names the
file). Nothing is written after it is made: its version is fixed and its change log is the source's.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import networkx as nx

from hopgraph.core.errors import BadInputError, NotFoundError
from hopgraph.core.settings import Settings
from hopgraph.graphdb.protocols import GraphAdmin, IndexSource
from hopgraph.graphdb.records import DocumentState, EdgeRow, GraphChange, complete_log

__all__ = ["NetworkxSource", "open_networkx_snapshot"]

#: the chunk row's keys that belong to its document (the rest belong to the chunk)
DOCUMENT_KEYS = ("source", "title", "metadata", "kind", "uri")
#: node labels and edge types a snapshot holds, and those of a full store it never holds (counted as 0)
NODE_LABELS = ("Document", "Chunk", "Entity", "Community", "Summary")
EDGE_TYPES = ("HAS_CHUNK", "MENTIONS", "RELATED", "IN_COMMUNITY")


def _key(label: str, ident: str) -> str:
    return f"{label}:{ident}"


def _ident(key: str) -> str:
    return key.partition(":")[2]


class NetworkxSource:
    """The ``IndexSource`` and ``GraphAdmin`` roles over a fixed ``networkx.MultiDiGraph``."""

    def __init__(self, graph: nx.MultiDiGraph) -> None:
        self.graph = graph
        self._version = int(graph.graph.get("version", 0))
        self._log = [GraphChange(int(v), tuple(d), tuple(e), bool(c), None if r is None else tuple(r))
                     for v, d, e, c, r in graph.graph.get("changes", [])]

    # -- making one ------------------------------------------------------------------------------
    @classmethod
    def copy_of(cls, source: IndexSource) -> NetworkxSource:
        """A snapshot of everything ``source`` exports (its version read first, as the index reads it),
        with the part of its change log it still reaches back to from version 0."""
        version = source.version()
        changes = source.changes_since(0) or []
        g = nx.MultiDiGraph(version=version, changes=[[c.version, list(c.documents), list(c.entities),
                                                       c.communities, None if c.regrouped is None
                                                       else list(c.regrouped)] for c in changes])
        for row in source.snapshot_chunks():
            doc = _key("Document", row["document_id"])
            if doc not in g:
                g.add_node(doc, label="Document", **{k: row.get(k) for k in DOCUMENT_KEYS})
            chunk = _key("Chunk", row["id"])
            g.add_node(chunk, label="Chunk", **{k: v for k, v in row.items()
                                                if k not in DOCUMENT_KEYS and k not in ("id", "document_id")})
            g.add_edge(doc, chunk, type="HAS_CHUNK")
        for ident, name, typ in source.snapshot_entities():
            g.add_node(_key("Entity", ident), label="Entity", name=name, type=typ)
        for seq, (chunk_id, entity_id, count, mention_label) in enumerate(source.snapshot_mentions()):
            g.add_edge(_key("Chunk", chunk_id), _key("Entity", entity_id), type="MENTIONS", count=count,
                       mention_label=mention_label, seq=seq)
        for seq, e in enumerate(source.snapshot_edges()):
            g.add_edge(_key("Entity", e.source), _key("Entity", e.target), key=e.id, type="RELATED",
                       rel_type=e.type, weight=e.weight, rel_label=e.label, chunk_ids=list(e.chunk_ids), seq=seq)
        for entity_id, community_id in source.snapshot_memberships():
            g.add_node(_key("Community", community_id), label="Community")
            g.add_edge(_key("Entity", entity_id), _key("Community", community_id), type="IN_COMMUNITY")
        return cls(g)

    @classmethod
    def load(cls, path: Path) -> NetworkxSource:
        """The snapshot saved at ``path`` (node-link JSON, ``save``)."""
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(nx.node_link_graph(data, directed=True, multigraph=True, edges="edges"))

    def save(self, path: Path) -> None:
        """Write the snapshot as node-link JSON."""
        path.write_text(json.dumps(nx.node_link_data(self.graph, edges="edges")), encoding="utf-8")

    # -- reading the graph -----------------------------------------------------------------------
    def _nodes(self, label: str) -> list[str]:
        return [n for n, a in self.graph.nodes(data=True) if a["label"] == label]

    def _edges(self, edge_type: str, nodes: Iterable[str] | None = None, out: bool = True,
               into: bool = True) -> list[tuple[str, str, str, dict[str, Any]]]:
        """The edges of ``edge_type``: all, or those leaving (``out``) or entering (``into``) ``nodes``, in
        the order the source exported them."""
        g = self.graph
        if nodes is None:
            found = g.edges(keys=True, data=True)
        else:
            present = [n for n in dict.fromkeys(nodes) if n in g]
            found = [*(g.out_edges(present, keys=True, data=True) if out else []),
                     *(g.in_edges(present, keys=True, data=True) if into else [])]
        unique = {(s, t, k): a for s, t, k, a in found if a["type"] == edge_type}
        return sorted(((s, t, k, a) for (s, t, k), a in unique.items()), key=lambda e: int(e[3].get("seq", 0)))

    # -- IndexSource -----------------------------------------------------------------------------
    def version(self) -> int:
        return self._version

    def changes_since(self, version: int) -> list[GraphChange] | None:
        """The copied log after ``version``; ``[]`` at the snapshot's own version, None where the log
        does not reach back (the reader rebuilds)."""
        found = [c for c in self._log if c.version > version]
        return found if complete_log(found, version, self._version) else None

    def snapshot_chunks(self, document_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        docs = self._nodes("Document") if document_ids is None else [_key("Document", d) for d in document_ids]
        rows = []
        for _, chunk, _, _ in self._edges("HAS_CHUNK", docs, into=False):
            doc = next(iter(self.graph.predecessors(chunk)))
            attrs = {k: v for k, v in self.graph.nodes[chunk].items() if k != "label"}
            rows.append({"id": _ident(chunk), "document_id": _ident(doc), **attrs,
                         **{k: self.graph.nodes[doc].get(k) for k in DOCUMENT_KEYS}})
        return rows

    def snapshot_mentions(self, chunk_ids: Sequence[str] | None = None,
                          entity_ids: Sequence[str] | None = None) -> list[tuple[str, str, int, str]]:
        if chunk_ids is None and entity_ids is None:
            found = self._edges("MENTIONS")
        else:
            found = [*self._edges("MENTIONS", [_key("Chunk", c) for c in chunk_ids or ()], into=False),
                     *self._edges("MENTIONS", [_key("Entity", e) for e in entity_ids or ()], out=False)]
        unique = {(_ident(s), _ident(t)): (int(a["count"]), a.get("mention_label") or "") for s, t, _, a in found}
        return [(c, e, n, label) for (c, e), (n, label) in unique.items()]

    def snapshot_entities(self, ids: Sequence[str] | None = None) -> list[tuple[str, str, str]]:
        keys = self._nodes("Entity") if ids is None else [_key("Entity", i) for i in dict.fromkeys(ids)]
        nodes = self.graph.nodes
        return [(_ident(k), nodes[k]["name"], nodes[k]["type"]) for k in keys if k in nodes]

    def snapshot_edges(self, entity_ids: Sequence[str] | None = None, within: bool = False) -> list[EdgeRow]:
        wanted = None if entity_ids is None else {_key("Entity", e) for e in entity_ids}
        found = self._edges("RELATED", wanted)
        if wanted is not None and within:
            found = [e for e in found if e[0] in wanted and e[1] in wanted]
        return [EdgeRow(_ident(s), _ident(t), a["rel_type"], float(a["weight"]), k, a.get("rel_label") or "",
                        tuple(a.get("chunk_ids") or ()))
                for s, t, k, a in found]

    def snapshot_memberships(self, entity_ids: Sequence[str] | None = None) -> list[tuple[str, str]]:
        nodes = None if entity_ids is None else [_key("Entity", e) for e in entity_ids]
        return sorted((_ident(s), _ident(t)) for s, t, _, _ in self._edges("IN_COMMUNITY", nodes, into=False))

    # -- GraphAdmin ------------------------------------------------------------------------------
    def close(self) -> None:
        return None

    def migrate(self) -> list[str]:
        """Nothing to migrate: a snapshot holds exports, not a schema."""
        return []

    def pending_migrations(self) -> list[str]:
        return []

    def counts(self) -> dict[str, int]:
        """Nodes per label and edges per type of the snapshot (complete documents, communities with
        members; no summaries). HAS_CHUNK counts document links only: sections are not exported."""
        labels = [a["label"] for _, a in self.graph.nodes(data=True)]
        types = [a["type"] for _, _, a in self.graph.edges(data=True)]
        return {**{n: labels.count(n) for n in NODE_LABELS}, **{t: types.count(t) for t in EDGE_TYPES}}

    def unfinished_documents(self) -> list[DocumentState]:
        """None: a snapshot holds complete documents only."""
        return []

    def health_counts(self) -> dict[str, int]:
        """The counts ``hopgraph doctor`` compares, over the snapshot."""
        mentioned = {t for _, t, _, _ in self._edges("MENTIONS")}
        related = self._edges("RELATED")
        docs = self._nodes("Document")
        return {"chunks": len(self._nodes("Chunk")), "all_relations": len(related),
                "typed_relations": sum(1 for *_, a in related if a["rel_type"] != "co_occurs"),
                "image_documents": sum(1 for d in docs if self.graph.nodes[d].get("kind") == "image"),
                "orphan_entities": sum(1 for e in self._nodes("Entity") if e not in mentioned),
                "orphan_chunks": 0, "empty_communities": 0}


def open_networkx_snapshot(settings: Settings) -> NetworkxSource:
    """An opener for ``graphdb.registry``: the snapshot file ``graph.uri`` names (a path or a ``file:``
    URI), saved by ``NetworkxSource.save``."""
    uri = settings.graph.uri
    if not uri:
        raise BadInputError("graph.uri must name the NetworkX snapshot file (HOPGRAPH_GRAPH__URI)")
    parsed = urlparse(uri)
    path = Path(unquote(parsed.path)) if parsed.scheme == "file" else Path(uri)
    if not path.is_file():
        raise NotFoundError(f"no NetworkX snapshot at {path} (graph.uri)")
    return NetworkxSource.load(path)


def _roles(source: NetworkxSource) -> tuple[IndexSource, GraphAdmin]:
    """The roles it implements, checked by mypy: a missing or mistyped method fails the type check."""
    return source, source
