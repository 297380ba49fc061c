"""``hopgraph export``: the graph written out for other tools.

- ``jsonl``: one JSON object per line, ``{"kind": "node", "label", "id", "properties"}`` then
  ``{"kind": "edge", "type", "source", "target", "properties"}``;
- ``graphml``: one file any graph tool opens (networkx writes it; ``label`` is a node's label and an
  edge's type; lists and maps as JSON text);
- ``neo4j-csv``: a folder of ``<Label>.csv`` node files and ``<TYPE>.csv`` relationship files with
  ``neo4j-admin database import`` headers, and ``import.sh`` with the command that loads them.
"""

from __future__ import annotations

import csv
import json
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from hopgraph.graphdb.cypher_export import EDGES, NODE_COLUMNS, NODES

ExportFormat = Literal["graphml", "jsonl", "neo4j-csv"]
FORMATS: tuple[str, ...] = ("graphml", "jsonl", "neo4j-csv")
#: neo4j-admin column types of the numeric properties
_TYPED = {"ord": "int", "n_tokens": "int", "level": "int", "size": "int", "count": "int", "weight": "float"}


class ExportSource(Protocol):
    def export_nodes(self, label: str) -> list[dict[str, Any]]: ...

    def export_edges(self, edge_type: str) -> list[dict[str, Any]]: ...


@dataclass
class ExportReport:
    """What was written where."""

    path: Path
    nodes: dict[str, int] = field(default_factory=dict)
    edges: dict[str, int] = field(default_factory=dict)


def _props(row: dict[str, Any], drop: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in drop and v is not None}


def _scalar(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, list | dict) else value


def _rows(source: ExportSource, report: ExportReport) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """("node", label, row) for every node, then ("edge", type, row) for every edge, counted."""
    for label in NODES:
        rows = source.export_nodes(label)
        report.nodes[label] = len(rows)
        yield from (("node", label, r) for r in rows)
    for edge_type in EDGES:
        rows = source.export_edges(edge_type)
        report.edges[edge_type] = len(rows)
        yield from (("edge", edge_type, r) for r in rows)


def export_graph(source: ExportSource, fmt: ExportFormat, out: Path) -> ExportReport:
    """Write the whole graph to ``out`` (a file; a folder for ``neo4j-csv``)."""
    report = ExportReport(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "jsonl":
        with out.open("w", encoding="utf-8") as f:
            for kind, name, row in _rows(source, report):
                if kind == "node":
                    rec = {"kind": kind, "label": name, "id": row["id"], "properties": _props(row, ("id",))}
                else:
                    rec = {"kind": kind, "type": name, "source": row["source"], "target": row["target"],
                           "properties": _props(row, ("source", "target"))}
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    elif fmt == "graphml":
        import networkx as nx

        graph = nx.MultiDiGraph()
        for kind, name, row in _rows(source, report):
            attrs = {k: _scalar(v) for k, v in _props(row, ("id", "source", "target")).items()}
            if kind == "node":
                graph.add_node(row["id"], label=name, **attrs)
            else:
                graph.add_edge(row["source"], row["target"], label=name, **attrs)
        nx.write_graphml(graph, out)
    else:
        _neo4j_csv(source, out, report)
    return report


def _neo4j_csv(source: ExportSource, folder: Path, report: ExportReport) -> None:
    """Node and relationship files in ``neo4j-admin database import`` format, and the command."""
    folder.mkdir(parents=True, exist_ok=True)
    args = ["neo4j-admin", "database", "import", "full"]
    for label, columns in NODE_COLUMNS.items():
        rows = source.export_nodes(label)
        report.nodes[label] = len(rows)
        header = ["id:ID", *(f"{c}:{_TYPED[c]}" if c in _TYPED else c for c in columns if c != "id"), ":LABEL"]
        _write_csv(folder / f"{label}.csv", header, ([r.get("id"), *(_scalar(r.get(c)) for c in columns if c != "id"),
                                                     label] for r in rows))
        args.append(f"--nodes={label}={label}.csv")
    for edge_type in EDGES:
        rows = source.export_edges(edge_type)
        report.edges[edge_type] = len(rows)
        extra = sorted({k for r in rows for k in r} - {"source", "target"})
        header = [":START_ID", ":END_ID", *(f"{c}:{_TYPED[c]}" if c in _TYPED else c for c in extra), ":TYPE"]
        _write_csv(folder / f"{edge_type}.csv", header,
                   ([r["source"], r["target"], *(_scalar(r.get(c)) for c in extra), edge_type] for r in rows))
        args.append(f"--relationships={edge_type}={edge_type}.csv")
    args.append("neo4j")
    (folder / "import.sh").write_text("#!/bin/sh\n# load into an empty database named neo4j (stop it first)\n"
                                      f'cd "$(dirname "$0")" && {shlex.join(args)} --overwrite-destination\n')
    (folder / "import.sh").chmod(0o755)


def _write_csv(path: Path, header: list[str], rows: Iterator[list[Any]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
