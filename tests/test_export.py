"""hopgraph export: the graph as JSON lines, GraphML and neo4j-admin import CSV, complete and consistent."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import networkx as nx

from hopgraph.app.export import export_graph
from hopgraph.app.platform import Platform
from tests.paths import REPO_ROOT


def test_every_format_holds_the_whole_graph(platform: Platform, tmp_path: Path) -> None:
    platform.ingest([REPO_ROOT / "hopgraph" / "sample"])
    platform.update_tree()  # summaries and sections are part of the graph too
    counts = platform._store.counts()

    report = export_graph(platform._store, "jsonl", tmp_path / "g.jsonl")
    lines = [json.loads(x) for x in (tmp_path / "g.jsonl").read_text().splitlines()]
    nodes = {r["id"]: r for r in lines if r["kind"] == "node"}
    edges = [r for r in lines if r["kind"] == "edge"]
    for label in ("Document", "Chunk", "Entity", "Community", "Summary"):
        assert report.nodes[label] == counts[label] == sum(1 for r in nodes.values() if r["label"] == label) > 0
    for edge_type in ("HAS_CHUNK", "MENTIONS", "RELATED", "IN_COMMUNITY"):
        assert report.edges[edge_type] == counts[edge_type] > 0
    assert report.nodes["Section"] == report.edges["HAS_SECTION"] == counts["Document"]  # one each: no headings
    assert report.edges["SUMMARIZES"] > 0
    assert all(e["source"] in nodes and e["target"] in nodes for e in edges)  # no dangling edge
    assert any(e["type"] == "RELATED" and e["properties"].get("description") for e in edges)

    export_graph(platform._store, "graphml", tmp_path / "g.graphml")
    g = nx.read_graphml(tmp_path / "g.graphml", force_multigraph=True)
    assert g.number_of_nodes() == len(nodes) and g.number_of_edges() == len(edges)

    folder = tmp_path / "neo4j"
    export_graph(platform._store, "neo4j-csv", folder)
    with (folder / "Entity.csv").open(newline="") as f:
        header, *rows = list(csv.reader(f))
    assert header[0] == "id:ID" and header[-1] == ":LABEL" and len(rows) == counts["Entity"]
    with (folder / "MENTIONS.csv").open(newline="") as f:
        header, *rows = list(csv.reader(f))
    assert header == [":START_ID", ":END_ID", "count:int", ":TYPE"] and len(rows) == counts["MENTIONS"]
    script = (folder / "import.sh").read_text()
    assert "neo4j-admin database import full" in script and "--nodes=Chunk=Chunk.csv" in script
    assert "--relationships=RELATED=RELATED.csv" in script
