"""Documents that are graphs: a JSONL record ``{id, nodes: [{id, label, attrs}], edges: [{source,
target, type, attrs}], title?, text?}`` (a scene graph, an explanation graph, a knowledge-base
excerpt) is ingested into the same model as text.

Its text is the graph verbalized, one line per edge (``head type tail``, attributes in brackets,
ordered by a ``frame``/``time`` attribute where present), so dense and keyword retrieval see it; its
entities are the document's own nodes (ids scoped to the document, type ``GRAPH_NODE``, never merged
with other entities), mentioned by the chunks that verbalize them; its relations are its edges with
their types, attributes in the description. Re-ingest and deletion are those of any document.
"""

from __future__ import annotations

import json
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hopgraph.core.records import GRAPH_NODE, Chunk, Entity, Mention, Relation, relation_id, stable_id
from hopgraph.ingest.extraction import Extraction

#: attribute names that order a graph in time (video frames, timestamps)
TIME_KEYS = ("frame", "time", "timestamp", "t")


class GraphNode(BaseModel):
    """A node of a graph document."""

    model_config = ConfigDict(extra="ignore")

    id: str
    label: str = Field(min_length=1)
    attrs: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, v: object) -> str:
        return str(v)


class GraphEdge(BaseModel):
    """A typed edge of a graph document."""

    model_config = ConfigDict(extra="ignore")

    source: str
    target: str
    type: str = Field(min_length=1)
    attrs: dict[str, Any] = Field(default_factory=dict)

    @field_validator("source", "target", mode="before")
    @classmethod
    def _id_text(cls, v: object) -> str:
        return str(v)


class GraphRecord(BaseModel):
    """A whole graph document, checked: node ids unique, every edge between known nodes."""

    model_config = ConfigDict(extra="ignore")

    nodes: list[GraphNode] = Field(min_length=1)
    edges: list[GraphEdge] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> GraphRecord:
        ids = [n.id for n in self.nodes]
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise ValueError(f"node id {dup!r} is used twice")
        known = set(ids)
        for e in self.edges:
            for end in (e.source, e.target):
                if end not in known:
                    raise ValueError(f"edge {e.source!r} -{e.type}-> {e.target!r} names no node {end!r}")
        return self

    def label(self, node_id: str) -> str:
        return self._labels[node_id]

    @cached_property
    def _labels(self) -> dict[str, str]:
        return {n.id: n.label for n in self.nodes}


def is_graph_record(rec: dict[str, Any]) -> bool:
    """A JSONL record that is a graph document (it has ``nodes``)."""
    return "nodes" in rec


def parse_graph(rec: dict[str, Any]) -> GraphRecord | str:
    """The checked graph of a record, or why it is not one (the first problem, in a sentence)."""
    try:
        return GraphRecord.model_validate(rec)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return f"not a valid graph document: {where + ': ' if where else ''}{first.get('msg', '')}"


def _attrs(attrs: dict[str, Any]) -> str:
    shown = [f"{k} {v}" if k in TIME_KEYS else f"{k}={v}" for k, v in sorted(attrs.items()) if v not in (None, "")]
    return f" ({', '.join(shown)})" if shown else ""


def _when(attrs: dict[str, Any]) -> float:
    for key in TIME_KEYS:
        try:
            return float(attrs[key])
        except (KeyError, TypeError, ValueError):
            continue
    return float("inf")


def edge_line(graph: GraphRecord, edge: GraphEdge) -> str:
    return f"{graph.label(edge.source)} {edge.type} {graph.label(edge.target)}{_attrs(edge.attrs)}."


def node_line(node: GraphNode) -> str:
    return f"{node.label}{_attrs(node.attrs)}."


def _ordered_edges(graph: GraphRecord) -> list[GraphEdge]:
    return sorted(graph.edges, key=lambda e: _when(e.attrs))  # stable: file order within a frame


def graph_text(graph: GraphRecord, preface: str = "") -> str:
    """The graph verbalized: each edge a line (time order where given), then nodes no edge touches."""
    touched = {end for e in graph.edges for end in (e.source, e.target)}
    lines = [edge_line(graph, e) for e in _ordered_edges(graph)]
    lines += [node_line(n) for n in graph.nodes if n.id not in touched or n.attrs]
    return "\n".join([preface.strip(), *lines] if preface.strip() else lines)


def node_entity_id(document_id: str, node_id: str) -> str:
    """A node is identified by its document and its id there (two 'person' nodes stay two)."""
    return stable_id("ent", "graph", document_id, node_id)


def graph_extraction(document_id: str, graph: GraphRecord, chunks: list[Chunk]) -> Extraction:
    """The document's nodes as entities and its edges as relations, each supported by the first chunk
    that verbalizes it (the first chunk when none does: a node whose line fell in no window)."""
    out = Extraction()
    if not chunks:
        return out

    def home(line: str) -> str:
        return next((c.id for c in chunks if line.rstrip(".") in c.text), chunks[0].id)

    node_chunk: dict[str, set[str]] = {n.id: set() for n in graph.nodes}
    for n in graph.nodes:
        eid = node_entity_id(document_id, n.id)
        out.entities[eid] = Entity(id=eid, name=n.label, type=GRAPH_NODE, description=node_line(n).rstrip("."),
                                   description_chunk=chunks[0].id)
    relations: dict[str, Relation] = {}
    for e in _ordered_edges(graph):
        line = edge_line(graph, e)
        cid = home(line)
        node_chunk[e.source].add(cid)
        node_chunk[e.target].add(cid)
        src, dst = node_entity_id(document_id, e.source), node_entity_id(document_id, e.target)
        rid = relation_id(src, e.type, dst) if not e.attrs else stable_id(
            "rel", src, e.type, dst, json.dumps(e.attrs, sort_keys=True, default=str))  # one per frame
        rel = Relation(id=rid, source_id=src, target_id=dst, type=e.type,
                       description=line.rstrip("."), chunk_ids=[cid], description_chunk=cid)
        relations[rel.id] = relations[rel.id].merged(rel) if rel.id in relations else rel
    for n in graph.nodes:
        where = node_chunk[n.id] or {home(node_line(n))}
        out.mentions += [Mention(chunk_id=c, entity_id=node_entity_id(document_id, n.id)) for c in sorted(where)]
    out.relations = list(relations.values())
    return out
