"""The subgraph that produced a ranking, as nodes and edges for a drawing (``explain["subgraph"]``):
the query, its seed entities (with their weights), the entities of the expansion paths, and the
result passages, linked by the seed weights, the paths' relations and the entities that led to each
passage. Each passage carries its per-signal scores (normalized) and its strongest signal.

Pure: reads the explain dict and the results a query already has; at most ``max_nodes`` nodes (every
result and seed first, then path and "via" entities in rank order)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

from hopgraph.core.records import RetrievedChunk

QUERY = "query"


def _entity(name: str) -> str:
    return f"e:{name}"


def query_subgraph(text: str, explain: Mapping[str, Any], results: Sequence[RetrievedChunk],
                   max_nodes: int = 200) -> dict[str, Any]:
    """``{"nodes": [...], "edges": [...]}``: node ``kind`` is query, seed, entity or chunk."""
    nodes: dict[str, dict[str, Any]] = {QUERY: {"id": QUERY, "label": text[:80], "kind": "query", "level": 0}}
    edges: dict[tuple[str, str], dict[str, Any]] = {}
    signals: Mapping[str, Mapping[str, float]] = explain.get("signals") or {}

    def add(node: dict[str, Any]) -> bool:
        if node["id"] in nodes:
            return True
        if len(nodes) >= max_nodes:
            return False
        nodes[node["id"]] = node
        return True

    def link(a: str, b: str, label: str, weight: float | None = None) -> None:
        if a in nodes and b in nodes and a != b and (a, b) not in edges:
            edges[(a, b)] = {"from": a, "to": b, "label": label, **({"weight": weight} if weight is not None else {})}

    for r in results:  # every result first: the drawing is about them
        cid = r.citation.chunk_id
        scores = {name: round(float(sig[cid]), 4) for name, sig in signals.items() if cid in sig}
        where = r.citation.source.rstrip("/").rsplit("/", 1)[-1] or r.citation.document_id
        add({"id": f"c:{cid}", "kind": "chunk", "level": 3, "label": f"#{r.rank} {where}",
             "rank": r.rank, "score": round(r.score, 4), "document": r.citation.document_id, "chunk": cid,
             "source": r.citation.source, "text": r.text[:400], "signals": scores,
             "signal": max(scores, key=lambda k: scores[k]) if scores else None})
    for s in explain.get("seeds") or []:
        if add({"id": _entity(s["entity"]), "kind": "seed", "level": 1, "label": s["entity"],
                "weight": s.get("weight"), "why": s.get("why")}):
            link(QUERY, _entity(s["entity"]), "seed", s.get("weight"))
    for p in explain.get("paths") or []:
        if not isinstance(p, Mapping) or not p.get("entities"):
            continue  # beam expansion's paths are text only
        names = list(p["entities"])
        for name in names:
            add({"id": _entity(name), "kind": "entity", "level": 2, "label": name})
        for (a, b), rel in zip(pairwise(names), p.get("relations") or [], strict=False):
            link(_entity(a), _entity(b), rel, p.get("weight"))
        link(_entity(names[-1]), f"c:{p['chunk']}", "mentioned in", p.get("weight"))
    for r in results:
        for name in r.entities:  # the seeds the passage mentions
            if add({"id": _entity(name), "kind": "entity", "level": 2, "label": name}):
                link(_entity(name), f"c:{r.citation.chunk_id}", "mentioned in")
    for n in nodes.values():  # a seed that leads nowhere still hangs off the query
        if n["kind"] == "entity" and not any(e["to"] == n["id"] or e["from"] == n["id"] for e in edges.values()):
            link(QUERY, n["id"], "related")
    return {"nodes": list(nodes.values()), "edges": list(edges.values()), "truncated": len(nodes) >= max_nodes}
